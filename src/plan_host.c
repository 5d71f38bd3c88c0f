/* plan_host: the host plan of a unit, the launcher's steps in order (pipegen.h).
 *
 * The checks come first and return an error code before anything is enqueued; the work
 * items are counted from sizes already checked; the kernel variant is chosen and prepared
 * before the grid is sized from its occupancy; the launch passes the kernel parameters,
 * then the follow-on launch folds the accumulators. Mechanism modules add their own steps
 * and parameters through their plan_host hook. */
#include "mech/mech.h"

#include <string.h>

static const char *const host_op_names[HOP__COUNT] = {
    [HOP_CHECK_ARGS] = "check-args", [HOP_CHECK_SIZE] = "check-size",
    [HOP_CHECK_ARRAY] = "check-array", [HOP_CHECK_DISJOINT] = "check-disjoint",
    [HOP_COUNT_TILES] = "count-tiles", [HOP_RETURN_IF_EMPTY] = "return-if-empty",
    [HOP_COPY_WIDTH] = "copy-width", [HOP_SELECT_VARIANT] = "select-variant",
    [HOP_GRID] = "grid", [HOP_CHECK_WORKSPACE] = "check-workspace",
    [HOP_TILE_COUNTER] = "tile-counter", [HOP_MODULE] = "module", [HOP_LAUNCH] = "launch",
    [HOP_FOLLOW_ON] = "follow-on",
};

const char *host_op_name(host_op_kind k) { return host_op_names[k]; }

host_op *plan_host_op(host_planner *h, host_op_kind kind, int index)
{
    host_plan *hp = h->hp;
    hp->ops = arena_grow(h->a, hp->ops, &hp->cap, hp->nops + 1, sizeof *hp->ops);
    host_op *op = &hp->ops[hp->nops++];
    *op = (host_op){.kind = kind, .index = index, .other = -1};
    return op;
}

host_op *plan_host_step(host_planner *h, const host_step *step, int index)
{
    for (int i = 0; i < h->hp->nops; ++i) {
        host_op *op = &h->hp->ops[i];
        if (op->kind == HOP_MODULE && op->step == step && op->index == index) {
            op->variants |= 1u << h->variant;
            return NULL;
        }
    }
    host_op *op = plan_host_op(h, HOP_MODULE, index);
    op->step = step;
    op->reads = -1;
    op->variants = 1u << h->variant;
    return op;
}

static bool array_has_size(const spec_array *arr, const char *size)
{
    for (int d = 0; d < arr->rank; ++d)
        if (arr->dims[d].name && strcmp(arr->dims[d].name, size) == 0)
            return true;
    return false;
}

/* Sizes no array extent covers are checked on their own. */
static bool size_in_arrays(const spec *s, const char *size)
{
    for (int i = 0; i < s->narrays; ++i)
        if (array_has_size(&s->arrays[i], size))
            return true;
    return false;
}

static void plan_checks(host_planner *h)
{
    const spec *s = h->s;
    plan_host_op(h, HOP_CHECK_ARGS, -1);
    /* A size no array checks, or one a tile spans whole up to a bound, first. */
    for (int i = 0; i < s->nsizes; ++i)
        if (!size_in_arrays(s, s->sizes[i]) || spec_size_bound(s, s->sizes[i]))
            plan_host_op(h, HOP_CHECK_SIZE, i);
    for (int i = 0; i < s->narrays; ++i)
        plan_host_op(h, HOP_CHECK_ARRAY, i);
    /* Every written array against every other one, each pair once. */
    for (int i = 0; i < s->narrays; ++i) {
        if (s->arrays[i].dir == DIR_IN)
            continue;
        for (int j = 0; j < s->narrays; ++j)
            if (j != i && (j > i || s->arrays[j].dir == DIR_IN))
                plan_host_op(h, HOP_CHECK_DISJOINT, i)->other = j;
    }
}

/* The same IR and layout print the same kernel (printers read nothing else of a schedule
 * but its architecture, which only names the kernel and bounds its shared memory). */
