/* parser.y: the pipegen grammar (pure bison, LALR(1) with LAC for exact "expecting" lists).
 *
 * Actions only call the ast_* constructors. Errors: a syntax error inside an item skips
 * to the next ';', to the next body, or to the pipeline's closing '}', so several errors
 * are reported in one run. Messages are built by parse_report_syntax_error below, which
 * names tokens the way they are written ("';'", "identifier 'foo'") and folds long
 * "expecting" lists into words ("an item", "a type", "a stage option").
 * See docs/language.md for the language this accepts.
 */

%code requires {
#include "pipegen.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

/* The scanner's state (flex "extra"): position tracking, the body being captured, and
 * what the parser needs to word its messages. */
typedef struct lex_state {
    arena *arena;
    diag_ctx *diag;
    const char *file;         /* arena copy, shared by every srcloc */
    int line, col;            /* position of the next byte */
    const char *src;          /* the source (for the location of its end) */
    size_t src_len;
    int depth;                /* pipeline braces: 0 outside, 1 inside */
    int body_depth;           /* brace nesting inside the body being captured */
    srcloc body_open;         /* that body's '{' */
    strbuf body;              /* its text so far */
    srcloc lit_open;          /* start of the literal or comment being skipped */
    int comment_ret;          /* start condition to resume after a comment */
    bool eof_error;           /* an "unterminated ..." error was reported at end of input */
    const char *last_ident;   /* spelling of the last identifier returned */
} lex_state;

/* What the grammar actions work with. */
typedef struct parse_ctx {
    arena *a;
    diag_ctx *d;
    lex_state *lex;
    ast_pipeline *pipeline;   /* set as soon as the pipeline's header is parsed */
} parse_ctx;

/* Locations are points: a construct is located at its first token. */
#define YYLLOC_DEFAULT(Cur, Rhs, N) \
    do { (Cur) = (N) ? YYRHSLOC(Rhs, 1) : YYRHSLOC(Rhs, 0); } while (0)
}

%code provides {
/* Set up st and a flex scanner over src (which may hold NUL bytes). 0 on success. */
int lex_open(lex_state *st, yyscan_t *sc, arena *a, diag_ctx *d, const char *file,
             const char *src, size_t len);
/* Release the scanner and flex's buffers (token values stay in the arena). */
void lex_close(yyscan_t sc);
}

%code {
#include "lexer.h"

#include <string.h>

/* Nesting deeper than this is reported ("nesting too deep") rather than risking the
 * recursion of later phases; items are left-recursive and never deepen the stack. */
#define YYMAXDEPTH 1000

static void yyerror(const srcloc *loc, yyscan_t scanner, parse_ctx *ctx, const char *msg);
}

%define api.pure full
%define api.location.type {srcloc}
%define api.token.prefix {TOK_}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {yyscan_t scanner}
%parse-param {parse_ctx *ctx}

%union {
    long long num;
    const char *str;
    elem_type type;
    ast_dir dir;
    ast_expr *expr;
    ast_extent extent;
    ast_dims dims;
    ast_names names;
    ast_ranges ranges;
    ast_stage_opts opts;
    ast_item *item;
    ast_pipeline *pipeline;
}

%token <str> IDENT "identifier"
%token <num> INT "integer"
%token <str> MECH "lowering name"
%token <str> BODY "body"
%token <type> TYPE "a type"

