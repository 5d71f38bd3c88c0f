/* emit_kernel: print one schedule's kernel from its IR.
 *
 * The kernel is a fixed frame (the block's share of the work, the spec's names bound to
 * parameters, sizes and arrays) around the IR's sections, each a loop over its operations.
 * How an operation reads in CUDA depends on the mechanism: each mechanism module has a
 * printer per operation; the helpers they share, and the printers common to all (barrier,
 * compute), are here. */
#include "mech/mech.h"

#include <string.h>

static void kp_text(kctx *k, const char *text)
{
    bool line_start = k->out->len == 0 || k->out->data[k->out->len - 1] == '\n';
    for (const char *c = text; *c; ++c) {
        if (line_start && *c != '\n')
            sb_printf(k->out, "%*s", k->ind, "");
        sb_putn(k->out, c, 1);
        line_start = *c == '\n';
    }
}

void kp(kctx *k, const char *fmt, ...)
{
    strbuf tmp;
    sb_init(&tmp, k->out->arena);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&tmp, fmt, ap);
    va_end(ap);
    kp_text(k, tmp.data);
}

/* ------------------------------------------------------------------ declarations in use
 *
 * An optional declaration is printed as one line marked DECL_MARK name DECL_MARK; once the
 * kernel is printed, prune_decls keeps those whose name a later line of the same scope
 * uses (an identifier, not part of a longer one) and drops the others, last to first, so
 * that a declaration used only by a dropped one goes too. */

enum { DECL_MARK = '\001' };

void kdecl(kctx *k, const char *name, const char *fmt, ...)
{
    strbuf tmp;
    sb_init(&tmp, k->out->arena);
    sb_printf(&tmp, "%c%s%c", DECL_MARK, name, DECL_MARK);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&tmp, fmt, ap);
    va_end(ap);
    kp_text(k, tmp.data);
}

/* Whether the line names `name` as a whole identifier (not a member: a.name, a->name;
 * not in a literal or a comment). */
static bool line_names(const char *line, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = line; *p;) {
        const char *q = text_skip_literal(p);
        if (q != p) {
            p = q;
            continue;
        }
        bool start = p == line || !text_word_char(p[-1]);
        bool member = p > line && (p[-1] == '.' || (p[-1] == '>' && p > line + 1 && p[-2] == '-'));
        if (start && !member && strncmp(p, name, n) == 0 && !text_word_char(p[n]))
            return true;
        ++p;
    }
    return false;
}

/* The change of brace depth over a line, braces in literals and comments aside (bodies
 * are the user's C). */
static int brace_delta(const char *line)
{
    int d = 0;
    for (const char *p = line; *p;) {
        const char *q = text_skip_literal(p);
        if (q != p) {
            p = q;
            continue;
        }
        d += (*p == '{') - (*p == '}');
        ++p;
    }
    return d;
}

/* Whether a kept line after line i, inside line i's scope, names `name`; a nested scope
 * that declares the name again (decl[j]) hides it until it closes. */
static bool used_later(char **lines, char **decl, const bool *keep, int i, int n,
                       const char *name)
{
    int depth = 0, hidden = -1;
    for (int j = i + 1; j < n && depth >= 0; ++j) {
        if (!keep[j])
            continue;
        if (hidden < 0 && depth > 0 && decl[j] && strcmp(decl[j], name) == 0)
            hidden = depth;
        if (hidden < 0 && line_names(lines[j], name))
            return true;
        depth += brace_delta(lines[j]);
        if (hidden >= 0 && depth < hidden)
            hidden = -1;
    }
    return false;
}

static void prune_decls(strbuf *sb)
{
    int n = 0, cap = 0;
    char **lines = NULL;
    for (char *p = sb->data, *nl; *p; p = nl + 1) {
        lines = arena_grow(sb->arena, lines, &cap, n + 1, sizeof *lines);
        nl = strchr(p, '\n');
        lines[n++] = p;
        *nl = '\0';
    }
    bool *keep = arena_alloc(sb->arena, (size_t)n + 1);
    char **decl = arena_alloc(sb->arena, sizeof *decl * ((size_t)n + 1));
    for (int i = n - 1; i >= 0; --i) {
        char *mark = strchr(lines[i], DECL_MARK);
        keep[i] = true;
        if (!mark)
            continue;
        char *end = strchr(mark + 1, DECL_MARK);
        decl[i] = arena_strndup(sb->arena, mark + 1, (size_t)(end - mark - 1));
        keep[i] = used_later(lines, decl, keep, i, n, decl[i]);
        memmove(mark, end + 1, strlen(end + 1) + 1);
    }
    strbuf out;
    sb_init(&out, sb->arena);
    for (int i = 0; i < n; ++i)
        if (keep[i])
            sb_printf(&out, "%s\n", lines[i]);
    *sb = out;
}

/* ------------------------------------------------------------------ naming */

static const char *elem_ctype(elem_type t) { return ast_type_ctype(t); }

static void emit_affine(strbuf *out, const affine *a)
{
    sb_puts(out, "(");
    for (int i = 0; i < a->nterms; ++i) {
        if (a->coef[i] == 1)
            sb_printf(out, "%s%s", i ? " + " : "", a->var[i]);
        else
            sb_printf(out, "%s%lld * %s", i ? " + " : "", a->coef[i], a->var[i]);
    }
    if (a->c || !a->nterms)
        sb_printf(out, "%s%lld", a->nterms ? " + " : "", a->c);
    sb_puts(out, ")");
}

/* A view over an array's staged slot, or over the whole global array. */
static void emit_view_type(strbuf *out, const spec_array *arr)
{
    sb_printf(out, "pg_view%d<%s%s>", arr->rank, arr->dir == DIR_IN ? "const " : "",
              elem_ctype(arr->type));
}

static void emit_dim(kctx *k, const ast_extent *e)
{
    emit_extent(k->out, e, "");
}

/* The threads that copy (the producer warps, or the whole block: a copying thread's index
 * is threadIdx.x) and those that compute (the consumer warps after them, or the whole
 * block). */
int emit_copy_threads(const kctx *k)
{
    return k->sc->producer_threads ? k->sc->producer_threads : k->sc->threads;
}

static int compute_threads(const kctx *k)
{
    return k->sc->threads - k->sc->producer_threads;
}

/* A computing thread's index, signed: the element loops' indices derive from it, and
 * unsigned arithmetic there took jacobi2d's sync kernel from 46 to 60 registers (a block
 * an SM fewer; H100: 0.928 -> 0.828 of cudaMemcpy). */
static const char *compute_tid(const kctx *k)
{
    return k->sc->producer_threads ? "pg_ctid" : "(int)threadIdx.x";
}

/* ------------------------------------------------------------------ the frame */

/* The spec's names, bound as the bodies see them (those a body or the kernel uses). */
static void emit_bindings(kctx *k)
{
    const spec *s = k->s;
    for (int i = 0; i < s->nparams; ++i)
        kdecl(k, s->params[i].name, "const %s %s = pg_args.%s;\n",
              elem_ctype(s->params[i].type), s->params[i].name, s->params[i].name);
    for (int i = 0; i < s->nsizes; ++i)
        kdecl(k, s->sizes[i], "const int64_t %s = pg_args.%s;\n", s->sizes[i], s->sizes[i]);
    for (int i = 0; i < s->narrays; ++i) {
        const spec_array *arr = &s->arrays[i];
        if (arr->staged >= 0) {
            const char *g = arena_printf(k->out->arena, "pg_g_%s", arr->name);
            kdecl(k, g, "unsigned char *const %s = (unsigned char *)pg_args.%s;\n", g, arr->name);
        } else if (arr->rank == 1) {
            kdecl(k, arr->name, "%s%s *const %s = pg_args.%s;\n",
                  arr->dir == DIR_IN ? "const " : "", elem_ctype(arr->type), arr->name, arr->name);
        } else {
            /* A whole global array: a view with origin 0 and the array's pitches. */
            strbuf v;
            sb_init(&v, k->out->arena);
            emit_view_type(&v, arr);
            sb_printf(&v, " %s{pg_args.%s, 0, 0%s", arr->name, arr->name,
                      arr->rank == 3 ? ", 0" : "");
            for (int d = 1; d < arr->rank; ++d) {
                sb_puts(&v, ", ");
                for (int e = d; e < arr->rank; ++e) {
                    sb_puts(&v, e > d ? " * " : "");
                    emit_extent(&v, &arr->dims[e], "");
                }
            }
            kdecl(k, arr->name, "const %s};\n", v.data);
        }
    }
}