static bool same_ops(const ir_section *a, const ir_section *b)
{
    if (a->kind != b->kind || a->count != b->count || a->nops != b->nops)
        return false;
    for (int i = 0; i < a->nops; ++i) {
        const ir_op *x = &a->ops[i], *y = &b->ops[i];
        if (x->kind != y->kind || x->role != y->role || x->step_off != y->step_off
            || x->stage != y->stage || x->n != y->n || x->bytes != y->bytes || x->bar != y->bar
            || x->fence != y->fence || x->guarded != y->guarded || x->on_copies != y->on_copies
            || x->all_arrive != y->all_arrive || x->stores != y->stores
            || x->parity_flip != y->parity_flip || x->implied != y->implied
            || x->per_warp != y->per_warp || x->cluster != y->cluster)
            return false;
    }
    return true;
}

static bool same_copy(const copy_plan *a, const copy_plan *b, int rank)
{
    if (a->vec != b->vec || a->row_bytes != b->row_bytes || a->pitch != b->pitch
        || a->slot_bytes != b->slot_bytes || a->nslots != b->nslots || a->off != b->off
        || a->swizzle != b->swizzle || a->multicast != b->multicast)
        return false;
    for (int d = 0; d < rank; ++d) {
        const affine *x = &a->origin[d], *y = &b->origin[d];
        if (a->extent[d] != b->extent[d] || x->c != y->c || x->nterms != y->nterms)
            return false;
        for (int t = 0; t < x->nterms; ++t)
            if (x->coef[t] != y->coef[t] || strcmp(x->var[t], y->var[t]))
                return false;
    }
    return true;
}

static bool same_kernel(const sched *a, const sched *b)
{
    if (a->mech != b->mech || a->nslots != b->nslots || a->track != b->track
        || a->full_arrivals != b->full_arrivals || a->empty_arrivals != b->empty_arrivals
        || a->producer_threads != b->producer_threads || a->smem_bytes != b->smem_bytes
        || a->smem_align != b->smem_align || a->cluster != b->cluster
        || a->threads != b->threads || a->grid != b->grid || a->nsecs != b->nsecs
        || a->claim_ring != b->claim_ring || a->claim_ahead != b->claim_ahead
        || a->regs_launch != b->regs_launch || a->regs_producer != b->regs_producer
        || a->regs_consumer != b->regs_consumer || a->launch_blocks != b->launch_blocks
        || a->walk_rows != b->walk_rows)
        return false;
    for (int i = 0; i < a->spec->nstaged; ++i)
        if (!same_copy(&a->copy[i], &b->copy[i], a->spec->stages[i].rank))
            return false;
    for (int i = 0; i < a->nsecs; ++i)
        if (!same_ops(&a->secs[i], &b->secs[i]))
            return false;
    if (a->npacks != b->npacks)
        return false;
    for (int i = 0; i < a->npacks; ++i)
        if (!same_kernel(a->packs[i], b->packs[i]))
            return false;
    return true;
}

/* The variants, highest architecture first; a schedule whose kernels (its own and its
 * packed rows', which a wisdom record may give lowerings of their own) a lower one prints
 * is left to it. */
static void plan_variants(host_plan *hp, sched *const *scheds, int n)
{
    for (int i = n - 1; i >= 0; --i) {
        bool twin = false;
        for (int j = 0; j < i && !twin; ++j)
            twin = same_kernel(scheds[i], scheds[j]);
        if (!twin)
            hp->variant[hp->nvariants++] = i;
    }
}

kernel_param *plan_host_param(host_planner *h, const char *ctype, const char *name,
                              host_value v)
{
    unsigned variants = h->variant < 0 ? 0 : 1u << h->variant;
    for (int i = 0; i < h->hp->nparams; ++i)
        if (strcmp(h->hp->params[i].name, name) == 0) {
            h->hp->params[i].variants |= variants;
            return &h->hp->params[i];
        }
    kernel_param *p = &h->hp->params[h->hp->nparams++];
    *p = (kernel_param){.ctype = ctype, .name = name, .value = v, .index = -1,
                        .variants = variants};
    return p;
}

