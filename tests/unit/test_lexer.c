/* Unit tests of the scanner (grammar/lexer.l): every token kind with its location, the
 * MECH start condition, opaque bodies (strings, character literals and comments that hide
 * braces; line counting through them), and every lexical error with its exact message. */
#include "harness.h"
#include "parser.h"
#include "lexer.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    int tok;
    const char *spelling;
} keywords[] = {
    { TOK_KW_PIPELINE, "pipeline" }, { TOK_KW_PARAM, "param" }, { TOK_KW_IN, "in" },
    { TOK_KW_OUT, "out" }, { TOK_KW_INOUT, "inout" }, { TOK_KW_THREADS, "threads" },
    { TOK_KW_STAGES, "stages" }, { TOK_KW_PRODUCER_WARPS, "producer_warps" },
    { TOK_KW_MARCH, "march" }, { TOK_KW_GRID, "grid" }, { TOK_KW_PER_TILE, "per_tile" },
    { TOK_KW_PERSISTENT, "persistent" }, { TOK_KW_TILE, "tile" }, { TOK_KW_AT, "at" },
    { TOK_KW_STEPS, "steps" }, { TOK_KW_OVER, "over" }, { TOK_KW_BY, "by" },
    { TOK_KW_STAGE, "stage" }, { TOK_KW_USING, "using" }, { TOK_KW_CACHE, "cache" },
    { TOK_KW_PREFETCH, "prefetch" }, { TOK_KW_EVICT, "evict" }, { TOK_KW_HALO, "halo" },
    { TOK_KW_ACCUM, "accum" }, { TOK_KW_COMBINE, "combine" }, { TOK_KW_INTO, "into" },
    { TOK_KW_COMPUTE, "compute" }, { TOK_KW_ELEMENTWISE, "elementwise" },
    { TOK_KW_STEP, "step" }, { TOK_KW_PROLOGUE, "prologue" },
    { TOK_KW_EPILOGUE, "epilogue" }, { TOK_KW_REFERENCE, "reference" },
};
enum { NKEYWORDS = sizeof keywords / sizeof keywords[0] };

/* Scan src completely. toks gets one word per token, "LINE:COL what", where what is the
 * keyword, the punctuation, id(NAME), int(VALUE), mech(NAME) or body(TEXT); diags gets
 * the diagnostics. */
typedef struct scan {
    arena *a;
    strbuf toks;
    char *diags;
    size_t diags_len;
    int errors;
    int ntoks;
} scan;

static void describe(strbuf *sb, int tok, const YYSTYPE *v)
{
    switch (tok) {
    case TOK_IDENT: sb_printf(sb, "id(%s)", v->str); return;
    case TOK_INT: sb_printf(sb, "int(%lld)", v->num); return;
    case TOK_MECH: sb_printf(sb, "mech(%s)", v->str); return;
    case TOK_BODY: sb_printf(sb, "body(%s)", v->str); return;
    case TOK_TYPE: sb_printf(sb, "type(%s)", ast_type_name(v->type)); return;
    default: break;
    }
    for (int i = 0; i < NKEYWORDS; i++)
        if (keywords[i].tok == tok) {
            sb_puts(sb, keywords[i].spelling);
            return;
        }
    if (tok > 0 && tok < 128)
        sb_printf(sb, "%c", tok);
    else
        sb_printf(sb, "tok%d", tok);
}

static void scan_run_n(scan *s, const char *src, size_t len)
{
    s->a = arena_new();
    sb_init(&s->toks, s->a);
    s->ntoks = 0;
    memfile m;
    diag_ctx d;
    diag_init(&d, mem_open(&m), "t.pipe", src, len);
    lex_state st;
    yyscan_t sc;
    ck_assert_int_eq(lex_open(&st, &sc, s->a, &d, "t.pipe", src, len), 0);
    for (;;) {
        YYSTYPE v;
        srcloc loc = { 0 };
        int tok = yylex(&v, &loc, sc);
        ck_assert_str_eq(loc.file, "t.pipe");
        sb_printf(&s->toks, "%s%d:%d ", s->ntoks++ ? " " : "", loc.line, loc.col);
        if (tok == TOK_YYEOF) {
            sb_puts(&s->toks, "EOF");
            /* Asking again after the end keeps answering the end. */
            ck_assert_int_eq(yylex(&v, &loc, sc), TOK_YYEOF);
            break;
        }
        describe(&s->toks, tok, &v);
    }
    lex_close(sc);
    s->diags = mem_close(&m);
    s->diags_len = m.len;
    s->errors = d.errors;
}

