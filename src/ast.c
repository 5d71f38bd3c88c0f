/* ast: the syntax tree of a .pipe spec. The grammar actions only call the constructors
 * here, so every node is built the same way (arena-allocated, location of its first
 * token). Constructors check what the grammar cannot say cheaply: list lengths (rank at
 * most 3) and the spelling of contextual words (cache ca|cg, ...). Everything else,
 * duplicates and cross-item conflicts included, is sema's job. */
#include "pipegen.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>

/* ------------------------------------------------------------------------ types */

static const struct {
    const char *name, *ctype;
    int size;
    type_class cls;
    elem_type lane;           /* vectors: the type of a lane; scalars: themselves */
    int lanes;
    const char *min, *max;    /* integers: their range, as C constants of their type */
} type_info[TY__COUNT] = {
    [TY_FLOAT] = {"float", "float", 4, TC_FLOAT, TY_FLOAT, 1, NULL, NULL},
    [TY_DOUBLE] = {"double", "double", 8, TC_FLOAT, TY_DOUBLE, 1, NULL, NULL},
    [TY_HALF] = {"half", "__half", 2, TC_FLOAT, TY_HALF, 1, NULL, NULL},
    [TY_BF16] = {"bfloat16", "__nv_bfloat16", 2, TC_FLOAT, TY_BF16, 1, NULL, NULL},
    [TY_INT8] = {"int8", "signed char", 1, TC_SIGNED, TY_INT8, 1, "(-128)", "127"},
    [TY_UINT8] = {"uint8", "unsigned char", 1, TC_UNSIGNED, TY_UINT8, 1, "0", "255"},
    [TY_INT16] = {"int16", "short", 2, TC_SIGNED, TY_INT16, 1, "(-32768)", "32767"},
    [TY_UINT16] = {"uint16", "unsigned short", 2, TC_UNSIGNED, TY_UINT16, 1, "0", "65535"},
    [TY_INT] = {"int", "int", 4, TC_SIGNED, TY_INT, 1, "(-0x7fffffff - 1)", "0x7fffffff"},
    [TY_UINT32] = {"uint32", "unsigned int", 4, TC_UNSIGNED, TY_UINT32, 1, "0u", "0xffffffffu"},
    [TY_INT64] = {"int64", "long long", 8, TC_SIGNED, TY_INT64, 1,
                  "(-0x7fffffffffffffffLL - 1)", "0x7fffffffffffffffLL"},
    [TY_UINT64] = {"uint64", "unsigned long long", 8, TC_UNSIGNED, TY_UINT64, 1, "0ull",
                   "0xffffffffffffffffull"},
    [TY_CHAR4] = {"char4", "char4", 4, TC_VECTOR, TY_INT8, 4, NULL, NULL},
    [TY_UCHAR2] = {"uchar2", "uchar2", 2, TC_VECTOR, TY_UINT8, 2, NULL, NULL},
    [TY_UCHAR4] = {"uchar4", "uchar4", 4, TC_VECTOR, TY_UINT8, 4, NULL, NULL},
    [TY_SHORT2] = {"short2", "short2", 4, TC_VECTOR, TY_INT16, 2, NULL, NULL},
    [TY_USHORT2] = {"ushort2", "ushort2", 4, TC_VECTOR, TY_UINT16, 2, NULL, NULL},
    [TY_INT2] = {"int2", "int2", 8, TC_VECTOR, TY_INT, 2, NULL, NULL},
    [TY_INT4] = {"int4", "int4", 16, TC_VECTOR, TY_INT, 4, NULL, NULL},
    [TY_UINT2] = {"uint2", "uint2", 8, TC_VECTOR, TY_UINT32, 2, NULL, NULL},
    [TY_UINT4] = {"uint4", "uint4", 16, TC_VECTOR, TY_UINT32, 4, NULL, NULL},
    [TY_FLOAT2] = {"float2", "float2", 8, TC_VECTOR, TY_FLOAT, 2, NULL, NULL},
    [TY_FLOAT4] = {"float4", "float4", 16, TC_VECTOR, TY_FLOAT, 4, NULL, NULL},
    [TY_DOUBLE2] = {"double2", "double2", 16, TC_VECTOR, TY_DOUBLE, 2, NULL, NULL},
    [TY_HALF2] = {"half2", "__half2", 4, TC_VECTOR, TY_HALF, 2, NULL, NULL},
};

