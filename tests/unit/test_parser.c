/* Unit tests of the parser and the AST (grammar/parser.y, src/ast.c): exact AST dumps for
 * every item, locations of every node, expression precedence, syntax error messages,
 * recovery (several errors in one run), and the checks the constructors make. */
#include "harness.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One parse: the AST (still in its arena), its dump, and the diagnostics. */
typedef struct parsed {
    arena *a;
    ast_file *f;
    char *dump, *diags;
    int errors;
} parsed;

static void parse(parsed *p, const char *src)
{
    harness h;
    h_start(&h, "t.pipe", src);
    p->f = h_parse(&h);
    h_end(&h);
    p->a = h.a;
    p->diags = h.diags;
    p->errors = h.errors;
    p->dump = ast_text(p->f);
}

static void parsed_free(parsed *p)
{
    free(p->dump);
    free(p->diags);
    arena_free(p->a);
}

/* src must parse without a diagnostic and dump as want. */
static void expect_dump(const char *src, const char *want)
{
    parsed p;
    parse(&p, src);
    ck_assert_str_eq(p.diags, "");
    ck_assert_int_eq(p.errors, 0);
    ck_assert_str_eq(p.dump, want);
    parsed_free(&p);
}

/* src must give exactly these diagnostics (and this many errors). */
static void expect_diags(const char *src, const char *want, int nerrors)
{
    parsed p;
    parse(&p, src);
    ck_assert_str_eq(p.diags, want);
    ck_assert_int_eq(p.errors, nerrors);
    parsed_free(&p);
}

#define ck_loc(l, LINE, COL)                                                                 \
    do {                                                                                     \
        ck_assert_int_eq((l).line, (LINE));                                                  \
        ck_assert_int_eq((l).col, (COL));                                                    \
        ck_assert_str_eq((l).file, "t.pipe");                                                \
    } while (0)

static const char *saxpy =
    "// saxpy\n"
    "pipeline saxpy {\n"
    "  param float a;\n"
    "  in    float x[n];\n"
    "  in    float y[n];\n"
    "  out   float z[n];\n"
    "  threads 256;\n"
    "  stages  4;\n"
    "  tile z[4096];\n"
    "  stage x, y using cp.async cache cg;\n"
    "  compute elementwise (i) { z[i] = a * x[i] + y[i]; }\n"
    "  reference (i) { z[i] = a * x[i] + y[i]; }\n"
    "}\n";

START_TEST(saxpy_dump)
{
    expect_dump(saxpy,
                "(pipeline saxpy @2:1\n"
                "  (param float a @3:3)\n"
                "  (array in float x [n] @4:3)\n"
                "  (array in float y [n] @5:3)\n"
                "  (array out float z [n] @6:3)\n"
                "  (threads 256 @7:3)\n"
                "  (stages 4 @8:3)\n"
                "  (tile z [4096] @9:3)\n"
                "  (stage x using cp.async cache cg @10:3)\n"
                "  (stage y using cp.async cache cg @10:3)\n"
                "  (compute elementwise (i) \" z[i] = a * x[i] + y[i]; \" @11:3)\n"
                "  (reference (i) \" z[i] = a * x[i] + y[i]; \" @12:3)\n"
                ")\n");
}
END_TEST