static void emit_stage_consts(kctx *k)
{
    const spec *s = k->s;
    /* The layout's sizes and alignments are the planner's, proven there (plan_layout):
     * nothing to assert on literals here. */
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        const spec_array *arr = &s->arrays[st->array];
        int esz = ast_type_size(arr->type), vec = k->sc->copy[i].vec;
        const char *v = arena_printf(k->out->arena, "pg_vec_%s", arr->name);
        /* The copy width of this stage under the kernel's width VEC (see the launcher). */
        if (esz == vec)
            kdecl(k, v, "constexpr int %s = %d;\n", v, vec);
        else
            kdecl(k, v, "constexpr int %s = VEC < %d ? %d : (VEC > %d ? %d : VEC);\n", v, esz,
                  esz, vec, vec);
        if (st->evict != EVICT_DEFAULT && mech_module_of(k->sc->mech)->l2_policy)
            kdecl(k, arena_printf(k->out->arena, "pg_pol_%s", arr->name),
                  "const uint64_t pg_pol_%s = pg_l2_policy<%d>();\n", arr->name, (int)st->evict);
    }
}

/* Whether a work item is one pipeline step (no inner `steps` loop, no march strip). */
static bool one_step(const spec *s)
{
    return !s->has_steps && !s->march;
}

/* The block's work items, or, where each is one step, its steps (no pg_items beside an
 * equal pg_trips). */
static const char *items_name(const spec *s)
{
    return one_step(s) ? "pg_trips" : "pg_items";
}

/* In clusters of N blocks, the work items are groups of N tiles along the first
 * dimension (the last group's tail blocks get tiles past the array, which copy zeros and
 * run like the others: their peers need their shares and releases), dealt to clusters as
 * tiles are to blocks; block r of a cluster takes tile r of its group. */
static void emit_cluster_items(kctx *k)
{
    const spec *s = k->s;
    int n = k->sc->cluster;
    kdecl(k, "pg_cid", "const int64_t pg_cid = (int64_t)blockIdx.x / %d;\n", n);
    kdecl(k, "pg_ncl", "const int64_t pg_ncl = (int64_t)gridDim.x / %d;\n", n);
    kdecl(k, "pg_crank", "const int64_t pg_crank = (int64_t)blockIdx.x %% %d;\n", n);
    kdecl(k, "pg_tiles0", "const int64_t pg_tiles0 = (");
    emit_dim(k, &s->arrays[s->tile_array].dims[0]);
    kp(k, " + %lld) / %lld;\n", s->tile[0] - 1, s->tile[0]);
    kdecl(k, "pg_groups", "const int64_t pg_groups = pg_tiles0 > 0 ? pg_ntiles / pg_tiles0 * "
          "((pg_tiles0 + %d) / %d) : 0;\n", n - 1, n);
    kdecl(k, items_name(s), "const int64_t %s = pg_cid < pg_groups ? "
          "(pg_groups - 1 - pg_cid) / pg_ncl + 1 : 0;\n", items_name(s));
}

/* The claim ring (OP_CLAIM) and thread 0's next claim, fetched a claim ahead so that the
 * counter's round trip overlaps a step: the loop's trips are known only as it runs. The
 * prologue's claims are static (pg_claim_fetch), so every block starts at once. */
static void emit_claim_ring(kctx *k)
{
    kp(k, "__shared__ int64_t pg_claim[%d];\n", k->sc->claim_ring);
    kp(k, "int64_t pg_next = threadIdx.x == 0 ? pg_claim_fetch<%d>(pg_counter, 0) : 0;\n",
       k->sc->claim_ahead);
}

/* Steps per work item: the inner `steps` loop (at least one, so that an empty K still
 * runs the prologue and epilogue), the tiles of a march strip, or 1. */
static void emit_work_counts(kctx *k)
{
    const spec *s = k->s;
    if (s->has_steps) {
        kp(k, "const int64_t pg_ks = (");
        emit_dim(k, &s->step_bound);
        kp(k, " + %lld) / %lld > 1 ? (", s->step_by - 1, s->step_by);
        emit_dim(k, &s->step_bound);
        kp(k, " + %lld) / %lld : 1;\n", s->step_by - 1, s->step_by);
    } else {
        kdecl(k, "pg_ks", "constexpr int64_t pg_ks = %lld;\n", s->march ? s->march : 1);
    }
    if (k->sc->claim_ring) {
        emit_claim_ring(k);
        return;
    }
    if (k->sc->cluster > 1)
        emit_cluster_items(k);
    else
        kdecl(k, items_name(s), "const int64_t %s = (int64_t)blockIdx.x < pg_ntiles ? "
              "(pg_ntiles - 1 - (int64_t)blockIdx.x) / gridDim.x + 1 : 0;\n", items_name(s));
    if (!one_step(s))
        kdecl(k, "pg_trips", "const int64_t pg_trips = pg_items * pg_ks;\n");
}

/* The work item of a step (blocks stride over items), its tile's origin per dimension
 * (the fastest-varying dimension last), the step variable and the slot: each declared
 * where it is used. */
static void emit_tile_origin(kctx *k, const char *step)
{
    const spec *s = k->s;
    const spec_array *arr = &s->arrays[s->tile_array];
    const bool clusters = k->sc->cluster > 1;
    const char *first = clusters ? "pg_cid" : "(int64_t)blockIdx.x";
    const char *stride = clusters ? "pg_ncl" : "gridDim.x";
    if (k->sc->claim_ring) {
        kdecl(k, "pg_rest", "int64_t pg_rest = pg_claim[%s %% %d];\n", step, k->sc->claim_ring);
    } else if (one_step(s)) {
        kdecl(k, "pg_rest", "int64_t pg_rest = %s + %s * %s;\n", first, step, stride);
    } else {
        kdecl(k, "pg_sub", "const int64_t pg_sub = pg_mod(%s, pg_ks);\n", step);
        kdecl(k, "pg_rest", "int64_t pg_rest = %s + pg_div(%s, pg_ks) * %s;\n", first, step,
              stride);
    }
    for (int d = s->tile_rank - 1; d > 0; --d) {
        const char *tiles = arena_printf(k->out->arena, "pg_tiles%d", d);
        kdecl(k, tiles, "const int64_t %s = (", tiles);
        emit_dim(k, &arr->dims[d]);
        kp(k, " + %lld) / %lld;\n", s->tile[d] - 1, s->tile[d]);
        kdecl(k, s->tile_at[d], "const int64_t %s = pg_mod(pg_rest, %s) * %lld;\n",
              s->tile_at[d], tiles, s->tile[d]);
        kdecl(k, "pg_rest", "pg_rest = pg_div(pg_rest, %s);\n", tiles);
    }
    if (clusters)
        kdecl(k, s->tile_at[0], "const int64_t %s = (pg_rest * %d + pg_crank) * %lld;\n",
              s->tile_at[0], k->sc->cluster, s->tile[0]);
    else if (s->march)
        kdecl(k, s->tile_at[0], "const int64_t %s = (pg_rest * %lld + pg_sub) * %lld;\n",
              s->tile_at[0], s->march, s->tile[0]);
    else
        kdecl(k, s->tile_at[0], "const int64_t %s = pg_rest * %lld;\n", s->tile_at[0],
              s->tile[0]);
    if (s->has_steps)
        kdecl(k, s->step_var, "const int64_t %s = pg_sub * %lld;\n", s->step_var, s->step_by);
    if (k->sc->nslots > 1)
        kdecl(k, "pg_slot", "const int pg_slot = (int)(%s %% %d);\n", step, k->sc->nslots);
}

const char *emit_slot(kctx *k, bool slot_var)
{
    if (k->sc->nslots == 1)
        return "0";
    return slot_var ? "pg_slot" : arena_printf(k->out->arena, "pg_step %% %d", k->sc->nslots);
}

const char *emit_use(kctx *k)
{
    if (k->sc->nslots == 1)
        return "pg_step";
    return arena_printf(k->out->arena, "pg_step / %d", k->sc->nslots);
}

const char *emit_step(kctx *k, int step_off)
{
    if (!k->var)
        return arena_printf(k->out->arena, "%d", step_off);
    if (step_off)
        return arena_printf(k->out->arena, "%s + %d", k->var, step_off);
    return k->var;
}

const char *emit_live(kctx *k, const char *step)
{
    if (k->sc->claim_ring)
        return arena_printf(k->out->arena, "pg_claim[(%s) %% %d] < pg_ntiles", step,
                            k->sc->claim_ring);
    return arena_printf(k->out->arena, "%s < pg_trips", step);
}

void emit_slot_open(kctx *k, const ir_op *op)
{
    kp(k, "{\n");
    k->ind += 4;
    kdecl(k, "pg_step", "const int64_t pg_step = %s;\n", emit_step(k, op->step_off));
    if (op->guarded) {
        kp(k, "if (%s) {\n", emit_live(k, "pg_step"));
        k->ind += 4;
    }
}

void emit_step_open(kctx *k, const ir_op *op)
{
    emit_slot_open(k, op);
    if (!k->origin_hoisted || op->step_off)
        emit_tile_origin(k, "pg_step");
}

void emit_step_close(kctx *k, const ir_op *op)
{
    if (op->guarded) {
        k->ind -= 4;
        kp(k, "}\n");
    }
    k->ind -= 4;
    kp(k, "}\n");
}

/* ------------------------------------------------------------------ operations */