/* Other spellings of a type: `int32` is `int`. */
static const struct { const char *name; elem_type type; } type_aliases[] = {
    {"int32", TY_INT},
};

/* C and CUDA spellings users write, and pipegen's name for each. */
static const struct { const char *c, *ours; } c_spellings[] = {
    {"unsigned", "uint32"}, {"signed", "int"}, {"char", "int8"}, {"short", "int16"},
    {"long", "int64"}, {"uint", "uint32"}, {"size_t", "uint64"}, {"int8_t", "int8"},
    {"uint8_t", "uint8"}, {"int16_t", "int16"}, {"uint16_t", "uint16"},
    {"int32_t", "int32"}, {"uint32_t", "uint32"}, {"int64_t", "int64"},
    {"uint64_t", "uint64"}, {"__half", "half"}, {"__half2", "half2"},
    {"__nv_bfloat16", "bfloat16"}, {"bf16", "bfloat16"}, {"fp16", "half"},
    {"float16", "half"}, {"float32", "float"}, {"float64", "double"}, {"uchar", "uint8"},
    {"ushort", "uint16"}, {"ulong", "uint64"},
};

elem_type ast_type_from_name(const char *name)
{
    for (int t = 0; t < TY__COUNT; ++t)
        if (strcmp(type_info[t].name, name) == 0)
            return (elem_type)t;
    for (size_t i = 0; i < sizeof type_aliases / sizeof type_aliases[0]; ++i)
        if (strcmp(type_aliases[i].name, name) == 0)
            return type_aliases[i].type;
    return TY__COUNT;
}

static const char *type_name_at(int i) { return type_info[i].name; }

const char *ast_type_spelling(int i)
{
    const int naliases = (int)(sizeof type_aliases / sizeof type_aliases[0]);
    if (i < 0 || i >= TY__COUNT + naliases)
        return NULL;
    return i < TY__COUNT ? type_info[i].name : type_aliases[i - TY__COUNT].name;
}

const char *ast_type_of_c(const char *word)
{
    for (size_t i = 0; i < sizeof c_spellings / sizeof c_spellings[0]; ++i)
        if (strcmp(c_spellings[i].c, word) == 0)
            return c_spellings[i].ours;
    return NULL;
}

const char *ast_type_suggest(const char *word)
{
    return diag_closest(word, type_name_at, TY__COUNT);
}

const char *ast_type_name(elem_type t)
{
    return (unsigned)t < TY__COUNT ? type_info[t].name : "?";
}

const char *ast_type_ctype(elem_type t)
{
    return (unsigned)t < TY__COUNT ? type_info[t].ctype : "?";
}

int ast_type_size(elem_type t)
{
    return (unsigned)t < TY__COUNT ? type_info[t].size : 0;
}

type_class ast_type_class(elem_type t) { return type_info[t].cls; }
int ast_type_lanes(elem_type t) { return type_info[t].lanes; }
elem_type ast_type_lane(elem_type t) { return type_info[t].lane; }
const char *ast_type_min(elem_type t) { return type_info[t].min; }
const char *ast_type_max(elem_type t) { return type_info[t].max; }

/* ------------------------------------------------------------------ expressions */

static ast_expr *ast_expr_new(arena *a, ast_expr_kind k, srcloc loc)
{
    ast_expr *e = arena_alloc(a, sizeof *e);
    e->kind = k;
    e->loc = loc;
    return e;
}

ast_expr *ast_num(arena *a, srcloc loc, long long v)
{
    ast_expr *e = ast_expr_new(a, EX_NUM, loc);
    e->num = v;
    return e;
}

ast_expr *ast_name(arena *a, srcloc loc, const char *name)
{
    ast_expr *e = ast_expr_new(a, EX_NAME, loc);
    e->name = name;
    return e;
}

ast_expr *ast_binary(arena *a, srcloc loc, ast_expr_kind k, ast_expr *l, ast_expr *r)
{
    ast_expr *e = ast_expr_new(a, k, loc);
    e->lhs = l;
    e->rhs = k == EX_NEG ? NULL : r;
    return e;
}

/* ---------------------------------------------------------------- list builders */

ast_extent ast_extent_int(srcloc loc, long long v)
{
    return (ast_extent){ .loc = loc, .name = NULL, .value = v };
}

ast_extent ast_extent_name(srcloc loc, const char *name)
{
    return (ast_extent){ .loc = loc, .name = name, .value = 0 };
}