static const char *const chunk_op_names[CH__COUNT] = {
    [CH_NEXT] = "next", [CH_COPY_IN] = "copy-in", [CH_LAUNCH] = "launch",
    [CH_PART_OUT] = "part-out", [CH_COPY_OUT] = "copy-out", [CH_DONE] = "done",
    [CH_END] = "end", [CH_FOLD] = "fold",
};

const char *chunk_op_name(chunk_op k) { return chunk_op_names[k]; }

/* Each chunk in, computed and out on its own stream: stream order keeps a slot's buffers
 * from being refilled before its results are out. With accumulators each chunk's launch
 * reduces its own rows and its results go to its own element of the host partials, on
 * its stream after the launch; the partials are folded once every stream is done, in
 * chunk order: the same bits for the same plan, whichever stream finishes first. */
static stream_ring *plan_ring(arena *a, const spec *s)
{
    static const chunk_op ops[] = {CH_NEXT, CH_COPY_IN, CH_LAUNCH, CH_PART_OUT, CH_COPY_OUT,
                                   CH_DONE};
    stream_ring *r = arena_alloc(a, sizeof *r);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
        if (ops[i] != CH_PART_OUT || s->naccums)
            r->ops[r->nops++] = ops[i];
    r->after[r->nafter++] = CH_END;
    if (s->naccums)
        r->after[r->nafter++] = CH_FOLD;
    r->halo = s->stream_halo;
    r->align = s->tile[0] * (s->march ? s->march : 1);
    return r;
}

/* The steps each variant's lowering module adds (its plan_grid or plan_host hook). */
static void plan_module_steps(host_planner *h, sched *const *scheds, bool grid)
{
    for (h->variant = 0; h->variant < h->hp->nvariants; ++h->variant) {
        const sched *sc = scheds[h->hp->variant[h->variant]];
        const mech_module *mod = mech_module_of(sc->mech);
        void (*hook)(host_planner *, const sched *) = grid ? mod->plan_grid : mod->plan_host;
        if (hook)
            hook(h, sc);
    }
    h->variant = -1;
}

bool host_param_of(const kernel_param *p, int v) { return !p->variants || (p->variants >> v & 1); }

int host_variant_of(const host_plan *hp, sched *const *scheds, const sched *sc)
{
    for (int v = 0; v < hp->nvariants; ++v)
        if (scheds[hp->variant[v]] == sc)
            return v;
    return -1;
}

bool plan_has_workspace(const spec *s)
{
    return s->naccums || s->grid == GRID_PERSISTENT;
}

/* The tile counter of the variants that claim their work items. */
static void plan_tile_counter(host_planner *h, sched *const *scheds)
{
    unsigned variants = 0;
    for (int v = 0; v < h->hp->nvariants; ++v)
        if (scheds[h->hp->variant[v]]->claim_ring)
            variants |= 1u << v;
    if (!variants)
        return;
    plan_host_op(h, HOP_TILE_COUNTER, -1)->variants = variants;
    plan_host_param(h, "unsigned long long *", "pg_counter", HV_TILE_COUNTER);
}

host_plan *plan_host(arena *a, const spec *s, sched *const *scheds, int nscheds)
{
    host_plan *hp = arena_alloc(a, sizeof *hp);
    host_planner h = {a, s, hp, -1};
    plan_checks(&h);
    plan_host_op(&h, HOP_COUNT_TILES, -1);
    plan_host_op(&h, HOP_RETURN_IF_EMPTY, -1);
    plan_host_op(&h, HOP_COPY_WIDTH, -1);
    plan_variants(hp, scheds, nscheds);
    plan_host_op(&h, HOP_SELECT_VARIANT, -1);
    plan_host_op(&h, HOP_GRID, -1);
    plan_module_steps(&h, scheds, true);
    if (s->naccums)
        plan_host_op(&h, HOP_CHECK_WORKSPACE, -1);
    plan_host_param(&h, arena_printf(a, "const struct %s_args", s->name), "pg_args", HV_ARGS);
    plan_host_param(&h, "const int64_t", "pg_ntiles", HV_NTILES);
    plan_tile_counter(&h, scheds);
    plan_module_steps(&h, scheds, false);
    const unsigned every = (1u << hp->nvariants) - 1;
    for (int i = 0; i < hp->nops; ++i)
        if (hp->ops[i].variants == every)
            hp->ops[i].variants = 0;
    for (int i = 0; i < hp->nparams; ++i)
        if (hp->params[i].variants == every)
            hp->params[i].variants = 0;
    plan_host_op(&h, HOP_LAUNCH, -1);
    if (s->naccums)
        plan_host_op(&h, HOP_FOLLOW_ON, -1);
    if (s->host_stream)
        hp->ring = plan_ring(a, s);
    return hp;
}

