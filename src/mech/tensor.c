/* mech_tensor: tensor copies (cp.async.bulk.tensor, TMA with a CUtensorMap, sm_90) of each
 * staged input's region, completing on the slot's full mbarrier by transaction bytes.
 *
 * The schedule is bulk's (plan_bulk): one elected thread arms the slot's full barrier
 * with expect_tx, the step's copies are dealt to the copying threads (box by box), and
 * staged outputs go back by bulk stores; with producer warps the producers copy and each
 * of them arrives. What differs is the copy: one box copy, or a few, per region,
 * where bulk copies row by row and stores the edges. A box may start outside the array
 * (a halo, a tail tile): the hardware zero-fills that part and counts it in the
 * transaction, so the elected thread expects the whole region as copied, for every tile.
 *
 * Boxes are at most 256 elements in each dimension, their rows a multiple of 16 bytes,
 * and land in shared memory 128-byte aligned with their rows back to back (the layout
 * pads no staged input's rows: dense_rows). A region wider than that is tiled by equal
 * boxes, planned here (plan_box) and passed to both the kernel (pg_tbox) and the host
 * plan (ENCODE_TENSOR_MAP), so the bytes add up; a region no box tiles is refused (as not
 * implemented yet), as is one whose rows or origin steps are not 16-byte multiples.
 *
 * Swizzle (plan_swizzle: the spec's `swizzle`, or where an elementwise compute reads a
 * staged input down its columns): the map swizzles 16-byte chunks within lines of 128
 * bytes, and the boxes, a span of each row wide, land in column blocks of the slot (all
 * rows of the region for its first span bytes, then its next), every one 1024-byte
 * aligned; the views index the same layout (pg_sview2's SW). The VEC < 16 variant below
 * copies unswizzled rows and its views say so.
 *
 * Each staged input's map is a kernel parameter (const __grid_constant__ CUtensorMap),
 * encoded by the launcher over the whole array. Where a launch's copy width is under 16
 * bytes (a staged pointer or row pitch not 16-byte aligned, which a map cannot describe)
 * the map is not encoded and the kernel's VEC < 16 variant copies as bulk's does then:
 * ordinary loads and stores by every thread, no bytes expected. The IR's COPY says
 * `stores` for that variant, so the verifier proves the schedule for both. */
#include "mech.h"

#include <string.h>

/* The widest element a tensor map takes (CU_TENSOR_MAP_DATA_TYPE_UINT64): a 16-byte
 * element (int4, float4) would be encoded as two, and its boxes deliver half the bytes
 * the barrier expects. */
enum { MAP_ELEM_MAX = 8 };

/* The boxes that tile a region of `rank` extents `ext` (slowest first) of esz-byte
 * elements: in each dimension, from the fastest, the largest extent up to 256 that divides
 * the region's, whose steps keep boxes 128-byte aligned in the slot unless one box spans
 * the dimension, and whose rows are a multiple of 16 bytes; a dimension below one that is
 * not spanned whole takes boxes of 1. Swizzled by a span of `swizzle` bytes, a box is that
 * many bytes of each row, its rows back to back in their column block, and every box and
 * block starts a repeat of the pattern (8 rows of the span). False when no box fits. */
static bool tile_boxes(int rank, const long long *ext, long long esz, int swizzle, int *box)
{
    const int last = rank - 1;
    long long unit = swizzle ? swizzle : esz, align = swizzle ? 8LL * swizzle : 128;
    bool whole = true;
    if (swizzle) {
        if (ext[last] * esz % swizzle)
            return false;
        box[last] = swizzle / (int)esz;
    }
    for (int d = swizzle ? last - 1 : last; d >= 0; --d) {
        long long e = ext[d], b = !whole ? 1 : e < 256 ? e : 256;
        while (b > 0 && (e % b || (b != e && b * unit % align) || (d == last && b * esz % 16)))
            --b;
        if (b == 0)
            return false;
        box[d] = (int)b;
        whole = b == e;
        unit *= e;
    }
    return !swizzle || unit % align == 0;
}

/* The box of stage si over its region as copied, slowest dimension first, as its map's
 * (tile_boxes over plan_folded_extents). */