ast_extent ast_extent_bounded(srcloc loc, const char *name, long long bound, srcloc bloc)
{
    return (ast_extent){ .loc = loc, .name = name, .value = bound, .bounded = true,
                         .bound_loc = bloc };
}

void ast_dims_add(ast_dims *ds, ast_extent e)
{
    if (ds->n < AST_MAX_RANK)
        ds->e[ds->n++] = e;
    else if (ds->over.line == 0)
        ds->over = e.loc;
}

void ast_names_add(ast_names *ns, const char *name, srcloc loc)
{
    if (ns->n < AST_MAX_RANK) {
        ns->name[ns->n] = name;
        ns->loc[ns->n++] = loc;
    } else if (ns->over.line == 0) {
        ns->over = loc;
    }
}

void ast_ranges_add(ast_ranges *rs, srcloc loc, ast_expr *origin, ast_expr *extent)
{
    if (rs->n < AST_MAX_RANK)
        rs->r[rs->n++] = (ast_range){ .loc = loc, .origin = origin, .extent = extent };
    else if (rs->over.line == 0)
        rs->over = loc;
}

/* Report a list that ran past AST_MAX_RANK, at its first extra entry. */
static void ast_check_over(diag_ctx *d, srcloc over, const char *msg)
{
    if (over.line != 0)
        diag_error(d, over, "%s", msg);
}

/* ------------------------------------------------------------- contextual words */

/* Index of word in the NULL-terminated list words, or -1. */
static int ast_word_index(const char *const *words, const char *word)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(words[i], word) == 0)
            return i;
    return -1;
}

ast_cache ast_cache_from_name(diag_ctx *d, srcloc at, const char *word)
{
    static const char *const words[] = { "ca", "cg", NULL };
    static const ast_cache values[] = { CACHE_CA, CACHE_CG };
    int i = ast_word_index(words, word);
    if (i >= 0)
        return values[i];
    diag_error(d, at, "unknown cache operator '%s' (expected ca or cg)", word);
    return CACHE_DEFAULT;
}

ast_evict ast_evict_from_name(diag_ctx *d, srcloc at, const char *word)
{
    static const char *const words[] = { "normal", "first", "last", "unchanged", NULL };
    static const ast_evict values[] = { EVICT_NORMAL, EVICT_FIRST, EVICT_LAST, EVICT_UNCHANGED };
    int i = ast_word_index(words, word);
    if (i >= 0)
        return values[i];
    diag_error(d, at,
               "unknown eviction policy '%s' (expected normal, first, last or unchanged)",
               word);
    return EVICT_DEFAULT;
}

ast_halo_fill ast_halo_fill_from_name(diag_ctx *d, srcloc at, const char *word)
{
    static const char *const words[] = { "zero", "clamp", "mirror", NULL };
    static const ast_halo_fill values[] = { HALO_ZERO, HALO_CLAMP, HALO_MIRROR };
    int i = ast_word_index(words, word);
    if (i >= 0)
        return values[i];
    diag_error(d, at, "unknown halo fill '%s' (expected zero, clamp or mirror)", word);
    return HALO_ZERO;
}

ast_combine ast_combine_from_name(diag_ctx *d, srcloc at, const char *word)
{
    static const char *const words[] = { "sum", "min", "max", "argmin", "argmax", NULL };
    static const ast_combine values[] = { COMBINE_SUM, COMBINE_MIN, COMBINE_MAX,
                                          COMBINE_ARGMIN, COMBINE_ARGMAX };
    int i = ast_word_index(words, word);
    if (i >= 0)
        return values[i];
    diag_error(d, at, "unknown combine operator '%s' (expected sum, min, max, argmin or "
               "argmax)", word);
    return COMBINE_SUM;
}

/* ---------------------------------------------------------------- stage options */

/* An option may be written once per statement: the AST has one slot for it. */
static bool ast_opt_first(diag_ctx *d, srcloc prev, srcloc at, const char *opt)
{
    if (prev.line == 0)
        return true;
    diag_error(d, at, "stage option '%s' given twice", opt);
    return false;
}

/* The AST keeps widths in an int; larger values are kept as INT_MAX so that sema still
 * sees (and rejects) an out-of-range value rather than a wrapped one. */
static int ast_clamp_int(long long v)
{
    return v > INT_MAX ? INT_MAX : (int)v;
}

