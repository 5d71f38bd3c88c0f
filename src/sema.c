/* sema: check the AST and build the spec that planning works from.
 *
 * Every rule of the language that does not depend on the lowering lives here: names and
 * their kinds, types, ranks, extents, regions (affine in the tile origins and the step
 * variable), option values, one compute body, the shared-memory budget per architecture;
 * then the command line's overrides (--lower, --grid, --producer-warps) and what they
 * change: the lowering of every target, the consumer warps, and the warnings (-Wstages,
 * -Whints). All errors are reported (sema does not stop at the first one). */
#include "pipegen.h"

#include <stdlib.h>
#include <string.h>

mech sema_mech(diag_ctx *d, diag_origin o, const char *name)
{
    mech m = mech_from_name(name);
    if (mech_known(m))
        return m;
    const char *near = mech_suggest(name);
    if (near)
        diag_error_from(d, o, "unknown lowering '%s'; did you mean '%s'?", name, near);
    else
        diag_error_from(d, o, "unknown lowering '%s' (pipegen --list-lowerings lists them)",
                        name);
    return MECH__COUNT;
}

/* ------------------------------------------------------------------ the checker */

typedef struct checker {
    arena *a;
    diag_ctx *d;
    const target *tgt;
    spec *s;
    /* every declared name, for duplicate checks */
    struct decl { const char *name; srcloc loc; const char *what; } *decls;
    int ndecls, cap_decls;
    /* capacities of the spec's arrays, which double as they grow */
    int cap_sizes, cap_params, cap_arrays, cap_accums, cap_reduces, cap_stages, cap_sdecls;
    /* the first item of each kind that may appear once, for duplicate checks */
    const ast_item *once[IT_BODY + 1 + BODY_REFERENCE + 1];
    const ast_item *stage_of[64];   /* per array: the item that staged it */
    srcloc bad_mech;                /* the last unknown `using` reported (the names of one
                                       `stage` statement share it: reported once) */
} checker;

static const char *item_word(const ast_item *it)
{
    static const char *words[] = {
        [IT_THREADS] = "threads", [IT_STAGES] = "stages", [IT_PRODUCER_WARPS] = "producer_warps",
        [IT_BLOCKS_PER_SM] = "blocks_per_sm", [IT_CLUSTER] = "cluster",
        [IT_GRID] = "grid", [IT_TILE] = "tile", [IT_STEPS] = "steps", [IT_MARCH] = "march",
        [IT_HOST_STREAM] = "host_stream",
    };
    static const char *bodies[] = {
        [BODY_ELEMENTWISE] = "compute", [BODY_STEP] = "compute", [BODY_PROLOGUE] = "prologue",
        [BODY_EPILOGUE] = "epilogue", [BODY_REFERENCE] = "reference",
    };
    return it->kind == IT_BODY ? bodies[it->body_kind] : words[it->kind];
}

/* Items that may appear once; bodies count per kind (both compute kinds share one slot). */
static bool check_once(checker *c, const ast_item *it)
{
    int slot = it->kind;
    if (it->kind == IT_BODY)
        slot = IT_BODY + 1 + (it->body_kind == BODY_STEP ? BODY_ELEMENTWISE : it->body_kind);
    if (c->once[slot]) {
        diag_error(c->d, it->loc, "duplicate '%s'", item_word(it));
        diag_note(c->d, c->once[slot]->loc, "first given here");
        return false;
    }
    c->once[slot] = it;
    return true;
}

static const struct decl *find_decl(const checker *c, const char *name)
{
    for (int i = 0; i < c->ndecls; ++i)
        if (strcmp(c->decls[i].name, name) == 0)
            return &c->decls[i];
    return NULL;
}

/* Names the generated code could not use are refused where they are declared. */
static bool check_name(checker *c, const char *name, srcloc loc)
{
    const char *why = reserved_why(name);
    why = why ? why : reserved_after_pipeline(c->s->name, name);
    if (why)
        diag_error(c->d, loc, "'%s': %s", name, why);
    return !why;
}

/* A name the generated code will use, for the header's macro guards. */
static void note_name(checker *c, const char *name, srcloc loc)
{
    spec *s = c->s;
    s->decls = arena_grow(c->a, s->decls, &c->cap_sdecls, s->ndecls + 1, sizeof *s->decls);
    s->decls[s->ndecls++] = (spec_decl){loc, name};
}

static bool declare(checker *c, const char *name, srcloc loc, const char *what)
{
    const struct decl *prev = find_decl(c, name);
    if (prev) {
        diag_error(c->d, loc, "'%s' is already declared as %s", name, prev->what);
        diag_note(c->d, prev->loc, "declared here");
        return false;
    }
    if (!check_name(c, name, loc))
        return false;
    c->decls = arena_grow(c->a, c->decls, &c->cap_decls, c->ndecls + 1, sizeof *c->decls);
    c->decls[c->ndecls++] = (struct decl){name, loc, what};
    note_name(c, name, loc);
    return true;
}

static int find_array(const spec *s, const char *name)
{
    for (int i = 0; i < s->narrays; ++i)
        if (strcmp(s->arrays[i].name, name) == 0)
            return i;
    return -1;
}

static bool is_size(const spec *s, const char *name)
{
    for (int i = 0; i < s->nsizes; ++i)
        if (strcmp(s->sizes[i], name) == 0)
            return true;
    return false;
}

static void add_size(checker *c, const ast_extent *e)
{
    spec *s = c->s;
    if (!e->name || is_size(s, e->name))
        return;
    const struct decl *prev = find_decl(c, e->name);
    if (prev) {
        diag_error(c->d, e->loc, "'%s' is declared as %s, not a size", e->name, prev->what);
        return;
    }
    declare(c, e->name, e->loc, "a size");
    s->sizes = arena_grow(c->a, (void *)s->sizes, &c->cap_sizes, s->nsizes + 1,
                          sizeof *s->sizes);
    s->sizes[s->nsizes++] = e->name;
}

/* ---- declarations: params, arrays, accumulators ---- */

/* A parameter or an accumulator holds one value of a scalar type: CUDA's vector types are
 * for array elements (pixels, packed data). */
static bool check_scalar(checker *c, const ast_item *it, const char *what)
{
    if (ast_type_class(it->type) != TC_VECTOR)
        return true;
    diag_error(c->d, it->type_loc, "%s is a scalar: '%s' is a vector type, for array elements "
               "(give its lane type, '%s')", what, ast_type_name(it->type),
               ast_type_name(ast_type_lane(it->type)));
    return false;
}

static void check_param(checker *c, const ast_item *it)
{
    if (!declare(c, it->name, it->name_loc, "a parameter") || !check_scalar(c, it, "a parameter"))
        return;
    spec *s = c->s;
    s->params = arena_grow(c->a, s->params, &c->cap_params, s->nparams + 1, sizeof *s->params);
    s->params[s->nparams++] = (spec_param){it->name_loc, it->name, it->type};
}

static void check_array(checker *c, const ast_item *it)
{
    if (!declare(c, it->name, it->name_loc, "an array"))
        return;
    spec *s = c->s;
    if (s->narrays == 64) {
        diag_error(c->d, it->loc, "too many arrays (at most 64)");
        return;
    }
    /* Literal extents are bounded so that their product, in bytes, fits in 62 bits
     * (the launcher and the drivers multiply them). */
    long long bytes = ast_type_size(it->type);
    for (int d = 0; d < it->rank; ++d) {
        long long v = it->dims[d].value;
        if (!it->dims[d].name && (v <= 0 || __builtin_mul_overflow(bytes, v, &bytes)
                                  || bytes > (1LL << 62)))
            diag_error(c->d, it->dims[d].loc, "array extents must be positive, and the "
                       "array at most 2^62 bytes");
        add_size(c, &it->dims[d]);
    }
    s->arrays = arena_grow(c->a, s->arrays, &c->cap_arrays, s->narrays + 1, sizeof *s->arrays);
    spec_array *arr = &s->arrays[s->narrays++];
    *arr = (spec_array){.loc = it->name_loc, .name = it->name, .type = it->type,
                        .dir = it->dir, .rank = it->rank, .staged = -1};
    memcpy(arr->dims, it->dims, sizeof arr->dims);
}

/* An array accumulator's extent: one integer literal, bounded so that its partials (8
 * bytes an element and block) and its shared-memory copies stay far from overflow; shared
 * memory itself is the planner's to check. */
enum { ACCUM_MAX_EXTENT = 1 << 16 };

static bool check_accum_extent(checker *c, const ast_item *it)
{
    if (it->rank == 0)
        return true;
    if (it->rank > 1) {
        diag_error(c->d, it->dims[1].loc, "an accumulator has one extent (per bin, row or "
                   "column): index a rank-2 result as one flat extent");
        return false;
    }
    const ast_extent *e = &it->dims[0];
    if (e->name) {
        diag_error(c->d, e->loc, "an accumulator's extent must be an integer literal (its "
                   "bins live in shared memory, sized when the kernel is generated): '%s' "
                   "is a size symbol", e->name);
        return false;
    }
    if (e->value < 1 || e->value > ACCUM_MAX_EXTENT) {
        diag_error(c->d, e->loc, "an accumulator's extent must be between 1 and %d",
                   ACCUM_MAX_EXTENT);
        return false;
    }
    /* sum, min and max (check_accum_uses); the arg forms and a combine of one's own have
     * no array form. */
    if (it->combine != COMBINE_SUM && it->combine != COMBINE_MIN && it->combine != COMBINE_MAX) {
        diag_error(c->d, it->combine_loc, "an array accumulator combines sum, min or max");
        return false;
    }
    return true;
}

/* The combine writes the accumulator's elements, one for one: an output with more
 * elements would keep the others unwritten and look like results it does not hold. */
static bool check_accum_output(checker *c, const ast_item *it, const spec_array *arr)
{
    const ast_extent *d0 = &arr->dims[0];
    const long long want = it->rank ? it->dims[0].value : 1;
    if (!d0->name && d0->value == want)
        return true;
    const char *has = d0->name ? d0->name : arena_printf(c->a, "%lld", d0->value);
    if (it->rank)
        diag_error(c->d, it->into_loc, "accumulator '%s' has %lld elements, combined one for "
                   "one into '%s', but '%s' has extent %s: give them the same extent",
                   it->name, want, arr->name, arr->name, has);
    else if (it->combine != COMBINE_SUM)
        diag_error(c->d, it->into_loc, "accumulator '%s' is one value, combined into one "
                   "element, but '%s' has extent %s: give '%s' extent 1 (per-bin min and "
                   "max are not implemented yet)", it->name, arr->name, has, arr->name);
    else
        diag_error(c->d, it->into_loc, "accumulator '%s' is one value, combined into one "
                   "element, but '%s' has extent %s: give '%s' extent 1, or give the "
                   "accumulator an extent for per-bin results ('accum %s %s[N] combine sum "
                   "into %s;')", it->name, arr->name, has, arr->name,
                   ast_type_name(it->type), it->name, arr->name);
    diag_note(c->d, d0->loc, "'%s' declared here", arr->name);
    return false;
}

