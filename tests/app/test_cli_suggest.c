/* The "did you mean" of the pbd program (app/cli_suggest.c): the edit distance and the choice of
 * the nearest word. */
#include <string.h>

#include "cli_suggest.h"
#include "test_util.h"

static void test_distance(void** state) {
	(void)state;
	assert_int_equal(cli_edit_distance("run", "run", 2), 0);
	assert_int_equal(cli_edit_distance("", "", 2), 0);
	assert_int_equal(cli_edit_distance("", "ab", 5), 2);
	assert_int_equal(cli_edit_distance("rnu", "run", 2), 1); /* a swap of neighbours is one edit */
	assert_int_equal(cli_edit_distance("--frmaes", "--frames", 2), 1);
	assert_int_equal(cli_edit_distance("lst", "list", 2), 1);   /* insertion */
	assert_int_equal(cli_edit_distance("lists", "list", 2), 1); /* deletion */
	assert_int_equal(cli_edit_distance("plat", "plot", 2), 1);  /* substitution */
	assert_int_equal(cli_edit_distance("ca", "abc", 5), 3);     /* optimal alignment: no edit of a swapped pair */
	assert_int_equal(cli_edit_distance("kitten", "sitting", 5), 3);
	/* Past the cap the answer is cap + 1, also when the early exit cuts the table short. */
	assert_int_equal(cli_edit_distance("kitten", "sitting", 2), 3);
	assert_int_equal(cli_edit_distance("abcdefgh", "zzzzzzzz", 1), 2);
	char longer[80];
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	assert_int_equal(cli_edit_distance(longer, longer, 2), 3);
}

static void test_suggest(void** state) {
	(void)state;
	static const char* const commands[] = {"run", "compare", "list", NULL, "plot", "view", "bench"};
	const size_t n = sizeof commands / sizeof commands[0];
	assert_string_equal(cli_suggest("rnu", commands, n), "run");
	assert_string_equal(cli_suggest("lsit", commands, n), "list");
	assert_string_equal(cli_suggest("compair", commands, n), "compare");
	assert_string_equal(cli_suggest("benhc", commands, n), "bench");
	assert_null(cli_suggest("frobnicate", commands, n));
	/* A word as short as its distance is no hint: "a" is two edits from nothing useful. */
	assert_null(cli_suggest("a", commands, n));
	assert_null(cli_suggest("xy", commands, n));
	assert_null(cli_suggest("run", commands, 0));
	/* Of equally near words, the first. */
	static const char* const tie[] = {"view", "vie", "viewer"};
	assert_string_equal(cli_suggest("viex", tie, 3), "view");
}

int main(void) {
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_distance), cmocka_unit_test(test_suggest)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
