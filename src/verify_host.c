/* verify_host: check the host plan (the launcher's steps) before it is printed.
 *
 * The launcher runs its steps once, in order, so the checks are about order and
 * coverage: what a step reads was made by an earlier one, and what the device reads was
 * checked before the launch. Every host step kind is capture-safe (none allocates or
 * synchronizes), so a plan made of them keeps the launcher graph-capture safe. */
#include "pipegen.h"

/* The position of the first step of a kind (with index, or any index when -1); nops
 * when there is none. */
static int first(const host_plan *hp, host_op_kind kind, int index)
{
    for (int i = 0; i < hp->nops; ++i)
        if (hp->ops[i].kind == kind && (index < 0 || hp->ops[i].index == index))
            return i;
    return hp->nops;
}

static int count(const host_plan *hp, host_op_kind kind)
{
    int n = 0;
    for (int i = 0; i < hp->nops; ++i)
        n += hp->ops[i].kind == kind;
    return n;
}

static bool disjoint_checked(const host_plan *hp, int x, int y, int before)
{
    for (int i = 0; i < before; ++i) {
        const host_op *op = &hp->ops[i];
        if (op->kind == HOP_CHECK_DISJOINT
            && ((op->index == x && op->other == y) || (op->index == y && op->other == x)))
            return true;
    }
    return false;
}

typedef struct hcheck {
    diag_ctx *d;
    const spec *s;
    const host_plan *hp;
    int launch;
    bool ok;
} hcheck;