static void check_accum(checker *c, const ast_item *it)
{
    spec *s = c->s;
    if (!declare(c, it->name, it->name_loc, "an accumulator")
        || !check_scalar(c, it, "an accumulator") || !check_accum_extent(c, it))
        return;
    if (it->combine == COMBINE_ARGMIN || it->combine == COMBINE_ARGMAX) {
        diag_error(c->d, it->combine_loc, "an accumulator combines sum, min or max; argmin "
                   "and argmax are for reductions along a row ('reduce')");
        return;
    }
    /* The threads and the grid-wide combine add in the accumulator's own type: a half or
     * bfloat16 sum over a whole array drops its small terms (and a half one overflows),
     * so no reference, the generated test's included, can agree with it. */
    if (it->combine == COMBINE_SUM && (it->type == TY_HALF || it->type == TY_BF16)) {
        diag_error(c->d, it->combine_loc, "a %s accumulator cannot combine sum: the threads "
                   "and the grid-wide combine add in %s precision (%s), which over a whole "
                   "array drops the small terms%s; accumulate a float into a float array "
                   "instead", ast_type_name(it->type), ast_type_name(it->type),
                   it->type == TY_HALF ? "11 significant bits, at most 65504"
                                       : "8 significant bits",
                   it->type == TY_HALF ? " and overflows" : "");
        return;
    }
    int into = find_array(s, it->into);
    if (into < 0) {
        diag_error(c->d, it->into_loc, "unknown array '%s'", it->into);
        return;
    }
    const spec_array *arr = &s->arrays[into];
    if (arr->dir != DIR_OUT || arr->rank != 1) {
        diag_error(c->d, it->into_loc, "an accumulator combines into an 'out' array of rank 1");
        return;
    }
    if (!check_accum_output(c, it, arr))
        return;
    if (arr->type != it->type) {
        diag_error(c->d, it->type_loc, "accumulator type %s does not match %s '%s'",
                   ast_type_name(it->type), ast_type_name(arr->type), arr->name);
        return;
    }
    for (int i = 0; i < s->naccums; ++i)
        if (s->accums[i].into == into) {
            diag_error(c->d, it->into_loc, "'%s' already receives accumulator '%s'",
                       arr->name, s->accums[i].name);
            return;
        }
    s->accums = arena_grow(c->a, s->accums, &c->cap_accums, s->naccums + 1, sizeof *s->accums);
    s->accums[s->naccums++] = (spec_accum){it->name_loc, it->name, it->type, it->combine, into,
                                           it->rank > 0, it->rank ? (int)it->dims[0].value : 1};
    /* A block clears, writes and the combine folds its bins once: per tile, that is the
     * whole cost of a small tile. A 'grid' item (checked later) still has the last word. */
    if (it->rank)
        s->grid = GRID_PERSISTENT;
}

/* ---- schedule items ---- */

static bool in_range(checker *c, const ast_item *it, long long lo, long long hi)
{
    if (it->value < lo || it->value > hi) {
        diag_error(c->d, it->value_loc, "'%s' must be between %lld and %lld", item_word(it),
                   lo, hi);
        return false;
    }
    return true;
}

/* `stages N, M, ...`: each depth smaller than the one before (the planner tries them in
 * turn), none below 1. */
static void check_fewer_stages(checker *c, const ast_item *it)
{
    long long before = it->value;
    for (int i = 0; i < it->nfewer; ++i) {
        if (it->fewer[i] < 1 || it->fewer[i] >= before) {
            diag_error(c->d, it->fewer_loc[i], "each depth of 'stages' after the first must "
                       "be at least 1 and smaller than the one before it (%lld): the planner "
                       "takes the first that fits an architecture's shared memory", before);
            return;
        }
        before = it->fewer[i];
        c->s->ring_fallbacks[c->s->nring_fallbacks++] = (int)before;
    }
}

/* One block size of `threads N, M, ...`: a whole number of warps, at most 1024, offered
 * once. */
static bool check_block_size(checker *c, long long v, srcloc at)
{
    spec *s = c->s;
    if (v < 32 || v > 1024) {
        diag_error(c->d, at, "'threads' must be between 32 and 1024");
        return false;
    }
    if (v % 32) {
        diag_error(c->d, at, "threads must be a multiple of 32 (a warp)");
        return false;
    }
    for (int i = 0; i < s->nthreads_offered; ++i)
        if (s->threads_offered[i] == v) {
            diag_error(c->d, at, "'threads' offers %lld twice", v);
            return false;
        }
    s->threads_offered[s->nthreads_offered++] = (int)v;
    return true;
}

/* `threads N, M, ...`: the block size N, and the others a tuning run may choose instead
 * (--threads, a wisdom record: choose_threads). */
static void check_threads(checker *c, const ast_item *it)
{
    if (!check_block_size(c, it->value, it->value_loc))
        return;
    c->s->threads = (int)it->value;
    for (int i = 0; i < it->nfewer; ++i)
        if (!check_block_size(c, it->fewer[i], it->fewer_loc[i]))
            return;
}

static void check_scalar_item(checker *c, const ast_item *it)
{
    spec *s = c->s;
    switch (it->kind) {
    case IT_THREADS:
        check_threads(c, it);
        break;
    case IT_STAGES:
        if (in_range(c, it, 1, 16))
            s->ring_depth = (int)it->value;
        check_fewer_stages(c, it);
        break;
    case IT_BLOCKS_PER_SM:
        if (in_range(c, it, 1, 32))
            s->blocks_per_sm = (int)it->value;
        break;
    case IT_CLUSTER:
        if (in_range(c, it, 1, 8)) {
            if (it->value & (it->value - 1))
                diag_error(c->d, it->value_loc, "cluster must be 1, 2, 4 or 8 blocks");
            s->cluster = (int)it->value;
            s->cluster_loc = it->loc;
        }
        break;
    case IT_PRODUCER_WARPS:
        if (in_range(c, it, 0, 31))
            s->producer_warps = (int)it->value;
        break;
    case IT_MARCH:
        if (in_range(c, it, 1, 1 << 20))
            s->march = it->value;
        break;
    case IT_GRID:
        s->grid = it->grid;
        s->grid_loc = it->loc;
        break;
    case IT_HOST_STREAM:
        s->host_stream = true;
        s->host_stream_loc = it->loc;
        break;
    default:
        break;
    }
}

/* A tile extent is a literal, or `S <= N`: the whole of a dimension whose extent is the
 * size symbol S, planned at its bound N (the launcher refuses a larger S). */
static bool check_tile_extent(checker *c, const ast_extent *e, const spec_array *arr, int d)
{
    const ast_extent *ad = &arr->dims[d];
    if (e->bounded && (!ad->name || strcmp(ad->name, e->name))) {
        diag_error(c->d, e->loc, "a tile extent '%s <= N' spans the whole dimension: '%s' "
                   "must be the extent of '%s' there, which is %s", e->name, e->name,
                   arr->name, ad->name ? ad->name : arena_printf(c->a, "%lld", ad->value));
        return false;
    }
    if (e->name && !e->bounded) {
        diag_error(c->d, e->loc, "a tile extent is an integer literal, or a size symbol with "
                   "its bound ('%s <= 4096': the whole dimension, planned at the bound)",
                   e->name);
        return false;
    }
    if (e->value <= 0 || e->value > (1 << 24)) {
        diag_error(c->d, e->bounded ? e->bound_loc : e->loc, "tile extents%s must be between "
                   "1 and 16777216", e->bounded ? "' bounds" : "");
        return false;
    }
    return true;
}

static void check_tile(checker *c, const ast_item *it)
{
    spec *s = c->s;
    int arr = find_array(s, it->name);
    if (arr < 0) {
        diag_error(c->d, it->name_loc, "unknown array '%s'", it->name);
        return;
    }
    if (it->rank != s->arrays[arr].rank) {
        diag_error(c->d, it->loc, "tile has rank %d but '%s' has rank %d", it->rank, it->name,
                   s->arrays[arr].rank);
        return;
    }
    if (it->nat && it->nat != it->rank) {
        diag_error(c->d, it->at_loc[it->nat - 1], "tile of rank %d needs %d names after 'at'",
                   it->rank, it->rank);
        return;
    }
    for (int d = 0; d < it->rank; ++d)
        if (!check_tile_extent(c, &it->dims[d], &s->arrays[arr], d))
            return;
    /* The threads walk a tile's elements with int indices, and the emitter multiplies its
     * extents: their product is bounded as each extent is. */
    long long cells = 1;
    for (int d = 0; d < it->rank; ++d) {
        if (it->dims[d].value > (1LL << 24) / cells) {
            diag_error(c->d, it->loc, "a tile holds at most 16777216 elements (the product "
                       "of its extents)");
            return;
        }
        cells *= it->dims[d].value;
    }
    for (int d = 0; d < it->nat; ++d)
        if (!declare(c, it->at[d], it->at_loc[d], "a tile origin"))
            return;
    s->tile_array = arr;
    s->tile_rank = it->rank;
    for (int d = 0; d < it->rank; ++d) {
        s->tile[d] = it->dims[d].value;
        s->tile_bounded[d] = it->dims[d].bounded ? it->dims[d].name : NULL;
        /* Unnamed origins get reserved names so that regions and the emitter treat every
         * tile the same. */
        s->tile_at[d] = it->nat ? it->at[d] : arena_printf(c->a, "pg_org%d", d);
    }
}

static void check_steps(checker *c, const ast_item *it)
{
    spec *s = c->s;
    if (!declare(c, it->var, it->var_loc, "the step variable"))
        return;
    if (it->bound.name && !is_size(s, it->bound.name)) {
        diag_error(c->d, it->bound.loc, "'%s' is not a size of any array", it->bound.name);
        return;
    }
    if (it->by <= 0 || it->by > (1 << 20)) {
        diag_error(c->d, it->by_loc, "step size must be between 1 and 1048576");
        return;
    }
    s->has_steps = true;
    s->step_var = it->var;
    s->step_bound = it->bound;
    s->step_by = it->by;
    /* A literal bound as a region's constants (2^40): the kernel's k + by and k times a
     * row's elements stay in int64_t. Over 0 the loop would still run its first step.
     * Reported after the loop is recorded: its variable's uses are not errors too. */
    const long long max_bound = 1LL << 40;
    if (!it->bound.name && (it->bound.value < 1 || it->bound.value > max_bound))
        diag_error(c->d, it->bound.loc, "the bound of steps must be a size or an integer "
                   "between 1 and %lld", max_bound);
}

/* ---- regions: affine forms over the tile origins and the step variable ---- */

static bool is_region_var(const spec *s, const char *name)
{
    /* A tile without `at` names its origins pg_org0.. for the generated code: a region
     * that spells one leans on a name the docs reserve, which may change. */
    if (strncmp(name, "pg_", 3) == 0)
        return false;
    for (int d = 0; d < s->tile_rank; ++d)
        if (s->tile_at[d] && strcmp(s->tile_at[d], name) == 0)
            return true;
    return s->has_steps && strcmp(s->step_var, name) == 0;
}

static bool aff_add_term(affine *r, long long coef, const char *var)
{
    for (int i = 0; i < r->nterms; ++i)
        if (strcmp(r->var[i], var) == 0) {
            r->coef[i] += coef;
            return true;
        }
    if (r->nterms == AFF_MAX_TERMS)
        return false;
    r->coef[r->nterms] = coef;
    r->var[r->nterms++] = var;
    return true;
}

