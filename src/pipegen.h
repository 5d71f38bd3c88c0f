/* pipegen: one header for every module of the compiler.
 *
 * Phases, each in its own file, each handing one data structure to the next:
 *   lexer.l / parser.y -> ast (ast.c) -> sema.c (struct spec) -> plan.c (struct sched,
 *   the schedule IR) -> verify.c (simulates the IR) -> emit*.c (prints the IR as CUDA)
 *
 * Memory policy: everything the compiler allocates lives in one arena per run (arena.c)
 * and is released at once when the run ends; no module frees individual objects.
 * Strings in the AST and later are arena copies, never pointers into the source buffer.
 *
 * The front end (lexer, parser, ast, diag, sema) keeps no global state: every call takes
 * the context it works on.
 */
#ifndef PIPEGEN_H
#define PIPEGEN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PIPEGEN_VERSION "0.1.0"
/* The PIPERT_ABI_VERSION of runtime/pipert.h that generated sources are written for (they
 * refuse to compile against another; the install suite checks the two agree). */
#define PIPEGEN_PIPERT_ABI 7
/* The oldest CUDA the generated sources are for (CUDART_VERSION: 13.0, the one they are
 * tested with); they refuse to compile with an older one (README, Requirements). */
#define PIPEGEN_MIN_CUDART 13000

/* ===================================================================== arena.c */

typedef struct arena arena;