START_TEST(every_item_dump)
{
    expect_dump("pipeline all {\n"
                "  param double p; param int q; param half h; param bfloat16 b; param uint8 u;\n"
                "  inout float g[ny][nx]; out int s[1]; in half t[2][N][0x10];\n"
                "  threads 128; stages 3; producer_warps 1; march 8;\n"
                "  grid per_tile; grid persistent;\n"
                "  tile C[64][64] at (row0, col0);\n"
                "  tile D[8][8][8] at (a, b, c);\n"
                "  steps k over K by 32; steps k2 over 1024 by 1;\n"
                "  stage A[row0 : 64][k : 32];\n"
                "  stage u[j - 1 : 18][i*2 + 1 : 130] halo 1 clamp;\n"
                "  stage v halo 2 prefetch 256 evict unchanged cache ca using pipeline;\n"
                "  stage w halo 3 zero evict normal; stage w2 evict last;\n"
                "  accum float acc combine sum into s;\n"
                "  accum int m combine max into s; accum double n combine min into s;\n"
                "  prologue {p}\n"
                "  compute step {s}\n"
                "  compute elementwise (i, j, k) {e}\n"
                "  epilogue {x}\n"
                "  reference {r}\n"
                "}\n",
                "(pipeline all @1:1\n"
                "  (param double p @2:3)\n"
                "  (param int q @2:19)\n"
                "  (param half h @2:32)\n"
                "  (param bfloat16 b @2:46)\n"
                "  (param uint8 u @2:64)\n"
                "  (array inout float g [ny][nx] @3:3)\n"
                "  (array out int s [1] @3:26)\n"
                "  (array in half t [2][N][16] @3:40)\n"
                "  (threads 128 @4:3)\n"
                "  (stages 3 @4:16)\n"
                "  (producer_warps 1 @4:26)\n"
                "  (march 8 @4:44)\n"
                "  (grid per_tile @5:3)\n"
                "  (grid persistent @5:18)\n"
                "  (tile C [64][64] at (row0 col0) @6:3)\n"
                "  (tile D [8][8][8] at (a b c) @7:3)\n"
                "  (steps k over K by 32 @8:3)\n"
                "  (steps k2 over 1024 by 1 @8:25)\n"
                "  (stage A [row0 : 64][k : 32] @9:3)\n"
                "  (stage u [(- j 1) : 18][(+ (* i 2) 1) : 130] halo 1 clamp @10:3)\n"
                "  (stage v using pipeline cache ca prefetch 256 evict unchanged halo 2 zero @11:3)\n"
                "  (stage w evict normal halo 3 zero @12:3)\n"
                "  (stage w2 evict last @12:37)\n"
                "  (accum float acc combine sum into s @13:3)\n"
                "  (accum int m combine max into s @14:3)\n"
                "  (accum double n combine min into s @14:35)\n"
                "  (prologue \"p\" @15:3)\n"
                "  (compute step \"s\" @16:3)\n"
                "  (compute elementwise (i j k) \"e\" @17:3)\n"
                "  (epilogue \"x\" @18:3)\n"
                "  (reference \"r\" @19:3)\n"
                ")\n");
}
END_TEST

START_TEST(stages_depths_dump)
{
    expect_dump("pipeline p { stages 4, 3, 2; }",
                "(pipeline p @1:1\n  (stages 4, 3, 2 @1:14)\n)\n");
    expect_diags("pipeline p { stages 5, 4, 3, 2, 1; }",
                 "t.pipe:1:33: error: 'stages' takes at most 4 depths\n"
                 "pipeline p { stages 5, 4, 3, 2, 1; }\n"
                 "                                ^\n",
                 1);
}
END_TEST

START_TEST(empty_pipeline)
{
    expect_dump("pipeline e{}", "(pipeline e @1:1\n)\n");
}
END_TEST

START_TEST(body_text_escaped_in_dump)
{
    expect_dump("pipeline p { prologue {\n\tputs(\"a\\\\b\"); /* } */\n} }",
                "(pipeline p @1:1\n"
                "  (prologue \"\\n\\tputs(\\\"a\\\\\\\\b\\\"); /* } */\\n\" @1:14)\n"
                ")\n");
}
END_TEST

/* ------------------------------------------------------------------- locations */