/* r += scale * x; false when a value overflows or there are too many terms. */
static bool aff_combine(affine *r, const affine *x, long long scale)
{
    long long v;
    if (__builtin_mul_overflow(scale, x->c, &v) || __builtin_add_overflow(r->c, v, &r->c))
        return false;
    for (int i = 0; i < x->nterms; ++i)
        if (__builtin_mul_overflow(scale, x->coef[i], &v) || !aff_add_term(r, v, x->var[i]))
            return false;
    return true;
}

static bool to_affine_rec(checker *c, const ast_expr *e, affine *out);

/* The planner multiplies a coefficient by its variable's unit (a tile extent, at most
 * 2^24, or the step, at most 2^20) and the element size, and moves the constant by the
 * halo and to 16- or 32-byte boundaries: these bounds keep every such product in range. */
static bool aff_in_range(const affine *a)
{
    const long long max_coef = 1LL << 20, max_c = 1LL << 40;
    for (int i = 0; i < a->nterms; ++i)
        if (a->coef[i] < -max_coef || a->coef[i] > max_coef)
            return false;
    return a->c >= -max_c && a->c <= max_c;
}

/* Report a form that overflows or has too many variables once, at the whole bound. */
static bool to_affine(checker *c, const ast_expr *e, affine *out)
{
    int before = c->d->errors;
    if (to_affine_rec(c, e, out) && aff_in_range(out))
        return true;
    if (c->d->errors == before)
        diag_error(c->d, e->loc, "a region bound is too large or has too many variables");
    return false;
}

static bool to_affine_rec(checker *c, const ast_expr *e, affine *out)
{
    memset(out, 0, sizeof *out);
    affine l, r;
    switch (e->kind) {
    case EX_NUM:
        out->c = e->num;
        return true;
    case EX_NAME:
        if (!is_region_var(c->s, e->name)) {
            diag_error(c->d, e->loc,
                       "'%s' is not a tile origin (tile ... at) or the step variable", e->name);
            return false;
        }
        return aff_add_term(out, 1, e->name);
    case EX_NEG:
        return to_affine_rec(c, e->lhs, &l) && aff_combine(out, &l, -1);
    case EX_ADD:
    case EX_SUB:
        return to_affine_rec(c, e->lhs, &l) && to_affine_rec(c, e->rhs, &r) && aff_combine(out, &l, 1)
               && aff_combine(out, &r, e->kind == EX_ADD ? 1 : -1);
    case EX_MUL:
        if (!to_affine_rec(c, e->lhs, &l) || !to_affine_rec(c, e->rhs, &r))
            return false;
        if (l.nterms && r.nterms) {
            diag_error(c->d, e->loc, "a region bound must be affine (no product of variables)");
            return false;
        }
        return l.nterms ? aff_combine(out, &l, r.c) : aff_combine(out, &r, l.c);
    }
    return false;
}

static bool region_extent(checker *c, const ast_expr *e, long long *out)
{
    affine a;
    if (!to_affine(c, e, &a))
        return false;
    if (a.nterms || a.c <= 0 || a.c > (1 << 24)) {
        diag_error(c->d, e->loc, "a region extent must be a positive integer constant");
        return false;
    }
    *out = a.c;
    return true;
}

static void default_region(const spec *s, spec_stage *st)
{
    for (int d = 0; d < st->rank; ++d) {
        memset(&st->origin[d], 0, sizeof st->origin[d]);
        aff_add_term(&st->origin[d], 1, s->tile_at[d]);
        st->extent[d] = s->tile[d];
    }
}

static bool same_loc(srcloc a, srcloc b)
{
    return a.line == b.line && a.col == b.col && a.file == b.file;
}

static bool stage_opts(checker *c, const ast_item *it, spec_stage *st)
{
    const ast_stage_opts *o = &it->opts;
    st->mech = MECH_AUTO;
    if (o->mech) {
        if (same_loc(c->bad_mech, o->mech_loc))
            return false;   /* reported at the statement's first name */
        st->mech = sema_mech(c->d, (diag_origin){o->mech_loc, NULL}, o->mech);
        if (!mech_known(st->mech)) {
            c->bad_mech = o->mech_loc;
            return false;
        }
    }
    if (o->prefetch && o->prefetch != 64 && o->prefetch != 128 && o->prefetch != 256) {
        diag_error(c->d, o->prefetch_loc, "prefetch must be 64, 128 or 256 (bytes)");
        return false;
    }
    if (o->halo < 0 || o->halo > 64) {
        diag_error(c->d, o->halo_loc, "halo must be between 0 and 64");
        return false;
    }
    st->cache = o->cache;
    st->prefetch = o->prefetch;
    st->pad = o->pad_loc.line ? o->pad : -1;
    if (o->pad_loc.line && (o->pad < 0 || o->pad > 256)) {
        diag_error(c->d, o->pad_loc, "pad must be between 0 and 256 (bytes)");
        return false;
    }
    st->swizzle = o->swizzle_loc.line ? o->swizzle : -1;
    if (o->swizzle_loc.line && o->swizzle != 0 && o->swizzle != 32 && o->swizzle != 64
        && o->swizzle != 128) {
        diag_error(c->d, o->swizzle_loc, "swizzle must be 0, 32, 64 or 128 (bytes)");
        return false;
    }
    st->evict = o->evict;
    st->hint_loc[HINT_CACHE] = o->cache_loc;
    st->hint_loc[HINT_PREFETCH] = o->prefetch_loc;
    st->hint_loc[HINT_EVICT] = o->evict_loc;
    st->hint_loc[HINT_SWIZZLE] = o->swizzle_loc;
    st->halo = o->halo;
    st->halo_fill = o->halo_fill;
    return true;
}

static bool same_extent(const ast_extent *a, const ast_extent *b)
{
    return a->name ? b->name && strcmp(a->name, b->name) == 0 : !b->name && a->value == b->value;
}

/* The tile dimension whose origin region dimension d follows (its origin that tile
 * origin minus the halo, its extent the tile's plus both halos), or -1. */
static int border_dim(const spec *s, const spec_stage *st, int d)
{
    const affine *o = &st->origin[d];
    for (int t = 0; t < s->tile_rank && o->nterms == 1 && o->coef[0] == 1; ++t)
        if (strcmp(o->var[0], s->tile_at[t]) == 0 && o->c == -st->halo
            && st->extent[d] == s->tile[t] + 2 * st->halo)
            return t;
    return -1;
}

/* A clamped or mirrored halo reads the edge of the array for a coordinate outside it: that
 * element must lie in the staged region, which it does where the region is the tile's own
 * (plus the halo) along dimensions as long as the tile array's, the tile then always
 * meeting the array. */
static bool border_region(checker *c, const ast_item *it, const spec_stage *st,
                          const spec_array *arr)
{
    const spec *s = c->s;
    for (int d = 0; d < st->rank; ++d) {
        int t = border_dim(s, st, d);
        if (t < 0 || !same_extent(&arr->dims[d], &s->arrays[s->tile_array].dims[t])) {
            diag_error(c->d, it->opts.halo_loc, "a %s halo needs '%s' staged over the tile's "
                       "own region, along dimensions of the tile array's extents ('%s'): "
                       "dimension %d of its region is not", st->halo_fill == HALO_CLAMP
                       ? "clamped" : "mirrored", arr->name, s->arrays[s->tile_array].name, d);
            return false;
        }
    }
    return true;
}

static bool stage_region(checker *c, const ast_item *it, spec_stage *st, const spec_array *arr)
{
    spec *s = c->s;
    st->rank = arr->rank;
    /* A region lies in the tile's coordinates: without a (valid) tile there is none to
     * check, and the tile's own error (or its absence) is the one to report. */
    if (s->tile_array < 0)
        return false;
    if (it->nranges == 0) {
        if (arr->rank != s->tile_rank) {
            diag_error(c->d, it->name_loc, "'%s' has rank %d but the tile has rank %d: give "
                       "its region explicitly", arr->name, arr->rank, s->tile_rank);
            return false;
        }
        default_region(s, st);
    } else if (it->nranges != arr->rank) {
        diag_error(c->d, it->ranges[0].loc, "the region of '%s' has %d dimension%s but the "
                   "array has %d", arr->name, it->nranges, it->nranges == 1 ? "" : "s",
                   arr->rank);
        return false;
    }
    for (int d = 0; d < it->nranges; ++d)
        if (!to_affine(c, it->ranges[d].origin, &st->origin[d])
            || !region_extent(c, it->ranges[d].extent, &st->extent[d]))
            return false;
    for (int d = 0; d < st->rank; ++d) {
        st->origin[d].c -= st->halo;
        st->extent[d] += 2 * st->halo;
    }
    if (spec_stage_border(st) && !border_region(c, it, st, arr))
        return false;
    if (st->pad > 0 && st->pad % ast_type_size(arr->type)) {
        diag_error(c->d, it->opts.pad_loc, "pad must be a multiple of the element size (%d "
                   "bytes for %s)", ast_type_size(arr->type), ast_type_name(arr->type));
        return false;
    }
    st->bytes = ast_type_size(arr->type);
    for (int d = 0; d < st->rank; ++d)
        if (__builtin_mul_overflow(st->bytes, st->extent[d], &st->bytes)
            || st->bytes > (1LL << 40)) {
            diag_error(c->d, it->name_loc, "the region of '%s' is too large for shared memory",
                       arr->name);
            return false;
        }
    return true;
}

/* Whether neighbouring tiles along tile dimension t are apart in staged region st: some
 * dimension of it moves with that tile origin alone, by at least its extent from one tile to
 * the next. A tile array whose literal extent holds one tile along t has no neighbour. */
static bool region_apart(const spec *s, const spec_stage *st, int t)
{
    const ast_extent *e = &s->arrays[s->tile_array].dims[t];
    if (!e->name && e->value <= s->tile[t])
        return true;
    for (int d = 0; d < st->rank; ++d) {
        const affine *o = &st->origin[d];
        if (o->nterms == 1 && strcmp(o->var[0], s->tile_at[t]) == 0
            && llabs(o->coef[0]) * s->tile[t] >= st->extent[d])
            return true;
    }
    return false;
}

/* A staged output is stored back from its slot whole, after the body ran: where the
 * regions of two tiles overlap, two blocks store the same elements, each what its own body
 * left there (the slot's old bytes where it wrote nothing), in no order. */
static bool output_region(checker *c, const ast_item *it, const spec_stage *st,
                          const spec_array *arr)
{
    const spec *s = c->s;
    for (int t = 0; t < s->tile_rank; ++t) {
        if (region_apart(s, st, t))
            continue;
        diag_error(c->d, it->nranges ? it->ranges[0].loc : it->name_loc, "the regions of "
                   "the staged output '%s' overlap from one tile to the next along tile "
                   "dimension %d ('%s'): two blocks would store the same elements back, each "
                   "what its body left there; stage only what the tile owns (a bare 'stage %s' "
                   "where the ranks agree), or write '%s' unstaged", arr->name, t,
                   s->tile_at[t], arr->name, arr->name);
        return false;
    }
    return true;
}