static bool plan_box(const spec *s, const copy_plan *cp, int si, int swizzle,
                     int box[AST_MAX_RANK])
{
    const spec_stage *st = &s->stages[si];
    long long ext[AST_MAX_RANK];
    const int rank = plan_folded_extents(cp, st->rank, ext);
    return tile_boxes(rank, ext, ast_type_size(s->arrays[st->array].type), swizzle, box);
}

/* Fold a staged input's rows where its boxes would take them in pieces (a region row
 * wider than a box's 256 elements): as rows of b elements, the width of those pieces,
 * the region's rows are one more dimension that the box spans whole, and one box copies
 * what took one per piece and row. colsum's 8 rows of 1024 floats a step: 1 box of 32 KiB
 * against 32 of 1 KiB, 1.001 of the same-shape reference against 0.679 (H200, in turns;
 * bulk, one copy a row, 0.956). Only where the fold is exact for every launch and tile:
 * the array's rows a literal multiple of b and the region's origin along them one of b
 * for every tile (no halo), so that no box reads across a row's end; the map then has a
 * dimension more, within the three a map here takes; not swizzled, nor multicast, nor
 * padded, in elements a map takes. */
static void plan_fold(const spec *s, copy_plan *cp, int si)
{
    const spec_stage *st = &s->stages[si];
    const ast_extent *n = &s->arrays[st->array].dims[st->rank - 1];
    int box[AST_MAX_RANK];
    if (st->is_output || st->rank >= AST_MAX_RANK || cp->swizzle || s->cluster > 1 || st->halo
        || n->name || cp->pitch != cp->row_bytes
        || ast_type_size(s->arrays[st->array].type) > MAP_ELEM_MAX
        || !plan_box(s, cp, si, 0, box))
        return;
    const long long b = box[st->rank - 1];
    if (b < cp->extent[st->rank - 1] && n->value % b == 0
        && plan_origin_alignment(s, &cp->origin[st->rank - 1]) % b == 0)
        cp->fold = (int)b;
}

/* Whether tensor folds stage si's rows as the spec writes its region (plan_fold over it
 * unwidened, with the spec's pad and swizzle): auto's rule asks before anything is
 * planned. */
bool mech_tensor_folds(const spec *s, int si)
{
    const spec_stage *st = &s->stages[si];
    copy_plan cp = {0};
    memcpy(cp.origin, st->origin, sizeof cp.origin);
    memcpy(cp.extent, st->extent, sizeof cp.extent);
    cp.row_bytes = st->extent[st->rank - 1] * ast_type_size(s->arrays[st->array].type);
    cp.pitch = cp.row_bytes + (st->pad > 0 ? st->pad : 0);
    cp.swizzle = st->swizzle > 0 ? st->swizzle : 0;
    plan_fold(s, &cp, si);
    return cp.fold > 0;
}

/* A staged output goes back by tensor stores where boxes tile it with its rows back to
 * back (16-byte rows and origin steps, no `pad`) in elements a map takes; otherwise by
 * bulk's row stores. */
static bool tensor_store(const spec *s, const copy_plan *cp, int si, int box[AST_MAX_RANK])
{
    return cp->vec == 16 && cp->pitch == cp->row_bytes
           && ast_type_size(s->arrays[s->stages[si].array].type) <= MAP_ELEM_MAX
           && plan_box(s, cp, si, 0, box);
}

static bool uses_var(const affine *a, const char *var)
{
    for (int i = 0; i < a->nterms; ++i)
        if (strcmp(a->var[i], var) == 0)
            return true;
    return false;
}

/* The stage's swizzle: the spec's, else the widest span that boxes fit where an
 * elementwise compute reads the staged input down its columns: its rows do not run along
 * the tile's fastest coordinate, the one consecutive threads step, so unswizzled the
 * rows a warp reads would share banks (transpose: 32 rows of 256 bytes in one bank). */