/* The shared-memory address of a stage's slot for the current step. */
static void emit_slot_addr(kctx *k, int si)
{
    const copy_plan *cp = &k->sc->copy[si];
    if (cp->nslots > 1)
        kp(k, "pg_smem + %lld + pg_slot * %lld", cp->off, cp->slot_bytes);
    else
        kp(k, "pg_smem + %lld", cp->off);
}

/* The template and place arguments of pg_region / pg_store_region for stage si:
 * <VEC, P, R, ROWBYTES, PITCH>(dst or base, src, o0, o1, o2b, n0, n1, n2b): P planes of R
 * rows of ROWBYTES, rows PITCH apart; a folded region (copy_plan.fold) has a dimension
 * more, its rows of `fold` elements back to back, the region's rows its planes. */
void emit_region_shape(kctx *k, int si, int nthreads)
{
    const spec_stage *st = &k->s->stages[si];
    const copy_plan *cp = &k->sc->copy[si];
    const spec_array *arr = &k->s->arrays[st->array];
    long long ext[AST_MAX_RANK];
    const int rank = plan_folded_extents(cp, st->rank, ext);
    const long long row = ext[rank - 1] * ast_type_size(arr->type);
    kp(k, "<pg_vec_%s, %lld, %lld, %lldLL, %lldLL, %d>", arr->name, rank == 3 ? ext[0] : 1,
       rank >= 2 ? ext[rank - 2] : 1, row, cp->fold ? row : cp->pitch, nthreads);
}

/* Along dimension d of the array, the origin of the region as copied (origin) or the
 * array's extent; folded, the row's in rows of `fold` (the origin always a multiple of
 * it). */
static void emit_place_at(kctx *k, const spec_stage *st, const copy_plan *cp, int d,
                          bool origin)
{
    const ast_extent *e = &k->s->arrays[st->array].dims[d];
    const bool folded = cp->fold && d == st->rank - 1;
    if (origin && folded) {
        kp(k, "(");
        emit_affine(k->out, &cp->origin[d]);
        kp(k, ") / %d", cp->fold);
    } else if (origin) {
        emit_affine(k->out, &cp->origin[d]);
    } else if (folded) {
        kp(k, "%lld", e->value / cp->fold);
    } else {
        emit_dim(k, e);
    }
}

/* Half of a region's place as the runtime's region copies take it: its origin (o0, o1,
 * o2b: planes, rows, the byte in a row) or the array's extents (n0, n1, n2b); a folded
 * region starts at its rows' first byte. */
static void emit_place_half(kctx *k, const spec_stage *st, const copy_plan *cp, bool origin)
{
    const int rows = st->rank - !cp->fold;   /* the dimensions before the fastest */
    const int esz = ast_type_size(k->s->arrays[st->array].type);
    for (int i = rows; i < 2; ++i)
        kp(k, origin ? "0, " : "1, ");
    for (int d = 0; d < rows; ++d) {
        emit_place_at(k, st, cp, d, origin);
        kp(k, ", ");
    }
    if (cp->fold) {
        kp(k, "%lld", origin ? 0LL : (long long)cp->fold * esz);
        return;
    }
    emit_place_at(k, st, cp, st->rank - 1, origin);
    kp(k, " * %d", esz);
}

static void emit_region_place(kctx *k, int si)
{
    const spec_stage *st = &k->s->stages[si];
    const copy_plan *cp = &k->sc->copy[si];
    emit_place_half(k, st, cp, true);
    kp(k, ",\n    ");
    emit_place_half(k, st, cp, false);
}

static void emit_region_call(kctx *k, int si, const char *fn)
{
    const spec_stage *st = &k->s->stages[si];
    const spec_array *arr = &k->s->arrays[st->array];
    kp(k, "%s", fn);
    emit_region_shape(k, si, emit_copy_threads(k));
    kp(k, "(");
    emit_slot_addr(k, si);
    kp(k, ", pg_g_%s,\n    ", arr->name);
    emit_region_place(k, si);
}

static void emit_region_copy(kctx *k, int si, const char *fn, chunk_printer chunk)
{
    const spec_stage *st = &k->s->stages[si];
    emit_region_call(k, si, fn);
    kp(k, ", threadIdx.x,\n    [&](unsigned char *pg_d, const unsigned char *pg_s, int pg_v) "
          "{ ");
    chunk(k, st, k->s->arrays[st->array].name);
    kp(k, "; });\n");
}

void emit_region_calls(kctx *k, const ir_op *op, const char *fn, chunk_printer args)
{
    for (int i = 0; i < k->s->nstaged; ++i) {
        const spec_stage *st = &k->s->stages[i];
        if (st->is_output || (op->stage >= 0 && op->stage != i))
            continue;
        emit_region_call(k, i, fn);
        kp(k, ", threadIdx.x, ");
        args(k, st, k->s->arrays[st->array].name);
        kp(k, ");\n");
    }
}

void emit_copy_region_calls(kctx *k, const ir_op *op, const char *fn, chunk_printer args)
{
    emit_step_open(k, op);
    emit_region_calls(k, op, fn, args);
    emit_step_close(k, op);
}

const char *emit_zero_whole(const kctx *k)
{
    return k->walk == REGION_SPLIT || spec_tile_at_bound(k->s) ? "true" : "false";
}

void emit_copy_regions(kctx *k, const ir_op *op, region_walk walk, chunk_printer chunk)
{
    const char *fn = walk == REGION_SPLIT ? "pg_region_split" : "pg_region";
    k->walk = walk;
    emit_step_open(k, op);
    for (int i = 0; i < k->s->nstaged; ++i)
        if ((op->stage < 0 || op->stage == i) && !k->s->stages[i].is_output)
            emit_region_copy(k, i, fn, chunk);
    emit_step_close(k, op);
}

void emit_store_call(kctx *k, int si, const char *fn)
{
    kp(k, "%s", fn);
    emit_region_shape(k, si, compute_threads(k));
    kp(k, "(pg_g_%s, ", k->s->arrays[k->s->stages[si].array].name);
    emit_slot_addr(k, si);
    kp(k, ",\n    ");
    emit_region_place(k, si);
    kp(k, ", %s", compute_tid(k));
}

/* STORE: every staged output of the step, written back with ordinary stores. */
void emit_store_calls(kctx *k, const ir_op *op, const char *fn)
{
    emit_step_open(k, op);
    for (int i = 0; i < k->s->nstaged; ++i) {
        if (!k->s->stages[i].is_output || (op->stage >= 0 && op->stage != i))
            continue;
        emit_store_call(k, i, fn);
        kp(k, ");\n");
    }
    emit_step_close(k, op);
}

void emit_print_store(kctx *k, const ir_op *op)
{
    emit_store_calls(k, op, "pg_store_region");
}

void emit_print_barrier(kctx *k, const ir_op *op)
{
    (void)op;
    kp(k, "__syncthreads();\n");
}

/* A swizzled slot's view arguments: the span where the launch copies by tensor (16-byte
 * copies; the variants below copy rows unswizzled) and the region's rows. */
static void emit_view_swizzle(kctx *k, int si)
{
    const copy_plan *cp = &k->sc->copy[si];
    const spec_stage *st = &k->s->stages[si];
    if (cp->swizzle)
        kp(k, ", (pg_vec_%s == 16 ? %d : 0), %lld", k->s->arrays[st->array].name, cp->swizzle,
           plan_region_rows(cp, st->rank));
}

/* Dynamic shared memory, its base rounded up to the alignment the slots assume (sm_align
 * above 128: swizzled slots; smem_bytes has the room). */
static void emit_smem_base(kctx *k)
{
    int align = k->sc->smem_align;
    if (align <= 128) {
        kdecl(k, "pg_smem", "extern __shared__ __align__(128) unsigned char pg_smem[];\n");
        return;
    }
    kp(k, "extern __shared__ __align__(%d) unsigned char pg_smem_raw[];\n", align);
    kdecl(k, "pg_smem", "unsigned char *const pg_smem = pg_smem_raw + ((0u - "
          "pg_smem_addr(pg_smem_raw)) & %du);\n", align - 1);
}

/* Views of every staged array over the step's slots, indexed by global coordinates, those
 * with a clamped or mirrored halo through their border where borders. */
static void emit_staged_views(kctx *k, bool borders)
{
    const spec *s = k->s;
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        const spec_array *arr = &s->arrays[st->array];
        const copy_plan *cp = &k->sc->copy[i];
        long long pitch = cp->pitch / ast_type_size(arr->type);
        const char *c = arr->dir == DIR_IN ? "const " : "", *t = elem_ctype(arr->type);
        const bool border = borders && spec_stage_border(st);
        kdecl(k, arr->name, "%s", "");
        if (border) {
            kp(k, "const ");
            emit_border_open(k->out, st);
        }
        if (st->rank == 1)
            kp(k, "%spg_view1<%s%s", border ? "" : "const ", c, t);
        else if (st->rank == 2)
            kp(k, "%spg_sview2<%s%s, %lld", border ? "" : "const ", c, t, pitch);
        else
            kp(k, "%spg_sview3<%s%s, %lld, %lld", border ? "" : "const ", c, t, pitch,
               pitch * cp->extent[1]);
        emit_view_swizzle(k, i);
        kp(k, "%s %s{%s(%s%s *)(", border ? ">>" : ">", arr->name, border ? "{" : "", c, t);
        emit_slot_addr(k, i);
        kp(k, ")");
        for (int d = 0; d < st->rank; ++d) {
            kp(k, ", ");
            emit_affine(k->out, &cp->origin[d]);
        }
        kp(k, "}");
        for (int d = 0; d < st->rank && border; ++d) {
            kp(k, ", ");
            emit_extent(k->out, &arr->dims[d], "");
        }
        kp(k, border ? "};\n" : ";\n");
    }
}