void ast_opts_mech(diag_ctx *d, ast_stage_opts *o, const char *mech, srcloc loc)
{
    if (!ast_opt_first(d, o->mech_loc, loc, "using"))
        return;
    o->mech = mech;
    o->mech_loc = loc;
}

void ast_opts_cache(diag_ctx *d, ast_stage_opts *o, const char *word, srcloc loc)
{
    if (!ast_opt_first(d, o->cache_loc, loc, "cache"))
        return;
    o->cache = ast_cache_from_name(d, loc, word);
    o->cache_loc = loc;
}

void ast_opts_pad(diag_ctx *d, ast_stage_opts *o, long long bytes, srcloc loc)
{
    if (!ast_opt_first(d, o->pad_loc, loc, "pad"))
        return;
    o->pad = ast_clamp_int(bytes);
    o->pad_loc = loc;
}

void ast_opts_swizzle(diag_ctx *d, ast_stage_opts *o, long long bytes, srcloc loc)
{
    if (!ast_opt_first(d, o->swizzle_loc, loc, "swizzle"))
        return;
    o->swizzle = ast_clamp_int(bytes);
    o->swizzle_loc = loc;
}

void ast_opts_prefetch(diag_ctx *d, ast_stage_opts *o, long long bytes, srcloc loc)
{
    if (!ast_opt_first(d, o->prefetch_loc, loc, "prefetch"))
        return;
    o->prefetch = ast_clamp_int(bytes);
    o->prefetch_loc = loc;
}

void ast_opts_evict(diag_ctx *d, ast_stage_opts *o, const char *word, srcloc loc)
{
    if (!ast_opt_first(d, o->evict_loc, loc, "evict"))
        return;
    o->evict = ast_evict_from_name(d, loc, word);
    o->evict_loc = loc;
}

void ast_opts_halo(diag_ctx *d, ast_stage_opts *o, long long width, srcloc loc,
                   const char *fill, srcloc fill_loc)
{
    if (!ast_opt_first(d, o->halo_loc, loc, "halo"))
        return;
    o->halo = ast_clamp_int(width);
    o->halo_loc = loc;
    o->halo_fill = fill ? ast_halo_fill_from_name(d, fill_loc, fill) : HALO_ZERO;
}

/* ------------------------------------------------------------------------ items */

ast_item *ast_item_new(arena *a, ast_item_kind k, srcloc loc)
{
    ast_item *it = arena_alloc(a, sizeof *it);
    it->kind = k;
    it->loc = loc;
    return it;
}

ast_item *ast_param(arena *a, srcloc loc, elem_type t, srcloc tloc, const char *name, srcloc nloc)
{
    ast_item *it = ast_item_new(a, IT_PARAM, loc);
    it->type = t;
    it->type_loc = tloc;
    it->name = name;
    it->name_loc = nloc;
    return it;
}

static void ast_set_dims(ast_item *it, const ast_dims *dims)
{
    it->rank = dims->n;
    memcpy(it->dims, dims->e, sizeof it->dims);
}

ast_item *ast_array(arena *a, diag_ctx *d, srcloc loc, ast_dir dir, elem_type t, srcloc tloc,
                    const char *name, srcloc nloc, const ast_dims *dims)
{
    ast_item *it = ast_param(a, loc, t, tloc, name, nloc);
    it->kind = IT_ARRAY;
    it->dir = dir;
    ast_set_dims(it, dims);
    ast_check_over(d, dims->over, "arrays have at most 3 dimensions");
    return it;
}

ast_item *ast_int_item(arena *a, srcloc loc, ast_item_kind k, long long v, srcloc vloc)
{
    ast_item *it = ast_item_new(a, k, loc);
    it->value = v;
    it->value_loc = vloc;
    return it;
}

static const char *item_int_name(ast_item_kind k)
{
    switch (k) {
    case IT_THREADS: return "threads";
    case IT_STAGES: return "stages";
    case IT_PRODUCER_WARPS: return "producer_warps";
    case IT_BLOCKS_PER_SM: return "blocks_per_sm";
    case IT_CLUSTER: return "cluster";
    default: return "march";
    }
}

ast_item *ast_item_more(diag_ctx *d, ast_item *it, long long v, srcloc vloc)
{
    if (it->nfewer == AST_MAX_FEWER) {
        diag_error(d, vloc, "'%s' takes at most %d %s", item_int_name(it->kind),
                   AST_MAX_FEWER + 1, it->kind == IT_STAGES ? "depths" : "block sizes");
        return it;
    }
    it->fewer[it->nfewer] = v;
    it->fewer_loc[it->nfewer++] = vloc;
    return it;
}

