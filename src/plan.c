/* plan: turn a checked spec into the schedule IR for one mechanism and architecture.
 *
 * The plan fixes the ring (slots), the shared-memory layout, how each staged region is
 * copied (copy width by alignment) and the list of operations per section. Each mechanism
 * plans its operations in its own module (mech_NAME.c) with the helpers here; what is
 * common (layout, copy widths, the limits of this version) is planned once for all. */
#include "pipegen.h"

#include <string.h>

/* ------------------------------------------------------------------ IR building */

ir_section *plan_section(planner *p, ir_section_kind kind, int count)
{
    sched *sc = p->sc;
    int cap = sc->nsecs;
    sc->secs = arena_grow(p->a, sc->secs, &cap, sc->nsecs + 1, sizeof *sc->secs);
    ir_section *sec = &sc->secs[sc->nsecs++];
    *sec = (ir_section){.kind = kind, .count = count};
    return sec;
}

ir_op *plan_op(planner *p, ir_section *sec, ir_op_kind kind, int step_off)
{
    sec->ops = arena_grow(p->a, sec->ops, &sec->cap, sec->nops + 1, sizeof *sec->ops);
    ir_op *op = &sec->ops[sec->nops++];
    *op = (ir_op){.kind = kind, .role = ROLE_ALL, .step_off = step_off, .stage = -1};
    return op;
}

ir_op *plan_copy(planner *p, ir_section *sec, int step_off)
{
    ir_op *op = plan_op(p, sec, OP_COPY, step_off);
    op->guarded = true;
    return op;
}

ir_op *plan_wait(planner *p, ir_section *sec, int n)
{
    ir_op *op = plan_op(p, sec, OP_WAIT, 0);
    op->n = n;
    return op;
}

/* ------------------------------------------------------------------ common planning */