/* The tile's limits: pg_limD, the extent of dimension D that is inside the array. */
static void emit_tile_limits(kctx *k)
{
    const spec *s = k->s;
    const spec_array *arr = &s->arrays[s->tile_array];
    for (int d = 0; d < s->tile_rank; ++d) {
        const char *rest = arena_printf(k->out->arena, "pg_rest%d", d);
        const char *lim = arena_printf(k->out->arena, "pg_lim%d", d);
        kdecl(k, rest, "const int64_t %s = ", rest);
        emit_dim(k, &arr->dims[d]);
        kp(k, " - %s;\n", s->tile_at[d]);
        kdecl(k, lim, "const int %s = %s < %lld ? (int)%s : %lld;\n", lim, rest, s->tile[d], rest,
              s->tile[d]);
    }
}

/* The body for one cell whose tile coordinates pg_l0.. are set and inside the limits. */
static void emit_cell(kctx *k, const char *ind)
{
    const spec *s = k->s;
    for (int d = 0; d < s->tile_rank; ++d)
        kp(k, "%sconst int64_t %s = %s + pg_l%d;\n", ind, s->compute.idx[d], s->tile_at[d], d);
    emit_body(k->out, &s->compute, &k->u->opts, "");
}

/* With an accumulator by column, each computing thread walks its own columns (tid, tid +
 * computing threads, ...), each down the tile's rows, and NAME is that column's register:
 * the loop over them unrolled, so that pg_cols_NAME[pg_j] is a register, never memory. */
static void emit_elementwise_columns(kctx *k)
{
    const spec *s = k->s;
    const int slots = plan_column_slots(k->sc), cnt = compute_threads(k);
    kp(k, "#pragma unroll\nfor (int pg_j = 0; pg_j < %d; ++pg_j) {\n"
          "    const int pg_l1 = %s + pg_j * %d;\n    if (pg_l1 < pg_lim1) {\n", slots,
       compute_tid(k), cnt);
    for (int i = 0; i < s->naccums; ++i)
        if (k->sc->accum_regs[i])
            kp(k, "        const pg_acc_column<%s> %s{pg_cols_%s[pg_j]};\n",
               elem_ctype(s->accums[i].type), s->accums[i].name, s->accums[i].name);
    kp(k, "#pragma unroll 4\n        for (int pg_l0 = 0; pg_l0 < pg_lim0; ++pg_l0) {\n");
    emit_cell(k, "            ");
    kp(k, "        }\n    }\n}\n");
}

/* The planes (or, without a halo, positions) a whole tile's walk unrolls at once: all of
 * them up to this many. */
enum { PLANE_UNROLL = 16 };
/* The adjacent rows of a whole tile a thread walks (sched.walk_rows) unrolled at once:
 * a row shares its loads with the next in the same unrolled group only, and four at once
 * took stencil27_big's registers past what its shared memory's blocks leave (plan.c,
 * plan_launch_blocks). */
enum { WALK_ROWS_UNROLL = 2 };

static int unroll_up_to(long long trips, int most)
{
    return trips < most ? (int)trips : most;
}

/* Whether a rank-3 tile's cells are walked down its planes (emit_plane_walk): where the
 * computing threads deal a plane's positions evenly, or where a halo makes the planes a
 * cell shares with the one below worth a ragged deal (every thread a position at least;
 * 224 computing threads beside a producer warp over planes of 512: stencil7 0.33 of
 * tensor walking in order, H200). */
static bool plane_walk(const spec *s, int cnt)
{
    const long long plane = s->tile_rank == 3 ? s->tile[1] * s->tile[2] : 0;
    return plane && (plane % cnt == 0 || (spec_stages_halo(s) && plane >= cnt));
}

/* The loop over a computing thread's positions in a plane of a rank-3 tile, pg_l1 and
 * pg_l2 its row and column: tid, tid + computing threads, ... (rolled, or unrolled for a
 * whole tile without a halo), or, for a whole tile that walks rows (sched.walk_rows), the
 * thread's adjacent rows at its column. */
static void emit_walk_positions(kctx *k, bool whole)
{
    const spec *s = k->s;
    const char *tid = compute_tid(k);
    if (whole && k->sc->walk_rows) {
        const int rows = k->sc->walk_rows;
        kp(k, "#pragma unroll %d\n    for (int pg_q = 0; pg_q < %d; ++pg_q) {\n"
              "        const int pg_l2 = %s %% %lld;\n"
              "        const int pg_l1 = %s / %lld * %d + pg_q;\n",
           unroll_up_to(rows, WALK_ROWS_UNROLL), rows, tid, s->tile[2], tid, s->tile[2], rows);
        return;
    }
    const int cnt = compute_threads(k);
    const long long plane = s->tile[1] * s->tile[2];
    if (whole && !spec_stages_halo(s))   /* plane_walk: without a halo, cnt divides the plane */
        kp(k, "#pragma unroll %d\n    for (int pg_q = 0; pg_q < %lld; ++pg_q) {\n"
              "        const int pg_p = %s + pg_q * %d;\n",
           unroll_up_to(plane / cnt, PLANE_UNROLL), plane / cnt, tid, cnt);
    else
        kp(k, "    for (int pg_p = %s; pg_p < %lld; pg_p += %d) {\n", tid, plane, cnt);
    kp(k, "        const int pg_l2 = pg_p %% %lld;\n        const int pg_l1 = pg_p / %lld;\n",
       s->tile[2], s->tile[2]);
}

/* A thread's walk down the slowest dimension of a rank-3 tile, at each of its positions in
 * a plane. A whole tile walks every plane unrolled and unguarded, so that what a cell
 * reads of the planes it shares with the cell below is read once: nvcc keeps it in a
 * register (a 27-point stencil's shared-memory loads, 27 a cell, fall to 9 and the
 * planes' share), and of the row it shares with the next where the thread walks rows.
 * Without a halo no reads are shared, and a whole tile's positions are unrolled too
 * (transpose_batched: the rolled loop's 16-byte tensor kernel spilled around the
 * persistent tile loop's 64-bit division, ptxas sm_90; with a halo the unrolled one
 * spilled in stencil27_big's). A tile at the array's end checks each position and stops
 * at its last plane. */
static void emit_plane_walk(kctx *k, bool whole)
{
    const spec *s = k->s;
    emit_walk_positions(k, whole);
    if (whole)
        kp(k, "#pragma unroll %d\n        for (int pg_l0 = 0; pg_l0 < %lld; ++pg_l0) {\n",
           unroll_up_to(s->tile[0], PLANE_UNROLL), s->tile[0]);
    else
        kp(k, "        if (pg_l1 >= pg_lim1 || pg_l2 >= pg_lim2)\n            continue;\n"
              "#pragma unroll %d\n        for (int pg_l0 = 0; pg_l0 < pg_lim0; ++pg_l0) {\n",
           unroll_up_to(s->tile[0], 4));
    emit_cell(k, "            ");
    kp(k, "        }\n    }\n");
}

/* compute elementwise: the tile's cells are dealt to the compute threads in order, the
 * fastest dimension fastest; cells outside the array are skipped. Positions inside the
 * tile are ints, checked against pg_limD, so that only the body's own indexing is 64-bit.
 * Where the consumers are a whole number of rows of a rank-2 tile, each thread keeps one
 * column and walks rows: the column, its bound and whatever the body computes from it
 * alone stay out of the loop (measured on H100: jacobi2d under sync 0.86 -> 0.93); the
 * thread takes every (threads / row length)-th row (a block of consecutive rows instead
 * measured the same on blur and 2.7% slower on jacobi2d under cp.async per tile, H200,
 * same process). A rank-1 tile's bound is the loop's own: no guard in the body, which
 * nvcc otherwise predicates (measured on H100, same process: saxpy sync per tile 0.976
 * -> 0.995, cp.async persistent 0.941 -> 0.951). */