static const char *const value_names[HV__COUNT] = {[HV_ARGS] = "args", [HV_NTILES] = "ntiles",
                                                   [HV_TILE_COUNTER] = "tile-counter"};

/* " pg_tmap_a=encode-tensor-map[sm_90]": a parameter, what makes it, and the variants
 * that take it where not every one does. */
static void dump_param(FILE *out, const host_plan *hp, sched *const *scheds,
                       const kernel_param *prm)
{
    fprintf(out, " %s=%s", prm->name, prm->made_by ? prm->made_by->name
                                                   : value_names[prm->value]);
    for (int v = 0, n = 0; v < hp->nvariants && prm->variants; ++v)
        if (host_param_of(prm, v))
            fprintf(out, "%ssm_%d", n++ ? "," : "[", scheds[hp->variant[v]]->sm);
    if (prm->variants)
        fputs("]", out);
}

void host_dump(FILE *out, const host_plan *hp, sched *const *scheds)
{
    const spec *s = scheds[0]->spec;
    fprintf(out, "host launcher %s_launch_ex:\n", s->name);
    for (int i = 0; i < hp->nops; ++i) {
        const host_op *op = &hp->ops[i];
        fprintf(out, "  %s", op->kind == HOP_MODULE ? op->step->name : host_op_name(op->kind));
        if (op->kind == HOP_CHECK_SIZE && spec_size_bound(s, s->sizes[op->index]))
            fprintf(out, " %s <= %lld", s->sizes[op->index],
                    spec_size_bound(s, s->sizes[op->index]));
        else if (op->kind == HOP_CHECK_SIZE)
            fprintf(out, " %s", s->sizes[op->index]);
        else if (op->kind == HOP_CHECK_ARRAY || op->kind == HOP_CHECK_DISJOINT)
            fprintf(out, " %s", s->arrays[op->index].name);
        else if (op->kind == HOP_MODULE)
            op->step->dump(out, s, op);
        if (op->kind == HOP_CHECK_DISJOINT)
            fprintf(out, " %s", s->arrays[op->other].name);
        for (int v = 0; v < hp->nvariants && op->variants; ++v)
            if (op->variants & (1u << v))
                fprintf(out, " for-sm_%d", scheds[hp->variant[v]]->sm);
        if (op->kind == HOP_SELECT_VARIANT)
            for (int v = 0; v < hp->nvariants; ++v)
                fprintf(out, " sm_%d", scheds[hp->variant[v]]->sm);
        if (op->kind == HOP_LAUNCH)
            for (int p = 0; p < hp->nparams; ++p)
            dump_param(out, hp, scheds, &hp->params[p]);
        fputs("\n", out);
    }
    if (!hp->ring)
        return;
    fprintf(out, "host stream %s_stream: halo %d, chunks a multiple of %lld rows; chunk i on "
            "slot i %% slots%s:", s->name, hp->ring->halo, hp->ring->align,
            hp->ring->buffers_short ? " (buffers i % (slots - 1))" : "");
    for (int i = 0; i < hp->ring->nops; ++i)
        fprintf(out, " %s", chunk_op_name(hp->ring->ops[i]));
    fputs("; then", out);
    for (int i = 0; i < hp->ring->nafter; ++i)
        fprintf(out, " %s", chunk_op_name(hp->ring->after[i]));
    fputs("\n", out);
}