static int plan_swizzle(const spec *s, const copy_plan *cp, int si)
{
    const spec_stage *st = &s->stages[si];
    int box[AST_MAX_RANK];
    if (st->swizzle >= 0)
        return st->swizzle;
    if (s->compute_kind != BODY_ELEMENTWISE || st->rank < 2 || cp->vec < 16
        || uses_var(&st->origin[st->rank - 1], s->tile_at[s->tile_rank - 1]))
        return 0;
    for (int w = 128; w >= 32; w /= 2)
        if (plan_box(s, cp, si, w, box))
            return w;
    return 0;
}

/* Whether boxes at the region's swizzle tile it (mech_module.boxes_fit). */
static bool boxes_fit(const spec *s, const copy_plan *cp, int si)
{
    int box[AST_MAX_RANK];
    return plan_box(s, cp, si, cp->swizzle, box);
}

/* An input's boxes start on 32-byte sectors where the wider region keeps the boxes and
 * the swizzle that 16 bytes give it: a spec that planned at 16 is never refused, nor
 * loses its swizzle, for it. A box whose rows start 16 bytes into a 32-byte sector made
 * L2 serve 17.5% more sectors (ncu, jacobi2d's halo): 0.956 of the copy rate, 0.976-0.980
 * on 32 bytes (where the array's row pitch keeps 32 bytes too). */
enum { ROW_ALIGN = 32 };

static void lay_out(planner *p, int si, int nslots)
{
    copy_plan *cp = &p->sc->copy[si];
    plan_lay_out_stage(p, si, nslots, 16, plan_swizzle);
    if (p->s->stages[si].is_output)
        return;
    const copy_plan narrow = *cp;
    plan_lay_out_stage(p, si, nslots, ROW_ALIGN, plan_swizzle);
    if (cp->swizzle < narrow.swizzle || !boxes_fit(p->s, cp, si))
        *cp = narrow;
    plan_fold(p->s, cp, si);
}

/* A region's extents as copied, slowest first: "34 x 136". */
static const char *region_shape(arena *a, const copy_plan *cp, int rank)
{
    const char *shape = "";
    for (int d = 0; d < rank; ++d)
        shape = arena_printf(a, "%s%s%lld", shape, d ? " x " : "", cp->extent[d]);
    return shape;
}

/* Every staged input's region must be copied in 16-byte rows (its origin and row kept
 * 16-byte aligned: the launch's 16-byte variant is the one that copies by tensor) and be
 * tiled by boxes. Others could copy as bulk does below 16 bytes, every time; this version
 * refuses them rather than never using the tensor copies it was asked for. */
static bool check_region(planner *p, int si)
{
    const spec_stage *st = &p->s->stages[si];
    const copy_plan *cp = &p->sc->copy[si];
    const char *name = p->s->arrays[st->array].name;
    long long rows = plan_region_rows(cp, st->rank);
    const int esz = ast_type_size(p->s->arrays[st->array].type);
    if (esz > MAP_ELEM_MAX)
        diag_error(p->d, st->loc, "a staged input of %d-byte elements ('%s': %s) is not "
                   "implemented yet by lowering 'tensor': a tensor map's elements are 1, 2, "
                   "4 or 8 bytes (docs/lowerings.md lists what each lowering supports)", esz,
                   name, ast_type_name(p->s->arrays[st->array].type));
    else if (cp->pitch != cp->row_bytes)
        /* sema refuses `pad` under an explicit tensor; auto's quiet try ends here */
        diag_error(p->d, st->loc, "the tensor lowering writes a region's rows back to back "
                   "in shared memory, so it cannot pad them (pad %d): give pad 0 or no pad",
                   st->pad);
    else if (cp->vec < 16)
        diag_error(p->d, st->loc, "a region whose rows or origin steps are not a multiple of "
                   "16 bytes ('%s': rows of %lld bytes as copied) is not implemented yet by "
                   "lowering 'tensor' (docs/lowerings.md lists what each lowering supports)",
                   name, cp->row_bytes);
    else if (boxes_fit(p->s, cp, si))
        return true;
    else if (cp->swizzle)
        /* only a spec's span: the planner's own always fits */
        diag_error(p->d, st->hint_loc[HINT_SWIZZLE], "swizzle %d needs rows of a multiple of "
                   "%d bytes, in boxes of whole groups of 8 rows ('%s': %lld rows of %lld "
                   "bytes as copied): give another span, or swizzle 0", cp->swizzle,
                   cp->swizzle, name, rows, cp->row_bytes);
    else
        diag_error(p->d, st->loc, "a region that equal boxes of at most 256 elements a "
                   "dimension, each 128-byte aligned in shared memory, do not tile ('%s': %s "
                   "elements as copied) is not implemented yet by lowering 'tensor' "
                   "(docs/lowerings.md lists what each lowering supports)", name,
                   region_shape(p->a, cp, st->rank));
    return false;
}