arena *arena_new(void);
void arena_free(arena *a);
void *arena_alloc(arena *a, size_t size);          /* zeroed, max-aligned; aborts on OOM */
char *arena_strdup(arena *a, const char *s);
char *arena_strndup(arena *a, const char *s, size_t n);
char *arena_printf(arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Grow an arena-owned array of *cap elements of size elem to hold at least need. */
void *arena_grow(arena *a, void *items, int *cap, int need, size_t elem);

/* A growable text buffer (used by the emitters and the diagnostics). */
typedef struct strbuf {
    char *data;
    size_t len, cap;
    arena *arena;
} strbuf;

void sb_init(strbuf *sb, arena *a);
void sb_puts(strbuf *sb, const char *s);
void sb_putn(strbuf *sb, const char *s, size_t n);
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(strbuf *sb, const char *fmt, va_list ap);
unsigned long long text_hash(const char *data, size_t len);     /* 64-bit FNV-1a */
bool text_word_char(char ch);                                   /* [A-Za-z0-9_] */
bool text_blank(char ch);                                       /* blank, tab, newline */
const char *text_skip_blank(const char *p);                     /* past text_blank bytes */
/* Past a string or character literal, or a comment, that starts at p (a // comment to
 * its line's end; an unclosed one to the text's end); p itself where none does. */
const char *text_skip_literal(const char *p);
/* Whether text holds name as a whole word anywhere, comments and preprocessor lines
 * included (a macro may write the array): a miss is certain, a hit may not be a use. */
bool text_names(const char *text, const char *name);
/* Each whole-word occurrence of name in text, in turn: *at (NULL to start) its first byte;
 * false after the last. */
bool text_next_word(const char *text, const char *name, const char **at);

/* ====================================================================== diag.c */

/* A source location: 1-based line and column (columns count bytes). */
typedef struct srcloc {
    const char *file;   /* the file name as given on the command line (arena string) */
    int line, col;
} srcloc;

/* Warning classes, each turned off by -Wno-NAME (docs/cli.md lists them). */
typedef enum diag_warn {
    W_STAGES,           /* -Wstages: `stages N` slots a block never fills */
    W_HINTS,            /* -Whints: cache, prefetch or evict hints the lowering ignores */
    W_PERF,             /* -Wperf: a plan with a measured performance cliff (lint.c) */
    W__COUNT
} diag_warn;

typedef struct diag_ctx {
    FILE *out;          /* where diagnostics go (stderr in the CLI, a memstream in tests) */
    const char *file;   /* name of the source being compiled */
    const char *src;    /* its text (NUL-terminated), for the quoted line and caret */
    size_t src_len;
    int errors;         /* count of errors reported (warnings under -Werror included) */
    int warnings;
    int max_errors;     /* stop reporting after this many (0: no limit) */
    unsigned warn_off;  /* bit 1 << w: class w is off (-Wno-NAME) */
    bool no_warnings;   /* -w: no warning at all */
    bool werror;        /* -Werror: every warning is an error */
    bool color;         /* SGR colours, as gcc's (-fdiagnostics-color) */
    bool json;          /* -fdiagnostics-format=json: one JSON array, closed by diag_finish */
    int printed;        /* reports printed (for the JSON array's commas) */
} diag_ctx;

/* Where a report points: a place in the spec, or (opt set) the command-line option that
 * caused it, as written ("--lower=bulk"), reported as "pipegen: error: --lower=bulk: ...". */
typedef struct diag_origin {
    srcloc at;
    const char *opt;
} diag_origin;

void diag_init(diag_ctx *d, FILE *out, const char *file, const char *src, size_t len);
/* The source that locations point into, keeping the counts and settings. */
void diag_set_source(diag_ctx *d, const char *file, const char *src, size_t len);
/* After the last report: closes the JSON array (nothing in the text form). */
void diag_finish(diag_ctx *d);
/* file:line:col: error: message, then the source line and a caret under col. */
void diag_error(diag_ctx *d, srcloc at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_error_from(diag_ctx *d, diag_origin o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A warning of class w: "... warning: message [-WNAME]", or nothing when the class is off,
 * or an error under -Werror. */
void diag_warning(diag_ctx *d, diag_warn w, srcloc at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void diag_note(diag_ctx *d, srcloc at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_verror(diag_ctx *d, srcloc at, const char *fmt, va_list ap);
/* An error with no source position (a bad command-line option, an unreadable file). */
void diag_fatal_noloc(diag_ctx *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True once more than max_errors errors were counted (reports are being suppressed). */
bool diag_too_many(const diag_ctx *d);
/* Where byte `offset` of a text that starts at `start` (a body's, after its '{') is. */
srcloc diag_loc_in_text(const char *text, srcloc start, size_t offset);
/* The name of a warning class ("stages"); W__COUNT for an unknown name. */
const char *diag_warn_name(diag_warn w);
diag_warn diag_warn_from_name(const char *name);
/* The one of n names (name(i), i < n) closest to word, for "did you mean"; NULL when none
 * is close (an edit distance above a third of the word's length, at least 2). */
const char *diag_closest(const char *word, const char *(*name)(int i), int n);

/* ==================================================================== output.c
 *
 * The files of one run, committed all or none: each written to a fresh temporary file
 * beside it, then all renamed into place; a failure puts back what was there. An output
 * may not name an input, another output, or an existing file that is not a regular file;
 * "-" is standard output. Errors read `pipegen: error: cannot write 'FILE': REASON`. */

typedef struct out_set out_set;

out_set *out_new(arena *a, diag_ctx *d);
/* A file the run reads: no output may be the same file. */
void out_input(out_set *o, const char *path);
/* Add an output and its text (kept, not copied); false (reported) when it is refused. */
bool out_add(out_set *o, const char *path, const strbuf *text);
/* Write and commit every output added; false (reported) when nothing was committed. */
bool out_commit(out_set *o);
/* Write data to a stream and flush it, checked; name is how errors call it. */
bool out_write_stream(diag_ctx *d, FILE *f, const char *name, const char *data, size_t len);
/* A file name as the contents of a C string literal (for #line and the banner). */
const char *out_c_escape(arena *a, const char *name);
/* False (reported) when name cannot be written in an #include "..." (a '"', a control
 * character): no escape exists there. */
bool out_includable(diag_ctx *d, const char *name);
/* Flush and close standard output, checked (what the dumps printed may still be buffered). */
bool out_close_stdout(diag_ctx *d);
/* Ignore SIGPIPE and SIGXFSZ, so that a closed pipe or a file past ulimit -f is a write
 * error, reported, not a silent death. */
void out_ignore_write_signals(void);

/* ================================================================== reserved.c */

/* Why a spec may not declare name (the generated code could not use it: a C, C++ or CUDA
 * keyword or built-in, or one of the generated code's own names), or NULL when it may. */
const char *reserved_why(const char *name);
/* Why name collides with what the generated code names after pipeline (NAME_launch, ...),
 * or NULL. */
const char *reserved_after_pipeline(const char *pipeline, const char *name);

/* ====================================================================== arch.c */

/* What an architecture offers (arch_info.features). */
enum {
    ARCH_CP_ASYNC = 1 << 0,      /* cp.async, its commit groups and mbarrier arrivals */
    ARCH_TMA = 1 << 1,           /* the bulk copy engine: cp.async.bulk, tensor maps */
    ARCH_CLUSTERS = 1 << 2,      /* thread-block clusters, multicast copies */
    ARCH_WGMMA = 1 << 3,         /* warpgroup MMA */
    ARCH_SETMAXNREG = 1 << 4,    /* moving registers between warpgroups */
};

typedef struct arch_info {
    int sm;                      /* 90 for sm_90 */
    long long smem_limit;        /* shared memory a block may take (bytes, opt-in maximum) */
    int max_threads;             /* threads resident on one SM */
    int max_blocks;              /* blocks resident on one SM */
    bool has_specific;           /* an arch-specific target exists (sm_90a) */
    unsigned features;           /* ARCH_*: what the plain target offers */
    unsigned specific_features;  /* what the arch-specific target adds */
} arch_info;

/* The known architecture sm, or NULL. */
const arch_info *arch_find(int sm);
/* The known architectures, ascending: arch_at(0) .. arch_at(arch_count() - 1). */
int arch_count(void);
const arch_info *arch_at(int i);
/* The facts of sm (an unknown one: what every CUDA GPU offers). */
long long arch_smem_limit(int sm);
int arch_max_threads(int sm);
int arch_max_blocks(int sm);
/* Whether sm (its arch-specific target where specific) offers every feature asked. */
bool arch_has(int sm, bool specific, unsigned features);
/* The oldest known architecture that offers the features, 0 if none. */
int arch_first_with(unsigned features);

/* ======================================================================= ast.c */

typedef enum elem_type {
    TY_FLOAT, TY_DOUBLE, TY_INT, TY_HALF, TY_BF16, TY_UINT8,
    TY_INT8, TY_INT16, TY_UINT16, TY_UINT32, TY_INT64, TY_UINT64,
    /* CUDA's vector types, as array elements */
    TY_CHAR4, TY_UCHAR2, TY_UCHAR4, TY_SHORT2, TY_USHORT2, TY_INT2, TY_INT4, TY_UINT2,
    TY_UINT4, TY_FLOAT2, TY_FLOAT4, TY_DOUBLE2, TY_HALF2,
    TY__COUNT
} elem_type;

/* What an element type is: a floating type, a signed or unsigned integer, or a vector of
 * lanes of one of those. */
typedef enum type_class { TC_FLOAT, TC_SIGNED, TC_UNSIGNED, TC_VECTOR } type_class;

/* The type a spec spells `name` ("uint32", "int32" for int, "uchar4"), or TY__COUNT. */
elem_type ast_type_from_name(const char *name);
/* The i-th of every spelling ast_type_from_name takes (i from 0), or NULL past the last. */
const char *ast_type_spelling(int i);
/* pipegen's spelling of a C or CUDA spelling it does not take ("uint32" for "unsigned",
 * "int64" for "int64_t"), or NULL. */
const char *ast_type_of_c(const char *word);
/* The type name closest to a misspelled one, or NULL. */
const char *ast_type_suggest(const char *word);
/* Spelling in the spec ("float", "bfloat16", ...), the CUDA type ("float", "__nv_bfloat16"),
 * and the size in bytes. */
const char *ast_type_name(elem_type t);
const char *ast_type_ctype(elem_type t);
int ast_type_size(elem_type t);
type_class ast_type_class(elem_type t);
/* A vector's lanes and their type; a scalar is one lane of itself. */
int ast_type_lanes(elem_type t);
elem_type ast_type_lane(elem_type t);
/* An integer type's least and greatest value as a C constant of the type; NULL for others. */
const char *ast_type_min(elem_type t);
const char *ast_type_max(elem_type t);

/* Integer expressions in region bounds and extents; sema reduces them to affine forms. */
typedef enum ast_expr_kind { EX_NUM, EX_NAME, EX_ADD, EX_SUB, EX_MUL, EX_NEG } ast_expr_kind;

typedef struct ast_expr {
    ast_expr_kind kind;
    srcloc loc;
    long long num;               /* EX_NUM */
    const char *name;            /* EX_NAME */
    struct ast_expr *lhs, *rhs;  /* binary; EX_NEG uses lhs */
} ast_expr;

/* An array extent as declared: a size symbol (n, M) or an integer literal. */
typedef struct ast_extent {
    srcloc loc;
    const char *name;            /* NULL for a literal */
    long long value;             /* the literal; a tile's `name <= value`: the bound */
    bool bounded;                /* a tile's `name <= value` */
    srcloc bound_loc;
} ast_extent;

#define AST_MAX_RANK 3
#define AST_MAX_FEWER 3   /* `stages` depths, `threads` block sizes after the first */

/* One dimension of a staged region: [origin : extent]. */
typedef struct ast_range {
    srcloc loc;
    ast_expr *origin;
    ast_expr *extent;
} ast_range;

typedef enum ast_dir { DIR_IN, DIR_OUT, DIR_INOUT } ast_dir;
typedef enum ast_grid { GRID_PER_TILE, GRID_PERSISTENT } ast_grid;
typedef enum ast_cache { CACHE_DEFAULT, CACHE_CA, CACHE_CG } ast_cache;
typedef enum ast_evict { EVICT_DEFAULT, EVICT_NORMAL, EVICT_FIRST, EVICT_LAST, EVICT_UNCHANGED } ast_evict;
/* What a halo element outside the array reads: zero; the edge element (clamp); the
 * element mirrored about the edge element (mirror: -1 reads 1). */
typedef enum ast_halo_fill { HALO_ZERO, HALO_CLAMP, HALO_MIRROR } ast_halo_fill;
typedef enum ast_combine {
    COMBINE_SUM, COMBINE_MIN, COMBINE_MAX, COMBINE_ARGMIN, COMBINE_ARGMAX,
    COMBINE_CUSTOM                   /* reduce ... combine (a, b) { op } identity { e } */
} ast_combine;
/* A combine's spelling in the spec ("sum", "min", ...). */
const char *ast_combine_name(ast_combine c);
typedef enum ast_body_kind {
    BODY_ELEMENTWISE,   /* compute elementwise (i[, j[, k]]) { ... } */
    BODY_STEP,          /* compute step { ... }: once per pipeline step, by the whole block */
    BODY_PROLOGUE,      /* prologue { ... }: once per work item before its first step */
    BODY_EPILOGUE,      /* epilogue { ... }: once per work item after its last step */
    BODY_REFERENCE      /* reference (i[, j[, k]]) { ... } or reference { ... }: host C */
} ast_body_kind;

/* Options that may follow the names in a `stage` item. A field left at its zero value
 * was not written. */
typedef struct ast_stage_opts {
    const char *mech;  srcloc mech_loc;       /* using NAME */
    ast_cache cache;   srcloc cache_loc;      /* cache ca | cache cg */
    int prefetch;      srcloc prefetch_loc;   /* prefetch 64 | 128 | 256 (bytes of L2 prefetch) */
    int pad;           srcloc pad_loc;        /* pad N: bytes added to each shared-memory row */
    int swizzle;       srcloc swizzle_loc;    /* swizzle 0 | 32 | 64 | 128 (bytes; tensor boxes) */
    ast_evict evict;   srcloc evict_loc;      /* evict normal | first | last | unchanged */
    int halo;          srcloc halo_loc;       /* halo W [zero | clamp]; 0: none */
    ast_halo_fill halo_fill;
} ast_stage_opts;

typedef enum ast_item_kind {
    IT_PARAM, IT_ARRAY, IT_THREADS, IT_STAGES, IT_PRODUCER_WARPS, IT_BLOCKS_PER_SM, IT_CLUSTER, IT_GRID, IT_TILE,
    IT_STEPS, IT_MARCH, IT_STAGE, IT_ACCUM, IT_REDUCE, IT_HOST_STREAM, IT_BODY
} ast_item_kind;

/* One item of a pipeline, in source order. Every item keeps its location; sema checks
 * duplicates and conflicts across items, so the parser only constructs. */
typedef struct ast_item {
    ast_item_kind kind;
    srcloc loc;                 /* the item's first token */
    struct ast_item *next;

    /* IT_PARAM, IT_ARRAY, IT_ACCUM: declared name and type */
    elem_type type;  srcloc type_loc;
    const char *name; srcloc name_loc;

    /* IT_ARRAY: direction and extents; IT_TILE: name = the array, rank + dims = the shape */
    ast_dir dir;
    int rank;
    ast_extent dims[AST_MAX_RANK];
    /* IT_TILE: optional `at (a[, b[, c]])` names bound to the tile's origin per dimension */
    const char *at[AST_MAX_RANK]; srcloc at_loc[AST_MAX_RANK]; int nat;

    /* IT_THREADS, IT_STAGES, IT_PRODUCER_WARPS, IT_BLOCKS_PER_SM, IT_CLUSTER, IT_MARCH: the
     * integer */
    long long value; srcloc value_loc;
    /* IT_STAGES: `stages N, M, ...`: the depths after the first, each tried where an
     * architecture's shared memory cannot hold the one before; IT_THREADS: `threads N,
     * M, ...`: the block sizes after the first, which --threads or a wisdom record may
     * choose instead */
    long long fewer[AST_MAX_FEWER]; srcloc fewer_loc[AST_MAX_FEWER]; int nfewer;

    /* IT_GRID */
    ast_grid grid;

    /* IT_STEPS: steps VAR over BOUND by STEP */
    const char *var; srcloc var_loc;
    ast_extent bound;
    long long by; srcloc by_loc;

    /* IT_STAGE: one array (a `stage x, y ...;` statement yields one item per name, sharing
     * opts); rank 0 means the tile's region */
    ast_range ranges[AST_MAX_RANK];
    int nranges;
    ast_stage_opts opts;

    /* IT_ACCUM: accum TYPE NAME[extent] combine OP into ARRAY; (rank 0 or 1 in rank/dims) */
    ast_combine combine; srcloc combine_loc;
    const char *into; srcloc into_loc;

    /* IT_REDUCE with combine (a, b) { op } identity { e }: COMBINE_CUSTOM */
    const char *op_arg[2]; srcloc op_arg_loc[2];
    const char *op_text; srcloc op_text_loc;
    const char *id_text; srcloc id_text_loc;

    /* IT_BODY */
    ast_body_kind body_kind;
    const char *idx[AST_MAX_RANK]; srcloc idx_loc[AST_MAX_RANK]; int nidx;
    const char *text;           /* the body between its braces, verbatim */
    srcloc text_loc;            /* location of the first byte after '{' */
} ast_item;

typedef struct ast_pipeline {
    srcloc loc;
    const char *name; srcloc name_loc;
    ast_item *items, **tail;    /* source order */
} ast_pipeline;

typedef struct ast_file {
    ast_pipeline *pipeline;     /* exactly one per file; NULL after a fatal parse error */
} ast_file;

/* Constructors used by the grammar actions (and by unit tests). */
ast_expr *ast_num(arena *a, srcloc loc, long long v);
ast_expr *ast_name(arena *a, srcloc loc, const char *name);
ast_expr *ast_binary(arena *a, srcloc loc, ast_expr_kind k, ast_expr *l, ast_expr *r);
ast_item *ast_item_new(arena *a, ast_item_kind k, srcloc loc);
ast_pipeline *ast_pipeline_new(arena *a, srcloc loc, const char *name, srcloc name_loc);
void ast_pipeline_add(ast_pipeline *p, ast_item *it);  /* appends; it may be a chain */
/* Print the AST in a stable S-expression-like form (for golden tests and --dump-ast). */
void ast_dump(FILE *out, const ast_file *f);

/* Parser building blocks: lists of at most AST_MAX_RANK entries. An entry past the limit is
 * not stored; `over` keeps the location of the first one (line 0: none), and the item
 * constructor taking the list reports it with a message that names the construct. */
typedef struct ast_dims {
    int n;
    ast_extent e[AST_MAX_RANK];
    srcloc over;
} ast_dims;
typedef struct ast_names {
    int n;
    const char *name[AST_MAX_RANK];
    srcloc loc[AST_MAX_RANK];
    srcloc over;
} ast_names;
typedef struct ast_ranges {
    int n;
    ast_range r[AST_MAX_RANK];
    srcloc over;
} ast_ranges;

ast_extent ast_extent_int(srcloc loc, long long v);
ast_extent ast_extent_name(srcloc loc, const char *name);
ast_extent ast_extent_bounded(srcloc loc, const char *name, long long bound, srcloc bloc);
void ast_dims_add(ast_dims *ds, ast_extent e);
void ast_names_add(ast_names *ns, const char *name, srcloc loc);
void ast_ranges_add(ast_ranges *rs, srcloc loc, ast_expr *origin, ast_expr *extent);

/* Contextual words: the spelling is checked here; a wrong one is reported at `at` and the
 * default value is returned. */
ast_cache ast_cache_from_name(diag_ctx *d, srcloc at, const char *word);
ast_evict ast_evict_from_name(diag_ctx *d, srcloc at, const char *word);
ast_halo_fill ast_halo_fill_from_name(diag_ctx *d, srcloc at, const char *word);
ast_combine ast_combine_from_name(diag_ctx *d, srcloc at, const char *word);

/* Stage options, one call per option as written; a repeated option is reported. Each
 * *_loc is the location of the option's value (the word or integer after the keyword). */
void ast_opts_mech(diag_ctx *d, ast_stage_opts *o, const char *mech, srcloc loc);
void ast_opts_cache(diag_ctx *d, ast_stage_opts *o, const char *word, srcloc loc);
void ast_opts_prefetch(diag_ctx *d, ast_stage_opts *o, long long bytes, srcloc loc);
void ast_opts_pad(diag_ctx *d, ast_stage_opts *o, long long bytes, srcloc loc);
void ast_opts_swizzle(diag_ctx *d, ast_stage_opts *o, long long bytes, srcloc loc);
void ast_opts_evict(diag_ctx *d, ast_stage_opts *o, const char *word, srcloc loc);
/* fill may be NULL (not written: HALO_ZERO). */
void ast_opts_halo(diag_ctx *d, ast_stage_opts *o, long long width, srcloc loc,
                   const char *fill, srcloc fill_loc);

/* Item constructors; loc is the item's first token. */
ast_item *ast_param(arena *a, srcloc loc, elem_type t, srcloc tloc, const char *name, srcloc nloc);
ast_item *ast_array(arena *a, diag_ctx *d, srcloc loc, ast_dir dir, elem_type t, srcloc tloc,
                    const char *name, srcloc nloc, const ast_dims *dims);
/* IT_THREADS, IT_STAGES, IT_PRODUCER_WARPS, IT_BLOCKS_PER_SM, IT_CLUSTER, IT_MARCH */
ast_item *ast_int_item(arena *a, srcloc loc, ast_item_kind k, long long v, srcloc vloc);
/* IT_STAGES, IT_THREADS: a value after the first (`stages 4, 3`, `threads 512, 256`) */
ast_item *ast_item_more(diag_ctx *d, ast_item *it, long long v, srcloc vloc);
ast_item *ast_grid_item(arena *a, srcloc loc, ast_grid g);
/* at may be NULL (no `at` clause). */
ast_item *ast_tile(arena *a, diag_ctx *d, srcloc loc, const char *name, srcloc nloc,
                   const ast_dims *dims, const ast_names *at);
ast_item *ast_steps(arena *a, srcloc loc, const char *var, srcloc vloc, ast_extent bound,
                    long long by, srcloc byloc);
/* One staged array of a `stage` statement (loc: its name). */
ast_item *ast_stage_ref(arena *a, diag_ctx *d, srcloc loc, const char *name,
                        const ast_ranges *ranges);
/* Put ref in front of the chain refs (built backwards, so that adding is O(1)). */
ast_item *ast_stage_prepend(ast_item *refs, ast_item *ref);
/* Finish a `stage` statement: reverse the chain into source order, give every item the
 * statement's location and a copy of opts. Returns the chain's head. */
ast_item *ast_stage_stmt(ast_item *refs, srcloc loc, const ast_stage_opts *opts);
/* dims: the accumulator's extents (none for a scalar one). */
ast_item *ast_accum(arena *a, diag_ctx *d, srcloc loc, elem_type t, srcloc tloc,
                    const char *name, srcloc nloc, const ast_dims *dims, const char *combine,
                    srcloc cloc, const char *into, srcloc iloc);
/* reduce TYPE NAME combine OP (idx) { expression } */
ast_item *ast_reduce(arena *a, diag_ctx *d, srcloc loc, elem_type t, srcloc tloc,
                     const char *name, srcloc nloc, const char *combine, srcloc cloc,
                     const ast_names *idx, const char *text, srcloc brace);
/* combine (a, b) { op } identity { e }: the user's fold of a reduction. */
void ast_reduce_custom(arena *a, diag_ctx *d, ast_item *it, const ast_names *ab,
                       const char *op, srcloc op_brace, const char *word, srcloc wloc,
                       const char *identity, srcloc id_brace);
/* idx may be NULL (no index list); brace is the location of the body's '{'. */
ast_item *ast_body(arena *a, diag_ctx *d, srcloc loc, ast_body_kind k, const ast_names *idx,
                   const char *text, srcloc brace);

/* ============================================================== lexer.l / parser.y */

/* Parse one source buffer. Diagnostics go to d; the result is NULL only when nothing
 * usable was parsed. Errors are counted in d->errors; the parser recovers at ';' and '}'
 * so several errors are reported in one run. Never prints anything but diagnostics. */
ast_file *parse_source(arena *a, diag_ctx *d, const char *file, const char *src, size_t len);

/* ====================================================================== sema.c */

/* Lowerings (the code calls each a mech): in the order of docs/lowerings.md. */
typedef enum mech {
#define LOWERING(id, name, needs, module) MECH_##id,
#include "mech/lowerings.h"
#undef LOWERING
    MECH_AUTO, MECH__COUNT
} mech;

/* The stage options that are hints to the copies; a lowering takes some of them and
 * ignores the others (-Whints). */
typedef enum stage_hint {
    HINT_CACHE, HINT_PREFETCH, HINT_EVICT, HINT_SWIZZLE, HINT__COUNT
} stage_hint;

/* The lowering registry (mech/registry.c). Lookup by exact name; MECH__COUNT when unknown. */
mech mech_from_name(const char *name);
const char *mech_name(mech m);
/* The name closest to a misspelled one ("cp.async" for "cp_async"), or NULL. */
const char *mech_suggest(const char *word);
bool mech_known(mech m);                /* not MECH__COUNT (an unknown name) */
bool mech_is_auto(mech m);              /* auto: resolved per target (mech_resolve) */
int mech_count(void);                   /* the lowerings, auto included: 0 .. count - 1 */
bool mech_runs_on(mech m, int sm);      /* sm offers what its code needs */
int mech_min_sm(mech m);                /* the oldest such architecture; 0 for all */
bool mech_implemented(mech m);          /* planned and emitted by this version */
bool mech_roles(mech m);                /* plans producer warps */
int mech_min_producer_warps(mech m);    /* the producer warps it plans at least */
unsigned mech_hints(mech m);            /* bit 1 << h: its copies take stage_hint h */
bool mech_dense_rows(mech m);           /* its copies write rows back to back: no pad */
bool mech_row_copies(mech m);           /* its copies move a region one copy a row */
bool mech_whole_boxes(mech m);          /* its copies move a region whole, zero-filled past
                                           the array's end */
bool mech_host_steps(mech m);           /* adds steps to the launcher (plan_grid, plan_host) */
bool mech_takes_cluster(mech m);        /* multicasts copies to a cluster (`cluster N`) */
/* Whether m multicasts on target sm (specific: its arch-specific variant). */
bool mech_multicasts(mech m, int sm, bool specific);
/* The names of the lowerings pred holds for, as a list in words ("a, b and c"). */
const char *mech_names_where(arena *a, bool (*pred)(mech));

/* An affine integer form  c0 + sum coef[k] * var[k]  over the spec's symbols. */
#define AFF_MAX_TERMS 4
typedef struct affine {
    long long c;
    int nterms;
    long long coef[AFF_MAX_TERMS];
    const char *var[AFF_MAX_TERMS];
} affine;

/* A name the spec declares and where (the generated header's macro guards name it). */
typedef struct spec_decl {
    srcloc loc;
    const char *name;
} spec_decl;

typedef struct spec_param {
    srcloc loc;
    const char *name;
    elem_type type;
} spec_param;

typedef struct spec_array {
    srcloc loc;
    const char *name;
    elem_type type;
    ast_dir dir;
    int rank;
    ast_extent dims[AST_MAX_RANK];   /* dims[0] is the slowest-varying */
    int staged;                      /* index into spec.stages, or -1 */
} spec_array;

typedef struct spec_stage {
    srcloc loc;
    int array;                       /* index into spec.arrays */
    bool is_output;                  /* staged output, written back after compute */
    int rank;
    affine origin[AST_MAX_RANK];     /* region origin per dim, over tile origins and k */
    long long extent[AST_MAX_RANK];  /* region extent per dim (halo included) */
    int halo;
    ast_halo_fill halo_fill;
    mech mech;                       /* MECH_AUTO when not given */
    ast_cache cache;
    int prefetch;
    int pad;                         /* bytes of padding per shared row; -1: automatic */
    int swizzle;                     /* tensor boxes' swizzle span in bytes; -1: planner's */
    ast_evict evict;
    srcloc hint_loc[HINT__COUNT];    /* where each hint was given (line 0: not given) */
    long long bytes;                 /* extent product * element size */
} spec_stage;

typedef struct spec_accum {
    srcloc loc;
    const char *name;
    elem_type type;
    ast_combine combine;
    int into;                        /* index into spec.arrays (rank 1, out) */
    bool is_array;                   /* accum T NAME[extent]: per bin, privatized per block */
    int extent;                      /* its elements (1 for a scalar accumulator) */
} spec_accum;

typedef struct spec_body {
    srcloc loc;                      /* of the first byte of text, for #line */
    const char *text;
    int nidx;
    const char *idx[AST_MAX_RANK];
} spec_body;

/* reduce TYPE NAME combine OP (idx) { expression }: a pass over the staged tile before the
 * compute, folding the expression along each row (the tile's last dimension); NAME is the
 * row's result in the later passes. */
typedef struct spec_reduce {
    srcloc loc;                      /* the name */
    const char *name;
    elem_type type;
    ast_combine combine;
    spec_body expr;                  /* its index names are the compute's */
    /* COMBINE_CUSTOM: the fold of op_arg[0] and op_arg[1] (an expression, associative and
     * commutative), and its identity (an expression) */
    const char *op_arg[2];
    spec_body op, identity;
} spec_reduce;

/* The checked spec: everything later phases need, resolved and validated. */
typedef struct spec {
    const char *name;
    srcloc loc;
    const char *file;                /* base name of the source, for the banner */

    spec_param *params; int nparams;
    spec_array *arrays; int narrays;
    spec_stage *stages; int nstaged; /* the staged arrays (`stage` items), not `stages N` */
    spec_accum *accums; int naccums;
    spec_reduce *reduces; int nreduces;   /* in source order: the order of the passes */
    const char **sizes; int nsizes;  /* size symbols, in order of first appearance */
    spec_decl *decls; int ndecls;    /* every name declared (params, arrays, sizes,
                                        accumulators, tile origins, the step variable, body
                                        indices), each once, in order of declaration */

    int threads;                     /* default 256; the block size planned */
    int threads_offered[AST_MAX_FEWER + 1]; /* `threads N, M, ...`: N, M, ...: those
                                        --threads or a wisdom record may choose */
    int nthreads_offered;            /* 0: no `threads` item (256 alone) */
    int ring_depth;                  /* `stages N`: the ring's slots, default 2 */
    int ring_fallbacks[AST_MAX_FEWER]; /* `stages N, M, ...`: M, ..., each smaller, for an
                                        architecture whose shared memory N does not fit */
    int nring_fallbacks;
    int producer_warps;              /* default 0 */
    int blocks_per_sm;               /* `blocks_per_sm N`: the occupancy the compiler must
                                        keep (registers), __launch_bounds__'s second value;
                                        0: not given */
    ast_grid grid;                   /* default GRID_PER_TILE */
    srcloc grid_loc;                 /* the `grid` item that chose it (line 0: none did) */
    int cluster;                     /* `cluster N`: blocks per cluster (1, 2, 4, 8; default
                                        1). Under tensor with producer warps (sm_90+) they
                                        take tiles adjacent in the tile's first dimension
                                        and share the staged inputs that do not move along
                                        it: each block copies a share, multicast to all */
    srcloc cluster_loc;

    int tile_array;                  /* the array the tile is over */
    int tile_rank;
    long long tile[AST_MAX_RANK];    /* tile extents, dims[0] slowest */
    const char *tile_bounded[AST_MAX_RANK]; /* `cols <= N`: the size symbol the tile spans
                                       whole (its extent the bound N), else NULL */
    const char *tile_at[AST_MAX_RANK]; /* origin names (`at`, or reserved pg_orgD) */

    bool has_steps;                  /* steps k over K by B */
    const char *step_var;
    ast_extent step_bound;
    long long step_by;

    long long march;                 /* tiles per block in march mode; 0: off */

    bool has_compute;
    ast_body_kind compute_kind;      /* BODY_ELEMENTWISE or BODY_STEP */
    spec_body compute, prologue, epilogue, reference;
    bool has_prologue, has_epilogue, has_reference;

    mech mech;                       /* from `using` or --lower (MECH_AUTO if neither) */
    srcloc mech_loc;                 /* the `using`, line 0 if none */

    bool host_stream;                /* `host_stream;`: NAME_stream over host arrays */
    srcloc host_stream_loc;
    int stream_halo;                 /* rows a chunk reads beyond its own, each side */
} spec;

/* A command-line option that overrides a spec item: opt as written ("--grid=persistent"),
 * NULL when not given, and its value. Diagnostics it causes name the option. */
typedef struct cmd_override {
    const char *opt;
    int value;
} cmd_override;

/* What the command line asks of the spec: target architectures, as SM numbers (80, 90),
 * and the overrides of `using` (a mech), `grid` (an ast_grid), `producer_warps` and
 * `threads` (one of the block sizes it offers). */
#define MAX_ARCHS 4
typedef struct target {
    int sm[MAX_ARCHS];
    bool specific[MAX_ARCHS];    /* sm_NNa: compiled for the arch-specific target */
    int narch;
    cmd_override lower, grid, producer_warps, threads;
} target;

/* Check the AST with the command line's overrides applied; on success fill *out and return
 * true. Errors (and warnings) go to d. The lowering is checked here for every target:
 * planning takes it as given. */
bool sema_check(arena *a, diag_ctx *d, const ast_file *f, const target *t, spec *out);
/* The lowering of a name (`using`, --lower), or MECH__COUNT after reporting it unknown at
 * o, with the closest name when one is close. */
mech sema_mech(diag_ctx *d, diag_origin o, const char *name);

/* ====================================================================== spec.c */

/* The accumulator whose output array is `array`, or -1. */
int spec_accum_into(const spec *s, int array);
/* The workspace holds each block's partials, 8 bytes an element: accumulator k's start at
 * slot spec_accum_slot(s, k) (of a block), spec_accum_slot(s, naccums) in all. */
int spec_accum_slot(const spec *s, int k);
/* An array accumulator's bins in shared memory: words of 4 or 8 bytes (integers add there
 * in a 32- or 64-bit word, wrapping as their own type does), in one copy for a block
 * (integers: shared atomics) or one per warp of `threads` (floating point, whose order
 * of addition must not depend on which warp comes first). */
int spec_accum_word(const spec_accum *acc);
/* Whether integer bins keep a copy a lane, interleaved (bin k of lane l at word k * 32 +
 * l): a warp's atomic adds then fall in 32 banks, whatever bins they hit. Where the 32
 * copies fit in 32 KB; else one copy. */
bool spec_accum_lanes(const spec_accum *acc);
/* The tile's rows: the product of its extents but the last (1 for rank 1), along each of
 * which the reductions fold; a reduction's result in bytes (argmin and argmax: the value
 * and a 64-bit index, as pg_arg). */
long long spec_tile_rows(const spec *s);
/* The warps of `warps` computing that walk each row in the row passes: 1 where the tile
 * has a row for every warp (each warp its own rows), warps / rows where its rows (more
 * than one) divide them, else 0 (the whole block walks every row). */
int spec_row_group(const spec *s, int warps);
/* The bound of a size symbol a tile spans whole (`tile x[8][cols <= 4096]`: 4096), or 0. */
long long spec_size_bound(const spec *s, const char *size);
/* Whether a tile dimension is planned at a bound: the staged slots of a shorter size run
 * past the array's end on every tile, and the chunk copies store those chunks as one
 * store of zeros each (pg_copy_chunk_sync's ZERO_WHOLE). */
bool spec_tile_at_bound(const spec *s);
/* Packed rows. A tile of whole rows of a bounded size symbol (`tile x[1][cols <= 8192]`) is
 * planned at the bound, so short rows leave most of each slot, and of each block's work,
 * empty. Where nothing in the spec sees a work item's extent, the launcher also takes
 * variants whose work item is PACK times the rows at 1/PACK of the bound. Fills packs[]
 * (at most SPEC_MAX_PACKS, 1 first) and returns how many; 1: the spec as written only. */
#define SPEC_MAX_PACKS 4
int spec_row_packs(const spec *s, long long packs[SPEC_MAX_PACKS]);
/* The spec with the tile's rows times pack and its last extent divided by pack (and the
 * staged regions that follow the tile with it). */
spec *spec_packed(arena *a, const spec *s, long long pack);
/* The block size the spec is without --threads or a wisdom record: its `threads`' first
 * (256 without a `threads` item), and whether it offers threads (choose_threads). */
int spec_own_threads(const spec *s);
bool spec_offers_threads(const spec *s, int threads);
/* Whether a body of the kinds `which` names word as a whole word (text_names): the device
 * bodies (compute, prologue, epilogue), the reductions' (expression, combine, identity),
 * the reference. */
enum { SPEC_DEVICE_BODIES = 1, SPEC_REDUCE_BODIES = 2, SPEC_REFERENCE_BODY = 4 };
bool spec_bodies_name(const spec *s, unsigned which, const char *word);
/* Whether a staged input has a halo (sema refuses one on a staged output). */
bool spec_stages_halo(const spec *s);
bool spec_reduce_is_arg(const spec_reduce *r);
int spec_reduce_bytes(const spec_reduce *r);
int spec_accum_copies(const spec_accum *acc, int threads);
/* The shared memory an array accumulator's bins take: every copy of every bin. */
long long spec_accum_bin_bytes(const spec_accum *acc, int threads);
/* Whether accumulator i is only ever added to at the column the compute's cell is in
 * (`acc[c] += ...`, c the last index, in an elementwise compute and nowhere else), its
 * extent the tile's row length and the tiled array's whole: then each bin has one owner,
 * the thread that walks its column (the planner may keep it in registers). */
bool spec_accum_by_column(const spec *s, int i);
/* Slots of the deepest ring: `stages` (its first depth), or 1 where each block runs a
 * single step. The planner may take a later depth per architecture (plan_ring_slots). */
int spec_ring_slots(const spec *s);
/* Whether a stage's halo clamps or mirrors (its views read through a border). */
bool spec_stage_border(const spec_stage *st);

/* ===================================================================== plan.c
 *
 * The schedule IR: the single source of truth between planning, verifying and emitting.
 * A schedule is a list of sections, each a counted loop over a list of operations:
 *   SEC_FRAME     once, in the kernel's scope      the barriers' initialisation
 *   SEC_PROLOGUE  for (p = 0; p < count; ++p)      count static
 *   SEC_LOOP      for (t = 0; t < trips; ++t)      trips = the block's steps, at run time
 *   SEC_EPILOGUE  once, after the loop             loop variable = trips
 * Each operation names the pipeline step it concerns as  step = loopvar + step_off ; the
 * ring slot of a step is  step % nslots , and a use of a slot is its k-th reuse with
 * k = step / nslots. An operation with `guarded` is skipped when step >= trips (or < 0).
 *
 * Semantics, per role (ROLE_ALL: every thread of the block runs the operation alike;
 * producer and consumer roles are disjoint sets of warps):
 *   COPY        the role's threads issue the copies of step's staged inputs into its slot.
 *               sched.track says how completion is known: TRACK_SYNC, complete at once in
 *               the issuing thread; TRACK_GROUPS, by the issuing thread's commit groups;
 *               TRACK_BARRIER, by the slot's full barrier. Transaction copies (the
 *               schedule has an ARRIVE_TX) are issued by one elected thread, or with
 *               `dealt` (bulk's rows) each thread of the role issues its share. With
 *               `stores` (bulk) every thread of the role also writes what the
 *               transaction copies cannot move with ordinary stores, complete at once in
 *               each thread.
 *   COMMIT      TRACK_GROUPS: close the thread's open group (an empty group is a group).
 *   WAIT n      TRACK_GROUPS: block until at most n of the thread's closed groups are
 *               incomplete (every older group is complete).
 *   ARRIVE      arrive on barrier `bar` of step's slot. With `on_copies` (cp.async's
 *               mbarrier.arrive.noinc) the arrival happens when the thread's earlier
 *               copies complete; otherwise at once.
 *   ARRIVE_TX   arrive on `bar` of step's slot and expect `bytes` more bytes of
 *               transaction in the current phase (bulk and tensor copies complete them).
 *               With `all_arrive` the role's other threads arrive too (plainly), each
 *               releasing its own stores; else the elected thread alone arrives.
 *   WAIT_PARITY block until `bar` of step's slot completed the phase of this use: the
 *               full barrier's use k waits for parity k & 1; the empty barrier's (a
 *               producer waiting for the previous use to be released) for (k & 1) ^ 1,
 *               which the first use passes at once. `parity_flip` inverts it (a fault).
 *   ACQUIRE / RELEASE   cuda::pipeline's producer_acquire / consumer_release: WAIT_PARITY
 *               on the empty barrier / ARRIVE on it, under names the emitter keeps.
 *   INIT        thread 0 initialises every barrier of the schedule (full and empty sets,
 *               their arrival counts); a block BARRIER after it publishes that, and a
 *               FENCE mbarrier_init before that barrier where the async proxy uses them.
 *   FENCE       a proxy fence (generic <-> async proxy) in each executing thread.
 *   BARRIER     every thread of the block (or of the role: a named barrier) waits for
 *               all; data complete in a thread before it becomes visible to all after.
 *               With `cluster`, every thread of every block of the cluster.
 *               `implied`: the operation before it performs it (cg's wait syncs the
 *               block, cuda::make_pipeline does after its INIT), so nothing is printed.
 *   COMPUTE     the role's threads read step's slot (and write staged outputs' slots).
 *   STORE       write back step's staged outputs from their slot (async proxy for TMA).
 *   CLAIM       (sched.claim_ring > 0) thread 0 takes step's work item and writes it to
 *               entry step % claim_ring of the block's claim ring: blockIdx.x + step *
 *               gridDim.x for the first claim_ahead steps and when the launch has no tile
 *               counter (the static order), else claim_ahead * gridDim.x plus the next
 *               index of the counter (dynamic order). Every operation of a step reads
 *               its entry (its guard, its tile origin), as does the loop's test, which
 *               ends the loop at the first step whose item is past the last: claims of one
 *               block only grow, so the live steps are a prefix, `trips` as before.
 * A phase of a barrier completes when its arrival count (sched.full_arrivals or
 * .empty_arrivals) is reached and its expected transaction bytes have all arrived.
 * Clusters (sched.cluster > 1): the blocks of a cluster run the same schedule in step. A
 * multicast COPY writes the step's slot in every block, each block issuing a share, so a
 * block's slot holds the whole region once all shares landed, counted on its own full
 * barrier; a RELEASE with `cluster` arrives on the empty barrier of every block, whose
 * count is the arrivals of all of them, so no block refills a slot any block still reads.
 */

typedef enum ir_op_kind {
    OP_COPY, OP_COMMIT, OP_WAIT, OP_ACQUIRE, OP_RELEASE, OP_ARRIVE, OP_ARRIVE_TX,
    OP_WAIT_PARITY, OP_INIT, OP_FENCE, OP_BARRIER, OP_COMPUTE, OP_STORE, OP_CLAIM, OP__COUNT
} ir_op_kind;

typedef enum ir_track { TRACK_SYNC, TRACK_GROUPS, TRACK_BARRIER } ir_track;

typedef enum ir_role { ROLE_ALL, ROLE_PRODUCER, ROLE_CONSUMER } ir_role;
typedef enum ir_fence { FENCE_NONE, FENCE_PROXY_ASYNC, FENCE_MBARRIER_INIT } ir_fence;
typedef enum ir_barrier_set { BAR_FULL, BAR_EMPTY } ir_barrier_set;

typedef struct ir_op {
    ir_op_kind kind;
    ir_role role;
    int step_off;            /* step = loop variable + step_off */
    int stage;               /* OP_COPY / OP_STORE: index into spec.stages, -1: all */
    int n;                   /* OP_WAIT: groups allowed pending */
    long long bytes;         /* OP_ARRIVE_TX: bytes expected */
    ir_barrier_set bar;      /* OP_WAIT_PARITY / OP_ARRIVE_TX */
    ir_fence fence;          /* OP_FENCE */
    bool guarded;            /* skipped when step >= trips (copies); never for commits */
    bool on_copies;          /* OP_ARRIVE: when the thread's earlier copies complete */
    bool all_arrive;         /* OP_ARRIVE_TX: every thread of the role arrives, the elected
                                one expecting the bytes; else the elected one alone */
    bool stores;             /* OP_COPY (transaction copies): every thread of the role also
                                stores what the copies cannot move (bulk's edges) */
    bool dealt;              /* OP_COPY (transaction copies), OP_STORE (async proxy): issued
                                by every thread of the role, each its share (bulk's rows);
                                else by one */
    bool parity_flip;        /* OP_WAIT_PARITY: wait for the other parity (a fault) */
    bool implied;            /* OP_BARRIER: performed by the operation before it */
    bool per_warp;           /* OP_RELEASE: one arrival per warp, after the warp's reads */
    bool cluster;            /* OP_BARRIER: every thread of every block of the cluster;
                                OP_RELEASE: arrives on the slot's barrier in every block of
                                the cluster */
} ir_op;

typedef enum ir_section_kind {
    SEC_FRAME,               /* once, at the kernel's scope, before everything: step 0 */
    SEC_PROLOGUE,            /* for (p = 0; p < count; ++p), count static */
    SEC_LOOP,                /* for (t = 0; t < trips; ++t), trips at run time */
    SEC_EPILOGUE             /* once, after the loop; step_off relative to trips */
} ir_section_kind;

typedef struct ir_section {
    ir_section_kind kind;
    int count;               /* SEC_PROLOGUE only */
    ir_op *ops; int nops, cap;
} ir_section;

/* The alignment of swizzled slots: the 128-byte swizzle's pattern repeats every 1024 bytes
 * (8 lines of 128), and the copy engine swizzles by shared-memory address. */
#define SWIZZLE_ALIGN 1024

/* How one stage's region sits in shared memory and moves (per step). The region as
 * copied may be wider than the spec's: an input's origin in the fastest dimension is
 * moved down to a 16-byte boundary (32 where the lowering's layout says so) and its
 * extent rounded up, so that it copies in 16-byte chunks; the views index it by global
 * coordinates all the same. */

typedef struct copy_plan {
    int vec;                 /* widest copy (bytes) its alignment allows: 16, 8, 4, 2, 1 */
    affine origin[AST_MAX_RANK];   /* the region as copied */
    long long extent[AST_MAX_RANK];
    long long row_bytes;     /* bytes of one row (the fastest dimension) as copied */
    long long pitch;         /* bytes between rows in shared memory (padding included) */
    long long slot_bytes;    /* bytes of one slot, a multiple of 128 (1024 when swizzled) */
    int swizzle;             /* 0, or the span (32, 64, 128 bytes) of the swizzled layout its
                                tensor boxes land in: column blocks of span bytes per row,
                                rows back to back in each, and 16-byte chunk c of 128-byte
                                line l at chunk c ^ (l % (span / 16)) (docs/lowerings.md) */
    int nslots;              /* the ring's slots, or 1 for a staged output */
    long long off;           /* offset of slot 0 in dynamic shared memory */
    bool multicast;          /* copied once per cluster: each block copies a share of the
                                region's slowest dimension into every block's slot */
    int fold;                /* 0, or the elements of the rows its tensor map folds the
                                array's rows into (a dimension more: rank 2 [r][1024] as
                                [r][4][256]), so that one box spans a region wider than a
                                box's 256 elements (mech tensor's plan_fold) */
} copy_plan;

/* One step of the ring's phase trace: what the verifier's run of 2 * nslots + 1 trips (in
 * the first order of the roles) saw of it, which the source prints as the phase table. */
typedef struct phase_step {
    int grp;                 /* its commit group (thread 0's); -1: none */
    int wait_n;              /* the wait_group that completed it; -1: none */
    ir_section_kind wait_sec;    /* ... in this section */
    long long wait_var;      /* ... at this value of the section's loop variable */
    long long bytes;         /* bytes its full barrier's phase expected; -1: none */
} phase_step;

/* The steps a trace keeps: 2 * S + 1 for the deepest ring `stages` gives (16 slots). */
#define PHASE_TRACE_MAX 33

typedef struct sched {
    const spec *spec;        /* the spec as written, or packed (spec_packed; pack > 1) */
    long long pack;          /* rows of the written tile a work item takes (1: as written) */
    const struct sched *packed_from; /* pack > 1: the schedule as written it packs */
    struct sched **packs;    /* pack 1: its packed rows' schedules (plan_packs), npacks of
                                them, each in the unit's order of packs; else NULL */
    int npacks;
    mech mech;               /* never MECH_AUTO here */
    int sm;                  /* the architecture this schedule is for */
    bool specific;           /* ... as its arch-specific target (sm_90a): the generated
                                source refuses to compile for plain sm_90 */
    int nslots;              /* ring size */
    int claim_ring;          /* entries of the claim ring (OP_CLAIM); 0: the work items
                                are dealt in the static order, without claims */
    int claim_ahead;         /* the steps the prologue claims: in the static order even
                                with a counter, so that no block starts on a round trip */
    ir_track track;          /* how copy completion is known (see above) */
    int full_arrivals;       /* arrivals that complete a phase of a full barrier */
    int empty_arrivals;      /* ... of an empty barrier */
    int producer_threads;    /* threads of ROLE_PRODUCER (0: no roles) */
    int cluster;             /* blocks per cluster (1: none): they run the same steps over
                                tiles adjacent in the tile's first dimension, each block's
                                slots filled by every block's multicast shares */
    int regs_launch;         /* registers per thread the kernel launches with where its
                                roles rebalance them (setmaxnreg); 0: they do not */
    int regs_producer;       /* ... what each producer thread keeps (setmaxnreg.dec) */
    int regs_consumer;       /* ... and what each consumer thread takes (setmaxnreg.inc) */
    long long smem_bytes;    /* dynamic shared memory per block */
    long long *accum_off;    /* per accumulator: where an array one's bins start in dynamic
                                shared memory, after the ring's slots; -1: in registers */
    int *accum_regs;         /* ... the registers each computing thread keeps of one in
                                registers (by column, spec_accum_by_column: the thread owns
                                the columns tid, tid + computing threads, ...), else 0 */
    const struct wisdom_record *chosen_by; /* the wisdom record that chose an auto spec's
                                lowering for this target (NULL: auto's own rule) */
    const char *wisdom_path; /* ... and its file, as given */
    int walk_rows;           /* a whole rank-3 tile with a halo, walked down its planes: the
                                adjacent rows of a plane each computing thread takes, so
                                that nvcc keeps in registers what a row's cells read of the
                                next row's (plan_walk_rows); 0: a thread's positions are
                                tid, tid + computing threads, ... */
    int launch_blocks;       /* __launch_bounds__'s second value, the blocks an SM ptxas must
                                leave registers for; 0: none */
    int own_size_blocks;     /* where auto's own rule took another of the block sizes the
                                spec offers (main's plan_auto): the blocks an SM its own
                                size fits, fewer than this schedule's; else 0 */
    long long reduce_off;    /* the reductions' exchange of the warps' row results, after
                                the bins (one at a time: each reduction's for all rows) */
    int smem_align;          /* the alignment the slots' offsets assume of dynamic shared
                                memory: 128, or 1024 for swizzled slots (the kernel rounds
                                its base up, smem_bytes keeping the room for that) */
    copy_plan copy[16];      /* per stage */
    int threads;
    ast_grid grid;
    ir_section *secs; int nsecs, seccap;
    /* The phase trace verify_schedule recorded (its first nphases steps; none where the IR
     * failed its checks), and whether the schedule failed to verify. */
    phase_step phases[PHASE_TRACE_MAX]; int nphases;
    bool unproven;
} sched;

/* What setmaxnreg works with (sched.regs_*): the threads of a warpgroup, each of whose warps
 * must execute it, and the registers of an SM, the most a block can launch with. */
enum { WARPGROUP_THREADS = 128, SM_REGISTERS = 65536 };

/* The rows of a region as copied: the product of its extents but the fastest. */
long long plan_region_rows(const copy_plan *cp, int rank);
/* The alignment of a stage's slots in shared memory: 128, or SWIZZLE_ALIGN swizzled. */
int plan_slot_align(const copy_plan *cp);
/* The extents of a region of `rank` as its copies take it, slowest first, into ext: the
 * region's, or folded (copy_plan.fold) its rows as rows of `fold` elements, a dimension
 * more. Returns that rank. */
int plan_folded_extents(const copy_plan *cp, int rank, long long ext[AST_MAX_RANK]);
/* The alignment (in elements) every value of origin o keeps over the tiles and steps;
 * 0: it is always 0. */
long long plan_origin_alignment(const spec *s, const affine *o);

/* Plan the schedule of spec s for lowering m (s->mech; auto as mech_auto_first says) on
 * architecture sm, one of the targets sema_check accepted m for. Returns NULL with a
 * diagnostic (at the spec element that cannot be lowered) when m cannot lower s. */
sched *plan_schedule(arena *a, diag_ctx *d, const spec *s, mech m, int sm, bool specific);
/* Blocks of a schedule an SM holds, by its shared memory, its threads and the SM's most
 * blocks (registers are ptxas's to say): the runtime takes 1 KiB of an SM's shared memory
 * for each block, beside the block's own. */
int plan_blocks_per_sm(const sched *sc);
/* The columns a computing thread owns where an accumulator is kept in registers by column
 * (every one by column has the tile's row length as its extent, so the same count): the
 * compute then walks those columns (emit's column walk); else 0. */
int plan_column_slots(const sched *sc);
const char *ir_op_name(ir_op_kind k);
/* One operation as text ("copy step=t+3 if<trips"); var names the section's loop variable. */
void ir_op_print(strbuf *sb, const ir_op *op, const char *var);
/* Print the IR in a stable text form (for --dump-ir and golden tests). */
void ir_dump(FILE *out, const sched *sc);

/* ================================================================ plan_host.c
 *
 * The host plan: what the launcher NAME_launch_ex runs, in order. emit.c prints the
 * launcher from it and from nothing else; the verifier checks it (verify_host). Every
 * step is capture-safe: none allocates or synchronizes, so a launch can be recorded in
 * a CUDA graph.
 *   CHECK_ARGS        the args pointer is not NULL
 *   CHECK_SIZE        size `index` is not negative (a size no array extent checks)
 *   CHECK_ARRAY       array `index`: extents not negative, its bytes (extents times the
 *                     element size) computed overflow-checked (pg_bytes_NAME), the pointer
 *                     not NULL when it has bytes and aligned to the element size
 *   CHECK_DISJOINT    array `index` (written) and array `other` do not overlap
 *   COUNT_TILES       the work items (pg_ntiles): products of per-dimension quotients
 *                     rounded up, which cannot overflow once the arrays' bytes did not
 *   RETURN_IF_EMPTY   no work item: return, after the follow-on launch if there is one
 *   COPY_WIDTH        the widest copy every staged pointer and row pitch keeps (pg_vi)
 *   SELECT_VARIANT    the kernel of the highest architecture the device runs (pg_k),
 *                     prepared once per device: dynamic shared memory opt-in, occupancy
 *   GRID              blocks: one per work item, or persistent by occupancy (pg_grid)
 *   CHECK_WORKSPACE   the accumulators' workspace holds the grid's partials
 *   TILE_COUNTER      for the variants that claim their work items: the launch's tile
 *                     counter (pg_counter), the workspace's first 8 bytes, zeroed on the
 *                     stream (cudaMemsetAsync); NULL without a workspace, which the
 *                     kernels take as the static order
 *   MODULE            a step of the variants' lowering module (`step` says which: a grid
 *                     of clusters after GRID, a tensor map before LAUNCH, ...)
 *   LAUNCH            the selected kernel with the plan's kernel parameters
 *   FOLLOW_ON         the combine kernel over the grid's partials
 */
typedef enum host_op_kind {
    HOP_CHECK_ARGS, HOP_CHECK_SIZE, HOP_CHECK_ARRAY, HOP_CHECK_DISJOINT, HOP_COUNT_TILES,
    HOP_RETURN_IF_EMPTY, HOP_COPY_WIDTH, HOP_SELECT_VARIANT, HOP_GRID, HOP_CHECK_WORKSPACE,
    HOP_TILE_COUNTER, HOP_MODULE, HOP_LAUNCH, HOP_FOLLOW_ON, HOP__COUNT
} host_op_kind;

typedef struct host_op host_op;
struct hctx;
/* A launcher step a lowering module owns (HOP_MODULE), described once by its module: its
 * name and operands in --dump-ir, its text, and where the verifier requires it to stand:
 * after the check of the array it reads (host_op.reads), after the first generic step of
 * each kind in `after` (bits 1 << HOP_*) and before the first of each in `before`. */
typedef struct host_step {
    const char *name;
    void (*print)(struct hctx *h, const host_op *op);
    void (*dump)(FILE *out, const spec *s, const host_op *op);
    unsigned after, before;
} host_step;

struct host_op {
    host_op_kind kind;
    int index;                   /* CHECK_SIZE: a size; CHECK_ARRAY, CHECK_DISJOINT: an array;
                                    MODULE: the step's own (a stage, a cluster size) */
    int other;                   /* CHECK_DISJOINT: the other array */
    const host_step *step;       /* MODULE: which */
    int reads;                   /* MODULE: the array it reads, or -1 */
    const void *data;            /* MODULE: the step's own operands (its module's type) */
    unsigned variants;           /* the variants (bit v: hp->variant[v]) whose kernel needs
                                    the step; 0: every one */
};

/* What the launcher passes for a kernel parameter, and the step that makes it. */
typedef enum host_value {
    HV_ARGS, HV_NTILES, HV_TILE_COUNTER, HV_STEP_LOCAL, HV__COUNT
} host_value;

typedef struct kernel_param {
    const char *ctype, *name;    /* as the kernel declares it; the launcher's value of
                                    HV_STEP_LOCAL is its local of the same name */
    host_value value;
    const host_step *made_by;    /* HV_STEP_LOCAL: the module step that makes the local, */
    int index;                   /* the one whose index this is */
    bool grid_constant;          /* declared __grid_constant__ (a CUtensorMap the copies
                                    address in parameter space) */
    unsigned variants;           /* the variants whose kernel takes it (bit v); 0: every
                                    one. The launch passes each variant its own */
} kernel_param;

/* The chunk ring of NAME_stream (`host_streaming`): what each chunk enqueues, in order, on
 * its stream, over its slot's device buffers, and what the call does after the last
 * chunk. The runtime hands out chunk i with slot i % slots and that slot's stream
 * (pipert_stream_next); `buffers_short` models a runtime whose buffers cycle over one slot
 * fewer than its streams (a fault). verify_host simulates the ring for slot counts 1..6
 * and chunk counts 0, 1, < slots, ...:
 *   NEXT      the chunk's slot, stream and device
 *   COPY_IN   its input rows, halo included, into the slot's buffers (host to device)
 *   LAUNCH    NAME_launch over the slot's buffers (with accumulators: into the slot's
 *             scratch, its workspace and one element per accumulator)
 *   PART_OUT  with accumulators: the launch's results, from the slot's scratch into the
 *             chunk's own element of the page-locked host partials (device to host)
 *   COPY_OUT  the rows it owns, back to host memory (device to host)
 *   DONE      the chunk closed (its progress report enqueued)
 * and after the chunks:
 *   END       wait for every stream, release the run (pipert_stream_end)
 *   FOLD      with accumulators: the partials, in chunk order, on the host, into each
 *             accumulator's output (its identity when there is no chunk) */
typedef enum chunk_op {
    CH_NEXT, CH_COPY_IN, CH_LAUNCH, CH_PART_OUT, CH_COPY_OUT, CH_DONE, CH_END, CH_FOLD,
    CH__COUNT
} chunk_op;

typedef struct stream_ring {
    chunk_op ops[8]; int nops;   /* per chunk, on its stream */
    chunk_op after[4]; int nafter;   /* after the loop over the chunks */
    bool buffers_short;
    int halo;                    /* rows a chunk reads beyond its own, each side */
    long long align;             /* chunk sizes the planner picks are multiples of it */
} stream_ring;

#define HOST_MAX_PARAMS 18          /* pg_args, pg_ntiles, a tensor map per stage */
typedef struct host_plan {
    host_op *ops; int nops, cap;
    kernel_param params[HOST_MAX_PARAMS]; int nparams;
    /* The kernels, highest architecture first: an index into the unit's schedules each.
     * A schedule whose kernel is another's (the same IR and layout: the same text) is
     * not a variant of its own; the lower architecture's kernel serves both. */
    int variant[8]; int nvariants;
    stream_ring *ring;           /* NAME_stream's chunks; NULL without `host_stream` */
} host_plan;

/* How a lowering module adds to the host plan (preparations and kernel parameters of
 * its own); plan_host calls the hook of each variant's lowering. */
typedef struct host_planner {
    arena *a;
    const spec *s;
    host_plan *hp;
    int variant;                 /* in a hook: the variant it is called for; -1 outside */
} host_planner;
host_op *plan_host_op(host_planner *h, host_op_kind kind, int index);
/* The module step `step` with `index` for the hook's variant: a new one, or NULL where
 * another variant planned it already (and it now serves this one too). */
host_op *plan_host_step(host_planner *h, const host_step *step, int index);
/* The kernel parameter `name`: for every variant outside a hook, for the hook's variant
 * in one (a parameter of that name planned already takes this variant too). */
kernel_param *plan_host_param(host_planner *h, const char *ctype, const char *name,
                              host_value v);
/* Whether variant v's kernel takes parameter p. */
bool host_param_of(const kernel_param *p, int v);
/* The variant whose kernel is sc's (an index into hp->variant), or -1. */
int host_variant_of(const host_plan *hp, sched *const *scheds, const sched *sc);

/* Plan the launcher of the schedules (one per architecture, ascending). */
host_plan *plan_host(arena *a, const spec *s, sched *const *scheds, int nscheds);
/* Whether NAME_args has a workspace: for the accumulators' partials, or for the tile
 * counter of a persistent grid (optional there: without it the order is static; the
 * schedules of a spec with accumulators never claim). */
bool plan_has_workspace(const spec *s);
const char *host_op_name(host_op_kind k);
const char *chunk_op_name(chunk_op k);
void host_dump(FILE *out, const host_plan *hp, sched *const *scheds);

/* ==================================================================== verify.c
 *
 * The verifier reads the IR above with these precisions (docs/verifier.md):
 *   - ARRIVE and RELEASE: every thread of the role arrives (ROLE_ALL: sc->threads, the
 *     producer: producer_threads, the consumer: threads - producer_threads), or with
 *     per_warp one thread of each warp, times the cluster's blocks with `cluster`; ARRIVE_TX:
 *     one elected thread arrives once and expects `bytes` (with all_arrive every thread of
 *     the role arrives, the elected one's arrival expecting them).
 *   - Under TRACK_BARRIER, copies complete by transaction bytes on their slot's full
 *     barrier when the schedule has an ARRIVE_TX (tensor: issued by one thread; bulk's
 *     rows, `dealt`: a share by every thread of the role),
 *     else through the issuing thread's ARRIVE on_copies (and its commit groups). A COPY
 *     with `stores` is also an ordinary write by every thread of its role, which a reader
 *     sees only through a barrier, or an arrival of that thread on the phase it waited on.
 *   - A STORE with fence = FENCE_PROXY_ASYNC reads through the async proxy (TMA store, by
 *     one thread, or with `dealt` by every thread of the role, its share of the rows):
 *     the compute's writes need an OP_FENCE after them, and the store reads on until a
 *     WAIT of the issuing thread covers its commit group.
 *   - The barriers are initialised by one thread in the frame, before the first section;
 *     the IR must publish that with a block BARRIER (and, where the async proxy uses
 *     them, an OP_FENCE before it) ahead of any barrier operation.
 *   - A stage whose copy_plan has nslots == 1 uses slot 0 for every step.
 * Rules reported, each once per schedule, as "[mech] RULE: ...": IR, RAW, WAR, parity,
 * arrivals, expect_tx, fence, init, deadlock, drain, registers, accum.
 */

typedef enum fault_kind {
    FAULT_NONE, FAULT_DROP_WAIT, FAULT_WAIT_PLUS_ONE, FAULT_DROP_COMMIT, FAULT_FLIP_PARITY,
    FAULT_EXPECT_TX_SHORT, FAULT_EXPECT_TX_LONG, FAULT_DROP_FENCE, FAULT_ONE_SLOT_SHORT,
    FAULT_DROP_RELEASE, FAULT_DROP_ARRIVE, FAULT_EARLY_RELEASE, FAULT_LOCAL_RELEASE,
    FAULT_CLUSTER_COUNT_SHORT, FAULT_CLAIM_RING_SHORT, FAULT_REGS_OVER,
    FAULT_ACCUM_REGS_SHORT, FAULT_BINS_ON_RING,
    /* faults of the host plan */
    FAULT_DROP_ARRAY_CHECK, FAULT_LATE_SELECT, FAULT_DROP_PARAM,
    /* faults of its chunk ring */
    FAULT_CHUNK_BUFFERS_SHORT, FAULT_CHUNK_COPY_OUT_EARLY, FAULT_CHUNK_PART_OUT_EARLY,
    FAULT_FOLD_BEFORE_END, FAULT__COUNT
} fault_kind;

fault_kind verify_fault_from_name(const char *name);   /* FAULT__COUNT if unknown */
const char *verify_fault_name(fault_kind k);
/* Corrupt the IR as the fault says. Returns false when the kind does not apply. */
bool verify_inject(sched *sc, fault_kind k);
/* The same for a fault of the host plan (the launcher). */
bool verify_inject_host(host_plan *hp, fault_kind k);
/* Simulate the schedule for the trip counts of docs/verifier.md and report every rule
 * broken to d, at the spec's location. Returns true when the schedule is proven. Records
 * the phase trace of its run of 2 * nslots + 1 trips, and the outcome, in sc (phases,
 * nphases, unproven). */
bool verify_schedule(diag_ctx *d, sched *sc);
/* Check the host plan: every array checked before the launch, written arrays disjoint from
 * the others, every kernel parameter made before the launch that passes it, the variant
 * prepared before the grid and the launch, the follow-on after the launch, and only
 * capture-safe steps. Reported as "[host] RULE: ..." at the spec's location. */
bool verify_host(diag_ctx *d, const spec *s, const host_plan *hp);

/* What `auto` (and an unset lowering) lowers s with on sm where nothing better plans it:
 * cp.async on sm_80+, or cp.async.mbarrier when s has producer warps; sync below sm_80
 * (mech/registry.c). sema_check checks each target's lowering with it. */
mech mech_auto(const spec *s, int sm);
/* What auto tries first on sm: tensor on sm_90 for a product of staged operands (`steps`
 * over two or more staged inputs that move with it, none padded), else mech_auto. plan_schedule plans it quietly and keeps it if it plans, else
 * plans mech_auto's lowering. */
mech mech_auto_first(const spec *s, int sm);
/* m, or where m is auto what it lowers to on sm (mech_auto; _first: mech_auto_first). */
mech mech_resolve(const spec *s, mech m, int sm);
mech mech_resolve_first(const spec *s, mech m, int sm);
/* The hints (1 << HINT_*) either of auto's lowerings on sm takes. */
unsigned mech_auto_hints(const spec *s, int sm);

/* ==================================================================== wisdom.c */

/* A tuning run's record (wisdom.c has the format): for the spec of hash `hash` and target
 * sm (sm_NNa where specific), auto takes `lowering`. */
typedef struct wisdom_record {
    int line;
    unsigned long long hash;
    int sm;
    bool specific;
    const char *gpu, *size;          /* as measured: the device's name, the size class */
    mech lowering;
    int threads;                     /* the block size chosen; 0: the spec's own */
    struct wisdom_pack {             /* `,packP=LOWERING`: the kernel for rows packed P a */
        long long pack;              /* work item (spec_row_packs) takes its own lowering, */
        mech lowering;               /* at the record's block size */
    } packs[SPEC_MAX_PACKS - 1];
    int npacks;
} wisdom_record;

/* The lowering record r (NULL: none) gives the kernel for rows packed `pack` a work item:
 * its own for that pack, else the record's. */
mech wisdom_pack_lowering(const wisdom_record *r, long long pack, mech otherwise);

typedef struct wisdom {
    const char *path;                /* as given */
    const char *gpu;                 /* the records' GPU to take (NULL: any) */
    wisdom_record *recs; int n;
} wisdom;

/* Parse text (NUL-terminated) read from path, every record kept; gpu (NULL: any) is the
 * GPU whose records wisdom_choice takes. False after reporting an error at its line and
 * column (diagnostics in path: the caller points the diag_ctx at the text). */
bool wisdom_parse(arena *a, diag_ctx *d, const char *path, const char *gpu, const char *text,
                  wisdom *w);
/* The first record for the spec and target measured on the wisdom's GPU, or NULL; a note
 * for each later one and each of another GPU. */
const wisdom_record *wisdom_choice(const wisdom *w, diag_ctx *d, unsigned long long hash,
                                   int sm, bool specific);

/* ====================================================================== lint.c */

/* -Wperf: warnings on a planned spec whose shape has a measured cliff (after planning:
 * the grid and the lowering are final), from the spec and from its schedules (one a
 * target: shared memory a block, producer threads, the copies' widths). */
void lint_perf(diag_ctx *d, const spec *s, sched *const *scheds, int nscheds);

/* ====================================================================== emit*.c */

typedef struct emit_opts {
    bool lines;              /* #line directives into the spec */
    const char *spec_path;   /* the spec as named on the command line, for #line */
    const char *source_name; /* the .cu being written, for #line back into it */
    const char *header_name; /* how the .cu includes its header ("out.cuh") */
    const char *guard;       /* include guard of the header */
    long long watchdog;      /* --watchdog: cycles a barrier wait may take before it traps */
    unsigned long long stamp; /* the header's stamp (emit_stamp_resolve), which the source
                                and the drivers check */
} emit_opts;

/* One schedule per target architecture, all of the same spec. */
typedef struct emit_unit emit_unit;
struct emit_unit {
    const spec *spec;
    sched **scheds; int nscheds;
    /* Packed rows (spec_row_packs): npacks - 1 further rows of nscheds schedules each,
     * packed[(p - 1) * nscheds + i] the variant of scheds[i] for packs p = 1.. */
    sched **packed; int npacks;
    const host_plan *host;
    emit_opts opts;
};

void emit_header(strbuf *out, const emit_unit *u);
/* The pack of rows (spec_row_packs) a launch with arguments at `args` ("pg_a->", "a.")
 * takes, as an expression: the last whose rows hold the size's; its index among the packs
 * (the launcher's kernel tables), or with pack_values its rows a work item. */
void emit_pack_choice(strbuf *out, const spec *s, const char *args, bool pack_values);
/* The phase table of a schedule's ring (slot, use, commit group, barrier parities, bytes
 * per step) as a C comment, from the trace verify_schedule recorded; nothing for a ring
 * of one slot or without a trace. */
void emit_phase_table(strbuf *out, const sched *sc);
/* Pieces shared by the emitters (emit_text.c). */
void emit_banner(strbuf *out, const spec *s);
/* One #ifdef per name the spec declares: a name some header or -D made a macro stops the
 * compile with an #error naming its place in the spec. */
void emit_name_guards(strbuf *out, const spec *s, const emit_opts *o);
/* The stamp: a hash of the header's text that the header defines (GUARDSTAMP) and the
 * source and drivers check, so that none compiles against the header of another run. The
 * header prints it as zeros (emit_stamp_define); emit_stamp_resolve hashes the whole
 * header and writes the value in, returning it for the others' checks (emit_stamp_check). */
void emit_stamp_define(strbuf *out, const emit_opts *o);
unsigned long long emit_stamp_resolve(strbuf *header, const emit_opts *o);
void emit_stamp_check(strbuf *out, const emit_opts *o);
/* A typedef for each of pipegen's type names that C++ lacks (uint32, int64, bfloat16, ...)
 * and some body of the spec names, so that a body may cast to the spec's own types; and
 * CUDA's 16-bit floating headers where a body names such a type and !half_headers (the
 * file has not included them). */
void emit_body_types(strbuf *out, const spec *s, bool half_headers);
/* A body, with #line into the spec and back into the output when opts->lines. */
void emit_body(strbuf *out, const spec_body *b, const emit_opts *o, const char *indent);
/* Number the #line directives back into the output (emit_body's) once it is whole. */
void emit_resolve_lines(strbuf *sb);
/* An element type as the header spells it, for C and C++ (pipegen_half: the bits of a
 * half in C, __half in C++). */
const char *emit_host_ctype(elem_type t);
/* "pg_bview2<PG_BORDER_CLAMP, ": the opening of a view through stage st's halo border
 * (runtime/pipert_device.cuh), the viewed type and ">" to follow. */
void emit_border_open(strbuf *out, const spec_stage *st);
/* An array extent as a C expression: a literal, or `prefix` + the size's name. */
void emit_extent(strbuf *out, const ast_extent *e, const char *prefix);
/* The element count of an array as a C expression over `prefix` + size name. */
void emit_elems(strbuf *out, const spec_array *arr, const char *prefix);
/* The work items (tiles) as a C expression over `prefix` + size name. */
void emit_ntiles(strbuf *out, const spec *s, const char *prefix);
/* The kernel of one schedule, printed for architecture sm (the schedule's own, or a lower
 * one whose kernel it shares), and the grid-wide combine of the accumulators
 * (emit_kernel.c). Its body compiles only for sm_lo and above, below sm_hi (0: no bound). */
void emit_kernel(strbuf *out, const emit_unit *u, const sched *sc, int sm, int lo, int hi);
/* NAME_smSM, and _rPACK for a packed rows' variant. */
void emit_kernel_name(strbuf *out, const sched *sc, int sm);
void emit_combine_kernel(strbuf *out, const emit_unit *u);
/* The identity of an accumulator, and its fold of x and y as an expression ("x + y"). */
const char *emit_accum_identity(const spec_accum *acc);
const char *emit_identity(elem_type t, ast_combine combine);
void emit_fold(strbuf *out, ast_combine combine, const char *x, const char *y);
void emit_accum_fold(strbuf *out, const spec_accum *acc, const char *x, const char *y);
void emit_source(strbuf *out, const emit_unit *u);
void emit_test(strbuf *out, const emit_unit *u);
void emit_bench(strbuf *out, const emit_unit *u);


#endif
