/* similar.h -- the name a user most likely meant (util/similar.c). */
#ifndef ORACLEC_UTIL_SIMILAR_H
#define ORACLEC_UTIL_SIMILAR_H

/* Of the names name(0), name(1), ... (NULL ends them), the one nearest to
 * s in edits (insert, delete, replace or swap two neighbours of a byte,
 * '-' and '_' alike, case ignored) when it is at most a third of s's
 * length away, at least 1 and at most 3; NULL when none is. */
const char *similar_name(const char *s, const char *(*name)(int));

#endif
