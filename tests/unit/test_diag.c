/* Unit tests of diag.c: the exact text of every kind of report, caret placement (tabs,
 * past the end of a line, CRLF), the error limit, and the counters. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* A diag_ctx writing into memory (cap_text: what was written so far). */
typedef struct capture {
    diag_ctx d;
    memfile m;
} capture;

static void cap_open_n(capture *c, const char *src, size_t len)
{
    diag_init(&c->d, mem_open(&c->m), "spec.pipe", src, len);
}

static void cap_open(capture *c, const char *src) { cap_open_n(c, src, src ? strlen(src) : 0); }

static const char *cap_text(capture *c) { return mem_text(&c->m); }

static void cap_close(capture *c) { free(mem_close(&c->m)); }

static srcloc at(int line, int col)
{
    return (srcloc){ "spec.pipe", line, col };
}

static const char *src3 = "pipeline p {\n  stage q;\n}\n";

START_TEST(error_format)
{
    capture c;
    cap_open(&c, src3);
    diag_error(&c.d, at(2, 9), "unknown array '%s'", "q");
    ck_assert_str_eq(cap_text(&c),
                     "spec.pipe:2:9: error: unknown array 'q'\n"
                     "  stage q;\n"
                     "        ^\n");
    ck_assert_int_eq(c.d.errors, 1);
    ck_assert_int_eq(c.d.warnings, 0);
    cap_close(&c);
}
END_TEST

START_TEST(warning_and_note)
{
    capture c;
    cap_open(&c, src3);
    diag_warning(&c.d, W_STAGES, at(1, 1), "w %d", 1);
    diag_note(&c.d, at(3, 1), "n");
    ck_assert_str_eq(cap_text(&c),
                     "spec.pipe:1:1: warning: w 1 [-Wstages]\n"
                     "pipeline p {\n"
                     "^\n"
                     "spec.pipe:3:1: note: n\n"
                     "}\n"
                     "^\n");
    ck_assert_int_eq(c.d.errors, 0);
    ck_assert_int_eq(c.d.warnings, 1);
    cap_close(&c);
}
END_TEST

START_TEST(tabs_kept_in_caret_line)
{
    capture c;
    cap_open(&c, "\tstage\tx y;\n");
    diag_error(&c.d, at(1, 10), "m");
    ck_assert_str_eq(cap_text(&c),
                     "spec.pipe:1:10: error: m\n"
                     "\tstage\tx y;\n"
                     "\t     \t  ^\n");
    cap_close(&c);
}
END_TEST

START_TEST(caret_past_end_of_line)
{
    capture c;
    cap_open(&c, "ab\ncd");
    diag_error(&c.d, at(1, 40), "m");
    diag_error(&c.d, at(2, 3), "eof");
    ck_assert_str_eq(cap_text(&c),
                     "spec.pipe:1:40: error: m\n"
                     "ab\n"
                     "  ^\n"
                     "spec.pipe:2:3: error: eof\n"
                     "cd\n"
                     "  ^\n");
    cap_close(&c);
}
END_TEST

START_TEST(crlf_line_is_quoted_without_cr)
{
    capture c;
    cap_open(&c, "a b\r\nc d\r\n");
    diag_error(&c.d, at(2, 3), "m");
    ck_assert_str_eq(cap_text(&c), "spec.pipe:2:3: error: m\nc d\n  ^\n");
    cap_close(&c);
}
END_TEST

START_TEST(line_beyond_source_is_not_quoted)
{
    capture c;
    cap_open(&c, "one\n");
    diag_error(&c.d, at(5, 1), "m");
    ck_assert_str_eq(cap_text(&c), "spec.pipe:5:1: error: m\n");
    cap_close(&c);
}
END_TEST

START_TEST(empty_last_line_is_quoted_empty)
{
    capture c;
    cap_open(&c, "one\n");
    diag_error(&c.d, at(2, 1), "m");
    ck_assert_str_eq(cap_text(&c), "spec.pipe:2:1: error: m\n\n^\n");
    cap_close(&c);
}
END_TEST

START_TEST(column_zero_is_clamped)
{
    capture c;
    cap_open(&c, "xyz\n");
    diag_error(&c.d, at(1, 0), "m");
    ck_assert_str_eq(cap_text(&c), "spec.pipe:1:0: error: m\nxyz\n^\n");
    cap_close(&c);
}
END_TEST

START_TEST(no_line_no_quote)
{
    capture c;
    cap_open(&c, src3);
    diag_error(&c.d, (srcloc){ NULL, 0, 0 }, "whole file");
    ck_assert_str_eq(cap_text(&c), "spec.pipe: error: whole file\n");
    cap_close(&c);
}
END_TEST

START_TEST(other_file_not_quoted)
{
    capture c;
    cap_open(&c, src3);
    diag_error(&c.d, (srcloc){ "other.pipe", 1, 1 }, "m");
    ck_assert_str_eq(cap_text(&c), "other.pipe:1:1: error: m\n");
    cap_close(&c);
}
END_TEST