static void check_stage(checker *c, const ast_item *it)
{
    spec *s = c->s;
    int ai = find_array(s, it->name);
    if (ai < 0) {
        diag_error(c->d, it->name_loc, "unknown array '%s'", it->name);
        return;
    }
    spec_array *arr = &s->arrays[ai];
    if (c->stage_of[ai]) {
        diag_error(c->d, it->name_loc, "'%s' is staged twice", arr->name);
        diag_note(c->d, c->stage_of[ai]->name_loc, "first staged here");
        return;
    }
    c->stage_of[ai] = it;
    if (arr->dir == DIR_INOUT) {
        diag_error(c->d, it->name_loc, "an inout array cannot be staged: stage an 'in' copy "
                   "and write an 'out' array");
        return;
    }
    /* The combine writes an accumulator's array once every block is done: a staged
     * output's store would race with it. */
    int acc = spec_accum_into(s, ai);
    if (acc >= 0) {
        diag_error(c->d, it->name_loc, "'%s' receives accumulator '%s', whose combine writes "
                   "it: it cannot be staged (its store would write the slot over the result)",
                   arr->name, s->accums[acc].name);
        return;
    }
    spec_stage st = {.loc = it->name_loc, .array = ai, .is_output = arr->dir == DIR_OUT};
    if (!stage_opts(c, it, &st) || !stage_region(c, it, &st, arr))
        return;
    if (st.is_output && st.halo) {
        diag_error(c->d, it->opts.halo_loc, "a staged output has no halo");
        return;
    }
    if (st.is_output && st.swizzle > 0) {
        diag_error(c->d, it->opts.swizzle_loc, "a staged output is not swizzled: swizzle "
                   "arranges a staged input's tensor boxes in shared memory");
        return;
    }
    if (st.is_output && !output_region(c, it, &st, arr))
        return;
    if (s->nstaged == 16) {
        diag_error(c->d, it->loc, "too many staged arrays (at most 16)");
        return;
    }
    s->stages = arena_grow(c->a, s->stages, &c->cap_stages, s->nstaged + 1, sizeof *s->stages);
    arr->staged = s->nstaged;
    s->stages[s->nstaged++] = st;
}

/* ---- bodies ---- */

/* A `return` at a body's own level leaves the function the body is pasted into (the
 * kernel, or the test's reference), not the body: an elementwise body would end the
 * thread's work on every later element, a step body would leave the other threads waiting
 * at the pipeline's barriers. The scan below finds such returns by tokens: it skips
 * string and character literals, comments and preprocessor lines, and does not look
 * inside the body of a lambda or of a local class's member function, where `return` is the
 * body's own. A `{` opens such a function body when it follows
 *   - `]` (a lambda without parameters), `)` that does not close the condition of if,
 *     for, while, switch or catch (a lambda's or a function's parameters, noexcept(...)),
 *   - a word other than else, do and try (mutable, const, noexcept, a trailing return
 *     type, a class name, a brace initialiser: none of these hold a statement of the
 *     body), or a trailing return type after `->`.
 * Other braces (blocks, initialiser lists) stay at the body's level. The scan errs
 * towards silence: a brace it cannot place counts as a function body. */
typedef struct body_scan {
    const char *t;
    size_t i, n;
    bool line_start;              /* nothing but blanks since the last newline */
} body_scan;

static bool is_word(const char *w, size_t len, const char *kw)
{
    return strlen(kw) == len && !strncmp(w, kw, len);
}

/* Skip what is no token: whitespace, comments, preprocessor lines (a '#' first on its
 * line, with backslash continuations), literals (returned as one token '"'). */
static void scan_skip_space(body_scan *b)
{
    while (b->i < b->n) {
        char ch = b->t[b->i];
        if (ch == '\n') {
            b->line_start = true;
            ++b->i;
        } else if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
            ++b->i;
        } else if (ch == '/' && b->i + 1 < b->n && b->t[b->i + 1] == '/') {
            while (b->i < b->n && b->t[b->i] != '\n')
                ++b->i;
        } else if (ch == '/' && b->i + 1 < b->n && b->t[b->i + 1] == '*') {
            /* Not strstr, which ASan makes measure the rest of the body every time. */
            b->i += 2;
            while (b->i < b->n && !(b->t[b->i] == '*' && b->i + 1 < b->n && b->t[b->i + 1] == '/'))
                ++b->i;
            b->i = b->i < b->n ? b->i + 2 : b->n;
        } else if (ch == '#' && b->line_start) {
            while (b->i < b->n && b->t[b->i] != '\n') {
                if (b->t[b->i] == '\\' && b->i + 1 < b->n)
                    ++b->i;
                ++b->i;
            }
        } else {
            return;
        }
    }
}

/* The next token: its start and length; a word, a number, a literal, or one or two
 * punctuation bytes ("->"). Returns false at the end. */
static bool scan_token(body_scan *b, size_t *start, size_t *len)
{
    scan_skip_space(b);
    b->line_start = false;
    if (b->i >= b->n)
        return false;
    size_t s = b->i;
    char ch = b->t[s];
    if (text_word_char(ch)) {
        bool num = ch >= '0' && ch <= '9';
        while (b->i < b->n && (text_word_char(b->t[b->i]) || (num && b->t[b->i] == '.')
               || (num && (b->t[b->i] == '+' || b->t[b->i] == '-')
                   && strchr("eEpP", b->t[b->i - 1]))))
            ++b->i;
    } else if (ch == '"' || ch == '\'') {
        ++b->i;
        while (b->i < b->n && b->t[b->i] != ch && b->t[b->i] != '\n')
            b->i += b->t[b->i] == '\\' && b->i + 1 < b->n ? 2 : 1;
        b->i += b->i < b->n && b->t[b->i] == ch;
    } else {
        b->i += ch == '-' && b->i + 1 < b->n && b->t[b->i + 1] == '>' ? 2 : 1;
    }
    *start = s;
    *len = b->i - s;
    return true;
}

static void report_body_return(checker *c, const ast_item *it, srcloc at)
{
    static const char *const what[] = {
        [BODY_ELEMENTWISE] = "a compute elementwise", [BODY_STEP] = "a compute step",
        [BODY_PROLOGUE] = "a prologue", [BODY_EPILOGUE] = "an epilogue",
        [BODY_REFERENCE] = "a reference",
    };
    bool per_element = it->body_kind == BODY_ELEMENTWISE || it->nidx;
    const char *why = it->body_kind == BODY_ELEMENTWISE
        ? " (the body runs inside the kernel's loop over the thread's elements)"
        : it->body_kind == BODY_REFERENCE ? ""
        : " (the other threads would wait for this one at the pipeline's barriers)";
    diag_error(c->d, at, "'return' in %s body leaves the %s, not just %s%s: guard the %swork "
               "with 'if' instead", what[it->body_kind],
               it->body_kind == BODY_REFERENCE ? "test's reference function" : "kernel",
               per_element ? "this element" : it->body_kind == BODY_STEP ? "this step"
               : it->body_kind == BODY_REFERENCE ? "the body" : "this work item", why,
               per_element ? "element's " : it->body_kind == BODY_STEP ? "step's " : "");
}

/* 'break' or 'continue' with no loop (or switch, for break) of the body around it. */
static void report_body_jump(checker *c, const ast_item *it, srcloc at, bool is_break)
{
    bool elementwise = it->body_kind == BODY_ELEMENTWISE || it->nidx;
    diag_error(c->d, at, "'%s' outside a loop%s of the body would %s the %s around it%s: "
               "guard the %s with 'if' instead", is_break ? "break" : "continue",
               is_break ? " or switch" : "", is_break ? "leave" : "go on with",
               it->body_kind == BODY_REFERENCE ? "reference's loop"
               : elementwise ? "kernel's loop over the thread's elements" : "pipeline's loop",
               elementwise ? ", not just this element" : "",
               elementwise ? "element's work" : "work");
}

/* The loops and switches around a point of a body, as the scan of its tokens sees them:
 * a statement after `for (...)`, `while (...)`, `do` or `switch (...)` is a context, to its
 * closing '}' when it is a block, else to its ';' (not followed by `else`). */
enum { MAX_NEST = 256 };
typedef struct jump_ctx {
    struct {
        bool loop;               /* a loop (else a switch) */
        bool block;              /* its statement is a block (else one statement) */
        int brace, paren;        /* the depths it lives at */
    } at[MAX_NEST];
    int n;
    int pending;                 /* 0, or 1 + loop: a loop or switch header just ended */
    bool ended;                  /* a ';' ended the one-statement contexts at the top */
} jump_ctx;

/* A token at brace depth nbrace and paren depth nparen: open the pending context, or
 * close the one-statement ones a ';' ended (an `else` carries the statement on). */
static void jump_token(jump_ctx *j, const char *tok, size_t len, int nbrace, int nparen)
{
    if (j->ended && !is_word(tok, len, "else"))
        while (j->n > 0 && !j->at[j->n - 1].block && j->at[j->n - 1].brace == nbrace
               && j->at[j->n - 1].paren == nparen)
            --j->n;
    j->ended = false;
    if (!j->pending)
        return;
    if (j->n < MAX_NEST) {
        j->at[j->n].loop = j->pending == 2;
        j->at[j->n].block = *tok == '{';
        j->at[j->n].brace = nbrace + (*tok == '{');
        j->at[j->n].paren = nparen;
        ++j->n;
    }
    j->pending = 0;
}

/* Whether a break (continue: a loop) has a context around it. */
static bool jump_allowed(const jump_ctx *j, bool is_break)
{
    for (int i = j->n - 1; i >= 0; --i)
        if (is_break || j->at[i].loop)
            return true;
    return false;
}

/* Report every `return` at the body's own level, and every `break` and `continue` there
 * outside a loop (or switch) of the body. */
