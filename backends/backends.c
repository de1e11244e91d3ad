/* backends.c -- the table of report formats, chosen by --format. */
#include "backends/backends.h"

#include <string.h>

static const Backend backends[] = {
	{ "text", text_emit },
	{ "json", json_emit },
	{ "csv", csv_emit },
	{ "html", html_emit },
	{ "svg", svg_emit },
};

const Backend *
backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}