/* Greatest common divisor, for the alignment of region origins. */
static long long gcd(long long a, long long b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        long long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The step (in elements) by which a region variable moves: a tile origin moves by the
 * tile extent of its dimension, the step variable by `by`. */
static long long var_unit(const spec *s, const char *var)
{
    for (int d = 0; d < s->tile_rank; ++d)
        if (strcmp(s->tile_at[d], var) == 0)
            return s->tile[d];
    return s->step_by;
}

/* The widest copy (16, 8, 4, 2, 1 bytes) that every origin and the region's row keep
 * aligned, given a base pointer aligned to 16. */
static int plan_vec(const spec *s, const spec_stage *st)
{
    int esz = ast_type_size(s->arrays[st->array].type);
    int last = st->rank - 1;
    long long g = st->extent[last] * esz;
    const affine *o = &st->origin[last];
    if (o->c)
        g = gcd(g, o->c * esz);
    for (int i = 0; i < o->nterms; ++i)
        g = gcd(g, o->coef[i] * var_unit(s, o->var[i]) * esz);
    int vec = 16;
    while (vec > 1 && g % vec)
        vec /= 2;
    return vec;
}

static bool sorry(planner *p, srcloc at, const char *what)
{
    diag_error(p->d, at, "%s is not implemented yet by the %s lowering (docs/mechanisms.md "
               "lists what each lowering supports)", what, mech_name(p->sc->mech));
    return false;
}

/* What this version of the planner handles for every mechanism. */
static bool check_supported(planner *p)
{
    const spec *s = p->s;
    if (s->tile_rank != 1)
        return sorry(p, s->loc, "a tile of rank 2 or 3");
    if (s->has_steps)
        return sorry(p, s->loc, "an inner 'steps' loop");
    if (s->march)
        return sorry(p, s->loc, "march mode");
    if (s->compute_kind != BODY_ELEMENTWISE)
        return sorry(p, s->loc, "'compute step'");
    if (s->has_prologue || s->has_epilogue)
        return sorry(p, s->loc, "a prologue or epilogue body");
    if (s->producer_warps)
        return sorry(p, s->loc, "producer warps");
    for (int i = 0; i < s->nstages; ++i) {
        const spec_stage *st = &s->stages[i];
        if (st->is_output)
            return sorry(p, st->loc, "a staged output");
        if (st->halo)
            return sorry(p, st->loc, "a halo");
        if (st->origin[0].nterms != 1 || st->origin[0].coef[0] != 1 || st->origin[0].c
            || st->extent[0] != s->tile[0])
            return sorry(p, st->loc, "a region other than the tile's own");
    }
    return true;
}

void plan_layout(planner *p, int nslots)
{
    sched *sc = p->sc;
    const spec *s = p->s;
    long long off = 0;
    sc->nslots = nslots;
    for (int i = 0; i < s->nstages; ++i) {
        sc->stage_off[i] = off;
        off += (s->stages[i].bytes + 127) / 128 * 128 * nslots;
        sc->copy[i].vec = plan_vec(s, &s->stages[i]);
        sc->copy[i].zfill_tail = sc->mech != MECH_SYNC;
    }
    sc->slot_bytes = nslots ? off / nslots : 0;
    sc->smem_bytes = off;
}

mech plan_auto_mech(const spec *s, int sm)
{
    (void)s;
    return sm >= 80 ? MECH_CP_ASYNC : MECH_SYNC;
}

sched *plan_schedule(arena *a, diag_ctx *d, const spec *s, mech m, int sm)
{
    if (m == MECH_AUTO)
        m = plan_auto_mech(s, sm);
    sched *sc = arena_alloc(a, sizeof *sc);
    *sc = (sched){.spec = s, .mech = m, .sm = sm, .threads = s->threads, .grid = s->grid};
    planner p = {a, d, s, sc};
    const mech_module *mod = mech_module_of(m);
    if (!mod) {
        diag_error(d, s->mech == m ? s->mech_loc : s->loc, "the %s lowering is not "
                   "implemented yet (pipegen --list-lowerings)", mech_name(m));
        return NULL;
    }
    if (mech_min_sm(m) > sm) {
        diag_error(d, s->mech == m ? s->mech_loc : s->loc, "the %s lowering needs sm_%d or "
                   "newer, but sm_%d is a target", mech_name(m), mech_min_sm(m), sm);
        return NULL;
    }
    if (!check_supported(&p) || !mod->plan(&p))
        return NULL;
    if (sc->smem_bytes > sema_smem_limit(sm)) {
        diag_error(d, s->loc, "the %s schedule needs %lld bytes of shared memory per block; "
                   "sm_%d has %lld", mech_name(m), sc->smem_bytes, sm, sema_smem_limit(sm));
        return NULL;
    }
    return sc;
}

/* ------------------------------------------------------------------ printing */

static const char *const op_names[OP__COUNT] = {
    [OP_COPY] = "copy", [OP_COMMIT] = "commit", [OP_WAIT] = "wait", [OP_ACQUIRE] = "acquire",
    [OP_RELEASE] = "release", [OP_ARRIVE_TX] = "arrive_tx", [OP_WAIT_PARITY] = "wait_parity",
    [OP_FENCE] = "fence", [OP_BARRIER] = "barrier", [OP_COMPUTE] = "compute",
    [OP_STORE] = "store", [OP_ARRIVE] = "arrive",
};

const char *ir_op_name(ir_op_kind k) { return op_names[k]; }

void ir_op_print(strbuf *sb, const ir_op *op, const char *var)
{
    sb_puts(sb, op_names[op->kind]);
    if (op->kind == OP_WAIT) {
        sb_printf(sb, " %d", op->n);
        return;
    }
    if (op->kind == OP_BARRIER || op->kind == OP_FENCE)
        return;
    if (op->step_off)
        sb_printf(sb, " step=%s%+d", var, op->step_off);
    else
        sb_printf(sb, " step=%s", var);
    if (op->kind == OP_ARRIVE_TX)
        sb_printf(sb, " bytes=%lld", op->bytes);
    if (op->guarded)
        sb_puts(sb, " if<trips");
}

static const char *section_var(ir_section_kind k)
{
    return k == SEC_PROLOGUE ? "p" : k == SEC_LOOP ? "t" : "trips";
}

void ir_dump(FILE *out, const sched *sc)
{
    arena *a = arena_new();
    strbuf sb;
    sb_init(&sb, a);
    sb_printf(&sb, "schedule %s mech=%s sm_%d slots=%d smem=%lld threads=%d grid=%s\n",
              sc->spec->name, mech_name(sc->mech), sc->sm, sc->nslots, sc->smem_bytes,
              sc->threads, sc->grid == GRID_PERSISTENT ? "persistent" : "per_tile");
    for (int i = 0; i < sc->nsecs; ++i) {
        const ir_section *sec = &sc->secs[i];
        if (sec->kind == SEC_PROLOGUE)
            sb_printf(&sb, "prologue p in [0,%d):\n", sec->count);
        else
            sb_puts(&sb, sec->kind == SEC_LOOP ? "loop t in [0,trips):\n" : "epilogue:\n");
        for (int j = 0; j < sec->nops; ++j) {
            sb_puts(&sb, "  ");
            ir_op_print(&sb, &sec->ops[j], section_var(sec->kind));
            sb_puts(&sb, "\n");
        }
    }
    fputs(sb.data, out);
    arena_free(a);
}