static void check_body_returns(checker *c, const ast_item *it)
{
    if (!it->text)
        return;
    body_scan b = {.t = it->text, .n = strlen(it->text), .line_start = true};
    /* Per open '(' : whether it follows a control word (if, for, while, switch, catch, or
     * constexpr of `if constexpr`); per open '{': whether it is a function's body. */
    bool paren_ctrl[MAX_NEST], brace_func[MAX_NEST];
    unsigned char paren_loop[MAX_NEST];  /* jump_ctx.pending after its ')' */
    int nparen = 0, nbrace = 0, nfunc = 0;
    jump_ctx jumps = {.n = 0};
    bool closed_ctrl = false;     /* the last ')' closed a control word's parentheses */
    bool trailing = false;        /* after `) ->`: a trailing return type */
    const char *prev = NULL;      /* the previous token */
    size_t prev_len = 0, s, len;
    while (scan_token(&b, &s, &len)) {
        const char *tok = b.t + s;
        char ch = *tok;
        if (ch != ')')
            jump_token(&jumps, tok, len, nbrace, nparen);
        if (ch == '(') {
            bool loop = prev && (is_word(prev, prev_len, "for") || is_word(prev, prev_len, "while"));
            bool ctrl = loop || (prev && (is_word(prev, prev_len, "if")
                                          || is_word(prev, prev_len, "switch")
                                          || is_word(prev, prev_len, "catch")
                                          || is_word(prev, prev_len, "constexpr")));
            if (nparen < MAX_NEST) {
                paren_ctrl[nparen] = ctrl;
                paren_loop[nparen] = loop ? 2 : prev && is_word(prev, prev_len, "switch") ? 1 : 0;
            }
            ++nparen;
            trailing = false;
        } else if (ch == ')') {
            /* An unmatched ')' (the body's C is not ours to check) closes nothing. */
            closed_ctrl = nparen > 0 && --nparen < MAX_NEST && paren_ctrl[nparen];
            if (closed_ctrl)
                jumps.pending = paren_loop[nparen];
            trailing = false;
        } else if (len == 2 && tok[1] == '>') {
            /* After a lambda's parameters or a specifier (mutable, noexcept); after any
             * other word it is a member access, which a ')' or ';' ends. */
            trailing = prev && (*prev == ')' || text_word_char(*prev));
        } else if (ch == ';' || ch == ',' || ch == '=') {
            trailing = false;
        } else if (ch == '{') {
            bool func;
            if (!prev)
                func = false;
            else if (*prev == ']' || trailing)
                func = true;
            else if (*prev == ')')
                func = !closed_ctrl;
            else if (text_word_char(*prev))
                func = !is_word(prev, prev_len, "else") && !is_word(prev, prev_len, "do")
                       && !is_word(prev, prev_len, "try");
            else
                func = *prev == '>';
            trailing = false;
            /* Deeper than the stack: counted as a function's body (silence). */
            if (nbrace < MAX_NEST)
                brace_func[nbrace] = func;
            nfunc += nbrace < MAX_NEST ? func : 1;
            ++nbrace;
        } else if (ch == '}') {
            if (nbrace > 0) {
                --nbrace;
                nfunc -= nbrace < MAX_NEST ? brace_func[nbrace] : 1;
            }
            while (jumps.n > 0 && jumps.at[jumps.n - 1].brace > nbrace)
                --jumps.n;
            /* a block ends the one-statement contexts it was the statement of */
            jumps.ended = true;
        } else if (nfunc == 0 && is_word(tok, len, "return")) {
            report_body_return(c, it, diag_loc_in_text(it->text, it->text_loc, s));
        } else if (nfunc == 0 && (is_word(tok, len, "break") || is_word(tok, len, "continue"))) {
            bool is_break = *tok == 'b';
            if (!jump_allowed(&jumps, is_break))
                report_body_jump(c, it, diag_loc_in_text(it->text, it->text_loc, s), is_break);
        } else if (is_word(tok, len, "do")) {
            jumps.pending = 2;
        }
        if (ch == ';')
            jumps.ended = true;
        prev = tok;
        prev_len = len;
    }
}

/* Bodies may reuse an index name (i in compute and reference): noted once. */
static bool is_index_noted(const spec *s, const char *name)
{
    for (int i = 0; i < s->ndecls; ++i)
        if (strcmp(s->decls[i].name, name) == 0)
            return true;
    return false;
}

/* A body's index names into b: none may hide a declaration. */
static bool check_body_indices(checker *c, const ast_item *it, spec_body *b)
{
    *b = (spec_body){.loc = it->text_loc, .text = it->text, .nidx = it->nidx};
    for (int i = 0; i < it->nidx; ++i) {
        b->idx[i] = it->idx[i];
        if (!check_name(c, it->idx[i], it->idx_loc[i]))
            return false;
        const struct decl *prev = find_decl(c, it->idx[i]);
        if (prev) {
            diag_error(c->d, it->idx_loc[i], "index '%s' hides %s of that name", it->idx[i],
                       prev->what);
            return false;
        }
        if (!is_index_noted(c->s, it->idx[i]))
            note_name(c, it->idx[i], it->idx_loc[i]);
    }
    return true;
}

/* A reduction's bodies are pasted as expressions (`pg_v = (BODY);`): a statement in one (a
 * ';' outside its literals and comments) or nothing at all would not compile there. what:
 * the body's role, for the message. */
static bool check_expression(checker *c, const ast_item *it, const char *text, srcloc at,
                             const char *what, const char *example)
{
    body_scan b = {.t = text, .n = strlen(text), .line_start = true};
    size_t s, len;
    bool any = false;
    while (scan_token(&b, &s, &len)) {
        if (b.t[s] == ';') {
            diag_error(c->d, diag_loc_in_text(text, at, s), "%s of reduction '%s' is an "
                       "expression: no ';' (write '%s')", what, it->name, example);
            return false;
        }
        any = true;
    }
    if (!any)
        diag_error(c->d, at, "%s of reduction '%s' is empty: give its expression", what,
                   it->name);
    return any;
}

/* combine (a, b) { op } identity { e }: two operand names that hide nothing, and two
 * expressions. */
static bool check_custom_combine(checker *c, const ast_item *it, spec_reduce *r)
{
    for (int i = 0; i < 2; ++i) {
        if (!it->op_arg[i])
            return false;   /* the parser said so */
        if (!check_name(c, it->op_arg[i], it->op_arg_loc[i]))
            return false;
        const struct decl *prev = find_decl(c, it->op_arg[i]);
        if (prev) {
            diag_error(c->d, it->op_arg_loc[i], "operand '%s' hides %s of that name",
                       it->op_arg[i], prev->what);
            return false;
        }
        r->op_arg[i] = it->op_arg[i];
    }
    if (!strcmp(it->op_arg[0], it->op_arg[1])) {
        diag_error(c->d, it->op_arg_loc[1], "the combine's operands need two names");
        return false;
    }
    r->op = (spec_body){.loc = it->op_text_loc, .text = it->op_text};
    r->identity = (spec_body){.loc = it->id_text_loc, .text = it->id_text};
    return check_expression(c, it, it->op_text, it->op_text_loc, "the combine", "{ a * b }")
           && check_expression(c, it, it->id_text, it->id_text_loc, "the identity", "{ 1 }");
}

/* A reduction folds in its own type along a row: half and bfloat16 would round at every
 * element, which no reference can follow. */
static void check_reduce(checker *c, const ast_item *it)
{
    spec *s = c->s;
    spec_body b;
    if (!declare(c, it->name, it->name_loc, "a reduction") || !check_scalar(c, it, "a reduction")
        || !check_body_indices(c, it, &b)
        || !check_expression(c, it, it->text, it->text_loc, "the body", "{ x[r][c] * w }"))
        return;
    if (it->type == TY_HALF || it->type == TY_BF16) {
        diag_error(c->d, it->type_loc, "a reduction folds in float, double or an integer type, "
                   "not %s: convert its expression (a %s fold rounds at every element)",
                   ast_type_name(it->type), ast_type_name(it->type));
        return;
    }
    spec_reduce r = {.loc = it->name_loc, .name = it->name, .type = it->type,
                     .combine = it->combine, .expr = b};
    if (it->combine == COMBINE_CUSTOM && !check_custom_combine(c, it, &r))
        return;
    s->reduces = arena_grow(c->a, s->reduces, &c->cap_reduces, s->nreduces + 1,
                            sizeof *s->reduces);
    s->reduces[s->nreduces++] = r;
}

/* The first block-wide barrier a body's text names (__syncthreads and its _count, _and,
 * _or forms), or NULL; *word its name. */
static const char *body_barrier(const char *text, const char **word)
{
    static const char *const barriers[] = {"__syncthreads", "__syncthreads_count",
                                           "__syncthreads_and", "__syncthreads_or"};
    const char *first = NULL;
    for (size_t i = 0; text && i < sizeof barriers / sizeof barriers[0]; ++i) {
        const char *at = NULL;
        if (text_next_word(text, barriers[i], &at) && (!first || at < first)) {
            first = at;
            *word = barriers[i];
        }
    }
    return first;
}

/* A body that runs per element runs as many times as a thread has elements, which the
 * threads do not share (a tail tile's fewer): a block-wide barrier in it can wait for
 * threads that never come. */
static void check_body_barrier(checker *c, const ast_item *it)
{
    if (!(it->body_kind == BODY_ELEMENTWISE || (it->body_kind == BODY_STEP && it->nidx)))
        return;
    const char *word, *at = body_barrier(it->text, &word);
    if (!at)
        return;
    diag_error(c->d, diag_loc_in_text(it->text, it->text_loc, (size_t)(at - it->text)),
               "'%s' in a body that runs per element: the threads run it for different "
               "numbers of elements (a tail tile's fewer), so the block can hang at it; "
               "synchronize in a `compute step` body without index names", word);
}

static void check_body(checker *c, const ast_item *it)
{
    spec *s = c->s;
    spec_body b;
    if (!check_body_indices(c, it, &b))
        return;
    check_body_returns(c, it);
    check_body_barrier(c, it);
    switch (it->body_kind) {
    case BODY_ELEMENTWISE:
    case BODY_STEP:
        s->has_compute = true;
        s->compute_kind = it->body_kind;
        s->compute = b;
        break;
    case BODY_PROLOGUE: s->has_prologue = true; s->prologue = b; break;
    case BODY_EPILOGUE: s->has_epilogue = true; s->epilogue = b; break;
    case BODY_REFERENCE: s->has_reference = true; s->reference = b; break;
    }
}

/* ---- whole-spec rules, after every item was seen ---- */

static void check_index_ranks(checker *c)
{
    spec *s = c->s;
    const ast_item *comp = c->once[IT_BODY + 1 + BODY_ELEMENTWISE];
    const ast_item *ref = c->once[IT_BODY + 1 + BODY_REFERENCE];
    if (comp && s->compute_kind == BODY_ELEMENTWISE && s->compute.nidx != s->tile_rank)
        diag_error(c->d, comp->loc, "compute elementwise needs %d index name(s), one per "
                   "tile dimension", s->tile_rank);
    if (ref && s->reference.nidx && s->reference.nidx != s->tile_rank)
        diag_error(c->d, ref->loc, "reference needs %d index name(s), one per tile "
                   "dimension", s->tile_rank);
}

static void check_using(checker *c)
{
    spec *s = c->s;
    s->mech = MECH_AUTO;
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        if (mech_is_auto(st->mech))
            continue;
        if (!mech_is_auto(s->mech) && s->mech != st->mech) {
            diag_error(c->d, st->loc, "'%s' uses %s but another staged array uses %s: one "
                       "pipeline uses one lowering", s->arrays[st->array].name,
                       mech_name(st->mech), mech_name(s->mech));
            diag_note(c->d, s->mech_loc, "%s chosen here", mech_name(s->mech));
            return;
        }
        s->mech = st->mech;
        s->mech_loc = st->loc;
    }
}

/* ---- the command line's overrides, and what they change ---- */

static void apply_overrides(checker *c)
{
    spec *s = c->s;
    const target *t = c->tgt;
    if (t->grid.opt) {
        s->grid = (ast_grid)t->grid.value;
        s->grid_loc = (srcloc){0};   /* no longer the spec's item */
    }
    if (t->producer_warps.opt)
        s->producer_warps = t->producer_warps.value;
    if (t->lower.opt)
        s->mech = (mech)t->lower.value;
}

/* An item's value, or the option that overrides it. */
static diag_origin origin_of(const cmd_override *o, srcloc at)
{
    return (diag_origin){at, o->opt};
}