START_TEST(item_field_locations)
{
    parsed p;
    parse(&p, "pipeline p {\n"
              "  in float x[n][4];\n"
              "  threads 256;\n"
              "  tile x[8][16] at (r, c);\n"
              "  steps k over K by 32;\n"
              "  accum float acc combine sum into s;\n"
              "  compute elementwise (i, j) {\n    body\n  }\n"
              "}\n");
    ck_assert_int_eq(p.errors, 0);
    ast_pipeline *pl = p.f->pipeline;
    ck_loc(pl->loc, 1, 1);
    ck_loc(pl->name_loc, 1, 10);
    ast_item *it = pl->items;
    ck_assert_int_eq(it->kind, IT_ARRAY);
    ck_loc(it->loc, 2, 3);
    ck_loc(it->type_loc, 2, 6);
    ck_loc(it->name_loc, 2, 12);
    ck_assert_int_eq(it->rank, 2);
    ck_loc(it->dims[0].loc, 2, 14);
    ck_assert_str_eq(it->dims[0].name, "n");
    ck_loc(it->dims[1].loc, 2, 17);
    ck_assert_ptr_null(it->dims[1].name);
    ck_assert_int_eq(it->dims[1].value, 4);
    it = it->next;
    ck_loc(it->value_loc, 3, 11);
    ck_assert_int_eq(it->value, 256);
    it = it->next;
    ck_assert_int_eq(it->kind, IT_TILE);
    ck_loc(it->name_loc, 4, 8);
    ck_assert_int_eq(it->nat, 2);
    ck_assert_str_eq(it->at[1], "c");
    ck_loc(it->at_loc[0], 4, 21);
    ck_loc(it->at_loc[1], 4, 24);
    it = it->next;
    ck_assert_int_eq(it->kind, IT_STEPS);
    ck_loc(it->var_loc, 5, 9);
    ck_loc(it->bound.loc, 5, 16);
    ck_assert_str_eq(it->bound.name, "K");
    ck_loc(it->by_loc, 5, 21);
    ck_assert_int_eq(it->by, 32);
    it = it->next;
    ck_assert_int_eq(it->kind, IT_ACCUM);
    ck_loc(it->type_loc, 6, 9);
    ck_loc(it->name_loc, 6, 15);
    ck_loc(it->combine_loc, 6, 27);
    ck_loc(it->into_loc, 6, 36);
    ck_assert_str_eq(it->into, "s");
    it = it->next;
    ck_assert_int_eq(it->kind, IT_BODY);
    ck_assert_int_eq(it->body_kind, BODY_ELEMENTWISE);
    ck_loc(it->loc, 7, 3);
    ck_loc(it->idx_loc[1], 7, 27);
    ck_loc(it->text_loc, 7, 31);
    ck_assert_str_eq(it->text, "\n    body\n  ");
    ck_assert_ptr_null(it->next);
    parsed_free(&p);
}
END_TEST

START_TEST(stage_locations_and_opts)
{
    parsed p;
    parse(&p, "pipeline p {\n"
              "  stage a[r - 1 : 64], b\n"
              "     using cp.async prefetch 128 evict first halo 2 clamp cache cg;\n"
              "}\n");
    ck_assert_int_eq(p.errors, 0);
    ast_item *a = p.f->pipeline->items, *b = a->next;
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(b->next);
    ck_assert_ptr_eq(p.f->pipeline->tail, &b->next);
    ck_loc(a->loc, 2, 3);
    ck_loc(b->loc, 2, 3);
    ck_loc(a->name_loc, 2, 9);
    ck_loc(b->name_loc, 2, 24);
    ck_assert_int_eq(a->nranges, 1);
    ck_assert_int_eq(b->nranges, 0);
    ck_loc(a->ranges[0].loc, 2, 10);
    ck_loc(a->ranges[0].origin->loc, 2, 11);
    ck_loc(a->ranges[0].extent->loc, 2, 19);
    for (ast_item *it = a; it; it = it->next) {
        ck_assert_str_eq(it->opts.mech, "cp.async");
        ck_loc(it->opts.mech_loc, 3, 12);
        ck_assert_int_eq(it->opts.prefetch, 128);
        ck_loc(it->opts.prefetch_loc, 3, 30);
        ck_assert_int_eq(it->opts.evict, EVICT_FIRST);
        ck_loc(it->opts.evict_loc, 3, 40);
        ck_assert_int_eq(it->opts.halo, 2);
        ck_loc(it->opts.halo_loc, 3, 51);
        ck_assert_int_eq(it->opts.halo_fill, HALO_CLAMP);
        ck_assert_int_eq(it->opts.cache, CACHE_CG);
        ck_loc(it->opts.cache_loc, 3, 65);
    }
    parsed_free(&p);
}
END_TEST