ast_item *ast_grid_item(arena *a, srcloc loc, ast_grid g)
{
    ast_item *it = ast_item_new(a, IT_GRID, loc);
    it->grid = g;
    return it;
}

ast_item *ast_tile(arena *a, diag_ctx *d, srcloc loc, const char *name, srcloc nloc,
                   const ast_dims *dims, const ast_names *at)
{
    ast_item *it = ast_item_new(a, IT_TILE, loc);
    it->name = name;
    it->name_loc = nloc;
    ast_set_dims(it, dims);
    ast_check_over(d, dims->over, "a tile has at most 3 dimensions");
    if (at) {
        it->nat = at->n;
        memcpy(it->at, at->name, sizeof it->at);
        memcpy(it->at_loc, at->loc, sizeof it->at_loc);
        ast_check_over(d, at->over, "a tile has at most 3 origin names");
    }
    return it;
}

ast_item *ast_steps(arena *a, srcloc loc, const char *var, srcloc vloc, ast_extent bound,
                    long long by, srcloc byloc)
{
    ast_item *it = ast_item_new(a, IT_STEPS, loc);
    it->var = var;
    it->var_loc = vloc;
    it->bound = bound;
    it->by = by;
    it->by_loc = byloc;
    return it;
}

ast_item *ast_stage_ref(arena *a, diag_ctx *d, srcloc loc, const char *name,
                        const ast_ranges *ranges)
{
    ast_item *it = ast_item_new(a, IT_STAGE, loc);
    it->name = name;
    it->name_loc = loc;
    it->nranges = ranges->n;
    memcpy(it->ranges, ranges->r, sizeof it->ranges);
    ast_check_over(d, ranges->over, "a staged region has at most 3 dimensions");
    return it;
}

ast_item *ast_stage_prepend(ast_item *refs, ast_item *ref)
{
    ref->next = refs;
    return ref;
}

ast_item *ast_stage_stmt(ast_item *refs, srcloc loc, const ast_stage_opts *opts)
{
    ast_item *head = NULL;
    while (refs) {
        ast_item *next = refs->next;
        refs->next = head;
        refs->loc = loc;
        refs->opts = *opts;
        head = refs;
        refs = next;
    }
    return head;
}

ast_item *ast_accum(arena *a, diag_ctx *d, srcloc loc, elem_type t, srcloc tloc,
                    const char *name, srcloc nloc, const ast_dims *dims, const char *combine,
                    srcloc cloc, const char *into, srcloc iloc)
{
    ast_item *it = ast_param(a, loc, t, tloc, name, nloc);
    it->kind = IT_ACCUM;
    ast_set_dims(it, dims);
    ast_check_over(d, dims->over, "an accumulator has at most one extent");
    it->combine = ast_combine_from_name(d, cloc, combine);
    it->combine_loc = cloc;
    it->into = into;
    it->into_loc = iloc;
    return it;
}

/* A body's text location: the byte after its '{' ('{' is one byte, never a newline). */
static srcloc body_text_loc(srcloc brace)
{
    brace.col++;
    return brace;
}

ast_item *ast_body(arena *a, diag_ctx *d, srcloc loc, ast_body_kind k, const ast_names *idx,
                   const char *text, srcloc brace)
{
    ast_item *it = ast_item_new(a, IT_BODY, loc);
    it->body_kind = k;
    if (idx) {
        it->nidx = idx->n;
        memcpy(it->idx, idx->name, sizeof it->idx);
        memcpy(it->idx_loc, idx->loc, sizeof it->idx_loc);
        ast_check_over(d, idx->over, "a body has at most 3 index names");
    }
    it->text = text;
    it->text_loc = body_text_loc(brace);
    return it;
}

ast_item *ast_reduce(arena *a, diag_ctx *d, srcloc loc, elem_type t, srcloc tloc,
                     const char *name, srcloc nloc, const char *combine, srcloc cloc,
                     const ast_names *idx, const char *text, srcloc brace)
{
    ast_item *it = ast_body(a, d, loc, BODY_ELEMENTWISE, idx, text, brace);
    it->kind = IT_REDUCE;
    it->type = t;
    it->type_loc = tloc;
    it->name = name;
    it->name_loc = nloc;
    it->combine = combine ? ast_combine_from_name(d, cloc, combine) : COMBINE_CUSTOM;
    it->combine_loc = cloc;
    return it;
}