static void scan_run(scan *s, const char *src)
{
    scan_run_n(s, src, strlen(src));
}

static void scan_free(scan *s)
{
    free(s->diags);
    arena_free(s->a);
}

/* Scan src and require exactly these tokens and no diagnostics. */
static void expect_tokens(const char *src, const char *want)
{
    scan s;
    scan_run(&s, src);
    ck_assert_str_eq(s.toks.data, want);
    ck_assert_str_eq(s.diags, "");
    ck_assert_int_eq(s.errors, 0);
    scan_free(&s);
}

/* Scan src and require these tokens and exactly these diagnostics. */
static void expect_errors(const char *src, const char *want_toks, const char *want_diags,
                          int nerrors)
{
    scan s;
    scan_run(&s, src);
    ck_assert_str_eq(s.toks.data, want_toks);
    ck_assert_str_eq(s.diags, want_diags);
    ck_assert_int_eq(s.errors, nerrors);
    scan_free(&s);
}

/* Whether the n bytes at buf hold the string needle (diagnostics may hold NUL bytes). */
static bool contains(const char *buf, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(buf + i, needle, k) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------------ plain tokens */

START_TEST(every_keyword)
{
    for (int i = 0; i < NKEYWORDS; i++) {
        arena *a = arena_new();
        const char *src = arena_printf(a, "  %s", keywords[i].spelling);
        const char *want = arena_printf(a, "1:3 %s 1:%d EOF", keywords[i].spelling,
                                        3 + (int)strlen(keywords[i].spelling));
        expect_tokens(src, want);
        arena_free(a);
    }
}
END_TEST

START_TEST(type_names)
{
    /* Every element type's name (and int32, int's other name) is a type token; the C
     * spellings pipegen does not take stay names, for the parser to point at. */
    expect_tokens("float int32 uint64 uchar4 half2",
                  "1:1 type(float) 1:7 type(int) 1:13 type(uint64) 1:20 type(uchar4) "
                  "1:27 type(half2) 1:32 EOF");
    expect_tokens("unsigned int64_t", "1:1 id(unsigned) 1:10 id(int64_t) 1:17 EOF");
    for (int t = 0; t < TY__COUNT; t++)
        ck_assert_int_eq(ast_type_from_name(ast_type_name((elem_type)t)), t);
    ck_assert_str_eq(ast_type_of_c("unsigned"), "uint32");
    ck_assert_ptr_null(ast_type_of_c("uint33"));
    ck_assert_str_eq(ast_type_suggest("uint33"), "uint32");
}
END_TEST

START_TEST(near_keywords_are_identifiers)
{
    expect_tokens("pipelines Float in_ int9 _stage stage2 ca cg sum zero",
                  "1:1 id(pipelines) 1:11 id(Float) 1:17 id(in_) 1:21 id(int9) "
                  "1:26 id(_stage) 1:33 id(stage2) 1:40 id(ca) 1:43 id(cg) 1:46 id(sum) "
                  "1:50 id(zero) 1:54 EOF");
}
END_TEST

START_TEST(punctuation_and_lines)
{
    expect_tokens("a[i - 1 : 18]\n\t(x*2 + y),;\n",
                  "1:1 id(a) 1:2 [ 1:3 id(i) 1:5 - 1:7 int(1) 1:9 : 1:11 int(18) 1:13 ] "
                  "2:2 ( 2:3 id(x) 2:4 * 2:5 int(2) 2:7 + 2:9 id(y) 2:10 ) 2:11 , 2:12 ; "
                  "2:13 EOF");
}
END_TEST

START_TEST(integers)
{
    expect_tokens("0 007 4096 0x1F 0XfF 9223372036854775807 0x7fffffffffffffff",
                  "1:1 int(0) 1:3 int(7) 1:7 int(4096) 1:12 int(31) 1:17 int(255) "
                  "1:22 int(9223372036854775807) 1:42 int(9223372036854775807) 1:60 EOF");
}
END_TEST

START_TEST(integer_too_large)
{
    expect_errors("9223372036854775808 0x8000000000000000 1",
                  "1:1 int(0) 1:21 int(0) 1:40 int(1) 1:41 EOF",
                  "t.pipe:1:1: error: integer literal too large\n"
                  "9223372036854775808 0x8000000000000000 1\n"
                  "^\n"
                  "t.pipe:1:21: error: integer literal too large\n"
                  "9223372036854775808 0x8000000000000000 1\n"
                  "                    ^\n",
                  2);
}
END_TEST

START_TEST(invalid_integers)
{
    expect_errors("12abc 0x 0xg1 9_",
                  "1:1 int(0) 1:7 int(0) 1:10 int(0) 1:15 int(0) 1:17 EOF",
                  "t.pipe:1:1: error: invalid integer literal '12abc'\n"
                  "12abc 0x 0xg1 9_\n"
                  "^\n"
                  "t.pipe:1:7: error: invalid integer literal '0x'\n"
                  "12abc 0x 0xg1 9_\n"
                  "      ^\n"
                  "t.pipe:1:10: error: invalid integer literal '0xg1'\n"
                  "12abc 0x 0xg1 9_\n"
                  "         ^\n"
                  "t.pipe:1:15: error: invalid integer literal '9_'\n"
                  "12abc 0x 0xg1 9_\n"
                  "              ^\n",
                  4);
}
END_TEST

START_TEST(comments)
{
    expect_tokens("a // x { } \"\nb /* c\n d } ' */ e /* /* */ f //",
                  "1:1 id(a) 2:1 id(b) 3:11 id(e) 3:22 id(f) 3:26 EOF");
}
END_TEST

START_TEST(unterminated_comment)
{
    expect_errors("a\n  /* never\nclosed",
                  "1:1 id(a) 3:7 EOF",
                  "t.pipe:2:3: error: unterminated comment\n"
                  "  /* never\n"
                  "  ^\n",
                  1);
}
END_TEST

START_TEST(crlf_and_blanks)
{
    expect_tokens("a\r\n\tb\f\vc\r\n", "1:1 id(a) 2:2 id(b) 2:5 id(c) 2:6 EOF");
}
END_TEST

START_TEST(empty_and_blank_input)
{
    expect_tokens("", "1:1 EOF");
    expect_tokens("  \n\n  ", "1:1 EOF");
}
END_TEST

START_TEST(eof_after_last_token)
{
    expect_tokens("a\n  b;\n\n\n   \n", "1:1 id(a) 2:3 id(b) 2:4 ; 2:5 EOF");
}
END_TEST

/* ----------------------------------------------------------------------- mech */

START_TEST(mech_words)
{
    expect_tokens("using cp.async.mbarrier using pipeline-roles using pipeline using\n"
                  " /* c */ // d\n bulk using tensor_2d.x-1 x",
                  "1:1 using 1:7 mech(cp.async.mbarrier) 1:25 using 1:31 mech(pipeline-roles) "
                  "1:46 using 1:52 mech(pipeline) 1:61 using 3:2 mech(bulk) 3:7 using "
                  "3:13 mech(tensor_2d.x-1) 3:27 id(x) 3:28 EOF");
}
END_TEST

START_TEST(mech_missing)
{
    expect_tokens("using ; using 3 using\n", "1:1 using 1:7 ; 1:9 using 1:15 int(3) 1:17 using 1:22 EOF");
    expect_tokens("using cp.async.", "1:1 using 1:7 mech(cp.async.) 1:16 EOF");
}
END_TEST

START_TEST(mech_only_after_using)
{
    expect_errors("cp.async", "1:1 id(cp) 1:4 id(async) 1:9 EOF",
                  "t.pipe:1:3: error: unexpected character '.'\n"
                  "cp.async\n"
                  "  ^\n",
                  1);
}
END_TEST

/* ---------------------------------------------------------------------- bodies */

START_TEST(braces_and_bodies)
{
    /* The first '{' opens the pipeline; inside it every '{' is a body. */
    expect_tokens("p { step { a; } x { } } }",
                  "1:1 id(p) 1:3 { 1:5 step 1:10 body( a; ) 1:17 id(x) 1:19 body( ) 1:23 } "
                  "1:25 } 1:26 EOF");
}
END_TEST

START_TEST(after_close_a_brace_opens_again)
{
    expect_tokens("{ } { {x} }", "1:1 { 1:3 } 1:5 { 1:7 body(x) 1:11 } 1:12 EOF");
}
END_TEST

START_TEST(body_nested_and_multiline)
{
    expect_tokens("{ b {\n  if (x) { y(); }\n  { }\n} z",
                  "1:1 { 1:3 id(b) 1:5 body(\n  if (x) { y(); }\n  { }\n) 4:3 id(z) 4:4 EOF");
}
END_TEST

START_TEST(body_hides_braces)
{
    expect_tokens("{ {a = \"}{\\\"}\"; c = '}'; d = '\\''; e = '{';} z",
                  "1:1 { 1:3 body(a = \"}{\\\"}\"; c = '}'; d = '\\''; e = '{';) 1:46 id(z) "
                  "1:47 EOF");
    expect_tokens("{ {// }\n/* } { */ x / y /}\nz",
                  "1:1 { 1:3 body(// }\n/* } { */ x / y /) 3:1 id(z) 3:2 EOF");
}
END_TEST

START_TEST(body_keeps_line_count)
{
    expect_tokens("{\n  {\n\"a\\\nb\"\n/*\n\n*/\n'\\n'\n}\n  q",
                  "1:1 { 2:3 body(\n\"a\\\nb\"\n/*\n\n*/\n'\\n'\n) 10:3 id(q) 10:4 EOF");
}
END_TEST

START_TEST(unterminated_body)
{
    expect_errors("{\n  x {\n  a { b }\n",
                  "1:1 { 2:3 id(x) 2:5 body(\n  a { b }\n) 3:10 EOF",
                  "t.pipe:2:5: error: unterminated body (missing '}')\n"
                  "  x {\n"
                  "    ^\n",
                  1);
}
END_TEST

START_TEST(unterminated_string_at_newline)
{
    expect_errors("{ { s = \"ab\n } q }",
                  "1:1 { 1:3 body( s = \"ab\n ) 2:4 id(q) 2:6 } 2:7 EOF",
                  "t.pipe:1:9: error: unterminated string literal\n"
                  "{ { s = \"ab\n"
                  "        ^\n",
                  1);
}
END_TEST

START_TEST(unterminated_char_at_newline)
{
    expect_errors("{ { c = 'a;\n } }",
                  "1:1 { 1:3 body( c = 'a;\n ) 2:4 } 2:5 EOF",
                  "t.pipe:1:9: error: unterminated character literal\n"
                  "{ { c = 'a;\n"
                  "        ^\n",
                  1);
}
END_TEST

START_TEST(unterminated_at_eof_in_body)
{
    expect_errors("{ { s = \"ab",
                  "1:1 { 1:3 body( s = \"ab) 1:12 EOF",
                  "t.pipe:1:9: error: unterminated string literal\n"
                  "{ { s = \"ab\n"
                  "        ^\n",
                  1);
    expect_errors("{ { c = '\\",
                  "1:1 { 1:3 body( c = '\\) 1:11 EOF",
                  "t.pipe:1:9: error: unterminated character literal\n"
                  "{ { c = '\\\n"
                  "        ^\n",
                  1);
    expect_errors("{ {\n /* x } ",
                  "1:1 { 1:3 body(\n /* x } ) 2:8 EOF",
                  "t.pipe:2:2: error: unterminated comment\n"
                  " /* x } \n"
                  " ^\n",
                  1);
}
END_TEST

/* -------------------------------------------------------------- lexical errors */

START_TEST(unexpected_characters)
{
    expect_errors("a @ $\x01 \xc3\xa9 \\ ' \" \x80 b",
                  "1:1 id(a) 1:19 id(b) 1:20 EOF",
                  "t.pipe:1:3: error: unexpected character '@'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "  ^\n"
                  "t.pipe:1:5: error: unexpected character '$'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "    ^\n"
                  "t.pipe:1:6: error: unexpected character '\\x01'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "     ^\n"
                  "t.pipe:1:8: error: unexpected character '\\xC3\\xA9'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "       ^\n"
                  "t.pipe:1:11: error: unexpected character '\\x5C'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "          ^\n"
                  "t.pipe:1:13: error: unexpected character '\\x27'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "            ^\n"
                  "t.pipe:1:15: error: unexpected character '\"'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "              ^\n"
                  "t.pipe:1:17: error: unexpected character '\\x80'\n"
                  "a @ $\x01 \xc3\xa9 \\ ' \" \x80 b\n"
                  "                ^\n",
                  8);
}
END_TEST

START_TEST(nul_bytes)
{
    static const char src[] = "a\0b { {x\0y} }";
    scan s;
    scan_run_n(&s, src, sizeof src - 1);
    ck_assert_str_eq(s.toks.data, "1:1 id(a) 1:3 id(b) 1:5 { 1:7 body(xy) 1:13 } 1:14 EOF");
    ck_assert_int_eq(s.errors, 2);
    /* The quoted line holds the NUL bytes verbatim: compare the headers only. */
    ck_assert(contains(s.diags, s.diags_len, "t.pipe:1:2: error: unexpected NUL byte\n"));
    ck_assert(contains(s.diags, s.diags_len, "t.pipe:1:9: error: unexpected NUL byte\n"));
    scan_free(&s);
}
END_TEST

START_TEST(nul_in_comment)
{
    static const char src[] = "/* \0 */ a // b \0 c }\nd";
    scan s;
    scan_run_n(&s, src, sizeof src - 1);
    ck_assert_str_eq(s.toks.data, "1:9 id(a) 2:1 id(d) 2:2 EOF");
    ck_assert_int_eq(s.errors, 2);
    ck_assert(contains(s.diags, s.diags_len, "t.pipe:1:4: error: unexpected NUL byte\n"));
    ck_assert(contains(s.diags, s.diags_len, "t.pipe:1:16: error: unexpected NUL byte\n"));
    scan_free(&s);
}
END_TEST

START_TEST(nul_in_body_comment_keeps_the_comment)
{
    /* The '}' after the NUL is still inside the // comment: the body goes on. */
    static const char src[] = "{ { // x\0 }\n} z";
    scan s;
    scan_run_n(&s, src, sizeof src - 1);
    ck_assert_str_eq(s.toks.data, "1:1 { 1:3 body( // x }\n) 2:3 id(z) 2:4 EOF");
    ck_assert_int_eq(s.errors, 1);
    ck_assert(contains(s.diags, s.diags_len, "t.pipe:1:9: error: unexpected NUL byte\n"));
    scan_free(&s);
}
END_TEST

START_TEST(long_identifier)
{
    enum { N = 100000 };
    char *src = malloc(N + 3);
    memset(src, 'x', N);
    memcpy(src + N, " y", 3);
    scan s;
    scan_run(&s, src);
    ck_assert_int_eq(s.ntoks, 3);
    ck_assert(strstr(s.toks.data, "1:100002 id(y) 1:100003 EOF") != NULL);
    scan_free(&s);
    free(src);
}
END_TEST

static Suite *lexer_suite(void)
{
    Suite *s = suite_create("lexer");
    TCase *tc = tcase_create("tokens");
    tcase_add_test(tc, every_keyword);
    tcase_add_test(tc, type_names);
    tcase_add_test(tc, near_keywords_are_identifiers);
    tcase_add_test(tc, punctuation_and_lines);
    tcase_add_test(tc, integers);
    tcase_add_test(tc, integer_too_large);
    tcase_add_test(tc, invalid_integers);
    tcase_add_test(tc, comments);
    tcase_add_test(tc, unterminated_comment);
    tcase_add_test(tc, crlf_and_blanks);
    tcase_add_test(tc, empty_and_blank_input);
    tcase_add_test(tc, eof_after_last_token);
    tcase_add_test(tc, long_identifier);
    suite_add_tcase(s, tc);
    TCase *mech = tcase_create("mech");
    tcase_add_test(mech, mech_words);
    tcase_add_test(mech, mech_missing);
    tcase_add_test(mech, mech_only_after_using);
    suite_add_tcase(s, mech);
    TCase *body = tcase_create("bodies");
    tcase_add_test(body, braces_and_bodies);
    tcase_add_test(body, after_close_a_brace_opens_again);
    tcase_add_test(body, body_nested_and_multiline);
    tcase_add_test(body, body_hides_braces);
    tcase_add_test(body, body_keeps_line_count);
    tcase_add_test(body, unterminated_body);
    tcase_add_test(body, unterminated_string_at_newline);
    tcase_add_test(body, unterminated_char_at_newline);
    tcase_add_test(body, unterminated_at_eof_in_body);
    suite_add_tcase(s, body);
    TCase *err = tcase_create("errors");
    tcase_add_test(err, unexpected_characters);
    tcase_add_test(err, nul_bytes);
    tcase_add_test(err, nul_in_comment);
    tcase_add_test(err, nul_in_body_comment_keeps_the_comment);
    suite_add_tcase(s, err);
    return s;
}

int main(void) { return run_suite(lexer_suite()); }