START_TEST(unset_options_stay_zero)
{
    parsed p;
    parse(&p, "pipeline p { stage x; }");
    ast_item *it = p.f->pipeline->items;
    ck_assert_ptr_null(it->opts.mech);
    ck_assert_int_eq(it->opts.cache, CACHE_DEFAULT);
    ck_assert_int_eq(it->opts.evict, EVICT_DEFAULT);
    ck_assert_int_eq(it->opts.prefetch, 0);
    ck_assert_int_eq(it->opts.halo, 0);
    ck_assert_int_eq(it->opts.halo_fill, HALO_ZERO);
    ck_assert_int_eq(it->opts.halo_loc.line, 0);
    parsed_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ expressions */

START_TEST(expression_precedence)
{
    expect_dump("pipeline p { stage x[a + b * c - -d : (a + b) * c][a - b - c : a * b * c]"
                "[--a : -(1)]; }",
                "(pipeline p @1:1\n"
                "  (stage x [(- (+ a (* b c)) (neg d)) : (* (+ a b) c)]"
                "[(- (- a b) c) : (* (* a b) c)][(neg (neg a)) : (neg 1)] @1:14)\n"
                ")\n");
}
END_TEST

START_TEST(expression_locations)
{
    parsed p;
    parse(&p, "pipeline p { stage x[(i) * 2 + 1 : -k]; }");
    ck_assert_int_eq(p.errors, 0);
    ast_range *r = &p.f->pipeline->items->ranges[0];
    ast_expr *add = r->origin;
    ck_assert_int_eq(add->kind, EX_ADD);
    ck_loc(add->loc, 1, 22);                /* its first token is the '(' */
    ck_loc(add->lhs->lhs->loc, 1, 23);      /* the parentheses add no node */
    ck_assert_int_eq(add->lhs->kind, EX_MUL);
    ck_loc(add->lhs->rhs->loc, 1, 28);
    ck_loc(add->rhs->loc, 1, 32);
    ck_assert_int_eq(add->rhs->num, 1);
    ck_assert_int_eq(r->extent->kind, EX_NEG);
    ck_loc(r->extent->loc, 1, 36);
    ck_assert_ptr_null(r->extent->rhs);
    ck_assert_str_eq(r->extent->lhs->name, "k");
    parsed_free(&p);
}
END_TEST

START_TEST(deep_nesting_is_an_error_not_a_crash)
{
    enum { N = 5000 };
    char *src = malloc(2 * N + 64);
    strcpy(src, "pipeline p { stage x[");
    size_t n = strlen(src);
    memset(src + n, '(', N);
    strcpy(src + n + N, "a");
    memset(src + n + N + 1, ')', N);
    strcpy(src + n + 2 * N + 1, " : 1]; }");
    parsed p;
    parse(&p, src);
    ck_assert_int_eq(p.errors, 1);
    ck_assert(strstr(p.diags, "error: nesting too deep (parser stack exhausted)\n") != NULL);
    parsed_free(&p);
    free(src);
}
END_TEST

START_TEST(moderate_nesting_is_fine)
{
    char src[512] = "pipeline p { stage x[";
    for (int i = 0; i < 100; i++)
        strcat(src, "(");
    strcat(src, "a");
    for (int i = 0; i < 100; i++)
        strcat(src, ")");
    strcat(src, " : 1]; }");
    expect_dump(src, "(pipeline p @1:1\n  (stage x [a : 1] @1:14)\n)\n");
}
END_TEST

/* --------------------------------------------------------------- syntax errors */

START_TEST(missing_semicolon)
{
    expect_diags("pipeline p {\n  threads 4\n  stages 2;\n}\n",
                 "t.pipe:3:3: error: syntax error, unexpected 'stages', expecting ';' or ','\n"
                 "  stages 2;\n"
                 "  ^\n",
                 1);
}
END_TEST

START_TEST(unknown_item_word)
{
    expect_diags("pipeline p {\n  thread 4;\n}\n",
                 "t.pipe:2:3: error: syntax error, unexpected identifier 'thread', "
                 "expecting an item or '}'\n"
                 "  thread 4;\n"
                 "  ^\n",
                 1);
}
END_TEST

START_TEST(bad_type)
{
    expect_diags("pipeline p { param flot a; }",
                 "t.pipe:1:20: error: syntax error, unexpected identifier 'flot', "
                 "expecting a type; did you mean 'float'?\n"
                 "pipeline p { param flot a; }\n"
                 "                   ^\n",
                 1);
}
END_TEST

START_TEST(stage_option_expected)
{
    expect_diags("pipeline p { stage x y; }",
                 "t.pipe:1:22: error: syntax error, unexpected identifier 'y', "
                 "expecting a stage option or ';' or ',' or '['\n"
                 "pipeline p { stage x y; }\n"
                 "                     ^\n",
                 1);
}
END_TEST

START_TEST(missing_mechanism)
{
    expect_diags("pipeline p { stage x using; }",
                 "t.pipe:1:27: error: syntax error, unexpected ';', expecting lowering name\n"
                 "pipeline p { stage x using; }\n"
                 "                          ^\n",
                 1);
}
END_TEST

START_TEST(body_expected)
{
    expect_diags("pipeline p { prologue; compute elementwise (i) x }",
                 "t.pipe:1:22: error: syntax error, unexpected ';', expecting '{'\n"
                 "pipeline p { prologue; compute elementwise (i) x }\n"
                 "                     ^\n"
                 "t.pipe:1:48: error: syntax error, unexpected identifier 'x', expecting '{'\n"
                 "pipeline p { prologue; compute elementwise (i) x }\n"
                 "                                               ^\n",
                 2);
}
END_TEST

START_TEST(empty_input)
{
    parsed p;
    parse(&p, "");
    ck_assert_str_eq(p.diags, "t.pipe:1:1: error: syntax error, unexpected end of file, "
                              "expecting 'pipeline'\n\n^\n");
    ck_assert_ptr_null(p.f);
    ck_assert_str_eq(p.dump, "(nothing)\n");
    parsed_free(&p);
}
END_TEST

START_TEST(missing_close_at_eof)
{
    expect_diags("pipeline p {\n  threads 4;\n\n",
                 "t.pipe:2:13: error: syntax error, unexpected end of file, "
                 "expecting an item or '}'\n"
                 "  threads 4;\n"
                 "            ^\n",
                 1);
}
END_TEST

START_TEST(trailing_input)
{
    expect_diags("pipeline a { }\npipeline b { }\n",
                 "t.pipe:2:1: error: syntax error, unexpected 'pipeline', expecting end of file\n"
                 "pipeline b { }\n"
                 "^\n",
                 1);
}
END_TEST

START_TEST(garbage_before_pipeline)
{
    parsed p;
    parse(&p, "threads 4; pipeline p { }");
    ck_assert_str_eq(p.diags, "t.pipe:1:1: error: syntax error, unexpected 'threads', "
                              "expecting 'pipeline'\n"
                              "threads 4; pipeline p { }\n"
                              "^\n");
    ck_assert_ptr_null(p.f);
    parsed_free(&p);
}
END_TEST

START_TEST(negative_integer_item)
{
    expect_diags("pipeline p { threads -1; }",
                 "t.pipe:1:22: error: syntax error, unexpected '-', expecting integer\n"
                 "pipeline p { threads -1; }\n"
                 "                     ^\n",
                 1);
}
END_TEST

/* -------------------------------------------------------------------- recovery */

START_TEST(recovery_reports_every_bad_item)
{
    parsed p;
    parse(&p, "pipeline p {\n"
              "  threads x;\n"
              "  param float a;\n"
              "  tile t[4 4];\n"
              "  prologue oops { int x; }\n"
              "  stages 3;\n"
              "  grid sometimes;\n"
              "}\n");
    ck_assert_str_eq(p.diags,
                     "t.pipe:2:11: error: syntax error, unexpected identifier 'x', "
                     "expecting integer\n"
                     "  threads x;\n"
                     "          ^\n"
                     "t.pipe:4:12: error: syntax error, unexpected integer, expecting ']'\n"
                     "  tile t[4 4];\n"
                     "           ^\n"
                     "t.pipe:5:12: error: syntax error, unexpected identifier 'oops', "
                     "expecting '{'\n"
                     "  prologue oops { int x; }\n"
                     "           ^\n"
                     "t.pipe:7:8: error: syntax error, unexpected identifier 'sometimes', "
                     "expecting 'per_tile' or 'persistent'\n"
                     "  grid sometimes;\n"
                     "       ^\n");
    ck_assert_int_eq(p.errors, 4);
    /* The good items around the bad ones are all there. */
    ck_assert_str_eq(p.dump, "(pipeline p @1:1\n"
                             "  (param float a @3:3)\n"
                             "  (stages 3 @6:3)\n"
                             ")\n");
    parsed_free(&p);
}
END_TEST

START_TEST(recovery_at_closing_brace)
{
    parsed p;
    parse(&p, "pipeline p { threads 4; stages 2 }");
    ck_assert_str_eq(p.diags, "t.pipe:1:34: error: syntax error, unexpected '}', "
                              "expecting ';' or ','\n"
                              "pipeline p { threads 4; stages 2 }\n"
                              "                                 ^\n");
    ck_assert_str_eq(p.dump, "(pipeline p @1:1\n  (threads 4 @1:14)\n)\n");
    parsed_free(&p);
}
END_TEST

START_TEST(lexical_error_keeps_the_item)
{
    parsed p;
    parse(&p, "pipeline p { threads 4 @; stages 99999999999999999999; }");
    ck_assert_str_eq(p.diags,
                     "t.pipe:1:24: error: unexpected character '@'\n"
                     "pipeline p { threads 4 @; stages 99999999999999999999; }\n"
                     "                       ^\n"
                     "t.pipe:1:34: error: integer literal too large\n"
                     "pipeline p { threads 4 @; stages 99999999999999999999; }\n"
                     "                                 ^\n");
    ck_assert_str_eq(p.dump, "(pipeline p @1:1\n  (threads 4 @1:14)\n  (stages 0 @1:27)\n)\n");
    parsed_free(&p);
}
END_TEST

START_TEST(unterminated_body_reports_once)
{
    expect_diags("pipeline p {\n  compute step {\n    x = 1;\n",
                 "t.pipe:2:16: error: unterminated body (missing '}')\n"
                 "  compute step {\n"
                 "               ^\n",
                 1);
}
END_TEST

START_TEST(unterminated_comment_reports_once)
{
    expect_diags("pipeline p {\n  /* threads 4;\n}\n",
                 "t.pipe:2:3: error: unterminated comment\n"
                 "  /* threads 4;\n"
                 "  ^\n",
                 1);
}
END_TEST

START_TEST(error_limit_stops_reporting)
{
    strbuf sb;
    arena *a = arena_new();
    sb_init(&sb, a);
    sb_puts(&sb, "pipeline p {\n");
    for (int i = 0; i < 30; i++)
        sb_puts(&sb, "threads x;\n");
    sb_puts(&sb, "}\n");
    parsed p;
    parse(&p, sb.data);
    ck_assert_int_eq(p.errors, 30);
    ck_assert(strstr(p.diags, "t.pipe:21:9: error:") != NULL);
    ck_assert(strstr(p.diags, "t.pipe:22:9: error:") == NULL);
    const char *tail = "pipegen: too many errors, stopping\n";
    ck_assert_str_eq(p.diags + strlen(p.diags) - strlen(tail), tail);
    parsed_free(&p);
    arena_free(a);
}
END_TEST

/* ------------------------------------------------------- constructor diagnostics */

START_TEST(rank_limits)
{
    expect_diags("pipeline p {\n"
                 "  in float x[a][b][c][d][e];\n"
                 "  tile x[1][2][3][4];\n"
                 "  tile y[1] at (a, b, c, d);\n"
                 "  stage x[0:1][0:1][0:1][0:1];\n"
                 "  compute elementwise (i, j, k, l, m) { }\n"
                 "  reference (i, j, k, l) { }\n"
                 "}\n",
                 "t.pipe:2:23: error: arrays have at most 3 dimensions\n"
                 "  in float x[a][b][c][d][e];\n"
                 "                      ^\n"
                 "t.pipe:3:19: error: a tile has at most 3 dimensions\n"
                 "  tile x[1][2][3][4];\n"
                 "                  ^\n"
                 "t.pipe:4:26: error: a tile has at most 3 origin names\n"
                 "  tile y[1] at (a, b, c, d);\n"
                 "                         ^\n"
                 "t.pipe:5:25: error: a staged region has at most 3 dimensions\n"
                 "  stage x[0:1][0:1][0:1][0:1];\n"
                 "                        ^\n"
                 "t.pipe:6:33: error: a body has at most 3 index names\n"
                 "  compute elementwise (i, j, k, l, m) { }\n"
                 "                                ^\n"
                 "t.pipe:7:23: error: a body has at most 3 index names\n"
                 "  reference (i, j, k, l) { }\n"
                 "                      ^\n",
                 6);
}
END_TEST

START_TEST(rank_limit_keeps_first_three)
{
    parsed p;
    parse(&p, "pipeline p { in float x[a][b][c][d]; }");
    ck_assert_int_eq(p.errors, 1);
    ck_assert_int_eq(p.f->pipeline->items->rank, 3);
    ck_assert_str_eq(p.f->pipeline->items->dims[2].name, "c");
    parsed_free(&p);
}
END_TEST

START_TEST(contextual_words)
{
    expect_diags("pipeline p {\n"
                 "  stage x cache cx evict sometimes halo 1 clampy;\n"
                 "  accum float s combine avg into q;\n"
                 "}\n",
                 "t.pipe:2:17: error: unknown cache operator 'cx' (expected ca or cg)\n"
                 "  stage x cache cx evict sometimes halo 1 clampy;\n"
                 "                ^\n"
                 "t.pipe:2:26: error: unknown eviction policy 'sometimes' "
                 "(expected normal, first, last or unchanged)\n"
                 "  stage x cache cx evict sometimes halo 1 clampy;\n"
                 "                         ^\n"
                 "t.pipe:2:43: error: unknown halo fill 'clampy' (expected zero, clamp or mirror)\n"
                 "  stage x cache cx evict sometimes halo 1 clampy;\n"
                 "                                          ^\n"
                 "t.pipe:3:25: error: unknown combine operator 'avg' "
                 "(expected sum, min, max, argmin or argmax)\n"
                 "  accum float s combine avg into q;\n"
                 "                        ^\n",
                 4);
}
END_TEST

START_TEST(duplicate_options)
{
    expect_diags("pipeline p { stage x using a using b cache ca cache cg prefetch 64 prefetch 64 "
                 "evict first evict last halo 1 halo 2; }",
                 "t.pipe:1:36: error: stage option 'using' given twice\n"
                 "pipeline p { stage x using a using b cache ca cache cg prefetch 64 prefetch 64 "
                 "evict first evict last halo 1 halo 2; }\n"
                 "                                   ^\n"
                 "t.pipe:1:53: error: stage option 'cache' given twice\n"
                 "pipeline p { stage x using a using b cache ca cache cg prefetch 64 prefetch 64 "
                 "evict first evict last halo 1 halo 2; }\n"
                 "                                                    ^\n"
                 "t.pipe:1:77: error: stage option 'prefetch' given twice\n"
                 "pipeline p { stage x using a using b cache ca cache cg prefetch 64 prefetch 64 "
                 "evict first evict last halo 1 halo 2; }\n"
                 "                                                                            ^\n"
                 "t.pipe:1:98: error: stage option 'evict' given twice\n"
                 "pipeline p { stage x using a using b cache ca cache cg prefetch 64 prefetch 64 "
                 "evict first evict last halo 1 halo 2; }\n"
                 "                                                                              "
                 "                   ^\n"
                 "t.pipe:1:115: error: stage option 'halo' given twice\n"
                 "pipeline p { stage x using a using b cache ca cache cg prefetch 64 prefetch 64 "
                 "evict first evict last halo 1 halo 2; }\n"
                 "                                                                              "
                 "                                    ^\n",
                 5);
}
END_TEST

START_TEST(huge_option_values_clamped)
{
    parsed p;
    parse(&p, "pipeline p { stage x prefetch 4294967424 halo 0x7fffffffffffffff; }");
    ck_assert_int_eq(p.errors, 0);
    ck_assert_int_eq(p.f->pipeline->items->opts.prefetch, INT_MAX);
    ck_assert_int_eq(p.f->pipeline->items->opts.halo, INT_MAX);
    parsed_free(&p);
}
END_TEST

/* ------------------------------------------------------------ ast.c on its own */

START_TEST(type_table)
{
    static const struct {
        elem_type t;
        const char *name, *ctype;
        int size;
    } want[] = {
        { TY_FLOAT, "float", "float", 4 },      { TY_DOUBLE, "double", "double", 8 },
        { TY_INT, "int", "int", 4 },            { TY_HALF, "half", "__half", 2 },
        { TY_BF16, "bfloat16", "__nv_bfloat16", 2 }, { TY_UINT8, "uint8", "unsigned char", 1 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ck_assert_str_eq(ast_type_name(want[i].t), want[i].name);
        ck_assert_str_eq(ast_type_ctype(want[i].t), want[i].ctype);
        ck_assert_int_eq(ast_type_size(want[i].t), want[i].size);
    }
    ck_assert_str_eq(ast_type_name(TY__COUNT), "?");
    ck_assert_int_eq(ast_type_size(TY__COUNT), 0);
}
END_TEST

START_TEST(pipeline_add_chains)
{
    arena *a = arena_new();
    srcloc l = { "t.pipe", 1, 1 };
    ast_pipeline *p = ast_pipeline_new(a, l, "p", l);
    ast_item *x = ast_item_new(a, IT_THREADS, l), *y = ast_item_new(a, IT_STAGES, l);
    ast_item *z = ast_item_new(a, IT_MARCH, l);
    x->next = y;
    ast_pipeline_add(p, x);
    ast_pipeline_add(p, NULL);
    ast_pipeline_add(p, z);
    ck_assert_ptr_eq(p->items, x);
    ck_assert_ptr_eq(y->next, z);
    ck_assert_ptr_eq(p->tail, &z->next);
    arena_free(a);
}
END_TEST

START_TEST(stage_stmt_reverses)
{
    arena *a = arena_new();
    srcloc l = { "t.pipe", 1, 1 }, s = { "t.pipe", 2, 3 };
    ast_ranges none = { 0 };
    diag_ctx d;
    diag_init(&d, NULL, "t.pipe", NULL, 0);
    ast_item *refs = NULL;
    const char *names[] = { "a", "b", "c" };
    for (int i = 0; i < 3; i++)
        refs = ast_stage_prepend(refs, ast_stage_ref(a, &d, l, names[i], &none));
    ast_stage_opts o = { .halo = 2 };
    ast_item *head = ast_stage_stmt(refs, s, &o);
    for (int i = 0; i < 3; i++, head = head->next) {
        ck_assert_str_eq(head->name, names[i]);
        ck_assert_int_eq(head->loc.line, 2);
        ck_assert_int_eq(head->opts.halo, 2);
    }
    ck_assert_ptr_null(head);
    arena_free(a);
}
END_TEST

START_TEST(dump_nothing)
{
    memfile m;
    FILE *f = mem_open(&m);
    ast_dump(f, NULL);
    ast_file empty = { NULL };
    ast_dump(f, &empty);
    char *text = mem_close(&m);
    ck_assert_str_eq(text, "(nothing)\n(nothing)\n");
    free(text);
}
END_TEST

static Suite *parser_suite(void)
{
    Suite *s = suite_create("parser");
    TCase *tc = tcase_create("ast");
    tcase_add_test(tc, saxpy_dump);
    tcase_add_test(tc, every_item_dump);
    tcase_add_test(tc, stages_depths_dump);
    tcase_add_test(tc, empty_pipeline);
    tcase_add_test(tc, body_text_escaped_in_dump);
    tcase_add_test(tc, item_field_locations);
    tcase_add_test(tc, stage_locations_and_opts);
    tcase_add_test(tc, unset_options_stay_zero);
    tcase_add_test(tc, expression_precedence);
    tcase_add_test(tc, expression_locations);
    tcase_add_test(tc, deep_nesting_is_an_error_not_a_crash);
    tcase_add_test(tc, moderate_nesting_is_fine);
    suite_add_tcase(s, tc);
    TCase *syn = tcase_create("syntax errors");
    tcase_add_test(syn, missing_semicolon);
    tcase_add_test(syn, unknown_item_word);
    tcase_add_test(syn, bad_type);
    tcase_add_test(syn, stage_option_expected);
    tcase_add_test(syn, missing_mechanism);
    tcase_add_test(syn, body_expected);
    tcase_add_test(syn, empty_input);
    tcase_add_test(syn, missing_close_at_eof);
    tcase_add_test(syn, trailing_input);
    tcase_add_test(syn, garbage_before_pipeline);
    tcase_add_test(syn, negative_integer_item);
    suite_add_tcase(s, syn);
    TCase *rec = tcase_create("recovery");
    tcase_add_test(rec, recovery_reports_every_bad_item);
    tcase_add_test(rec, recovery_at_closing_brace);
    tcase_add_test(rec, lexical_error_keeps_the_item);
    tcase_add_test(rec, unterminated_body_reports_once);
    tcase_add_test(rec, unterminated_comment_reports_once);
    tcase_add_test(rec, error_limit_stops_reporting);
    suite_add_tcase(s, rec);
    TCase *con = tcase_create("constructors");
    tcase_add_test(con, rank_limits);
    tcase_add_test(con, rank_limit_keeps_first_three);
    tcase_add_test(con, contextual_words);
    tcase_add_test(con, duplicate_options);
    tcase_add_test(con, huge_option_values_clamped);
    tcase_add_test(con, type_table);
    tcase_add_test(con, pipeline_add_chains);
    tcase_add_test(con, stage_stmt_reverses);
    tcase_add_test(con, dump_nothing);
    suite_add_tcase(s, con);
    return s;
}

int main(void) { return run_suite(parser_suite()); }