static void emit_elementwise(kctx *k)
{
    const spec *s = k->s;
    int cnt = compute_threads(k);
    const char *tid = compute_tid(k);
    long long n = 1, inner = 1;
    emit_tile_limits(k);
    if (plan_column_slots(k->sc)) {
        emit_elementwise_columns(k);
        return;
    }
    if (s->tile_rank == 2 && cnt % s->tile[1] == 0) {
        kp(k, "const int pg_l1 = %s %% %lld;\nif (pg_l1 < pg_lim1) {\n", tid, s->tile[1]);
        kp(k, "#pragma unroll 4\n    for (int pg_l0 = %s / %lld; pg_l0 < pg_lim0; pg_l0 += %d) {\n",
           tid, s->tile[1], (int)(cnt / s->tile[1]));
        emit_cell(k, "        ");
        kp(k, "    }\n}\n");
        return;
    }
    if (plane_walk(s, cnt)) {
        kp(k, "if (pg_lim0 == %lld && pg_lim1 == %lld && pg_lim2 == %lld) {\n", s->tile[0],
           s->tile[1], s->tile[2]);
        emit_plane_walk(k, true);
        kp(k, "} else {\n");
        emit_plane_walk(k, false);
        kp(k, "}\n");
        return;
    }
    if (s->tile_rank == 1) {
        kp(k, "#pragma unroll 4\nfor (int pg_l0 = %s; pg_l0 < pg_lim0; pg_l0 += %d) {\n", tid,
           cnt);
        emit_cell(k, "    ");
        kp(k, "}\n");
        return;
    }
    for (int d = 0; d < s->tile_rank; ++d)
        n *= s->tile[d];
    kp(k, "#pragma unroll 4\nfor (int pg_e = %s; pg_e < %lld; pg_e += %d) {\n", tid, n, cnt);
    /* pg_e < n: the slowest dimension needs no remainder, the fastest no quotient. */
    for (int d = s->tile_rank - 1; d >= 0; --d) {
        kp(k, "    const int pg_l%d = pg_e", d);
        if (inner > 1)
            kp(k, " / %lld", inner);
        if (d)
            kp(k, " %% %lld", s->tile[d]);
        kp(k, ";\n");
        inner *= s->tile[d];
    }
    kp(k, "    if (");
    for (int d = 0; d < s->tile_rank; ++d)
        kp(k, "%spg_l%d < pg_lim%d", d ? " && " : "", d, d);
    kp(k, ") {\n");
    emit_cell(k, "        ");
    kp(k, "    }\n}\n");
}

/* ------------------------------------------------------------------ row passes */

/* With reductions the compute threads walk the tile row by row, each pass (a reduction's,
 * then the compute's) over every row: pg_row runs over the tile's rows unrolled, so that
 * a row's results stay in registers (pg_rr_NAME[pg_row]), and the threads deal a row's
 * cells among them, the fastest dimension fastest. */
typedef void (*cell_printer)(kctx *k, const spec_reduce *r);

/* A row loop unrolled 4 times, but never past the most trips a row gives the loop: more
 * only adds code, and over eight packed rows of 1024 (rmsnorm, 512 threads) spilled
 * registers under sync and cg (ptxas, sm_90). */
static int row_unroll(const spec *s, int step)
{
    return unroll_up_to((s->tile[s->tile_rank - 1] + step - 1) / step, 4);
}

/* Who walks a row: where the tile has a row for every compute warp, each warp its own
 * rows (pg_row = its warp + pg_i * warps; past the tile's rows: none), its lanes dealing
 * the row's cells and folding a reduction with shuffles alone; where the tile's rows
 * (more than one) divide the warps, a group of warps / rows warps each row, the group's
 * lanes dealing its cells and folding through shared memory (pg_group_rows_reduce: a
 * value a warp, a butterfly over the group's); else the whole block every row (pg_row =
 * pg_i), a reduction through shared memory and two barriers. Measured on H100, softmax of
 * 8 rows a tile: warps 0.90 of cudaMemcpy, the block 0.85; with one producer warp (7
 * compute warps, rows not a multiple) the block 0.43. Groups are for packed rows: 8 rows
 * of 1024 over 512 threads walked by the block gave a thread 2 cells a row and 8 rows to
 * fold (softmax_rows at rows of 1024: the block 0.50, groups 0.87, H100, two blocks an
 * SM). pg_i runs over the rows a thread visits, `visits` of them. */
typedef struct row_map {
    int group;          /* warps walking one row; 0: the whole block walks every row */
    long long visits;
    int warps;
} row_map;

static row_map row_mapping(const kctx *k)
{
    const long long rows = spec_tile_rows(k->s);
    const int warps = compute_threads(k) / 32;
    const int group = spec_row_group(k->s, warps);
    if (group == 1)
        return (row_map){1, (rows + warps - 1) / warps, warps};
    return (row_map){group, group ? 1 : rows, warps};
}

static void emit_row_loop(kctx *k, const row_map *m)
{
    kp(k, "#pragma unroll\nfor (int pg_i = 0; pg_i < %lld; ++pg_i) {\n", m->visits);
    if (m->group == 1)
        kp(k, "    const int pg_row = (%s >> 5) + pg_i * %d;\n", compute_tid(k), m->warps);
    else if (m->group)
        kp(k, "    const int pg_row = (%s >> 5) / %d;\n", compute_tid(k), m->group);
    else
        kp(k, "    const int pg_row = pg_i;\n");
}

static void emit_row_cells(kctx *k, cell_printer print, const spec_reduce *r)
{
    const row_map m = row_mapping(k);
    const spec *s = k->s;
    const int last = s->tile_rank - 1;
    long long inner = 1;
    for (int d = last - 1; d >= 0; --d) {
        kp(k, "const int pg_l%d = pg_row", d);
        if (inner > 1)
            kp(k, " / %lld", inner);
        if (d)
            kp(k, " %% %lld", s->tile[d]);
        kp(k, ";\n");
        inner *= s->tile[d];
    }
    if (last > 0) {
        kp(k, "if (");
        for (int d = 0; d < last; ++d)
            kp(k, "%spg_l%d < pg_lim%d", d ? " && " : "", d, d);
        kp(k, ") {\n");
        k->ind += 4;
    }
    const int step = m.group ? 32 * m.group : compute_threads(k);
    const char *tid = compute_tid(k), *start = tid;
    if (m.group)   /* the thread's place in its group: a mask where the group is 2^n lanes */
        start = (step & (step - 1)) == 0 ? arena_printf(k->out->arena, "%s & %d", tid, step - 1)
                                         : arena_printf(k->out->arena, "%s %% %d", tid, step);
    kp(k, "#pragma unroll %d\n", row_unroll(s, step));
    kp(k, "for (int pg_l%d = %s; pg_l%d < pg_lim%d; pg_l%d += %d) {\n", last, start, last, last,
       last, step);
    k->ind += 4;
    for (int d = 0; d < s->tile_rank; ++d)
        kp(k, "const int64_t %s = %s + pg_l%d;\n", s->compute.idx[d], s->tile_at[d], d);
    print(k, r);
    k->ind -= 4;
    kp(k, "}\n");
    if (last > 0) {
        k->ind -= 4;
        kp(k, "}\n");
    }
}

static const char *reduce_ctype(arena *a, const spec_reduce *r)
{
    const char *t = elem_ctype(r->type);
    return spec_reduce_is_arg(r) ? arena_printf(a, "pg_arg<%s>", t) : t;
}

/* The fold of two of a reduction's results x and y (pg_arg for argmin and argmax). */
static void emit_reduce_fold(strbuf *out, const spec_reduce *r, const char *x, const char *y)
{
    if (spec_reduce_is_arg(r))
        sb_printf(out, "pg_arg_pick<%s>(%s, %s)", r->combine == COMBINE_ARGMAX ? "true" : "false",
                  x, y);
    else
        emit_fold(out, r->combine, x, y);
}

/* One cell of a reduction's pass: its expression folded into the row's pg_acc (argmin and
 * argmax with the cell's index along the row). */
static void print_fold(kctx *k, const spec_reduce *r)
{
    const char *t = elem_ctype(r->type);
    kp(k, "{\n    const %s pg_v = (%s)(\n", t, t);
    emit_body(k->out, &r->expr, &k->u->opts, "");
    kp(k, "    );\n    pg_acc = ");
    const char *v = spec_reduce_is_arg(r)
        ? arena_printf(k->out->arena, "%s{pg_v, (long long)%s}", reduce_ctype(k->out->arena, r),
                       k->s->compute.idx[k->s->tile_rank - 1])
        : "pg_v";
    emit_reduce_fold(k->out, r, "pg_acc", v);
    sb_puts(k->out, ";\n");
    kp(k, "}\n");
}

static void print_compute_cell(kctx *k, const spec_reduce *r)
{
    (void)r;
    emit_body(k->out, &k->s->compute, &k->u->opts, "");
}

/* The results of the reductions before the n-th, for the row: names the bodies read. */
static void emit_row_results(kctx *k, int n)
{
    for (int i = 0; i < n; ++i) {
        const spec_reduce *r = &k->s->reduces[i];
        kp(k, "const %s %s = pg_rr_%s[pg_i];\n(void)%s;\n", reduce_ctype(k->out->arena, r),
           r->name, r->name, r->name);
    }
}

