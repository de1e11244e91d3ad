/* precision.c -- the training precisions of ir/precision.def. */
#include <string.h>

#include "ir/ir.h"

const PrecisionInfo precision_info[PREC_COUNT] = {
#define PRECISION(id, name, bytes, matmul, other, low) [id] = { name, bytes, matmul, other, low },
#include "ir/precision.def"
#undef PRECISION
};

const char *
precision_name(Precision p)
{
	return (unsigned)p < PREC_COUNT ? precision_info[p].name : "?";
}

bool
precision_parse(const char *s, Precision *p)
{
	for (int i = 0; i < PREC_COUNT; i++)
		if (strcmp(s, precision_info[i].name) == 0) {
			*p = (Precision)i;
			return true;
		}
	return false;
}

/* The rate a layer of class c runs at. */
Dtype
precision_dtype(Precision p, bool matmul)
{
	return matmul ? precision_info[p].matmul : precision_info[p].other;
}