static void hfail(hcheck *c, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void hfail(hcheck *c, const char *rule, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(c->d, c->s->loc, "[host] %s: %s", rule, msg);
    c->ok = false;
}

/* Every array checked before the work is counted (its sizes) and launched (its pointer);
 * every written array disjoint from every other one. */
static void check_arrays(hcheck *c)
{
    const spec *s = c->s;
    int tiles = first(c->hp, HOP_COUNT_TILES, -1);
    for (int i = 0; i < s->narrays; ++i) {
        if (first(c->hp, HOP_CHECK_ARRAY, i) >= (tiles < c->launch ? tiles : c->launch))
            hfail(c, "checks", "array '%s' is not checked before the work is counted and "
                  "launched", s->arrays[i].name);
        for (int j = 0; j < s->narrays && s->arrays[i].dir != DIR_IN; ++j)
            if (j != i && !disjoint_checked(c->hp, i, j, c->launch))
                hfail(c, "aliasing", "'%s' is written, but its overlap with '%s' is not "
                      "checked before the launch", s->arrays[i].name, s->arrays[j].name);
    }
}

/* The step that makes a kernel parameter, or nops: a generic step, or a module step's
 * local. */
static int maker_of(const host_plan *hp, const kernel_param *prm)
{
    static const host_op_kind made_by[HV__COUNT] = {[HV_ARGS] = HOP_CHECK_ARGS,
                                                    [HV_NTILES] = HOP_COUNT_TILES,
                                                    [HV_TILE_COUNTER] = HOP_TILE_COUNTER};
    if (prm->value != HV_STEP_LOCAL)
        return first(hp, made_by[prm->value], -1);
    for (int i = 0; i < hp->nops; ++i)
        if (hp->ops[i].kind == HOP_MODULE && hp->ops[i].step == prm->made_by
            && hp->ops[i].index == prm->index)
            return i;
    return hp->nops;
}

/* A module step stands where its module says: after the check of the array it reads,
 * after the generic steps of its `after` kinds, before those of its `before` kinds. */
static void check_module_step(hcheck *c, int i)
{
    const host_op *op = &c->hp->ops[i];
    if (op->reads >= 0 && first(c->hp, HOP_CHECK_ARRAY, op->reads) > i)
        hfail(c, "order", "the %s step reads '%s' before it is checked", op->step->name,
              c->s->arrays[op->reads].name);
    for (int k = 0; k < HOP__COUNT; ++k) {
        int at = first(c->hp, (host_op_kind)k, -1);
        if ((op->step->after >> k & 1) && !(at < i))
            hfail(c, "order", "the %s step must come after the %s step", op->step->name,
                  host_op_name((host_op_kind)k));
        if ((op->step->before >> k & 1) && at < i)
            hfail(c, "order", "the %s step must come before the %s step", op->step->name,
                  host_op_name((host_op_kind)k));
    }
}

/* What the steps read: the kernel's parameters, the variant and the work count. */
static void check_order(hcheck *c)
{
    const host_plan *hp = c->hp;
    for (int p = 0; p < hp->nparams; ++p)
        if (maker_of(hp, &hp->params[p]) >= c->launch)
            hfail(c, "params", "kernel parameter '%s' is passed before the step that makes "
                  "it", hp->params[p].name);
    int tiles = first(hp, HOP_COUNT_TILES, -1), empty = first(hp, HOP_RETURN_IF_EMPTY, -1);
    int width = first(hp, HOP_COPY_WIDTH, -1), select = first(hp, HOP_SELECT_VARIANT, -1);
    for (int i = 0; i < hp->nops; ++i)
        if (hp->ops[i].kind == HOP_MODULE)
            check_module_step(c, i);
    int grid = first(hp, HOP_GRID, -1);
    if (!(tiles < empty && empty < select))
        hfail(c, "order", "an empty launch must return after the work is counted and before "
              "a variant is prepared");
    if (!(width < select && select < grid && grid < c->launch))
        hfail(c, "prepare", "the variant must be chosen (after the copy width) and prepared "
              "before the grid is sized and the kernel launched");
    int counter = first(hp, HOP_TILE_COUNTER, -1);
    if (counter < hp->nops && (c->s->naccums || !(select < counter)))
        hfail(c, "prepare", "the tile counter, which no spec with accumulators has, must "
              "be zeroed for the selected variant");
}

static void check_follow_on(hcheck *c)
{
    const host_plan *hp = c->hp;
    bool accums = c->s->naccums > 0;
    int follow = first(hp, HOP_FOLLOW_ON, -1), ws = first(hp, HOP_CHECK_WORKSPACE, -1);
    if (accums != (count(hp, HOP_FOLLOW_ON) == 1) || (accums && follow < c->launch))
        hfail(c, "follow-on", "the accumulators are combined by one launch after the "
              "kernel's, and only where there are accumulators");
    if (accums && !(first(hp, HOP_GRID, -1) < ws && ws < c->launch))
        hfail(c, "follow-on", "the workspace must be checked against the grid before the "
              "launch");
}

/* ------------------------------------------------------------------ the chunk ring */

/* Where op k is in a list of n (its index); -1 when it is not there, -2 when it is twice. */
static int op_at(const chunk_op *ops, int n, chunk_op k)
{
    int at = -1;
    for (int i = 0; i < n; ++i)
        if (ops[i] == k)
            at = at == -1 ? i : -2;
    return at;
}

static int ring_at(const stream_ring *r, chunk_op k) { return op_at(r->ops, r->nops, k); }

/* One chunk in order: next, in, launch, (part-out,) out, done, each once; part-out, where
 * there are accumulators, after the launch whose results it copies. */
static void check_chunk_order(hcheck *c, const stream_ring *r)
{
    int next = ring_at(r, CH_NEXT), in = ring_at(r, CH_COPY_IN), run = ring_at(r, CH_LAUNCH);
    int out = ring_at(r, CH_COPY_OUT), done = ring_at(r, CH_DONE);
    int part = ring_at(r, CH_PART_OUT);
    bool accums = c->s->naccums > 0;
    if (next != 0 || done != r->nops - 1 || in < 0 || run < 0 || out < 0
        || (accums ? part < 0 : part != -1) || ring_at(r, CH_END) != -1
        || ring_at(r, CH_FOLD) != -1)
        hfail(c, "chunk-ops", "a chunk must take its slot, copy in, launch, %scopy out and "
              "close, each once", accums ? "copy its partials out, " : "");
    else if (!(in < run && run < out))
        hfail(c, "chunk-RAW", "on its stream a chunk's launch must follow its copy in, and its "
              "copy out its launch (it would read rows not yet there, or copy back rows not "
              "yet computed)");
    else if (accums && part < run)
        hfail(c, "chunk-RAW", "on its stream a chunk's partials must be copied out after its "
              "launch (the host would fold results not yet computed)");
}

/* After the chunks: the run's end (which waits for every stream) once, then, with
 * accumulators, the fold of the partials once: a partial copied out on a stream is in
 * host memory only when that stream is done. */
static void check_after(hcheck *c, const stream_ring *r)
{
    int end = op_at(r->after, r->nafter, CH_END), fold = op_at(r->after, r->nafter, CH_FOLD);
    bool accums = c->s->naccums > 0;
    if (end < 0 || (accums ? fold < 0 : fold != -1) || r->nafter != 1 + accums)
        hfail(c, "chunk-ops", "after the chunks the run must end once%s", accums ? " and the "
              "partials be folded once" : "");
    else if (accums && fold < end)
        hfail(c, "partials", "the partials are folded before the run's end waited for the "
              "streams: a chunk's partial may not be copied out yet");
}

/* Chunks sharing a slot's buffers must share its stream: stream order is all that keeps
 * chunk j from filling them before chunk i copied its results out (no events here).
 * Simulated for 1..6 slots and chunk counts around them. */
static void check_chunk_slots(hcheck *c, const stream_ring *r)
{
    for (int slots = 1; slots <= 6; ++slots) {
        int buffers = r->buffers_short && slots > 1 ? slots - 1 : slots;
        int counts[] = {0, 1, 2, slots - 1, slots, slots + 1, 2 * slots + 1, 3 * slots + 2};
        for (size_t n = 0; n < sizeof counts / sizeof counts[0]; ++n)
            for (int j = 0; j < counts[n]; ++j)
                for (int i = 0; i < j; ++i)
                    if (i % buffers == j % buffers && i % slots != j % slots) {
                        hfail(c, "chunk-WAR", "with %d slots, chunk %d fills the buffers of "
                              "chunk %d on another stream, before that chunk copied its "
                              "results out", slots, j, i);
                        return;
                    }
    }
}

bool verify_host(diag_ctx *d, const spec *s, const host_plan *hp)
{
    hcheck c = {d, s, hp, first(hp, HOP_LAUNCH, -1), true};
    if (count(hp, HOP_LAUNCH) != 1 || hp->nvariants < 1) {
        hfail(&c, "launch", "the launcher must launch one kernel of at least one variant");
        return false;
    }
    check_arrays(&c);
    check_order(&c);
    check_follow_on(&c);
    if (hp->ring) {
        check_chunk_order(&c, hp->ring);
        check_after(&c, hp->ring);
        check_chunk_slots(&c, hp->ring);
    }
    return c.ok;
}

static void drop_op(host_plan *hp, int i)
{
    for (int j = i + 1; j < hp->nops; ++j)
        hp->ops[j - 1] = hp->ops[j];
    hp->nops--;
}

/* Move step i to the place after step `to`. */
static void move_after(host_plan *hp, int i, int to)
{
    host_op op = hp->ops[i];
    drop_op(hp, i);
    to -= to > i;
    for (int j = hp->nops; j > to + 1; --j)
        hp->ops[j] = hp->ops[j - 1];
    hp->ops[to + 1] = op;
    hp->nops++;
}

bool verify_inject_host(host_plan *hp, fault_kind k)
{
    int launch = first(hp, HOP_LAUNCH, -1);
    switch (k) {
    case FAULT_DROP_ARRAY_CHECK: {
        int i = first(hp, HOP_CHECK_ARRAY, -1);
        if (i == hp->nops)
            return false;
        drop_op(hp, i);
        return true;
    }
    case FAULT_LATE_SELECT:
        move_after(hp, first(hp, HOP_SELECT_VARIANT, -1), launch);
        return true;
    case FAULT_DROP_PARAM:
        drop_op(hp, first(hp, HOP_COUNT_TILES, -1));
        return true;
    case FAULT_CHUNK_BUFFERS_SHORT:
        if (!hp->ring)
            return false;
        hp->ring->buffers_short = true;
        return true;
    case FAULT_CHUNK_COPY_OUT_EARLY: {
        if (!hp->ring)
            return false;
        int run = ring_at(hp->ring, CH_LAUNCH), out = ring_at(hp->ring, CH_COPY_OUT);
        hp->ring->ops[run] = CH_COPY_OUT;
        hp->ring->ops[out] = CH_LAUNCH;
        return true;
    }
    case FAULT_CHUNK_PART_OUT_EARLY: {
        int part = hp->ring ? ring_at(hp->ring, CH_PART_OUT) : -1;
        if (part < 0)
            return false;
        int run = ring_at(hp->ring, CH_LAUNCH);
        hp->ring->ops[run] = CH_PART_OUT;
        hp->ring->ops[part] = CH_LAUNCH;
        return true;
    }
    case FAULT_FOLD_BEFORE_END: {
        stream_ring *r = hp->ring;
        int fold = r ? op_at(r->after, r->nafter, CH_FOLD) : -1;
        if (fold < 0)
            return false;
        int end = op_at(r->after, r->nafter, CH_END);
        r->after[end] = CH_FOLD;
        r->after[fold] = CH_END;
        return true;
    }
    default:
        return false;
    }
}