/* combine (a, b) { op }: the fold as a lambda the pass's cells and its reduction call. */
static void emit_custom_fold(kctx *k, const spec_reduce *r)
{
    const char *t = elem_ctype(r->type);
    kp(k, "const auto pg_custom_fold = [&](const %s %s, const %s %s) -> %s {\n    return (%s)(\n",
       t, r->op_arg[0], t, r->op_arg[1], t, t);
    emit_body(k->out, &r->op, &k->u->opts, "");
    kp(k, "    );\n};\n");
}

static void emit_pass_start(kctx *k, const spec_reduce *r, const char *t)
{
    if (spec_reduce_is_arg(r)) {
        kp(k, "%s pg_acc = %s{%s, 0x7fffffffffffffffLL};\n", t, t,
           emit_identity(r->type, r->combine));
    } else if (r->combine == COMBINE_CUSTOM) {
        kp(k, "%s pg_acc = (%s)(\n", t, t);
        emit_body(k->out, &r->identity, &k->u->opts, "");
        kp(k, ");\n");
    } else {
        kp(k, "%s pg_acc = %s;\n", t, emit_identity(r->type, r->combine));
    }
}

/* The threads' results of a pass folded into each row's: a warp's lanes, a group of warps
 * or the block. */
static void emit_pass_combine(kctx *k, const spec_reduce *r, const row_map *m, const char *t)
{
    if (m->group == 1)
        kp(k, "pg_warp_rows_reduce(pg_rr_%s, ", r->name);
    else if (m->group)
        kp(k, "pg_group_rows_reduce<%d, %d, %d>(pg_rr_%s, (%s *)(pg_smem + %lld), %s, ",
           m->group, compute_threads(k), k->sc->producer_threads ? 2 : 0, r->name, t,
           k->sc->reduce_off, compute_tid(k));
    else
        kp(k, "pg_rows_reduce<%lld, %d, %d>(pg_rr_%s, (%s *)(pg_smem + %lld), %s, ", m->visits,
           compute_threads(k), k->sc->producer_threads ? 2 : 0, r->name, t, k->sc->reduce_off,
           compute_tid(k));
    sb_printf(k->out, "[&](%s pg_x, %s pg_y) -> %s { return ", t, t, t);
    emit_reduce_fold(k->out, r, "pg_x", "pg_y");
    sb_puts(k->out, "; });\n");
}

static void emit_reduce_pass(kctx *k, int n)
{
    const spec_reduce *r = &k->s->reduces[n];
    const char *t = reduce_ctype(k->out->arena, r);
    const row_map m = row_mapping(k);
    const bool custom = r->combine == COMBINE_CUSTOM;
    kp(k, "%s pg_rr_%s[%lld];\n", t, r->name, m.visits);
    if (custom) {
        kp(k, "{\n");
        k->ind += 4;
        emit_custom_fold(k, r);
    }
    emit_row_loop(k, &m);
    k->ind += 4;
    emit_row_results(k, n);
    emit_pass_start(k, r, t);
    emit_row_cells(k, print_fold, r);
    kp(k, "pg_rr_%s[pg_i] = pg_acc;\n", r->name);
    k->ind -= 4;
    kp(k, "}\n");
    emit_pass_combine(k, r, &m, t);
    if (custom) {
        k->ind -= 4;
        kp(k, "}\n");
    }
}

static void emit_rows(kctx *k)
{
    const row_map m = row_mapping(k);
    emit_tile_limits(k);
    for (int i = 0; i < k->s->nreduces; ++i)
        emit_reduce_pass(k, i);
    emit_row_loop(k, &m);
    k->ind += 4;
    emit_row_results(k, k->s->nreduces);
    emit_row_cells(k, print_compute_cell, NULL);
    k->ind -= 4;
    kp(k, "}\n");
}

static void emit_compute_body(kctx *k, bool borders)
{
    emit_staged_views(k, borders);
    if (k->s->compute_kind == BODY_ELEMENTWISE && k->s->nreduces)
        emit_rows(k);
    else if (k->s->compute_kind == BODY_ELEMENTWISE)
        emit_elementwise(k);
    else
        emit_body(k->out, &k->s->compute, &k->u->opts, "");
}

/* Whether every region with a border lies inside its array, halo included: the test of
 * the step's interior tiles, whose reads need no border. */
static void emit_interior_test(kctx *k)
{
    const spec *s = k->s;
    const char *sep = "";
    for (int i = 0; i < s->nstaged; ++i)
        for (int d = 0; d < s->stages[i].rank && spec_stage_border(&s->stages[i]); ++d) {
            const spec_stage *st = &s->stages[i];
            kp(k, "%s", sep);
            emit_affine(k->out, &st->origin[d]);
            kp(k, " >= 0 && ");
            emit_affine(k->out, &st->origin[d]);
            kp(k, " + %lld <= ", st->extent[d]);
            emit_extent(k->out, &s->arrays[st->array].dims[d], "");
            sep = "\n    && ";
        }
}

/* With a clamped or mirrored halo the compute is printed twice: for the tiles whose
 * regions lie inside the arrays, with plain views (the border's arithmetic measured at a
 * fifth of a 3x3 filter's time on the H100), and for the others, with the borders. */
void emit_print_compute(kctx *k, const ir_op *op)
{
    bool borders = false;
    for (int i = 0; i < k->s->nstaged; ++i)
        borders |= spec_stage_border(&k->s->stages[i]);
    emit_step_open(k, op);
    if (borders) {
        kp(k, "if (");
        emit_interior_test(k);
        kp(k, ") {\n");
        k->ind += 4;
        emit_compute_body(k, false);
        k->ind -= 4;
        kp(k, "} else {\n");
        k->ind += 4;
    }
    emit_compute_body(k, true);
    if (borders) {
        k->ind -= 4;
        kp(k, "}\n");
    }
    emit_step_close(k, op);
}

/* ------------------------------------------------------------------ sections */

/* Every lowering's claims alike: thread 0 publishes the item it fetched for the step and
 * fetches the next (pipert_device.cuh). */
static void print_claim(kctx *k, const ir_op *op)
{
    kp(k, "if (threadIdx.x == 0) {\n    pg_claim[(%s) %% %d] = pg_next;\n"
          "    pg_next = pg_claim_fetch<%d>(pg_counter, %s + 1);\n}\n",
       emit_step(k, op->step_off), k->sc->claim_ring, k->sc->claim_ahead,
       emit_step(k, op->step_off));
}

/* Whether the role being printed runs the operation (an implied barrier prints nothing). */
static bool printed(const kctx *k, const ir_op *op)
{
    return (k->role == ROLE_ALL || op->role == ROLE_ALL || op->role == k->role) && !op->implied;
}

static void emit_ops(kctx *k, const ir_section *sec)
{
    for (int i = 0; i < sec->nops; ++i) {
        const ir_op *op = &sec->ops[i];
        if (!printed(k, op))
            continue;
        op_printer print = op->kind == OP_CLAIM ? print_claim
                                                : mech_module_of(k->sc->mech)->print[op->kind];
        /* The planner only emits operations its mechanism prints; a hole here is a bug
         * that nvcc will point at. */
        if (!print) {
            kp(k, "#error \"pipegen: no %s printer for %s\"\n", ir_op_name(op->kind),
               mech_name(k->sc->mech));
            continue;
        }
        print(k, op);
    }
}

/* One trip of the loop. Where several of its operations address the tile of the trip's own
 * step, its origin and slot are computed once, at the top, for them all: the step is
 * live (the loop's test), and its claim, where the schedule claims, is the one that test
 * read. */
static void emit_loop_body(kctx *k, const ir_section *sec)
{
    int n = 0;
    for (int i = 0; i < sec->nops; ++i) {
        const ir_op *op = &sec->ops[i];
        n += printed(k, op) && !op->step_off
             && (op->kind == OP_COPY || op->kind == OP_COMPUTE || op->kind == OP_STORE
                 || op->kind == OP_ARRIVE_TX);
    }
    k->origin_hoisted = n > 1;
    if (k->origin_hoisted)
        emit_tile_origin(k, "pg_t");
    emit_ops(k, sec);
    k->origin_hoisted = false;
}

/* The loop over steps. With a prologue or epilogue body it is two loops, over the
 * block's work items and their steps, so that what the prologue declares is in scope for
 * the steps and the epilogue. */
static void emit_loop(kctx *k, const ir_section *sec)
{
    const spec *s = k->s;
    k->var = "pg_t";
    /* Producer warps run no bodies: only the compute threads do. A schedule that claims
     * its work items has no bodies (plan_claims). */
    if ((!s->has_prologue && !s->has_epilogue) || k->role == ROLE_PRODUCER) {
        kp(k, "for (int64_t pg_t = 0; %s; ++pg_t) {\n", emit_live(k, "pg_t"));
        k->ind += 4;
        emit_loop_body(k, sec);
        k->ind -= 4;
        kp(k, "}\n");
        return;
    }
    kp(k, "for (int64_t pg_w = 0; pg_w < %s; ++pg_w) {\n", items_name(s));
    k->ind += 4;
    kp(k, "const int64_t pg_step = pg_w * pg_ks;\n");
    emit_tile_origin(k, "pg_step");
    if (s->has_prologue)
        emit_body(k->out, &s->prologue, &k->u->opts, "");
    kp(k, "for (int64_t pg_t = pg_step; pg_t < pg_step + pg_ks; ++pg_t) {\n");
    k->ind += 4;
    emit_loop_body(k, sec);
    k->ind -= 4;
    kp(k, "}\n");
    if (s->has_epilogue)
        emit_body(k->out, &s->epilogue, &k->u->opts, "");
    k->ind -= 4;
    kp(k, "}\n");
}