%token KW_PIPELINE "pipeline" KW_PARAM "param" KW_IN "in" KW_OUT "out" KW_INOUT "inout"
%token KW_THREADS "threads" KW_STAGES "stages" KW_PRODUCER_WARPS "producer_warps"
%token KW_BLOCKS_PER_SM "blocks_per_sm" KW_CLUSTER "cluster"
%token KW_MARCH "march" KW_GRID "grid" KW_HOST_STREAM "host_stream" KW_TILE "tile" KW_STEPS "steps"
%token KW_STAGE "stage"
%token KW_ACCUM "accum" KW_REDUCE "reduce" KW_COMPUTE "compute" KW_PROLOGUE "prologue"
%token KW_EPILOGUE "epilogue" KW_REFERENCE "reference"
%token KW_PER_TILE "per_tile" KW_PERSISTENT "persistent" KW_AT "at" KW_OVER "over"
%token KW_BY "by" KW_COMBINE "combine" KW_INTO "into" KW_ELEMENTWISE "elementwise"
%token KW_STEP "step"
%token LE "<="
%token KW_USING "using" KW_CACHE "cache" KW_PREFETCH "prefetch" KW_EVICT "evict"
%token KW_HALO "halo" KW_PAD "pad" KW_SWIZZLE "swizzle"

%type <pipeline> pipeline_head
%type <item> item stage_refs stage_ref stages threads
%type <type> type
%type <dir> dir
%type <extent> extent
%type <dims> dims opt_dims tile_dims
%type <extent> tile_extent
%type <names> names at_clause
%type <ranges> ranges
%type <opts> stage_opts
%type <expr> expr

%left '+' '-'
%left '*'
%precedence NEG

%%

file
    : pipeline
    ;

pipeline
    : pipeline_head items '}'
    | pipeline_head items error '}'
    ;

pipeline_head
    : "pipeline" IDENT '{'     { $$ = ctx->pipeline = ast_pipeline_new(ctx->a, @1, $2, @2); }
    ;

items
    : %empty
    | items item               { ast_pipeline_add(ctx->pipeline, $2); }
    | items error ';'          { yyerrok; }
    | items error BODY         { yyerrok; }
    ;

item
    : "param" type IDENT ';'   { $$ = ast_param(ctx->a, @1, $2, @2, $3, @3); }
    | dir type IDENT dims ';'  { $$ = ast_array(ctx->a, ctx->d, @1, $1, $2, @2, $3, @3, &$4); }
    | threads ';'
    | stages ';'
    | "producer_warps" INT ';' { $$ = ast_int_item(ctx->a, @1, IT_PRODUCER_WARPS, $2, @2); }
    | "blocks_per_sm" INT ';'  { $$ = ast_int_item(ctx->a, @1, IT_BLOCKS_PER_SM, $2, @2); }
    | "march" INT ';'          { $$ = ast_int_item(ctx->a, @1, IT_MARCH, $2, @2); }
    | "cluster" INT ';'        { $$ = ast_int_item(ctx->a, @1, IT_CLUSTER, $2, @2); }
    | "grid" "per_tile" ';'    { $$ = ast_grid_item(ctx->a, @1, GRID_PER_TILE); }
    | "grid" "persistent" ';'  { $$ = ast_grid_item(ctx->a, @1, GRID_PERSISTENT); }
    | "host_stream" ';'        { $$ = ast_item_new(ctx->a, IT_HOST_STREAM, @1); }
    | "tile" IDENT tile_dims at_clause ';'
                               { $$ = ast_tile(ctx->a, ctx->d, @1, $2, @2, &$3, &$4); }
    | "steps" IDENT "over" extent "by" INT ';'
                               { $$ = ast_steps(ctx->a, @1, $2, @2, $4, $6, @6); }
    | "stage" stage_refs stage_opts ';'
                               { $$ = ast_stage_stmt($2, @1, &$3); }
    | "accum" type IDENT opt_dims "combine" IDENT "into" IDENT ';'
                               { $$ = ast_accum(ctx->a, ctx->d, @1, $2, @2, $3, @3, &$4, $6, @6,
                                                $8, @8); }
    | "reduce" type IDENT "combine" IDENT '(' names ')' BODY
                               { $$ = ast_reduce(ctx->a, ctx->d, @1, $2, @2, $3, @3, $5, @5, &$7,
                                                 $9, @9); }
    | "reduce" type IDENT "combine" '(' names ')' BODY IDENT BODY '(' names ')' BODY
                               { $$ = ast_reduce(ctx->a, ctx->d, @1, $2, @2, $3, @3, NULL, @5,
                                                 &$12, $14, @14);
                                 ast_reduce_custom(ctx->a, ctx->d, $$, &$6, $8, @8, $9, @9,
                                                   $10, @10); }
    | "compute" "elementwise" '(' names ')' BODY
                               { $$ = ast_body(ctx->a, ctx->d, @1, BODY_ELEMENTWISE, &$4, $6, @6); }
    | "compute" "step" BODY    { $$ = ast_body(ctx->a, ctx->d, @1, BODY_STEP, NULL, $3, @3); }
    | "prologue" BODY          { $$ = ast_body(ctx->a, ctx->d, @1, BODY_PROLOGUE, NULL, $2, @2); }
    | "epilogue" BODY          { $$ = ast_body(ctx->a, ctx->d, @1, BODY_EPILOGUE, NULL, $2, @2); }
    | "reference" BODY         { $$ = ast_body(ctx->a, ctx->d, @1, BODY_REFERENCE, NULL, $2, @2); }
    | "reference" '(' names ')' BODY
                               { $$ = ast_body(ctx->a, ctx->d, @1, BODY_REFERENCE, &$3, $5, @5); }
    ;

