/* load.c -- choose the frontend for a model file.
 *
 * ODL is the only format so far; a file that is not ODL gets the ODL
 * parser's syntax error, which names the file and place. */
#include "frontend/frontend.h"

Graph *
frontend_load(const char *path, Arena *a, FileList *files)
{
	return dsl_load(path, a, files);
}