static bool has_roles(const ir_section *sec)
{
    for (int i = 0; i < sec->nops; ++i)
        if (sec->ops[i].role != ROLE_ALL)
            return true;
    return false;
}

static void emit_one_section(kctx *k, const ir_section *sec);

/* The registers a role's warpgroups keep or take (sched.regs_*), set once, as the role's
 * first section begins (a consumers' take waits until the producers' keep has freed them). */
static void emit_rebalance(kctx *k, const ir_section *sec)
{
    const sched *sc = k->sc;
    if (!sc->regs_launch)
        return;
    for (const ir_section *before = sc->secs; before != sec; ++before)
        if (has_roles(before))
            return;   /* an earlier section's branches set them */
    if (k->role == ROLE_PRODUCER)
        kp(k, "pg_regs_keep<%d>();\n", sc->regs_producer);
    else
        kp(k, "pg_regs_take<%d>();\n", sc->regs_consumer);
}

/* A section whose operations belong to roles is printed once per role, in the branch of
 * the role's warps. */
static void emit_section(kctx *k, const ir_section *sec)
{
    if (!has_roles(sec)) {
        emit_one_section(k, sec);
        return;
    }
    kp(k, "if ((int)threadIdx.x < %d) {\n", k->sc->producer_threads);
    k->ind += 4;
    k->role = ROLE_PRODUCER;
    emit_rebalance(k, sec);
    emit_one_section(k, sec);
    k->ind -= 4;
    kp(k, "} else {\n");
    k->ind += 4;
    k->role = ROLE_CONSUMER;
    emit_rebalance(k, sec);
    emit_one_section(k, sec);
    k->ind -= 4;
    k->role = ROLE_ALL;
    kp(k, "}\n");
}

/* The frame's operations run in the kernel's scope; a prologue of one step is a block
 * (its step a constant), of several a loop. */
static void emit_one_section(kctx *k, const ir_section *sec)
{
    if (sec->kind == SEC_LOOP) {
        emit_loop(k, sec);
        return;
    }
    if (sec->kind == SEC_FRAME) {
        k->var = NULL;
        emit_ops(k, sec);
        return;
    }
    if (sec->kind == SEC_PROLOGUE && sec->count > 1) {
        k->var = "pg_p";
        kp(k, "for (int64_t pg_p = 0; pg_p < %d; ++pg_p) {\n", sec->count);
    } else {
        k->var = sec->kind == SEC_PROLOGUE ? NULL : "pg_trips";
        kp(k, "{\n");
    }
    k->ind += 4;
    emit_ops(k, sec);
    k->ind -= 4;
    kp(k, "}\n");
}

/* ------------------------------------------------------------------ accumulators */

const char *emit_accum_identity(const spec_accum *acc)
{
    return emit_identity(acc->type, acc->combine);
}

void emit_accum_fold(strbuf *out, const spec_accum *acc, const char *x, const char *y)
{
    emit_fold(out, acc->combine, x, y);
}

/* argmin and argmax fold their values as min and max do (their index: pg_arg_pick). */
const char *emit_identity(elem_type t, ast_combine combine)
{
    /* The floating types' infinities, by their bits: float, double, half, bfloat16. */
    static const char *const inf[2][4] = {
        {"__int_as_float(0x7f800000)", "__longlong_as_double(0x7ff0000000000000LL)",
         "__ushort_as_half((unsigned short)0x7c00)",
         "__ushort_as_bfloat16((unsigned short)0x7f80)"},
        {"__int_as_float(0xff800000)", "__longlong_as_double((long long)0xfff0000000000000ULL)",
         "__ushort_as_half((unsigned short)0xfc00)",
         "__ushort_as_bfloat16((unsigned short)0xff80)"},
    };
    static const char *const zero[4] = {"0.0f", "0.0", "__float2half(0.0f)",
                                        "__float2bfloat16(0.0f)"};
    const bool min = combine == COMBINE_MIN || combine == COMBINE_ARGMIN;
    if (ast_type_class(t) != TC_FLOAT)
        return combine == COMBINE_SUM ? "0" : min ? ast_type_max(t) : ast_type_min(t);
    const int f = t == TY_FLOAT ? 0 : t == TY_DOUBLE ? 1 : t == TY_HALF ? 2 : 3;
    return combine == COMBINE_SUM ? zero[f] : inf[!min][f];
}

void emit_fold(strbuf *out, ast_combine combine, const char *x, const char *y)
{
    switch (combine) {
    case COMBINE_SUM: sb_printf(out, "%s + %s", x, y); break;
    case COMBINE_MIN: case COMBINE_ARGMIN: sb_printf(out, "(%s < %s ? %s : %s)", y, x, y, x); break;
    case COMBINE_MAX: case COMBINE_ARGMAX: sb_printf(out, "(%s > %s ? %s : %s)", y, x, y, x); break;
    /* A reduction's own fold: the lambda emit_custom_fold declares where it is used. */
    case COMBINE_CUSTOM: sb_printf(out, "pg_custom_fold(%s, %s)", x, y); break;
    }
}

static void emit_fold_functor(strbuf *out, const spec_accum *acc)
{
    const char *t = elem_ctype(acc->type);
    sb_printf(out, "[](%s pg_x, %s pg_y) -> %s { return ", t, t, t);
    emit_accum_fold(out, acc, "pg_x", "pg_y");
    sb_puts(out, "; }");
}

/* The accumulators as the bodies see them: a scalar one a register of each thread; an
 * array one its block's bins in shared memory (the planner's accum_off), cleared before
 * any body runs, or by column its thread's registers pg_cols_NAME (the compute's loop
 * over the thread's columns names the one of its column NAME: emit_elementwise_columns). */
static void emit_accum_decls(kctx *k)
{
    const spec *s = k->s;
    bool bins = false;
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        const char *t = elem_ctype(acc->type);
        if (!acc->is_array) {
            kp(k, "%s %s = %s;\n", t, acc->name, emit_accum_identity(acc));
            continue;
        }
        if (k->sc->accum_regs[i]) {
            kp(k, "%s pg_cols_%s[%d];\n#pragma unroll\nfor (int pg_j = 0; pg_j < %d; ++pg_j)\n"
                  "    pg_cols_%s[pg_j] = %s;\n", t, acc->name, k->sc->accum_regs[i],
               k->sc->accum_regs[i], acc->name, emit_accum_identity(acc));
            continue;
        }
        /* half and bfloat16 fold min and max in float bins (there are no atomics of theirs) */
        const bool halfwide = acc->type == TY_HALF || acc->type == TY_BF16;
        if (acc->combine == COMBINE_SUM)
            kp(k, "const pg_acc_array<%s, %d, %d%s> %s{(pg_acc_word<%s>::type *)(pg_smem + "
                  "%lld)};\n", t, acc->extent, spec_accum_copies(acc, k->sc->threads),
               spec_accum_lanes(acc) ? ", true" : "", acc->name, t, k->sc->accum_off[i]);
        else
            kp(k, "const pg_acc_extreme<%s, %d, %s%s> %s{(%s *)(pg_smem + %lld), %s};\n", t,
               acc->extent, acc->combine == COMBINE_MAX ? "true" : "false",
               halfwide ? ", float" : "", acc->name,
               halfwide ? "float" : arena_printf(k->out->arena, "pg_acc_xword<%s>::type", t),
               k->sc->accum_off[i], emit_accum_identity(acc));
        kp(k, "%s.clear<%d>();\n", acc->name, k->sc->threads);
        bins = true;
    }
    if (bins)
        kp(k, "__syncthreads();\n");
}

/* Where accumulator i's partials start in the workspace, which holds parts of them (the
 * blocks of the kernel, or of the launch the combine kernel folds). */
static const char *accum_parts(arena *a, const spec *s, int i, const char *parts, bool read)
{
    const char *q = read ? "const " : "";
    return arena_printf(a, "((%s%s *)((%sunsigned char *)pg_args.workspace + (size_t)%s * %d))",
                        q, elem_ctype(s->accums[i].type), q, parts, 8 * spec_accum_slot(s, i));
}

/* Whether an array accumulator keeps bins in shared memory (one in registers does not). */
static bool has_shared_bins(const kctx *k)
{
    for (int i = 0; i < k->s->naccums; ++i)
        if (k->s->accums[i].is_array && !k->sc->accum_regs[i])
            return true;
    return false;
}

/* An accumulator by column: each computing thread writes its columns' registers as the
 * block's partial of them (a producer, whose pg_ctid is negative, none: pg_ctid plus a
 * multiple of the computing threads would name a consumer's column). */