static bool check_regions(planner *p)
{
    bool ok = true;
    for (int i = 0; i < p->s->nstaged; ++i)
        if (!p->s->stages[i].is_output && !check_region(p, i))
            ok = false;
    return ok;
}

/* ------------------------------------------------------------------ clusters */

/* The box of stage si's copies: of the share each block copies where it is multicast
 * (its slowest dimension split in equal shares, each landing where the whole region's
 * boxes would put it). */
static bool stage_box(const spec *s, const sched *sc, int si, int box[AST_MAX_RANK])
{
    copy_plan share = sc->copy[si];
    if (share.multicast)
        share.extent[0] /= sc->cluster;
    return plan_box(s, &share, si, share.swizzle, box);
}

static bool moves_with_first(const spec *s, const spec_stage *st)
{
    for (int d = 0; d < st->rank; ++d)
        if (uses_var(&st->origin[d], s->tile_at[0]))
            return true;
    return false;
}

/* Multicast every staged input (rank 2 or more) that does not move with the tile's first
 * coordinate, the one the cluster's blocks differ in: they all read the same region. */
static bool plan_multicast(planner *p)
{
    const spec *s = p->s;
    bool any = false;
    for (int i = 0; i < s->nstaged; ++i) {
        const spec_stage *st = &s->stages[i];
        copy_plan *cp = &p->sc->copy[i];
        int box[AST_MAX_RANK];
        if (st->is_output || st->rank < 2 || moves_with_first(s, st))
            continue;
        cp->multicast = true;
        if (cp->extent[0] % s->cluster || !stage_box(s, p->sc, i, box)) {
            diag_error(p->d, s->cluster_loc, "cluster %d cannot share '%s': the %lld %s of "
                       "its region do not split in %d equal shares that boxes tile, each "
                       "starting a 128-byte line (1024 bytes swizzled)", s->cluster,
                       s->arrays[st->array].name, cp->extent[0], st->rank == 2 ? "rows"
                       : "planes", s->cluster);
            return false;
        }
        any = true;
    }
    if (!any)
        diag_error(p->d, s->cluster_loc, "cluster %d shares no staged input: every one of "
                   "rank 2 or more moves with '%s', the tile coordinate its blocks differ in",
                   s->cluster, s->tile_at[0]);
    return any;
}

/* Clusters (for an arch-specific target, sm_90a: ptxas warns that multicast may be slow on
 * later plain targets): consumers release a slot to every block (one arrival per warp each), the
 * cluster syncs once its barriers are initialised (before any block copies into another
 * or arrives on its barriers) and last, before any block exits. */
static bool plan_cluster(planner *p)
{
    sched *sc = p->sc;
    if (p->s->cluster < 2 || !mech_multicasts(sc->mech, sc->sm, sc->specific))
        return true;
    sc->cluster = p->s->cluster;
    if (!plan_multicast(p))
        return false;
    sc->empty_arrivals = (sc->threads - sc->producer_threads) / 32 * sc->cluster;
    for (int i = 0; i < sc->nsecs; ++i)
        for (int j = 0; j < sc->secs[i].nops; ++j) {
            ir_op *op = &sc->secs[i].ops[j];
            if (op->kind == OP_RELEASE)
                op->per_warp = op->cluster = true;
            if (op->kind == OP_BARRIER && sc->secs[i].kind == SEC_FRAME)
                op->cluster = true;
        }
    plan_op(p, plan_section(p, SEC_EPILOGUE, 0), OP_BARRIER, 0)->cluster = true;
    return true;
}