static void check_producer_warps(checker *c)
{
    spec *s = c->s;
    const ast_item *it = c->once[IT_PRODUCER_WARPS];
    /* the option that made them too many, where one did */
    const cmd_override *o = c->tgt->producer_warps.opt ? &c->tgt->producer_warps
                                                       : &c->tgt->threads;
    if (s->producer_warps && s->producer_warps >= s->threads / 32)
        diag_error_from(c->d, origin_of(o, it ? it->value_loc : s->loc),
                        "%d producer warps leave no consumer warp in a block of %d threads",
                        s->producer_warps, s->threads);
}

/* Stage hints the lowering m ignores, each once per `stage` statement (its names share
 * the options and their locations, whichever of its names ignores one). A staged output's
 * hints are ignored by every lowering: they are for copies in, and its stores take none. */
static void check_hints(checker *c, unsigned taken, const char *lowering)
{
    static const char *const words[HINT__COUNT] = {
        [HINT_CACHE] = "cache", [HINT_PREFETCH] = "prefetch", [HINT_EVICT] = "evict",
        [HINT_SWIZZLE] = "swizzle",
    };
    const spec *s = c->s;
    srcloc warned[HINT__COUNT] = {{0}};
    for (int i = 0; i < s->nstaged; ++i)
        for (int h = 0; h < HINT__COUNT; ++h) {
            srcloc at = s->stages[i].hint_loc[h];
            bool out = s->stages[i].is_output;
            if (!at.line || ((taken & (1u << h)) && !out) || same_loc(at, warned[h]))
                continue;
            warned[h] = at;
            diag_warning(c->d, W_HINTS, at, "the %s lowering ignores '%s'%s (docs/lowerings.md "
                         "lists the hints each lowering takes)", lowering, words[h],
                         out ? " on a staged output" : "");
        }
}

/* A lowering whose copies write rows back to back (tensor boxes) cannot keep a stage's
 * `pad` on a staged input: the padding would have to be in the box. */
static void check_pad(checker *c, mech m)
{
    const spec *s = c->s;
    for (int i = 0; i < s->nstaged && mech_dense_rows(m); ++i)
        if (s->stages[i].pad > 0 && !s->stages[i].is_output)
            diag_error(c->d, s->stages[i].loc, "the %s lowering writes a region's rows back "
                       "to back in shared memory, so it cannot pad them (pad %d): give pad 0 "
                       "or no pad", mech_name(m), s->stages[i].pad);
}

/* Under auto a hint is for whichever lowering takes it: ignored only where none of the
 * lowerings auto may pick for the targets takes it. */
static void check_auto_hints(checker *c)
{
    if (!mech_is_auto(c->s->mech))
        return;
    unsigned taken = 0;
    for (int i = 0; i < c->tgt->narch; ++i)
        taken |= mech_auto_hints(c->s, c->tgt->sm[i]);
    check_hints(c, taken, "auto");
}

/* `cluster N` multicasts copies to the blocks of a cluster where a lowering that multicasts
 * (auto's first choice counts) lowers an arch-specific target, with producer warps, whose
 * consumers release each slot to every block. A target or spec that does not multicast is
 * told so. */
static void check_cluster(checker *c)
{
    const spec *s = c->s;
    bool taken = false, plain = false;
    if (s->cluster < 2)
        return;
    if (s->march) {
        diag_error(c->d, s->cluster_loc, "'cluster' and march mode cannot be combined: a "
                   "cluster's blocks take neighbouring tiles, a march strip a column of them");
        return;
    }
    for (int i = 0; i < c->tgt->narch; ++i) {
        int sm = c->tgt->sm[i];
        mech m = mech_resolve_first(s, s->mech, sm);
        if (!mech_takes_cluster(m))
            continue;
        bool multicast = mech_multicasts(m, sm, c->tgt->specific[i]);
        if (!multicast)
            diag_warning(c->d, W_HINTS, s->cluster_loc, "the %s lowering for sm_%d ignores "
                         "'cluster %d': multicast is for the arch-specific target (--arch="
                         "sm_%da)", mech_name(m), sm, s->cluster, sm);
        taken |= multicast;
        plain |= !multicast;
    }
    int first = arch_first_with(ARCH_CLUSTERS);
    /* The launcher prepares each staged input's copies once for all kernels of a
     * lowering (a tensor map): a shared input's in clusters differ from the others. */
    if (taken && plain)
        diag_error(c->d, s->cluster_loc, "'cluster %d' with kernels both in clusters "
                   "(arch-specific targets) and not (plain ones): their copies of the shared "
                   "inputs would differ; make every sm_%d or newer target arch-specific "
                   "(sm_%da), or none", s->cluster, first, first);
    else if (taken && !s->producer_warps)
        diag_error(c->d, s->cluster_loc, "'cluster %d' needs producer warps (producer_warps "
                   "N): the consumers release each slot to every block of the cluster",
                   s->cluster);
    else if (!taken && !plain)
        diag_warning(c->d, W_HINTS, s->cluster_loc, "the %s lowering ignores 'cluster %d': "
                     "only %s copies on sm_%d or newer multicast to a cluster",
                     mech_name(mech_resolve(s, s->mech, c->tgt->sm[0])), s->cluster,
                     mech_names_where(c->a, mech_takes_cluster), first);
}

/* The bodies that run on the device: the compute, the prologue and the epilogue (i < 3);
 * a missing one's text is NULL. */
enum { DEVICE_BODIES = 3 };
static const spec_body *device_body(const spec *s, int i)
{
    const spec_body *const bodies[DEVICE_BODIES] = {&s->compute, &s->prologue, &s->epilogue};
    return bodies[i];
}

/* Whether a body that runs on the device names the word (pg_ctid, pg_cnt): the compute,
 * prologue and epilogue, and the reductions' expressions, which the same threads fold. */
static bool bodies_name(const spec *s, const char *word)
{
    return spec_bodies_name(s, SPEC_DEVICE_BODIES | SPEC_REDUCE_BODIES, word);
}

/* The producer warps a plan under lowering m has: the spec's (or --producer-warps), else
 * those the lowering takes. */
static int planned_producer_warps(const spec *s, mech m)
{
    return s->producer_warps ? s->producer_warps : mech_min_producer_warps(m);
}

/* Bodies that deal out their work by pg_ctid and never name pg_cnt are written for the
 * compute threads the spec declares (sgemm's 256 threads each own a 16 x 8 block of C);
 * so are bodies that name threadIdx or blockDim, which count the producer warps too
 * (steps_epilogue's `threadIdx.x < 32`). Producer warps the spec does not declare, those
 * pipeline-roles takes or --producer-warps, leave them fewer or more: part of the work
 * would be left undone or done twice, and nvcc cannot tell. */
static bool check_compute_threads(checker *c, mech m, diag_origin named)
{
    const spec *s = c->s;
    const ast_item *declared_item = c->once[IT_PRODUCER_WARPS];
    const int declared_warps = declared_item ? (int)declared_item->value : 0;
    const int warps = planned_producer_warps(s, m);
    const bool block_ids = bodies_name(s, "threadIdx") || bodies_name(s, "blockDim");
    if (warps == declared_warps
        || (!block_ids && (!bodies_name(s, "pg_ctid") || bodies_name(s, "pg_cnt"))))
        return true;
    const bool taken = !s->producer_warps && warps > 0;   /* by the lowering, else the option */
    const int declared = s->threads - 32 * declared_warps;
    char fix[160];
    if (block_ids)
        snprintf(fix, sizeof fix, "name the compute threads by pg_ctid and pg_cnt instead");
    else
        snprintf(fix, sizeof fix, "give the spec the producer warps it is planned with "
                 "(producer_warps %d; threads %d;) or deal out the work by pg_cnt", warps,
                 declared + 32 * warps);
    diag_error_from(c->d, taken ? named : origin_of(&c->tgt->producer_warps, s->mech_loc),
                    "%s%s%s%d producer warp%s leave%s the bodies %d of the block's %d threads, "
                    "where the spec gives them %d; they use %s, so written for %d they would "
                    "compute something else: %s", taken ? "the " : "", taken ? mech_name(m) : "",
                    taken ? " lowering's " : "", warps, warps == 1 ? "" : "s",
                    warps == 1 ? "s" : "", s->threads - 32 * warps, s->threads, declared,
                    block_ids ? "threadIdx or blockDim, which count the producer warps too"
                              : "pg_ctid and never pg_cnt",
                    declared, fix);
    return false;
}

/* Under producer warps the bodies run on the compute warps alone: a block-wide barrier in
 * one waits for the producers, which never reach it, and the block hangs. Said at the
 * barrier, naming what brought the producer warps. */
static bool check_role_barriers(checker *c, mech m, diag_origin named)
{
    const spec *s = c->s;
    const char *word = NULL, *at = NULL;
    const spec_body *b = NULL;
    for (int i = 0; planned_producer_warps(s, m) && !at && i < DEVICE_BODIES; ++i)
        at = body_barrier((b = device_body(s, i))->text, &word);
    if (!at)
        return true;
    char why[96];
    if (!s->producer_warps)
        snprintf(why, sizeof why, "%s takes one", named.opt ? named.opt : mech_name(m));
    else if (c->tgt->producer_warps.opt)
        snprintf(why, sizeof why, "%s", c->tgt->producer_warps.opt);
    else
        snprintf(why, sizeof why, "producer_warps %d", s->producer_warps);
    diag_error(c->d, diag_loc_in_text(b->text, b->loc, (size_t)(at - b->text)),
               "'%s' under producer warps (%s): the bodies run on the compute warps alone, "
               "and the producers never reach this barrier, so the block can hang; leave "
               "out the producer warps (a lowering without roles) or the barrier", word, why);
    return false;
}

/* The lowering of every target (auto as mech_auto resolves it): implemented, new enough
 * for the architecture, planning the producer warps the spec has. Each refusal is
 * reported once, at what chose the lowering: --lower, --producer-warps or the `using`. */
static void check_lowering(checker *c)
{
    spec *s = c->s;
    const target *t = c->tgt;
    diag_origin named = origin_of(&t->lower, s->mech_loc);
    mech warned = (mech)mech_count();
    for (int i = 0; i < t->narch; ++i) {
        int sm = t->sm[i];
        mech m = mech_resolve(s, s->mech, sm);
        if (!mech_implemented(m)) {
            diag_error_from(c->d, named, "lowering '%s' is not implemented yet (pipegen "
                            "--list-lowerings)", mech_name(m));
            return;
        }
        if (!mech_runs_on(m, sm)) {
            diag_error_from(c->d, named, "the %s lowering needs sm_%d or newer, but sm_%d is "
                            "a target", mech_name(m), mech_min_sm(m), sm);
            return;
        }
        if (!s->producer_warps && mech_min_producer_warps(m) * 32 >= s->threads) {
            diag_error_from(c->d, named, "the %s lowering needs a consumer warp beside its "
                            "producer warp, but the block has %d threads", mech_name(m),
                            s->threads);
            return;
        }
        if (s->producer_warps && !mech_roles(m)) {
            diag_origin o = t->lower.opt ? named : origin_of(&t->producer_warps, s->mech_loc);
            diag_error_from(c->d, o, "producer warps are planned by %s, not by the %s "
                            "lowering", mech_names_where(c->a, mech_roles), mech_name(m));
            return;
        }
        if (!check_compute_threads(c, m, named) || !check_role_barriers(c, m, named))
            return;
        if (m != warned && !mech_is_auto(s->mech))
            check_hints(c, mech_hints(m), mech_name(m));
        if (m != warned)
            check_pad(c, m);
        warned = m;
    }
    check_auto_hints(c);
}