static void emit_column_partials(kctx *k, int i, const char *part)
{
    const spec_accum *acc = &k->s->accums[i];
    const char *tid = compute_tid(k);
    kp(k, "#pragma unroll\nfor (int pg_j = 0; pg_j < %d; ++pg_j) {\n"
          "    const int pg_col = %s + pg_j * %d;\n    if (%spg_col < %d)\n"
          "        %s[(size_t)blockIdx.x * %d + pg_col] = pg_cols_%s[pg_j];\n}\n",
       k->sc->accum_regs[i], tid, compute_threads(k),
       k->sc->producer_threads ? "pg_ctid >= 0 && " : "", acc->extent, part, acc->extent,
       acc->name);
}

/* Each block folds its threads' accumulators in a fixed tree (an array one: its bins) and
 * writes them as its partial; the combine kernel folds the partials in a fixed order. */
static void emit_accum_partials(kctx *k)
{
    const spec *s = k->s;
    const int nt = k->sc->threads;
    if (has_shared_bins(k))
        kp(k, "__syncthreads();\n");
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        const char *t = elem_ctype(acc->type), *part = accum_parts(k->out->arena, s, i, "gridDim.x", false);
        if (acc->is_array && k->sc->accum_regs[i]) {
            emit_column_partials(k, i, part);
            continue;
        }
        if (acc->is_array) {
            kp(k, "%s.flush<%d>(%s + (size_t)blockIdx.x * %d);\n", acc->name, nt, part,
               acc->extent);
            continue;
        }
        kp(k, "{\n    __shared__ %s pg_red[%d];\n    const %s pg_r = pg_block_reduce<%d>(%s, "
              "pg_red, ", t, nt, t, nt, acc->name);
        emit_fold_functor(k->out, acc);
        kp(k, ");\n    if (threadIdx.x == 0)\n        %s[blockIdx.x] = pg_r;\n}\n", part);
    }
}

/* A scalar accumulator's partials, folded by one block (block 0 of the combine grid). */
static void emit_combine_scalar(strbuf *out, const spec *s, int i, const char *ind)
{
    enum { NT = 256 };
    const spec_accum *acc = &s->accums[i];
    const char *t = elem_ctype(acc->type);
    sb_printf(out, "%s{\n%s    const %s *pg_part = %s;\n", ind, ind, t,
              accum_parts(out->arena, s, i, "pg_parts", true));
    sb_printf(out, "%s    %s pg_acc = %s;\n%s    for (unsigned pg_i = threadIdx.x; pg_i < "
                   "pg_parts; pg_i += %d)\n%s        pg_acc = ", ind, t,
              emit_accum_identity(acc), ind, NT, ind);
    emit_accum_fold(out, acc, "pg_acc", "pg_part[pg_i]");
    sb_printf(out, ";\n%s    __shared__ %s pg_red[%d];\n%s    const %s pg_r = "
                   "pg_block_reduce<%d>(pg_acc, pg_red, ", ind, t, NT, ind, t, NT);
    emit_fold_functor(out, acc);
    sb_printf(out, ");\n%s    if (threadIdx.x == 0)\n%s        pg_args.%s[0] = pg_r;\n%s}\n",
              ind, ind, s->arrays[acc->into].name, ind);
}

/* The combine grid: one block, or where there are array accumulators, a block for each
 * 32 elements of the longest (pg_acc_combine). */
static int combine_blocks(const spec *s)
{
    int blocks = 1;
    for (int i = 0; i < s->naccums; ++i)
        if (s->accums[i].is_array && (s->accums[i].extent + 31) / 32 > blocks)
            blocks = (s->accums[i].extent + 31) / 32;
    return blocks;
}

void emit_combine_kernel(strbuf *out, const emit_unit *u)
{
    const spec *s = u->spec;
    enum { NT = 256 };
    const int blocks = combine_blocks(s);
    sb_printf(out, "__global__ void __launch_bounds__(%d) %s_combine(const struct %s_args "
                   "pg_args, unsigned pg_parts)\n{\n", NT, s->name, s->name);
    for (int i = 0; i < s->naccums; ++i) {
        const spec_accum *acc = &s->accums[i];
        if (!acc->is_array) {
            if (blocks > 1)
                sb_puts(out, "    if (blockIdx.x == 0)\n");
            emit_combine_scalar(out, s, i, blocks > 1 ? "        " : "    ");
            continue;
        }
        const char *t = elem_ctype(acc->type);
        const char *parts = accum_parts(out->arena, s, i, "pg_parts", true);
        if (acc->combine == COMBINE_SUM) {
            sb_printf(out, "    pg_acc_combine<%s, %d, %d>(%s, pg_parts, pg_args.%s);\n", t,
                      acc->extent, NT, parts, s->arrays[acc->into].name);
            continue;
        }
        sb_printf(out, "    pg_acc_combine_fold<%s, %d, %d>(%s, pg_parts, pg_args.%s, %s, ", t,
                  acc->extent, NT, parts, s->arrays[acc->into].name, emit_accum_identity(acc));
        emit_fold_functor(out, acc);
        sb_puts(out, ");\n");
    }
    sb_puts(out, "}\n\n");
    sb_printf(out, "static cudaError_t %s_combine_launch(const struct %s_args *pg_a, unsigned "
                   "pg_parts, cudaStream_t pg_stream)\n{\n"
                   "    %s_combine<<<%d, %d, 0, pg_stream>>>(*pg_a, pg_parts);\n"
                   "    return cudaGetLastError();\n}\n\n", s->name, s->name, s->name, blocks, NT);
}

/* ------------------------------------------------------------------ the kernel */

/* pg_ctid and pg_cnt, which the bodies may name (docs/language.md); the kernel's own
 * code says threadIdx.x and the counts (compute_tid, emit_copy_threads). */
static void emit_roles(kctx *k)
{
    int p = k->sc->producer_threads;
    if (p)
        kdecl(k, "pg_ctid", "const int pg_ctid = (int)threadIdx.x - %d;\n", p);
    else
        kdecl(k, "pg_ctid", "const int pg_ctid = threadIdx.x;\n");
    kdecl(k, "pg_cnt", "constexpr int pg_cnt = %d;\n", compute_threads(k));
}

void emit_kernel_name(strbuf *out, const sched *sc, int sm)
{
    sb_printf(out, "%s_sm%d", sc->spec->name, sm);
    if (sc->pack > 1)
        sb_printf(out, "_r%lld", sc->pack);
}

/* The kernel's frame around its sections. Its body compiles for architectures from lo up
 * to below hi (0: no bound): the launcher selects a variant only on devices it is the
 * highest variant for, so the others' cubins need not carry its code. */
void emit_kernel(strbuf *out, const emit_unit *u, const sched *sc, int sm, int lo, int hi)
{
    const spec *s = sc->spec;
    strbuf body;
    sb_init(&body, out->arena);
    kctx k = {&body, u, s, sc, "pg_t", 0, ROLE_ALL, sm, false, REGION_CHECKED};
    kp(&k, "template <int VEC>\n__global__ void __launch_bounds__(%d", sc->threads);
    if (sc->launch_blocks)
        kp(&k, ", %d", sc->launch_blocks);
    if (sc->cluster > 1)
        kp(&k, ") PG_CLUSTER_DIMS(%d", sc->cluster);
    /* The parameters are the host plan's: what the launcher passes, the kernel reads. */
    kp(&k, ") ");
    emit_kernel_name(&body, sc, sm);
    kp(&k, "(");
    /* A packed kernel takes the launcher parameters of the schedule it packs. */
    const int variant = host_variant_of(u->host, u->scheds,
                                        sc->packed_from ? sc->packed_from : sc);
    const char *sep = "";
    for (int i = 0; i < u->host->nparams; ++i) {
        const kernel_param *prm = &u->host->params[i];
        if (!host_param_of(prm, variant))
            continue;
        kp(&k, "%s%s%s %s", sep, prm->grid_constant ? "__grid_constant__ " : "", prm->ctype,
           prm->name);
        sep = ", ";
    }
    kp(&k, ")\n{\n");
    const bool guarded = lo || hi;
    if (guarded)
        kp(&k, "#if defined(__CUDA_ARCH__)");
    if (lo)
        kp(&k, " && __CUDA_ARCH__ >= %d0", lo);
    if (hi)
        kp(&k, " && __CUDA_ARCH__ < %d0", hi);
    if (guarded)
        kp(&k, "\n");
    k.ind = 4;
    emit_smem_base(&k);
    emit_bindings(&k);
    emit_work_counts(&k);
    emit_roles(&k);
    emit_stage_consts(&k);
    if (mech_module_of(sc->mech)->setup)
        mech_module_of(sc->mech)->setup(&k);
    emit_accum_decls(&k);
    for (int i = 0; i < sc->nsecs; ++i)
        emit_section(&k, &sc->secs[i]);
    emit_accum_partials(&k);
    k.ind = 0;
    kp(&k, guarded ? "#endif\n}\n\n" : "}\n\n");
    prune_decls(&body);
    sb_puts(out, body.data);
}