static bool plan(planner *p)
{
    return plan_bulk(p) && check_regions(p) && plan_cluster(p);
}

/* ------------------------------------------------------------------ host */

/* The L2 promotion of a tensor map whose stage gives no `prefetch` (bytes), and
 * pipert_encode_tensor_map's when it is passed none. */
enum { DEFAULT_PROMOTION = 128 };

/* The operands of a tensor map's host step: its box, in elements, slowest first (as the
 * array's dimensions), its swizzle span (bytes, or 0), and the bytes L2 fetches per miss
 * of its loads: 64, 128 or 256 (the stage's `prefetch`). */
typedef struct tensor_map {
    int fold;                /* copy_plan.fold: a dimension more than the array's */
    int box[AST_MAX_RANK];
    int swizzle;
    int promotion;
} tensor_map;

/* The stage's CUtensorMap over its whole array (dimensions and pitches fastest first), with
 * the planned box; only where the launch's copy width is 16 bytes (every staged pointer
 * and row pitch 16-byte aligned, as a tensor map needs) and the selected kernel is one
 * that copies by it, else zeroed and unused. */
static void print_map(hctx *h, const host_op *op)
{
    const tensor_map *map = op->data;
    const spec_array *arr = &h->s->arrays[h->s->stages[op->index].array];
    const int rank = arr->rank + (map->fold > 0);
    sb_printf(h->out, "    CUtensorMap pg_tmap_%s;\n    {\n        const uint64_t pg_dim[] = {",
              arr->name);
    if (map->fold)
        sb_printf(h->out, "%d, %lld", map->fold, arr->dims[arr->rank - 1].value / map->fold);
    for (int d = arr->rank - 1 - (map->fold > 0); d >= 0; --d) {
        sb_puts(h->out, d < arr->rank - 1 ? ", (uint64_t)" : "(uint64_t)");
        emit_extent(h->out, &arr->dims[d], "pg_a->");
    }
    sb_puts(h->out, "};\n");
    sb_puts(h->out, "        const uint32_t pg_box[] = {");
    for (int d = rank - 1; d >= 0; --d)
        sb_printf(h->out, "%d%s", map->box[d], d ? ", " : "};\n");
    sb_printf(h->out, "        PIPERT_TRY(pipert_encode_tensor_map(&pg_tmap_%s, pg_a->%s, %d, "
                      "pg_dim, pg_box, %d, pg_vec == 16",
              arr->name, arr->name, rank, ast_type_size(arr->type));
    if (op->variants)
        sb_printf(h->out, " && (0x%xu >> pg_variant & 1)", op->variants);
    if (map->swizzle || map->promotion != DEFAULT_PROMOTION)
        sb_printf(h->out, ", %d", map->swizzle);
    if (map->promotion != DEFAULT_PROMOTION)
        sb_printf(h->out, ", %d", map->promotion);
    sb_puts(h->out, "));\n    }\n");
}

/* "u box=34x136": the stage's array and its box, slowest dimension first. */
static void dump_map(FILE *out, const spec *s, const host_op *op)
{
    const tensor_map *map = op->data;
    const spec_array *arr = &s->arrays[s->stages[op->index].array];
    fprintf(out, " %s box=", arr->name);
    for (int d = 0; d < arr->rank + (map->fold > 0); ++d)
        fprintf(out, "%s%d", d ? "x" : "", map->box[d]);
    if (map->fold)
        fprintf(out, " fold=%d", map->fold);
    if (map->swizzle)
        fprintf(out, " swizzle=%d", map->swizzle);
    if (map->promotion != DEFAULT_PROMOTION)
        fprintf(out, " l2-promotion=%d", map->promotion);
}

/* The CUtensorMap of a staged array (index: its stage), encoded from the array's checked
 * pointer and extents where the copy width allows, before the launch that passes it. */
static const host_step encode_map = {
    .name = "encode-tensor-map", .print = print_map, .dump = dump_map,
    .after = 1u << HOP_COPY_WIDTH, .before = 1u << HOP_LAUNCH,
};