/* The steps a block runs under grid per_tile (one work item): its `steps` over a literal
 * bound, or its march; 0 where that is not known before the launch. */
static long long block_steps(const spec *s)
{
    if (s->grid != GRID_PER_TILE)
        return 0;
    if (s->march)
        return s->march;
    if (s->has_steps && !s->step_bound.name)
        return (s->step_bound.value + s->step_by - 1) / s->step_by;
    return 0;
}

/* A ring deeper than the steps a block runs: its last slots are never filled, and their
 * shared memory may cost blocks per SM. */
static void check_stages_steps(checker *c, const ast_item *st)
{
    long long n = block_steps(c->s);
    if (n && st->value > n)
        diag_warning(c->d, W_STAGES, st->value_loc, "'stages %lld' plans %lld slots, but "
                     "under grid per_tile a block runs %lld step(s) (its %s): the last "
                     "%lld are never filled; give 'stages %lld'", st->value, st->value, n,
                     c->s->march ? "march" : "steps", st->value - n, n);
}

/* `stages N` with a ring of one slot, where the default grid is the reason: with `grid
 * per_tile` (or --grid) written, one slot is what was asked for. */
static void check_stages(checker *c)
{
    const ast_item *st = c->once[IT_STAGES];
    if (st && st->value > 1 && spec_ring_slots(c->s) == 1 && !c->once[IT_GRID]
        && !c->tgt->grid.opt)
        diag_warning(c->d, W_STAGES, st->value_loc, "'stages %lld' plans one slot: under the "
                     "default grid (per_tile) with no 'steps' or 'march' a block runs one "
                     "step; write 'grid persistent' for a ring of %lld, or 'grid per_tile' "
                     "for one slot", st->value, st->value);
    else if (st)
        check_stages_steps(c, st);
}

static void check_budget(checker *c, const ast_pipeline *p)
{
    spec *s = c->s;
    long long bytes = 0;
    for (int i = 0; i < s->nstaged; ++i)
        bytes += (s->stages[i].bytes + 127) / 128 * 128;
    /* the shallowest ring `stages` allows */
    int slots = spec_ring_slots(s) > 1 && s->nring_fallbacks ? s->ring_fallbacks[s->nring_fallbacks - 1]
                                                         : spec_ring_slots(s);
    bytes *= slots;
    for (int i = 0; i < c->tgt->narch; ++i) {
        long long limit = arch_smem_limit(c->tgt->sm[i]);
        if (bytes > limit) {
            const ast_item *st = c->once[IT_STAGES];
            diag_error(c->d, st ? st->loc : p->loc, "the pipeline needs %lld bytes of shared "
                       "memory per block (%d slot(s) of every staged region) but sm_%d has "
                       "%lld", bytes, slots, c->tgt->sm[i], limit);
            return;
        }
    }
}

/* The kernel takes the args struct (a size, pointer or parameter: at most 8 bytes each)
 * and the tile count by value; CUDA allows 32764 bytes of kernel parameters. */
static void check_param_space(checker *c)
{
    const spec *s = c->s;
    long long bytes = 8 + 8LL * s->nsizes;
    for (int i = 0; i < s->nparams + s->narrays; ++i) {
        bytes += 8;
        if (bytes > 32764) {
            srcloc at = i < s->nparams ? s->params[i].loc : s->arrays[i - s->nparams].loc;
            diag_error(c->d, at, "the kernel's parameters pass CUDA's limit of 32764 bytes "
                       "here (%d parameters, %d arrays)", s->nparams, s->narrays);
            return;
        }
    }
}

/* __launch_bounds__(threads, blocks_per_sm) that no SM can hold fails in nvcc. */
static void check_occupancy(checker *c)
{
    const spec *s = c->s;
    for (int i = 0; i < c->tgt->narch && s->blocks_per_sm; ++i) {
        int sm = c->tgt->sm[i], max = arch_max_threads(sm);
        if (s->threads * s->blocks_per_sm > max) {
            diag_error_from(c->d, origin_of(&c->tgt->threads,
                                            c->once[IT_BLOCKS_PER_SM]->value_loc),
                            "%d blocks of %d threads per SM: sm_%d holds at most %d threads",
                            s->blocks_per_sm, s->threads, sm, max);
            return;
        }
    }
}

/* The rows beyond a tile's own that stage st reads on either side along dimension 0: its
 * region's origin there must be the tile's origin plus a constant. -1: not of that form. */
static int stage_halo(const spec *s, const spec_stage *st)
{
    const affine *o = &st->origin[0];
    if (o->nterms != 1 || o->coef[0] != 1 || strcmp(o->var[0], s->tile_at[0]))
        return -1;
    long long lo = -o->c, hi = st->extent[0] - s->tile[0] + o->c;
    long long h = lo > hi ? lo : hi;
    return h < 0 ? 0 : h > (1 << 20) ? -1 : (int)h;
}

/* host_stream: the problem is cut into chunks of rows along dimension 0 of every array
 * (but an accumulator's output), each chunk an independent launch over its rows and the
 * halo rows its staged regions read (pipert_stream_problem). */
static void check_host_stream(checker *c)
{
    spec *s = c->s;
    srcloc at = s->host_stream_loc;
    /* The chunks' partials are one 8-byte value an accumulator, folded on the host. */
    for (int i = 0; i < s->naccums; ++i)
        if (s->accums[i].is_array) {
            diag_error(c->d, at, "host_stream cannot stream the array accumulator '%s' yet "
                       "(each chunk's partial is one value): launch over device arrays "
                       "instead", s->accums[i].name);
            return;
        }
    const ast_extent *d0 = &s->arrays[s->tile_array].dims[0];
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        if (spec_accum_into(s, i) >= 0)
            continue;   /* one element, which every chunk's launch writes (a partial) */
        if (!d0->name || !arr->dims[0].name || strcmp(arr->dims[0].name, d0->name)) {
            diag_error(c->d, arr->loc, "host_stream cuts every array into chunks of its "
                       "first dimension, the tile's ('%s'), but '%s' does not start with it",
                       d0->name ? d0->name : "a literal", arr->name);
            return;
        }
        if (arr->dir == DIR_OUT)
            continue;
        int h = arr->staged >= 0 ? stage_halo(s, &s->stages[arr->staged]) : -1;
        if (h < 0) {
            diag_error(c->d, arr->loc, "host_stream needs '%s' staged over the tile's rows "
                       "(its region's first origin the tile's plus a constant): the rows a "
                       "chunk reads come from it", arr->name);
            return;
        }
        if (h > 0 && arr->dir == DIR_INOUT) {
            diag_error(c->d, arr->loc, "host_stream cannot stream the inout array '%s' with "
                       "a halo: a chunk would read rows its neighbour writes back", arr->name);
            return;
        }
        /* A chunk's first and last rows are the array's edge for its launch, whose views
         * would clamp or mirror there instead of reading the neighbours' halo rows. */
        const spec_stage *st = &s->stages[arr->staged];
        if (spec_stage_border(st)) {
            diag_error(c->d, at, "host_stream cannot stream '%s' with a %s halo: a chunk's "
                       "launch would take its edge rows for the array's; give the halo 'zero' "
                       "fill and handle the array's edges in the body", arr->name,
                       st->halo_fill == HALO_CLAMP ? "clamped" : "mirrored");
            return;
        }
        /* A chunk's launch folds every row it holds, its neighbours' halo rows too. */
        if (h > 0 && s->naccums) {
            diag_error(c->d, at, "host_stream cannot stream accumulators over '%s' with a "
                       "halo of %d row(s): each chunk's launch would fold its neighbours' "
                       "rows into its result too", arr->name, h);
            return;
        }
        s->stream_halo = h > s->stream_halo ? h : s->stream_halo;
    }
}

/* An 'out' array is written by the device bodies or an accumulator's combine, nothing else:
 * the kernel declares an array only where a body names it. One that no body names would
 * come back as the caller left it. */
static void check_outputs_written(checker *c)
{
    const spec *s = c->s;
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        if (arr->dir != DIR_OUT || spec_accum_into(s, i) >= 0
            || text_names(s->compute.text, arr->name)
            || (s->has_prologue && text_names(s->prologue.text, arr->name))
            || (s->has_epilogue && text_names(s->epilogue.text, arr->name)))
            continue;
        diag_error(c->d, arr->loc, "'%s' is an 'out' array that no compute, prologue or "
                   "epilogue body names: nothing would write it (the caller would get back "
                   "what it held); write it in a body, or drop it", arr->name);
    }
}

/* How a device body uses an array accumulator at one occurrence of its name: adds to it
 * (`NAME[k] += v`, `-=`, `++`, `--`), changes it by another compound assignment (`*=`,
 * `<<=`, ...), stores into it (`NAME[k] = v`), or reads it. */
typedef enum { USE_READ, USE_ADD, USE_MODIFY, USE_STORE } accum_use;

/* Past the `]` that closes the `[` at p; NULL if none does. */
static const char *past_subscript(const char *p)
{
    int depth = 0;
    for (; *p; ++p)
        if (*p == '[')
            ++depth;
        else if (*p == ']' && --depth == 0)
            return p + 1;
    return NULL;
}

/* Whether at lies in a comment, a string or a character literal of text. */
static bool in_comment_or_literal(const char *text, const char *at)
{
    for (const char *p = text; p < at;) {
        const char *past = text_skip_literal(p);
        if (past > at)
            return true;
        p = past == p ? p + 1 : past;
    }
    return false;
}

static accum_use accum_use_at(const char *text, const char *at, const char *name)
{
    const char *b = at;
    while (b > text && text_blank(b[-1]))
        --b;
    if (b - text >= 2 && (b[-1] == '+' || b[-1] == '-') && b[-2] == b[-1])
        return USE_ADD;
    const char *p = text_skip_blank(at + strlen(name));
    while (p && *p == '[' && (p = past_subscript(p)))
        p = text_skip_blank(p);
    if (!p)
        return USE_READ;
    if ((p[0] == '+' || p[0] == '-') && (p[1] == '=' || p[1] == p[0]))
        return USE_ADD;
    if ((strchr("*/%&|^", p[0]) && p[1] == '=')
        || ((p[0] == '<' || p[0] == '>') && p[1] == p[0] && p[2] == '='))
        return USE_MODIFY;
    return p[0] == '=' && p[1] != '=' ? USE_STORE : USE_READ;
}

/* Each use of array accumulator i in body b as its combine takes it: a min or max is read
 * and stored into (the store folds), never added to; a sum in shared bins only added to
 * (its bins hold a block's share; by column it is the thread's register, as a scalar).
 * Only NAME[...] outside comments and literals is a use here: an alias (`auto &a = NAME;`)
 * is the compiler's to check. */
