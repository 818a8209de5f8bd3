/* Comments in scene files: JSON has none, so `//` line comments and block comments are blanked
 * with spaces before the text is parsed. Newlines stay where they are, so that the line:column of
 * a later syntax error is the one an editor shows. Markers inside strings are text. */
#include <stdbool.h>
#include <stddef.h>

#include "json_read.h"

/* Walks the text outside strings; with `blank` set, overwrites comments. Returns false at an
 * unterminated block comment, with its offset in *bad. *found tells whether there was any. */
static bool walk(char* text, const char* ro, size_t size, bool blank, bool* found, size_t* bad) {
	const char* t = text ? text : ro;
	*found = false;
	for (size_t i = 0; i < size; ++i) {
		if (t[i] == '"') {
			/* An unterminated string runs to the end; the parser reports it. */
			for (++i; i < size && t[i] != '"'; ++i)
				if (t[i] == '\\') ++i;
			continue;
		}
		if (t[i] != '/' || i + 1 >= size || (t[i + 1] != '/' && t[i + 1] != '*')) continue;
		*found = true;
		const bool line = t[i + 1] == '/';
		size_t end = i + 2;
		if (line) {
			while (end < size && t[end] != '\n') ++end;
		} else {
			while (end + 1 < size && !(t[end] == '*' && t[end + 1] == '/')) ++end;
			if (end + 1 >= size) {
				*bad = i;
				return false;
			}
			end += 2;
		}
		if (blank)
			for (size_t k = i; k < end; ++k)
				if (text[k] != '\n' && text[k] != '\r') text[k] = ' ';
		i = end - 1;
	}
	return true;
}

bool jr_has_comments(const char* text, size_t size) {
	bool found;
	size_t bad;
	walk(NULL, text, size, false, &found, &bad);
	return found;
}

bool jr_blank_comments(char* text, size_t size, size_t* bad) {
	bool found;
	return walk(text, NULL, size, true, &found, bad);
}
