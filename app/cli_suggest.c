/* Edit distance for "did you mean" hints. */
#include "cli_suggest.h"

#include <string.h>

#define WORD_MAX 64

unsigned cli_edit_distance(const char* a, const char* b, unsigned max_distance) {
	const size_t n = strlen(a), m = strlen(b);
	if (n >= WORD_MAX || m >= WORD_MAX) return max_distance + 1;
	/* Three rows of the dynamic programme: the swap of two neighbours looks two rows back. */
	unsigned rows[3][WORD_MAX + 1];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= m; ++j) prev[j] = (unsigned)j;
	for (size_t i = 1; i <= n; ++i) {
		cur[0] = (unsigned)i;
		unsigned row_min = cur[0];
		for (size_t j = 1; j <= m; ++j) {
			const unsigned cost = a[i - 1] == b[j - 1] ? 0u : 1u;
			unsigned d = prev[j - 1] + cost;
			if (prev[j] + 1 < d) d = prev[j] + 1;
			if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
			if (d < row_min) row_min = d;
		}
		if (row_min > max_distance) return max_distance + 1;
		unsigned* t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[m] > max_distance ? max_distance + 1 : prev[m];
}

const char* cli_suggest(const char* typed, const char* const* words, size_t count) {
	const char* best = NULL;
	unsigned best_d = 3;
	for (size_t k = 0; k < count; ++k) {
		if (!words[k]) continue;
		const size_t longer = strlen(words[k]) > strlen(typed) ? strlen(words[k]) : strlen(typed);
		const unsigned d = cli_edit_distance(typed, words[k], 2);
		if (d < best_d && d <= longer / 3 + 1 && d < longer) {
			best = words[k];
			best_d = d;
		}
	}
	return best;
}