static void check_accum_uses_in(checker *c, const spec_body *b, int i)
{
    const spec_accum *acc = &c->s->accums[i];
    const bool sum = acc->combine == COMBINE_SUM;
    if (sum && spec_accum_by_column(c->s, i))
        return;
    for (const char *at = NULL; text_next_word(b->text, acc->name, &at);) {
        if (*text_skip_blank(at + strlen(acc->name)) != '[' || in_comment_or_literal(b->text, at))
            continue;
        const accum_use use = accum_use_at(b->text, at, acc->name);
        if (sum ? use == USE_ADD : use == USE_READ || use == USE_STORE)
            continue;
        const srcloc loc = diag_loc_in_text(b->text, b->loc, (size_t)(at - b->text));
        if (sum)
            diag_error(c->d, loc, "array accumulator '%s' combines sum in shared bins: a body "
                       "only adds to it ('%s[k] += v;', '-=', '++', '--'); a bin holds the "
                       "block's share of the sum, which it can neither read nor change "
                       "otherwise", acc->name, acc->name);
        else
            diag_error(c->d, loc, "array accumulator '%s' combines %s: a body reads its "
                       "element and stores the fold ('%s[k] = v %s %s[k] ? v : %s[k];'), it "
                       "does not add to it or change it in place", acc->name,
                       ast_combine_name(acc->combine),
                       acc->name, acc->combine == COMBINE_MIN ? "<" : ">", acc->name,
                       acc->name);
        return;
    }
}

static void check_accum_uses(checker *c)
{
    const spec *s = c->s;
    for (int i = 0; i < s->naccums; ++i) {
        if (!s->accums[i].is_array)
            continue;
        if (s->has_compute)
            check_accum_uses_in(c, &s->compute, i);
        if (s->has_prologue)
            check_accum_uses_in(c, &s->prologue, i);
        if (s->has_epilogue)
            check_accum_uses_in(c, &s->epilogue, i);
    }
}

/* The tile walks the array it is over: an accumulator's array holds the one combined
 * value, so a tile over it would cover that element, not the data folded into it. */
static void check_accum_tile(checker *c)
{
    const spec *s = c->s;
    int acc = spec_accum_into(s, s->tile_array);
    if (acc < 0)
        return;
    diag_error(c->d, c->once[IT_TILE]->name_loc, "the tile is over '%s', which receives "
               "accumulator '%s' (one combined value): tile the array the accumulator reads",
               s->arrays[s->tile_array].name, s->accums[acc].name);
}

/* Whether body b names the compute's indices, in order. */
static bool same_indices(const spec_body *b, const spec_body *compute)
{
    if (b->nidx != compute->nidx)
        return false;
    for (int i = 0; i < b->nidx; ++i)
        if (strcmp(b->idx[i], compute->idx[i]))
            return false;
    return true;
}

/* Reductions run along whole rows of the tile, before a compute elementwise over it, with
 * the compute's index names (the passes share their row loop; the reference's too). */
enum { REDUCE_MAX_ROWS = 64 };

static void check_reductions(checker *c)
{
    const spec *s = c->s;
    if (!s->nreduces)
        return;
    const spec_reduce *r0 = &s->reduces[0];
    if (s->compute_kind != BODY_ELEMENTWISE || s->has_steps) {
        diag_error(c->d, r0->loc, "a reduction is a pass over the staged tile before a "
                   "'compute elementwise' over it, %s", s->has_steps ? "not with an inner "
                   "'steps' loop (each step stages another part of a row)" : "not with "
                   "'compute step'");
        return;
    }
    for (int i = 0; i < s->nreduces; ++i)
        if (!same_indices(&s->reduces[i].expr, &s->compute)) {
            diag_error(c->d, s->reduces[i].loc, "reduction '%s' must name the compute's index "
                       "names, in the same order (its passes and the compute share each row)",
                       s->reduces[i].name);
            return;
        }
    if (s->reference.nidx && !same_indices(&s->reference, &s->compute)) {
        diag_error(c->d, r0->loc, "with reductions, the reference must name the compute's "
                   "index names, in the same order (its rows fold the reductions first)");
        return;
    }
    const int last = s->tile_rank - 1;
    const spec_array *arr = &s->arrays[s->tile_array];
    const ast_extent *row = &arr->dims[last];
    const bool whole = row->name ? s->tile_bounded[last] != NULL : row->value <= s->tile[last];
    if (!whole) {
        if (row->name)
            diag_error(c->d, r0->loc, "a reduction folds whole rows, but the tile's last extent "
                       "(%lld) does not cover a row of '%s' (the size symbol %s): give the tile "
                       "'%s <= N', the whole row up to N", s->tile[last], arr->name, row->name,
                       row->name);
        else
            diag_error(c->d, r0->loc, "a reduction folds whole rows, but the tile's last extent "
                       "(%lld) does not cover a row of '%s' (%lld)", s->tile[last], arr->name,
                       row->value);
        return;
    }
    long long rows = 1;
    for (int d = 0; d < last; ++d)
        rows *= s->tile[d];
    if (rows > REDUCE_MAX_ROWS)
        diag_error(c->d, r0->loc, "a tile with reductions has at most %d rows (each thread "
                   "keeps a row's results in registers), this one %lld", REDUCE_MAX_ROWS,
                   rows);
}

/* What in the bodies is written for one block size, or NULL: threadIdx and blockDim count
 * the block's threads, and work dealt out by pg_ctid without pg_cnt is dealt for one
 * number of them. */
static const char *block_size_word(const spec *s)
{
    if (bodies_name(s, "threadIdx"))
        return "threadIdx";
    if (bodies_name(s, "blockDim"))
        return "blockDim";
    if (bodies_name(s, "pg_ctid") && !bodies_name(s, "pg_cnt"))
        return "pg_ctid and never pg_cnt";
    return NULL;
}

/* --threads picks one of the block sizes `threads` offers (256 where the spec has no
 * `threads`). Offering several lets a tuning run change the block size, so the bodies
 * must compute the same under each. */
static void choose_threads(checker *c)
{
    spec *s = c->s;
    const ast_item *it = c->once[IT_THREADS];
    const cmd_override *o = &c->tgt->threads;
    const char *word = it && it->nfewer ? block_size_word(s) : NULL;
    if (word) {
        diag_error(c->d, it->fewer_loc[0], "'threads' offers other block sizes than %d, but "
                   "the bodies name %s: written for one block size, they would compute "
                   "something else under another; offer one, or name the threads by pg_ctid "
                   "and deal out the work by pg_cnt", s->threads, word);
        return;
    }
    if (!o->opt)
        return;
    if (spec_offers_threads(s, o->value)) {
        s->threads = o->value;
        return;
    }
    char offered[64] = "256, the default";
    for (int i = 0, n = 0; i < s->nthreads_offered; ++i)
        n += snprintf(offered + n, sizeof offered - (size_t)n, "%s%d", i ? ", " : "",
                      s->threads_offered[i]);
    diag_error_from(c->d, origin_of(o, it ? it->value_loc : s->loc), "not a block size the "
                    "spec offers ('threads': %s)", offered);
}

static void check_whole(checker *c, const ast_pipeline *p)
{
    spec *s = c->s;
    if (!s->has_compute)
        diag_error(c->d, p->name_loc, "pipeline '%s' has no compute body", p->name);
    if (s->march && s->has_steps)
        diag_error(c->d, c->once[IT_MARCH]->loc, "march mode and an inner 'steps' loop "
                   "cannot be combined");
    check_index_ranks(c);
    if (c->d->errors == 0)
        check_reductions(c);
    check_accum_tile(c);
    if (c->d->errors == 0)
        check_accum_uses(c);
    check_param_space(c);
    choose_threads(c);
    check_occupancy(c);
    check_using(c);
    apply_overrides(c);
    check_producer_warps(c);
    if (c->d->errors)
        return;
    check_stages(c);
    if (s->host_stream)
        check_host_stream(c);
    check_lowering(c);
    check_cluster(c);
    if (c->d->errors == 0)
        check_budget(c, p);
    /* Last: a spec with other errors is often a sketch whose bodies write nothing yet. */
    if (c->d->errors == 0)
        check_outputs_written(c);
}

static void check_item(checker *c, const ast_item *it)
{
    switch (it->kind) {
    case IT_PARAM: check_param(c, it); break;
    case IT_ARRAY: check_array(c, it); break;
    case IT_ACCUM: check_accum(c, it); break;
    case IT_REDUCE: check_reduce(c, it); break;
    case IT_TILE: check_tile(c, it); break;
    case IT_STEPS: check_steps(c, it); break;
    case IT_STAGE: check_stage(c, it); break;
    case IT_BODY: check_body(c, it); break;
    default: check_scalar_item(c, it); break;
    }
}

/* The generated code names functions and types after the pipeline (NAME_launch): those
 * names must not fall among the reserved ones (pipeline pg: pg_launch). */
static void check_pipeline_name(checker *c, const ast_pipeline *p)
{
    const char *launch = arena_printf(c->a, "%s_launch", p->name);
    const char *why = reserved_why(launch);
    if (why)
        diag_error(c->d, p->name_loc, "pipeline '%s' would name its functions '%s', ...: %s",
                   p->name, launch, why);
}

/* Items are checked in two passes: declarations first (arrays may be declared after the
 * items that use them), then everything else in source order. */
static bool is_declaration(const ast_item *it)
{
    return it->kind == IT_PARAM || it->kind == IT_ARRAY;
}

static bool has_tile(const ast_pipeline *p)
{
    for (const ast_item *it = p->items; it; it = it->next)
        if (it->kind == IT_TILE)
            return true;
    return false;
}

bool sema_check(arena *a, diag_ctx *d, const ast_file *f, const target *t, spec *out)
{
    int errors_before = d->errors;
    memset(out, 0, sizeof *out);
    if (!f || !f->pipeline)
        return false;
    const ast_pipeline *p = f->pipeline;
    checker c = {.a = a, .d = d, .tgt = t, .s = out};
    out->name = p->name;
    check_pipeline_name(&c, p);
    out->loc = p->loc;
    out->file = p->loc.file;
    out->threads = 256;
    out->ring_depth = 2;
    out->cluster = 1;
    out->grid = GRID_PER_TILE;
    out->tile_array = -1;
    for (const ast_item *it = p->items; it; it = it->next)
        if (is_declaration(it))
            check_item(&c, it);
    /* No tile is reported first, whatever else is wrong: regions and index lists are
     * checked against the tile, and without one those checks would only echo its absence. */
    if (!has_tile(p))
        diag_error(d, p->name_loc, "pipeline '%s' has no 'tile' (the work item)", p->name);
    /* Accumulators after arrays (they name one); the tile before stages and steps. */
    for (int pass = 0; pass < 3; ++pass)
        for (const ast_item *it = p->items; it; it = it->next) {
            bool early = it->kind == IT_ACCUM || it->kind == IT_TILE;
            bool mid = it->kind == IT_STEPS;
            int want = early ? 0 : mid ? 1 : 2;
            if (is_declaration(it) || want != pass)
                continue;
            if (it->kind != IT_PARAM && it->kind != IT_ARRAY && it->kind != IT_STAGE
                && it->kind != IT_ACCUM && it->kind != IT_REDUCE && !check_once(&c, it))
                continue;
            check_item(&c, it);
        }
    if (d->errors == errors_before)
        check_whole(&c, p);
    return d->errors == errors_before;
}