START_TEST(no_source_not_quoted)
{
    capture c;
    cap_open(&c, NULL);
    diag_error(&c.d, at(1, 1), "m");
    ck_assert_str_eq(cap_text(&c), "spec.pipe:1:1: error: m\n");
    cap_close(&c);
}
END_TEST

START_TEST(nul_byte_quoted_verbatim)
{
    capture c;
    static const char src[] = "ab\0cd\n";
    cap_open_n(&c, src, sizeof src - 1);
    diag_error(&c.d, at(1, 3), "nul");
    const char *got = cap_text(&c);
    static const char want[] = "spec.pipe:1:3: error: nul\nab\0cd\n  ^\n";
    ck_assert_uint_eq(c.m.len, sizeof want - 1);
    ck_assert(memcmp(got, want, c.m.len) == 0);
    cap_close(&c);
}
END_TEST

START_TEST(fatal_noloc)
{
    capture c;
    cap_open(&c, src3);
    diag_fatal_noloc(&c.d, "cannot open '%s'", "x.pipe");
    ck_assert_str_eq(cap_text(&c), "pipegen: error: cannot open 'x.pipe'\n");
    ck_assert_int_eq(c.d.errors, 1);
    cap_close(&c);
}
END_TEST

static void verror_wrap(diag_ctx *d, srcloc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, loc, fmt, ap);
    va_end(ap);
}

START_TEST(verror)
{
    capture c;
    cap_open(&c, src3);
    verror_wrap(&c.d, at(3, 1), "%s-%d", "v", 7);
    ck_assert_str_eq(cap_text(&c), "spec.pipe:3:1: error: v-7\n}\n^\n");
    cap_close(&c);
}
END_TEST

START_TEST(too_many_errors)
{
    capture c;
    cap_open(&c, NULL);
    ck_assert_int_eq(c.d.max_errors, 20);
    for (int i = 1; i <= 25; i++) {
        diag_error(&c.d, at(i, 1), "e%d", i);
        ck_assert(diag_too_many(&c.d) == (i > 20));
    }
    diag_warning(&c.d, W_STAGES, at(1, 1), "suppressed");
    diag_note(&c.d, at(1, 1), "suppressed");
    diag_fatal_noloc(&c.d, "suppressed");
    strbuf want;
    arena *a = arena_new();
    sb_init(&want, a);
    for (int i = 1; i <= 20; i++)
        sb_printf(&want, "spec.pipe:%d:1: error: e%d\n", i, i);
    sb_puts(&want, "pipegen: too many errors, stopping\n");
    ck_assert_str_eq(cap_text(&c), want.data);
    ck_assert_int_eq(c.d.errors, 26);
    ck_assert_int_eq(c.d.warnings, 1);
    arena_free(a);
    cap_close(&c);
}
END_TEST

START_TEST(no_limit_when_zero)
{
    capture c;
    cap_open(&c, NULL);
    c.d.max_errors = 0;
    for (int i = 0; i < 50; i++)
        diag_error(&c.d, at(1, 1), "e");
    ck_assert(!diag_too_many(&c.d));
    ck_assert(strstr(cap_text(&c), "too many") == NULL);
    ck_assert_uint_eq(c.m.len, 50 * strlen("spec.pipe:1:1: error: e\n"));
    cap_close(&c);
}
END_TEST

START_TEST(small_limit)
{
    capture c;
    cap_open(&c, NULL);
    c.d.max_errors = 1;
    diag_error(&c.d, at(1, 1), "a");
    diag_note(&c.d, at(1, 1), "about a");
    diag_error(&c.d, at(2, 1), "b");
    diag_error(&c.d, at(3, 1), "c");
    ck_assert_str_eq(cap_text(&c),
                     "spec.pipe:1:1: error: a\n"
                     "spec.pipe:1:1: note: about a\n"
                     "pipegen: too many errors, stopping\n");
    ck_assert_int_eq(c.d.errors, 3);
    cap_close(&c);
}
END_TEST

static Suite *diag_suite(void)
{
    Suite *s = suite_create("diag");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, error_format);
    tcase_add_test(tc, warning_and_note);
    tcase_add_test(tc, tabs_kept_in_caret_line);
    tcase_add_test(tc, caret_past_end_of_line);
    tcase_add_test(tc, crlf_line_is_quoted_without_cr);
    tcase_add_test(tc, line_beyond_source_is_not_quoted);
    tcase_add_test(tc, empty_last_line_is_quoted_empty);
    tcase_add_test(tc, column_zero_is_clamped);
    tcase_add_test(tc, no_line_no_quote);
    tcase_add_test(tc, other_file_not_quoted);
    tcase_add_test(tc, no_source_not_quoted);
    tcase_add_test(tc, nul_byte_quoted_verbatim);
    tcase_add_test(tc, fatal_noloc);
    tcase_add_test(tc, verror);
    suite_add_tcase(s, tc);
    TCase *lim = tcase_create("limit");
    tcase_add_test(lim, too_many_errors);
    tcase_add_test(lim, no_limit_when_zero);
    tcase_add_test(lim, small_limit);
    suite_add_tcase(s, lim);
    return s;
}

int main(void) { return run_suite(diag_suite()); }