/* A map per staged input, and per staged output stored by tensor stores, encoded before
 * the launch that passes it (once, for whichever variants are tensor's: their boxes are
 * the same, planned from the same layout). */
static void plan_host_maps(host_planner *h, const sched *sc)
{
    for (int i = 0; i < h->s->nstaged; ++i) {
        int box[AST_MAX_RANK];
        bool out = h->s->stages[i].is_output;
        if (out && !tensor_store(h->s, &sc->copy[i], i, box))
            continue;
        kernel_param *prm = plan_host_param(
            h, "const CUtensorMap",
            arena_printf(h->a, "pg_tmap_%s", h->s->arrays[h->s->stages[i].array].name),
            HV_STEP_LOCAL);
        prm->made_by = &encode_map;
        prm->index = i;
        prm->grid_constant = true;
        host_op *op = plan_host_step(h, &encode_map, i);
        if (!op)
            continue;
        tensor_map *map = arena_alloc(h->a, sizeof *map);
        op->data = map;
        op->reads = h->s->stages[i].array;
        map->swizzle = sc->copy[i].swizzle;
        /* an output's map only stores: its stage's prefetch is ignored (-Whints) */
        map->promotion = !out && h->s->stages[i].prefetch ? h->s->stages[i].prefetch
                                                          : DEFAULT_PROMOTION;
        map->fold = sc->copy[i].fold;
        stage_box(h->s, sc, i, map->box);
    }
}

/* Clusters of N blocks: one per group of N tiles along the first dimension (the other
 * dimensions' tiles times the groups), or as many as fit at once on a persistent grid;
 * a forced grid is kept to whole clusters. */
static void print_cluster_grid(hctx *h, const host_op *op)
{
    const spec *s = h->s;
    const char *ind = op->variants ? "        " : "    ";
    if (op->variants)
        sb_printf(h->out, "    if (0x%xu >> pg_variant & 1) {\n", op->variants);
    sb_printf(h->out, "%sconst int64_t pg_tiles0 = pipert_div_up(", ind);
    emit_extent(h->out, &s->arrays[s->tile_array].dims[0], "pg_a->");
    sb_printf(h->out, ", %lld);\n", s->tile[0]);
    sb_printf(h->out, "%sPIPERT_TRY(pipert_cluster_grid(pg_k, %d, pg_ntiles / pg_tiles0 * "
              "pipert_div_up(pg_tiles0, %d), %d, &pg_grid));\n", ind, op->index, op->index,
              h->u->scheds[0]->grid == GRID_PERSISTENT);
    sb_printf(h->out, "%sif (pg_opts && pg_opts->grid_blocks)\n%s    pg_grid = pg_opts->"
              "grid_blocks < %d ? %d : pg_opts->grid_blocks / %d * %d;\n", ind, ind,
              op->index, op->index, op->index, op->index);
    if (op->variants)
        sb_puts(h->out, "    }\n");
}

static void dump_cluster_grid(FILE *out, const spec *s, const host_op *op)
{
    (void)s;
    fprintf(out, " %d", op->index);
}

/* The grid of the variants whose kernel runs in clusters of `index` blocks
 * (__cluster_dims__): sized anew after the grid, before anything reads it. */
static const host_step cluster_grid = {
    .name = "cluster-grid", .print = print_cluster_grid, .dump = dump_cluster_grid,
    .after = 1u << HOP_GRID, .before = 1u << HOP_CHECK_WORKSPACE | 1u << HOP_LAUNCH,
};

static void plan_host_grid(host_planner *h, const sched *sc)
{
    if (sc->cluster > 1)
        plan_host_step(h, &cluster_grid, sc->cluster);
}

/* ------------------------------------------------------------------ printing */

/* "&pg_tmap_NAME, pg_tbox<...>{}": stage si's map and its box (rank entries, slowest
 * first), as the runtime's region copies and stores take them. */
