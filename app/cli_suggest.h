/* "Did you mean" for a mistyped word on the command line: the nearest of a list of known words. */
#ifndef PBD_APP_CLI_SUGGEST_H
#define PBD_APP_CLI_SUGGEST_H

#include <stddef.h>

/// The optimal-string-alignment distance between a and b (insertions, deletions, substitutions
/// and swaps of two neighbours, each costing 1), or max_distance + 1 when it is larger; words
/// longer than 63 bytes count as too far.
unsigned cli_edit_distance(const char* a, const char* b, unsigned max_distance);

/// The word of `words` (count entries, NULL entries skipped) nearest to `typed`, if it is at most
/// 2 edits away and nearer than a third of the longer word's length plus 1 (so that "a" does not
/// suggest "run"); the first of equally near ones. NULL when none is near.
const char* cli_suggest(const char* typed, const char* const* words, size_t count);

#endif