stages
    : "stages" INT             { $$ = ast_int_item(ctx->a, @1, IT_STAGES, $2, @2); }
    | stages ',' INT           { $$ = ast_item_more(ctx->d, $1, $3, @3); }
    ;

threads
    : "threads" INT            { $$ = ast_int_item(ctx->a, @1, IT_THREADS, $2, @2); }
    | threads ',' INT          { $$ = ast_item_more(ctx->d, $1, $3, @3); }
    ;

dir
    : "in"                     { $$ = DIR_IN; }
    | "out"                    { $$ = DIR_OUT; }
    | "inout"                  { $$ = DIR_INOUT; }
    ;

type
    : TYPE                     { $$ = $1; }
    ;

extent
    : INT                      { $$ = ast_extent_int(@1, $1); }
    | IDENT                    { $$ = ast_extent_name(@1, $1); }
    ;

opt_dims
    : %empty                   { $$ = (ast_dims){ 0 }; }
    | dims
    ;

dims
    : '[' extent ']'           { $$ = (ast_dims){ 0 }; ast_dims_add(&$$, $2); }
    | dims '[' extent ']'      { $$ = $1; ast_dims_add(&$$, $3); }
    ;

names
    : IDENT                    { $$ = (ast_names){ 0 }; ast_names_add(&$$, $1, @1); }
    | names ',' IDENT          { $$ = $1; ast_names_add(&$$, $3, @3); }
    ;

/* A tile's extent may be a size symbol with its bound: `cols <= 4096`. */
tile_extent
    : extent
    | IDENT "<=" INT           { $$ = ast_extent_bounded(@1, $1, $3, @3); }
    ;

tile_dims
    : '[' tile_extent ']'      { $$ = (ast_dims){ 0 }; ast_dims_add(&$$, $2); }
    | tile_dims '[' tile_extent ']'
                               { $$ = $1; ast_dims_add(&$$, $3); }
    ;

at_clause
    : %empty                   { $$ = (ast_names){ 0 }; }
    | "at" '(' names ')'       { $$ = $3; }
    ;

stage_refs
    : stage_ref                { $$ = $1; }
    | stage_refs ',' stage_ref { $$ = ast_stage_prepend($1, $3); }
    ;

stage_ref
    : IDENT ranges             { $$ = ast_stage_ref(ctx->a, ctx->d, @1, $1, &$2); }
    ;

ranges
    : %empty                   { $$ = (ast_ranges){ 0 }; }
    | ranges '[' expr ':' expr ']'
                               { $$ = $1; ast_ranges_add(&$$, @2, $3, $5); }
    ;