void ast_reduce_custom(arena *a, diag_ctx *d, ast_item *it, const ast_names *ab,
                       const char *op, srcloc op_brace, const char *word, srcloc wloc,
                       const char *identity, srcloc id_brace)
{
    (void)a;
    if (ab->n != 2 || ab->over.line)
        diag_error(d, ab->over.line ? ab->over : ab->n > 2 ? ab->loc[2] : ab->loc[0],
                   "a combine names its two operands: 'combine (a, b) { ... }'");
    if (strcmp(word, "identity"))
        diag_error(d, wloc, "expected 'identity' after the combine's body, not '%s'", word);
    for (int i = 0; i < 2 && i < ab->n; ++i) {
        it->op_arg[i] = ab->name[i];
        it->op_arg_loc[i] = ab->loc[i];
    }
    it->op_text = op;
    it->op_text_loc = body_text_loc(op_brace);
    it->id_text = identity;
    it->id_text_loc = body_text_loc(id_brace);
}

ast_pipeline *ast_pipeline_new(arena *a, srcloc loc, const char *name, srcloc name_loc)
{
    ast_pipeline *p = arena_alloc(a, sizeof *p);
    p->loc = loc;
    p->name = name;
    p->name_loc = name_loc;
    p->tail = &p->items;
    return p;
}

void ast_pipeline_add(ast_pipeline *p, ast_item *it)
{
    if (!it)
        return;
    *p->tail = it;
    while (it->next)
        it = it->next;
    p->tail = &it->next;
}

/* ------------------------------------------------------------------------- dump */

static const char *const dir_names[] = { "in", "out", "inout" };
static const char *const cache_names[] = { "default", "ca", "cg" };
static const char *const evict_names[] = { "default", "normal", "first", "last", "unchanged" };
static const char *const fill_names[] = { "zero", "clamp", "mirror" };
static const char *const combine_names[] = { "sum", "min", "max", "argmin", "argmax",
                                             "custom" };
const char *ast_combine_name(ast_combine c)
{
    return (unsigned)c < sizeof combine_names / sizeof *combine_names ? combine_names[c] : "?";
}

static const char *const body_names[] = {
    "compute elementwise", "compute step", "prologue", "epilogue", "reference"
};

static void dump_expr(FILE *out, const ast_expr *e)
{
    static const char *const ops[] = { [EX_ADD] = "+", [EX_SUB] = "-", [EX_MUL] = "*" };
    switch (e->kind) {
    case EX_NUM: fprintf(out, "%lld", e->num); return;
    case EX_NAME: fputs(e->name, out); return;
    case EX_NEG:
        fputs("(neg ", out);
        dump_expr(out, e->lhs);
        fputc(')', out);
        return;
    default:
        fprintf(out, "(%s ", ops[e->kind]);
        dump_expr(out, e->lhs);
        fputc(' ', out);
        dump_expr(out, e->rhs);
        fputc(')', out);
        return;
    }
}

static void dump_extent(FILE *out, const ast_extent *e)
{
    if (e->bounded)
        fprintf(out, "%s <= %lld", e->name, e->value);
    else if (e->name)
        fputs(e->name, out);
    else
        fprintf(out, "%lld", e->value);
}

static void dump_dims(FILE *out, const ast_extent *dims, int rank)
{
    fputc(' ', out);
    for (int i = 0; i < rank; i++) {
        fputc('[', out);
        dump_extent(out, &dims[i]);
        fputc(']', out);
    }
}

/* A parenthesised list of names: " (i j)". */
static void dump_names(FILE *out, const char *const *names, int n)
{
    fputs(" (", out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? " " : "", names[i]);
    fputc(')', out);
}

/* Body text as a C-like string literal, so each item stays on one line. */
static void dump_text(FILE *out, const char *s)
{
    fputs(" \"", out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\n')
            fputs("\\n", out);
        else if (*p == '\t')
            fputs("\\t", out);
        else if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (isprint(*p))
            fputc(*p, out);
        else
            fprintf(out, "\\x%02X", *p);
    }
    fputc('"', out);
}