static void print_map_box(kctx *k, int si, const int *box, int swizzle, int multicast)
{
    const spec_stage *st = &k->s->stages[si];
    const int rank = st->rank + (k->sc->copy[si].fold > 0);
    int b[AST_MAX_RANK] = {1, 1, 1};
    memcpy(b + AST_MAX_RANK - rank, box, rank * sizeof *box);
    kp(k, "&pg_tmap_%s, pg_tbox<%d, %d, %d, %d, %d", k->s->arrays[st->array].name, rank,
       ast_type_size(k->s->arrays[st->array].type), b[0], b[1], b[2]);
    if (multicast > 1)
        kp(k, ", %d, %d>{}", swizzle, multicast);
    else
        kp(k, swizzle ? ", %d>{}" : ">{}", swizzle);
}

/* The stage's map and box, then bulk's barrier and L2 policy. */
static void copy_args(kctx *k, const spec_stage *st, const char *name)
{
    int si = (int)(st - k->s->stages), box[AST_MAX_RANK];
    const copy_plan *cp = &k->sc->copy[si];
    stage_box(k->s, k->sc, si, box);
    print_map_box(k, si, box, cp->swizzle, cp->multicast ? k->sc->cluster : 1);
    kp(k, ", ");
    emit_bulk_copy_args(k, st, name);
}

static void print_copy(kctx *k, const ir_op *op)
{
    emit_copy_region_calls(k, op, "pg_tensor_region", copy_args);
}

/* Staged outputs by tensor stores where they can (tensor_store), else by bulk's. */
static void print_store(kctx *k, const ir_op *op)
{
    emit_step_open(k, op);
    for (int i = 0; i < k->s->nstaged; ++i) {
        int box[AST_MAX_RANK];
        if (!k->s->stages[i].is_output || (op->stage >= 0 && op->stage != i))
            continue;
        if (tensor_store(k->s, &k->sc->copy[i], i, box)) {
            emit_store_call(k, i, "pg_tensor_store_region");
            kp(k, ", ");
            print_map_box(k, i, box, 0, 1);
        } else {
            emit_store_call(k, i, "pg_bulk_store_region");
        }
        kp(k, ");\n");
    }
    emit_step_close(k, op);
}

/* Every box lands whole, the part outside the array zero-filled and counted: the bytes
 * are the regions as copied (P x R x ROWBYTES each, what pg_tensor_region's boxes tile),
 * the same for every tile, so they are printed as a number. That number is the IR's
 * ARRIVE_TX bytes where the regions as copied are the spec's; a region widened to whole
 * boxes (jacobi2d's 32-byte rows) delivers, and so expects, its widened bytes. Below
 * 16-byte copies (VEC) every thread stores instead and nothing is expected. */
static const char *tensor_expect(kctx *k, const ir_op *op, long long fault)
{
    long long boxes = 0;
    for (int i = 0; i < k->s->nstaged; ++i) {
        const copy_plan *cp = &k->sc->copy[i];
        if (!k->s->stages[i].is_output && (op->stage < 0 || op->stage == i) && cp->vec == 16)
            boxes += plan_region_rows(cp, k->s->stages[i].rank) * cp->row_bytes;
    }
    if (!boxes)
        return arena_printf(k->out->arena, "%lld", fault);
    return arena_printf(k->out->arena, "VEC == 16 ? %lld : %lld", boxes + fault, fault);
}

static void print_arrive_tx(kctx *k, const ir_op *op)
{
    emit_bulk_arrive_tx(k, op, tensor_expect);
}

const mech_module mech_tensor_module = {
    .plan = plan,
    .print = {MECH_BULK_PRINTERS, [OP_COPY] = print_copy, [OP_ARRIVE_TX] = print_arrive_tx,
              [OP_STORE] = print_store},
    .setup = emit_mbar_setup,
    .header = "pipert_tensor.cuh",
    .plan_grid = plan_host_grid,
    .plan_host = plan_host_maps,
    .roles = true,
    .multicast = true,
    .l2_policy = true,
    /* .L2::cache_hint (a tensor copy has no cache operator), the map's L2 promotion
     * (`prefetch`), and the boxes' swizzle */
    .hints = (1u << HINT_EVICT) | (1u << HINT_PREFETCH) | (1u << HINT_SWIZZLE),
    .dense_rows = true,
    .whole_boxes = true,
    .layout = lay_out,
};