stage_opts
    : %empty                   { $$ = (ast_stage_opts){ 0 }; }
    | stage_opts "using" MECH  { $$ = $1; ast_opts_mech(ctx->d, &$$, $3, @3); }
    | stage_opts "cache" IDENT { $$ = $1; ast_opts_cache(ctx->d, &$$, $3, @3); }
    | stage_opts "prefetch" INT
                               { $$ = $1; ast_opts_prefetch(ctx->d, &$$, $3, @3); }
    | stage_opts "evict" IDENT { $$ = $1; ast_opts_evict(ctx->d, &$$, $3, @3); }
    | stage_opts "pad" INT     { $$ = $1; ast_opts_pad(ctx->d, &$$, $3, @3); }
    | stage_opts "swizzle" INT { $$ = $1; ast_opts_swizzle(ctx->d, &$$, $3, @3); }
    | stage_opts "halo" INT    { $$ = $1; ast_opts_halo(ctx->d, &$$, $3, @3, NULL, @3); }
    | stage_opts "halo" INT IDENT
                               { $$ = $1; ast_opts_halo(ctx->d, &$$, $3, @3, $4, @4); }
    ;

expr
    : INT                      { $$ = ast_num(ctx->a, @1, $1); }
    | IDENT                    { $$ = ast_name(ctx->a, @1, $1); }
    | expr '+' expr            { $$ = ast_binary(ctx->a, @1, EX_ADD, $1, $3); }
    | expr '-' expr            { $$ = ast_binary(ctx->a, @1, EX_SUB, $1, $3); }
    | expr '*' expr            { $$ = ast_binary(ctx->a, @1, EX_MUL, $1, $3); }
    | '-' expr %prec NEG       { $$ = ast_binary(ctx->a, @1, EX_NEG, $2, NULL); }
    | '(' expr ')'             { $$ = $2; }
    ;

%%

/* ------------------------------------------------------------ syntax error messages */

/* Expected tokens that read better as one word when they all appear in a list. */
typedef struct parse_group {
    const char *word;
    yysymbol_kind_t first, last;   /* a contiguous range of token kinds */
} parse_group;

static const parse_group parse_groups[] = {
    { "an item", YYSYMBOL_KW_PARAM, YYSYMBOL_KW_REFERENCE },
    { "a stage option", YYSYMBOL_KW_USING, YYSYMBOL_KW_SWIZZLE },
};
enum { PARSE_NGROUPS = sizeof parse_groups / sizeof parse_groups[0] };

/* A token as the user wrote it: keywords and punctuation quoted, classes by name. A body
 * starts with '{', which is what the user sees; a type by its name. Keywords must stay
 * declared between KW_PIPELINE and KW_SWIZZLE. */
static void parse_token_name(strbuf *sb, yysymbol_kind_t k)
{
    switch (k) {
    case YYSYMBOL_YYEOF: sb_puts(sb, "end of file"); return;
    case YYSYMBOL_IDENT: sb_puts(sb, "identifier"); return;
    case YYSYMBOL_INT: sb_puts(sb, "integer"); return;
    case YYSYMBOL_MECH: sb_puts(sb, "lowering name"); return;
    case YYSYMBOL_BODY: sb_puts(sb, "'{'"); return;
    case YYSYMBOL_TYPE: sb_puts(sb, "a type"); return;
    default: break;
    }
    /* Bison strips the quotes of string aliases; punctuation keeps its own. */
    if (k >= YYSYMBOL_KW_PIPELINE && k <= YYSYMBOL_KW_SWIZZLE)
        sb_printf(sb, "'%s'", yysymbol_name(k));
    else
        sb_puts(sb, yysymbol_name(k));
}

static int parse_group_of(yysymbol_kind_t k)
{
    for (int g = 0; g < PARSE_NGROUPS; g++)
        if (k >= parse_groups[g].first && k <= parse_groups[g].last)
            return g;
    return -1;
}