static void dump_opts(FILE *out, const ast_stage_opts *o)
{
    if (o->mech_loc.line)
        fprintf(out, " using %s", o->mech);
    if (o->cache_loc.line)
        fprintf(out, " cache %s", cache_names[o->cache]);
    if (o->prefetch_loc.line)
        fprintf(out, " prefetch %d", o->prefetch);
    if (o->pad_loc.line)
        fprintf(out, " pad %d", o->pad);
    if (o->swizzle_loc.line)
        fprintf(out, " swizzle %d", o->swizzle);
    if (o->evict_loc.line)
        fprintf(out, " evict %s", evict_names[o->evict]);
    if (o->halo_loc.line)
        fprintf(out, " halo %d %s", o->halo, fill_names[o->halo_fill]);
}

static void dump_stage(FILE *out, const ast_item *it)
{
    fprintf(out, "stage %s", it->name);
    if (it->nranges)
        fputc(' ', out);
    for (int i = 0; i < it->nranges; i++) {
        fputc('[', out);
        dump_expr(out, it->ranges[i].origin);
        fputs(" : ", out);
        dump_expr(out, it->ranges[i].extent);
        fputc(']', out);
    }
    dump_opts(out, &it->opts);
}

static void dump_body(FILE *out, const ast_item *it)
{
    fputs(body_names[it->body_kind], out);
    if (it->nidx)
        dump_names(out, it->idx, it->nidx);
    dump_text(out, it->text);
}

/* The item's content, without the surrounding parentheses and location. */
static void dump_item_body(FILE *out, const ast_item *it)
{
    switch (it->kind) {
    case IT_PARAM: fprintf(out, "param %s %s", ast_type_name(it->type), it->name); break;
    case IT_ARRAY:
        fprintf(out, "array %s %s %s", dir_names[it->dir], ast_type_name(it->type), it->name);
        dump_dims(out, it->dims, it->rank);
        break;
    case IT_THREADS: case IT_STAGES: case IT_PRODUCER_WARPS: case IT_MARCH: case IT_BLOCKS_PER_SM:
    case IT_CLUSTER:
        fprintf(out, "%s %lld", item_int_name(it->kind), it->value);
        for (int i = 0; i < it->nfewer; ++i)
            fprintf(out, ", %lld", it->fewer[i]);
        break;
    case IT_GRID:
        fprintf(out, "grid %s", it->grid == GRID_PERSISTENT ? "persistent" : "per_tile");
        break;
    case IT_HOST_STREAM:
        fputs("host_stream", out);
        break;
    case IT_TILE:
        fprintf(out, "tile %s", it->name);
        dump_dims(out, it->dims, it->rank);
        if (it->nat) {
            fputs(" at", out);
            dump_names(out, it->at, it->nat);
        }
        break;
    case IT_STEPS:
        fprintf(out, "steps %s over ", it->var);
        dump_extent(out, &it->bound);
        fprintf(out, " by %lld", it->by);
        break;
    case IT_STAGE: dump_stage(out, it); break;
    case IT_ACCUM:
        fprintf(out, "accum %s %s", ast_type_name(it->type), it->name);
        if (it->rank)
            dump_dims(out, it->dims, it->rank);
        fprintf(out, " combine %s into %s", combine_names[it->combine], it->into);
        break;
    case IT_BODY: dump_body(out, it); break;
    case IT_REDUCE:
        fprintf(out, "reduce %s %s combine", ast_type_name(it->type), it->name);
        if (it->combine == COMBINE_CUSTOM) {
            dump_names(out, it->op_arg, it->op_arg[1] ? 2 : it->op_arg[0] ? 1 : 0);
            dump_text(out, it->op_text);
            fputs(" identity", out);
            dump_text(out, it->id_text);
        } else {
            fprintf(out, " %s", combine_names[it->combine]);
        }
        dump_names(out, it->idx, it->nidx);
        dump_text(out, it->text);
        break;
    }
}

void ast_dump(FILE *out, const ast_file *f)
{
    if (!f || !f->pipeline) {
        fputs("(nothing)\n", out);
        return;
    }
    const ast_pipeline *p = f->pipeline;
    fprintf(out, "(pipeline %s @%d:%d\n", p->name, p->loc.line, p->loc.col);
    for (const ast_item *it = p->items; it; it = it->next) {
        fputs("  (", out);
        dump_item_body(out, it);
        fprintf(out, " @%d:%d)\n", it->loc.line, it->loc.col);
    }
    fputs(")\n", out);
}