/* "expecting A or B or C", each group of tokens said once, at its first member. */
static void parse_expected(strbuf *sb, const yysymbol_kind_t *exp, int n)
{
    bool said[PARSE_NGROUPS] = { false };
    int words = 0;
    for (int i = 0; i < n; i++) {
        int g = parse_group_of(exp[i]);
        if (g >= 0 && said[g])
            continue;
        sb_puts(sb, words++ ? " or " : ", expecting ");
        if (g >= 0) {
            said[g] = true;
            sb_puts(sb, parse_groups[g].word);
        } else {
            parse_token_name(sb, exp[i]);
        }
    }
}

/* Where a type was expected and a name came, pipegen's spelling of it when the name is
 * C's ("unsigned": uint32) or a misspelled type's. */
static void parse_type_hint(strbuf *sb, yysymbol_kind_t la, const yysymbol_kind_t *exp, int n,
                            const char *word)
{
    bool wants_type = false;
    for (int i = 0; i < n; i++)
        wants_type |= exp[i] == YYSYMBOL_TYPE;
    if (!wants_type || la != YYSYMBOL_IDENT || !word)
        return;
    const char *ours = ast_type_of_c(word), *near = ast_type_suggest(word);
    if (ours)
        sb_printf(sb, " (pipegen spells C's '%s' as '%s')", word, ours);
    else if (near)
        sb_printf(sb, "; did you mean '%s'?", near);
}

static int yyreport_syntax_error(const yypcontext_t *yyctx, yyscan_t scanner, parse_ctx *ctx)
{
    (void)scanner;
    yysymbol_kind_t la = yypcontext_token(yyctx);
    /* The lexer already reported why the input ended early. */
    if (la == YYSYMBOL_YYEOF && ctx->lex->eof_error)
        return 0;
    strbuf sb;
    sb_init(&sb, ctx->a);
    sb_puts(&sb, "syntax error, unexpected ");
    if (la == YYSYMBOL_TYPE && ctx->lex->last_ident) {
        sb_printf(&sb, "'%s'", ctx->lex->last_ident);   /* as a keyword reads */
    } else {
        parse_token_name(&sb, la);
        if (la == YYSYMBOL_IDENT && ctx->lex->last_ident)
            sb_printf(&sb, " '%s'", ctx->lex->last_ident);
    }
    yysymbol_kind_t exp[YYNTOKENS];
    int n = yypcontext_expected_tokens(yyctx, exp, YYNTOKENS);
    if (n > 0)
        parse_expected(&sb, exp, n);
    parse_type_hint(&sb, la, exp, n, ctx->lex->last_ident);
    diag_error(ctx->d, *yypcontext_location(yyctx), "%s", sb.data);
    return 0;
}

/* Only reached for parser stack exhaustion (parse.error custom handles the rest). */
static void yyerror(const srcloc *loc, yyscan_t scanner, parse_ctx *ctx, const char *msg)
{
    (void)scanner;
    if (strcmp(msg, "memory exhausted") == 0)
        msg = "nesting too deep (parser stack exhausted)";
    diag_error(ctx->d, *loc, "%s", msg);
}

/* ------------------------------------------------------------------ entry point */

ast_file *parse_source(arena *a, diag_ctx *d, const char *file, const char *src, size_t len)
{
    lex_state st;
    yyscan_t scanner;
    if (lex_open(&st, &scanner, a, d, file, src, len) != 0) {
        diag_fatal_noloc(d, "%s: cannot scan the source (too large?)", file ? file : "<input>");
        return NULL;
    }
    parse_ctx ctx = { .a = a, .d = d, .lex = &st, .pipeline = NULL };
    int errors = d->errors;
    int rc = yyparse(scanner, &ctx);
    lex_close(scanner);
    if (rc != 0 && d->errors == errors)   /* never fail silently */
        diag_error(d, (srcloc){ st.file, st.line, st.col }, "syntax error");
    if (!ctx.pipeline)
        return NULL;
    ast_file *f = arena_alloc(a, sizeof *f);
    f->pipeline = ctx.pipeline;
    return f;
}
