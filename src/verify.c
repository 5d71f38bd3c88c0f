/* verify: prove a schedule by simulating its IR (docs/verifier.md).
 *
 * The verifier runs the very sections and operations the emitter prints, with the
 * semantics written in the plan.c banner of pipegen.h, for the trip counts 0, 1, 2, S-1, S,
 * S+1, 2S-1, 2S, 2S+1, and 3S+1 and 4S+2 for a block's several persistent waves, and
 * reports each broken rule once, at the first staged array.
 *
 * The model (docs/verifier.md says more):
 * - Agents: one per role (ROLE_ALL when the schedule has no roles; producer and consumer
 *   when it has), each represented by two threads that run the role's operations alike.
 *   Two, because data copied by one thread and read by another needs a barrier that one
 *   thread alone would never need; all threads of a role being alike, two stand for all.
 * - Happens-before: vector clocks over those threads. A block barrier joins every clock, a
 *   named (role) barrier the role's, a barrier phase joins the clocks of its arrivals and
 *   deliveries and the waiter that sees the phase complete acquires them.
 * - Async completion is adversarial: a copy completes as late as allowed, i.e. when a
 *   wait_group covers its group, or when a waiter needs the barrier phase it feeds (and
 *   then transaction bytes arrive only as far as that phase asks). A read not covered by a
 *   wait or a phase thus finds the copy in flight.
 * - Interleaving: each agent runs until it blocks, in turn; the producer-first and the
 *   consumer-first orders are both run. RAW and WAR are decided on clocks, not on the order
 *   the simulation happened to take, so one order proves them for all.
 * - The sections run once per block: the loop's trips are all the block's steps, over all
 *   its work items (persistent waves included), so slots, groups and parities carry on
 *   from one work item to the next. Long trip counts stand for several waves.
 */
#include "pipegen.h"

#include <string.h>

/* ------------------------------------------------------------------ fault names */

static const char *const fault_names[FAULT__COUNT] = {
    [FAULT_NONE] = "none", [FAULT_DROP_WAIT] = "drop-wait", [FAULT_WAIT_PLUS_ONE] = "wait-plus-one",
    [FAULT_DROP_COMMIT] = "drop-commit", [FAULT_FLIP_PARITY] = "flip-parity",
    [FAULT_EXPECT_TX_SHORT] = "expect-tx-short", [FAULT_EXPECT_TX_LONG] = "expect-tx-long",
    [FAULT_DROP_FENCE] = "drop-fence", [FAULT_ONE_SLOT_SHORT] = "one-slot-short",
    [FAULT_DROP_RELEASE] = "drop-release", [FAULT_DROP_ARRIVE] = "drop-arrive",
    [FAULT_EARLY_RELEASE] = "early-release", [FAULT_LOCAL_RELEASE] = "local-release",
    [FAULT_CLUSTER_COUNT_SHORT] = "cluster-count-short",
    [FAULT_CLAIM_RING_SHORT] = "claim-ring-short", [FAULT_REGS_OVER] = "regs-over",
    [FAULT_ACCUM_REGS_SHORT] = "accum-regs-short", [FAULT_BINS_ON_RING] = "bins-on-ring",
    [FAULT_DROP_ARRAY_CHECK] = "drop-array-check",
    [FAULT_LATE_SELECT] = "late-select", [FAULT_DROP_PARAM] = "drop-param-source",
    [FAULT_CHUNK_BUFFERS_SHORT] = "chunk-buffers-short",
    [FAULT_CHUNK_COPY_OUT_EARLY] = "copy-out-early",
    [FAULT_CHUNK_PART_OUT_EARLY] = "part-out-early", [FAULT_FOLD_BEFORE_END] = "fold-early",
};

fault_kind verify_fault_from_name(const char *name)
{
    for (int k = 0; k < FAULT__COUNT; ++k)
        if (strcmp(fault_names[k], name) == 0)
            return (fault_kind)k;
    return FAULT__COUNT;
}

const char *verify_fault_name(fault_kind k) { return fault_names[k]; }

/* ------------------------------------------------------------------ the state */

enum {
    VERIFY_THREADS = 4,      /* two agents of two threads */
    VERIFY_MAX_STAGES = 16,  /* sched.copy has 16 entries */
};

typedef enum vrule {
    R_IR, R_RAW, R_WAR, R_PARITY, R_ARRIVALS, R_EXPECT_TX, R_FENCE, R_INIT, R_DEADLOCK,
    R_DRAIN, R_REGISTERS, R_ACCUM, R__COUNT
} vrule;

static const char *const rule_names[R__COUNT] = {
    [R_IR] = "IR", [R_RAW] = "RAW", [R_WAR] = "WAR", [R_PARITY] = "parity",
    [R_ARRIVALS] = "arrivals", [R_EXPECT_TX] = "expect_tx", [R_FENCE] = "fence",
    [R_INIT] = "init", [R_DEADLOCK] = "deadlock", [R_DRAIN] = "drain",
    [R_REGISTERS] = "registers", [R_ACCUM] = "accum",
};

typedef struct vclock {
    unsigned c[VERIFY_THREADS];
} vclock;

/* REC_EDGE: a thread's ordinary stores of what a transaction copy cannot move. */
typedef enum rec_kind { REC_COPY, REC_WRITE, REC_STORE, REC_EDGE } rec_kind;

/* One thread's share of one copy (or compute write, or async store read) of one cell. */
typedef struct rec {
    rec_kind kind;
    int thread;
    int cell;
    long long step;
    int grp;                 /* the issuing thread's commit group; -1: not in a group */
    int bar;                 /* transaction copy: the barrier its bytes complete; -1 */
    bool complete, fenced;
    long long bytes, left;   /* transaction copy: its bytes, those not delivered yet */
    vclock issued;           /* the issuer's clock when issued */
    vclock done;             /* once complete: what a reader must have seen */
    vclock fence;            /* compute write: the clock of the proxy fence after it */
} rec;

/* A slot's region of one stage: which step's data it holds and who read it. */
typedef struct cell {
    long long step;                      /* -1: nothing yet */
    int parts[VERIFY_THREADS];           /* the records that wrote it, one per thread */
    int nparts;
    unsigned read_at[VERIFY_THREADS];    /* each thread's clock at its last read; 0: none */
    long long read_step[VERIFY_THREADS]; /* the step it last read; -1: none */
    int store_rec[VERIFY_THREADS];       /* output cell: its last async store read; -1 */
} cell;

/* An mbarrier: a phase completes when its arrivals reach count and its bytes arrived. */
typedef struct mbar {
    int count, pending, arrived;
    long long tx;            /* bytes expected and not yet delivered, in this phase */
    long long expected;      /* bytes expected in this phase */
    long long completed;     /* phases completed */
    vclock acc;              /* what this phase's arrivals and deliveries release */
    vclock last;             /* what the completed phases released */
} mbar;

/* An arrival or delivery that happens when the hardware gets to it. */
typedef struct event {
    int bar, thread, arrivals;
    int rec;                 /* >= 0: the transaction copy it delivers; -1: an arrival */
    int rec_hi;              /* arrival on_copies: after the thread's copies below this */
    long long step;          /* the step of the operation that made it */
    vclock at;
    bool done;
} event;

typedef struct vthread {
    vclock vc;
    int committed;           /* commit groups closed */
    int last_wait;           /* n of its last wait_group; -1: none yet */
} vthread;

typedef struct agent {
    ir_role role;
    int nthreads;            /* threads of the role in the block */
    int th;                  /* its first thread (it has two) */
    int sec, iter, op;       /* program counter */
    int tested;              /* the loop trip whose test (its claimed item) it has read */
    bool done, at_barrier;
    int wait_bar;            /* blocked on this barrier, waiting for ... */
    int wait_parity;
    long long wait_step;
} agent;

/* What has been reported for one schedule (one diagnostic per rule). */
typedef struct vreport {
    diag_ctx *d;
    const sched *sc;
    srcloc loc;
    unsigned reported;
    bool broken;
} vreport;

/* An entry of the claim ring: the step whose work item it holds, and who read it. */
typedef struct claim {
    long long step;                      /* -1: nothing yet */
    int thread;                          /* the claiming thread */
    unsigned at;                         /* its clock at the claim */
    unsigned read_at[VERIFY_THREADS];    /* each thread's clock at its last read; 0: none */
} claim;

typedef struct sim {
    const sched *sc;
    vreport *rep;
    arena *a;
    int S, nst, nthr, nagents;
    bool tx;                 /* copies complete by transaction bytes on full barriers */
    agent ag[2];
    vthread th[VERIFY_THREADS];
    cell *cells;             /* [slot * nst + stage] */
    claim *claims;           /* [step % sched.claim_ring] */
    mbar *bars;              /* [set * S + slot] */
    rec *recs;
    int nrecs, caprecs, first_open;
    event *evs;
    int nevs, capevs;
    int trips;               /* the block's steps */
    int init_thread;
    unsigned init_clock;     /* the init thread's clock at INIT; 0: not yet */
    unsigned init_fence;     /* the init thread's clock at its first fence after INIT; 0: none */
    unsigned readers[VERIFY_MAX_STAGES];  /* threads that read each input stage */
    unsigned storers[VERIFY_MAX_STAGES];  /* threads that store each output stage */
    bool failed;
    phase_step *trace;
    int ntrace;
} sim;

/* ------------------------------------------------------------------ helpers */

static void vc_join(vclock *a, const vclock *b)
{
    for (int i = 0; i < VERIFY_THREADS; ++i)
        if (b->c[i] > a->c[i])
            a->c[i] = b->c[i];
}

static bool vc_leq(const vclock *a, const vclock *b)
{
    for (int i = 0; i < VERIFY_THREADS; ++i)
        if (a->c[i] > b->c[i])
            return false;
    return true;
}

static bool uses_roles(const sched *sc) { return sc->producer_threads > 0; }

static const char *role_name(ir_role r)
{
    return r == ROLE_PRODUCER ? "the producer" : r == ROLE_CONSUMER ? "the consumer"
                                                                     : "every thread";
}

static const char *set_name(int set) { return set == BAR_EMPTY ? "empty" : "full"; }

static int slot_of(const sim *s, long long gs) { return (int)(gs % s->S); }

/* The slot stage i of step gs uses, as the emitter addresses it: the ring's slot, or slot 0
 * of a stage the plan gave a single slot (staged outputs). */
static int stage_slot(const sim *s, int i, long long gs)
{
    return s->sc->copy[i].nslots == 1 ? 0 : slot_of(s, gs);
}

/* Is step gs one the block runs (so that its data must be read)? */
static bool step_live(const sim *s, long long gs) { return gs >= 0 && gs < s->trips; }

static bool stage_selected(const ir_op *op, int i) { return op->stage < 0 || op->stage == i; }

static bool is_output(const sim *s, int i) { return s->sc->spec->stages[i].is_output; }

/* Report rule r once per schedule; the run that found it stops here. */
static void vfail(sim *s, vrule r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void vfail(sim *s, vrule r, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = true;
    vreport *rep = s->rep;
    rep->broken = true;
    if (!rep->d || (rep->reported & (1u << r)))
        return;
    rep->reported |= 1u << r;
    strbuf sb;
    sb_init(&sb, s->a);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&sb, fmt, ap);
    va_end(ap);
    sb_printf(&sb, " (trips %d)", s->trips);
    diag_error(rep->d, rep->loc, "[%s] %s: %s", mech_name(rep->sc->mech), rule_names[r],
               sb.data);
}

/* Errors found before any simulation: of the IR's structure (R_IR), or its numbers. */
static void vfail_pre(vreport *rep, vrule r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void vfail_pre(vreport *rep, vrule r, const char *fmt, ...)
{
    rep->broken = true;
    if (!rep->d || (rep->reported & (1u << r)))
        return;
    rep->reported |= 1u << r;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(rep->d, rep->loc, "[%s] %s: %s", mech_name(rep->sc->mech), rule_names[r], msg);
}

static int new_rec(sim *s, rec_kind k, int t, int cell, long long gs)
{
    s->recs = arena_grow(s->a, s->recs, &s->caprecs, s->nrecs + 1, sizeof *s->recs);
    rec *r = &s->recs[s->nrecs];
    *r = (rec){.kind = k, .thread = t, .cell = cell, .step = gs, .grp = -1, .bar = -1,
               .issued = s->th[t].vc};
    return s->nrecs++;
}

static event *new_event(sim *s, int bar, int t)
{
    s->evs = arena_grow(s->a, s->evs, &s->capevs, s->nevs + 1, sizeof *s->evs);
    event *e = &s->evs[s->nevs++];
    *e = (event){.bar = bar, .thread = t, .rec = -1, .at = s->th[t].vc};
    return e;
}

static void rec_complete(sim *s, rec *r, const vclock *done)
{
    r->complete = true;
    r->done = *done;
    while (s->first_open < s->nrecs && s->recs[s->first_open].complete)
        s->first_open++;
}

/* The phase trace's record of step gs (NULL when not tracing or out of its range). */
static phase_step *trace_of(sim *s, long long gs)
{
    return s->trace && gs >= 0 && gs < s->ntrace ? &s->trace[gs] : NULL;
}

/* ------------------------------------------------------------------ barriers */

static int bar_index(const sim *s, int set, int slot) { return set * s->S + slot; }

/* Check that thread t may use the barriers: their initialisation (INIT, by the init
 * thread) happened and is visible to t through a block barrier, and, when the async proxy
 * will use them (transaction copies), was fenced before that barrier. */
static bool bar_ready(sim *s, const agent *a, int t, bool async_proxy, long long gs)
{
    int it = s->init_thread;
    const vclock *v = &s->th[t].vc;
    if (!s->init_clock || (t != it && v->c[it] < s->init_clock)) {
        vfail(s, R_INIT, "%s uses the barriers of slot %d at step %lld before their "
              "initialisation is visible to it (no block barrier after mbarrier.init)",
              role_name(a->role), slot_of(s, gs), gs);
        return false;
    }
    if (async_proxy && (!s->init_fence || (t != it && v->c[it] < s->init_fence))) {
        vfail(s, R_FENCE, "the async copy of step %lld by %s uses the full barrier of slot %d "
              "before a fence makes its initialisation visible to the async proxy (a fence "
              "after mbarrier.init, then a block barrier)", gs, role_name(a->role),
              slot_of(s, gs));
        return false;
    }
    return true;
}

/* Bytes of the transaction copies in flight to barrier b, and whether one is partial. */
static long long tx_in_flight(const sim *s, int b, const rec **partial)
{
    long long sum = 0;
    *partial = NULL;
    for (int i = 0; i < s->nevs; ++i) {
        const event *e = &s->evs[i];
        if (e->done || e->bar != b || e->rec < 0)
            continue;
        const rec *r = &s->recs[e->rec];
        sum += r->bytes;
        if (r->left < r->bytes && !*partial)
            *partial = r;
    }
    return sum;
}

static void bar_try_complete(sim *s, int b)
{
    mbar *B = &s->bars[b];
    if (B->pending || B->tx)
        return;
    const rec *partial;
    long long issued = tx_in_flight(s, b, &partial);
    if (partial) {
        vfail(s, R_EXPECT_TX, "phase %lld of the full barrier of slot %d completes when %lld "
              "of the %lld bytes of step %lld's copy arrived (expect_tx %lld; the copies of "
              "the phase deliver %lld)", B->completed, b % s->S, partial->bytes - partial->left,
              partial->bytes, partial->step, B->expected,
              B->expected + partial->left + (issued - partial->bytes));
        return;
    }
    phase_step *ts = b < s->S ? trace_of(s, B->completed * s->S + b) : NULL;
    if (ts)
        ts->bytes = B->expected;
    B->completed++;
    vc_join(&B->last, &B->acc);
    B->acc = (vclock){{0}};
    B->pending = B->count;
    B->arrived = 0;
    B->expected = 0;
}

static void bar_arrive(sim *s, int b, int m, const vclock *at, long long gs)
{
    mbar *B = &s->bars[b];
    if (m > B->pending) {
        vfail(s, R_ARRIVALS, "the arrivals of step %lld bring phase %lld of the %s barrier of "
              "slot %d to %d, but it completes after %d: the phase completes before every "
              "thread arrived", gs, B->completed, set_name(b / s->S), b % s->S,
              B->arrived + m, B->count);
        return;
    }
    B->pending -= m;
    B->arrived += m;
    vc_join(&B->acc, at);
    bar_try_complete(s, b);
}

/* Deliver a transaction copy's bytes: as far as the phase asks when it waits only for
 * bytes (so that a short expect_tx completes it early), else all of them. */
static void deliver(sim *s, event *e)
{
    rec *r = &s->recs[e->rec];
    mbar *B = &s->bars[e->bar];
    long long d = r->left;
    if (B->pending == 0 && B->tx > 0 && B->tx < d)
        d = B->tx;
    r->left -= d;
    B->tx -= d;
    vc_join(&B->acc, &r->issued);
    if (r->left == 0) {
        rec_complete(s, r, &r->issued);
        e->done = true;
    }
    bar_try_complete(s, e->bar);
}

/* An arrival on_copies fires once the thread's earlier copies completed: complete them. */
static void fire_arrival(sim *s, event *e)
{
    for (int i = s->first_open; i < e->rec_hi; ++i) {
        rec *r = &s->recs[i];
        if (r->thread == e->thread && r->kind == REC_COPY && r->bar < 0 && !r->complete)
            rec_complete(s, r, &e->at);
    }
    e->done = true;
    bar_arrive(s, e->bar, e->arrivals, &e->at, e->step);
}

static event *first_event(sim *s, int b)
{
    for (int i = 0; i < s->nevs; ++i)
        if (!s->evs[i].done && s->evs[i].bar == b)
            return &s->evs[i];
    return NULL;
}

/* Make the hardware progress for a blocked waiter, as little as it needs. */
static bool force_for(sim *s, agent *a)
{
    bool moved = false;
    int b = a->wait_bar;
    while (!s->failed && (s->bars[b].completed & 1) == a->wait_parity) {
        event *e = first_event(s, b);
        if (!e)
            break;
        if (e->rec >= 0)
            deliver(s, e);
        else
            fire_arrival(s, e);
        moved = true;
    }
    return moved;
}

/* ------------------------------------------------------------------ data */

static const char *pending_why(const sim *s, const rec *r, char *buf, size_t n)
{
    const vthread *t = &s->th[r->thread];
    if (r->bar >= 0)
        snprintf(buf, n, "%lld of its %lld bytes have not arrived", r->left, r->bytes);
    else if (s->sc->track == TRACK_BARRIER)
        snprintf(buf, n, "no completed barrier phase covers it");
    else if (r->grp >= t->committed)
        snprintf(buf, n, "it was never committed to a group");
    else if (t->last_wait < 0)
        snprintf(buf, n, "no wait_group ran after its commit");
    else
        snprintf(buf, n, "its commit group %d is still in flight after wait_group %d, which "
                 "lets the newest %d group%s pend", r->grp, t->last_wait, t->last_wait,
                 t->last_wait == 1 ? "" : "s");
    return buf;
}

/* A read of cell ci for step gs by thread t: the data of gs, complete and visible. */
static bool check_read(sim *s, const agent *a, int t, int ci, long long gs, const char *what)
{
    cell *c = &s->cells[ci];
    int slot = ci / s->nst;
    if (c->step != gs) {
        if (c->step > gs)
            vfail(s, R_WAR, "step %lld's data in slot %d was overwritten by step %lld before "
                  "%s (%s) read it", gs, slot, c->step, what, role_name(a->role));
        else
            vfail(s, R_RAW, "%s of step %lld (%s) reads slot %d before %s of step %lld (it "
                  "holds %s)", what, gs, role_name(a->role), slot,
                  is_output(s, ci % s->nst) ? "the compute wrote it" : "the copy into it",
                  gs, c->step < 0 ? "nothing yet" : "an earlier step's data");
        return false;
    }
    for (int i = 0; i < c->nparts; ++i) {
        const rec *r = &s->recs[c->parts[i]];
        char why[160];
        if (!r->complete) {
            vfail(s, R_RAW, "%s of step %lld (%s) reads slot %d before its copy completed "
                  "(%s)", what, gs, role_name(a->role), slot, pending_why(s, r, why, sizeof why));
            return false;
        }
        if (!vc_leq(&r->done, &s->th[t].vc)) {
            vfail(s, R_RAW, "%s of step %lld (%s) reads slot %d before the %s of every "
                  "thread are visible to it (%s)", what, gs, role_name(a->role), slot,
                  r->kind == REC_WRITE ? "compute's writes"
                  : r->kind == REC_EDGE ? "ordinary stores" : "copies",
                  r->kind == REC_WRITE ? "no barrier between those writes and this read"
                  : r->kind == REC_EDGE ? "neither a barrier nor that thread's arrival on the "
                                          "phase it waited on orders them before this read"
                  : r->bar >= 0 || s->sc->track == TRACK_BARRIER
                  ? "it did not wait for the barrier phase that completes them"
                  : "no barrier after the copy completed in its thread");
            return false;
        }
    }
    return true;
}

/* A write of cell ci for step gs by thread t, whose old data the threads in `readers` owe
 * a read of (or have read, not ordered before t's write). */
static bool check_overwrite(sim *s, const agent *a, int t, int ci, long long gs,
                            unsigned readers, const char *what)
{
    cell *c = &s->cells[ci];
    if (c->step < 0 || c->step == gs)
        return true;
    int slot = ci / s->nst;
    for (int r = 0; r < s->nthr; ++r) {
        if (!(readers & (1u << r)))
            continue;
        bool owed = step_live(s, c->step) && c->read_step[r] != c->step;
        bool unordered = c->read_at[r] > s->th[t].vc.c[r];
        int sr = c->store_rec[r];
        bool in_flight = sr >= 0 && (!s->recs[sr].complete
                                     || !vc_leq(&s->recs[sr].done, &s->th[t].vc));
        if (owed) {
            vfail(s, R_WAR, "%s of step %lld (%s) writes slot %d before step %lld was %s "
                  "(the ring has %d slot%s)", what, gs, role_name(a->role), slot, c->step,
                  is_output(s, ci % s->nst) ? "stored from it" : "read from it", s->S,
                  s->S == 1 ? "" : "s");
            return false;
        }
        if (unordered || in_flight) {
            vfail(s, R_WAR, "%s of step %lld (%s) writes slot %d while step %lld may still "
                  "%s it (%s; the ring has %d slot%s)", what, gs, role_name(a->role), slot,
                  c->step, in_flight ? "store from" : "read",
                  in_flight ? "its async store is not waited for"
                            : "no barrier or release orders that read before this write",
                  s->S, s->S == 1 ? "" : "s");
            return false;
        }
    }
    return true;
}

/* Put record ri into cell ci as the data of step gs. */
static void cell_put(sim *s, int ci, long long gs, int ri)
{
    cell *c = &s->cells[ci];
    if (c->step != gs) {
        c->step = gs;
        c->nparts = 0;
    }
    if (c->nparts < VERIFY_THREADS)
        c->parts[c->nparts++] = ri;
}

static bool copy_into(sim *s, const agent *a, int t, int ci, long long gs, long long bytes,
                      rec_kind kind)
{
    if (!check_overwrite(s, a, t, ci, gs, s->readers[ci % s->nst], "the copy"))
        return false;
    int ri = new_rec(s, kind, t, ci, gs);
    rec *r = &s->recs[ri];
    if (kind == REC_EDGE || s->sc->track == TRACK_SYNC) {
        rec_complete(s, r, &s->th[t].vc);
    } else if (s->tx) {
        r->bar = bar_index(s, BAR_FULL, ci / s->nst);
        r->bytes = r->left = bytes;
        event *e = new_event(s, r->bar, t);
        e->rec = ri;
        e->step = gs;
    } else {
        r->grp = s->th[t].committed;
    }
    phase_step *ts = trace_of(s, gs);
    if (ts && t == 0 && ts->grp < 0)
        ts->grp = r->grp;
    cell_put(s, ci, gs, ri);
    return true;
}

/* ------------------------------------------------------------------ operations */

/* The bytes of a transaction copy that simulated thread k of its role issues: all of
 * them by the elected one (k == 0), or half each when the copy is dealt. */
static long long tx_share(const ir_op *op, int k, long long bytes)
{
    if (!op->dealt)
        return k == 0 ? bytes : 0;
    return k == 0 ? bytes - bytes / 2 : bytes / 2;
}

static void do_copy(sim *s, const agent *a, const ir_op *op, long long gs)
{
    for (int i = 0; i < s->nst && !s->failed; ++i) {
        if (is_output(s, i) || !stage_selected(op, i))
            continue;
        int ci = stage_slot(s, i, gs) * s->nst + i;
        long long bytes = s->sc->spec->stages[i].bytes;
        /* A transaction copy is issued by one elected thread, or dealt (a share of the
         * bytes by each thread); what it cannot move (op->stores) every thread stores. */
        for (int k = 0; k < 2; ++k) {
            int t = a->th + k;
            long long share = tx_share(op, k, bytes);
            if (s->tx && share && (!bar_ready(s, a, t, true, gs)
                                   || !copy_into(s, a, t, ci, gs, share, REC_COPY)))
                return;
            if ((!s->tx || op->stores)
                && !copy_into(s, a, t, ci, gs, bytes, s->tx ? REC_EDGE : REC_COPY))
                return;
        }
    }
}

static void do_wait(sim *s, const agent *a, const ir_op *op, const ir_section *sec,
                    long long var)
{
    for (int k = 0; k < 2; ++k) {
        int t = a->th + k;
        vthread *T = &s->th[t];
        int target = T->committed - op->n;
        T->last_wait = op->n;
        for (int i = s->first_open; i < s->nrecs; ++i) {
            rec *r = &s->recs[i];
            if (r->thread != t || r->complete || r->grp < 0 || r->grp >= target)
                continue;
            rec_complete(s, r, &T->vc);
            phase_step *ts = r->kind == REC_COPY && t == 0 ? trace_of(s, r->step) : NULL;
            if (ts && ts->wait_n < 0)
                *ts = (phase_step){ts->grp, op->n, sec->kind, var, ts->bytes};
        }
    }
}

static void do_compute(sim *s, const agent *a, const ir_op *op, long long gs)
{
    for (int k = 0; k < 2 && !s->failed; ++k) {
        int t = a->th + k;
        for (int i = 0; i < s->nst && !s->failed; ++i) {
            if (!stage_selected(op, i))
                continue;
            int ci = stage_slot(s, i, gs) * s->nst + i;
            cell *c = &s->cells[ci];
            if (!is_output(s, i)) {
                if (check_read(s, a, t, ci, gs, "the compute")) {
                    c->read_at[t] = s->th[t].vc.c[t];
                    c->read_step[t] = gs;
                }
            } else if (check_overwrite(s, a, t, ci, gs, s->storers[i], "the compute")) {
                int ri = new_rec(s, REC_WRITE, t, ci, gs);
                rec_complete(s, &s->recs[ri], &s->th[t].vc);
                cell_put(s, ci, gs, ri);
            }
        }
    }
}

/* A store reads its output cells; through the async proxy (a TMA store, marked by
 * fence = FENCE_PROXY_ASYNC on the STORE) it is issued by one thread (or with `dealt` by
 * each, its share of the rows), the writes it reads must have been fenced, and it reads
 * on until a wait_group of the issuing thread covers it. */
static void do_store(sim *s, const agent *a, const ir_op *op, long long gs)
{
    bool async = op->fence == FENCE_PROXY_ASYNC;
    for (int k = 0; k < (async && !op->dealt ? 1 : 2) && !s->failed; ++k) {
        int t = a->th + k;
        for (int i = 0; i < s->nst && !s->failed; ++i) {
            if (!is_output(s, i) || !stage_selected(op, i))
                continue;
            int ci = stage_slot(s, i, gs) * s->nst + i;
            cell *c = &s->cells[ci];
            if (!check_read(s, a, t, ci, gs, "the store"))
                return;
            for (int p = 0; async && p < c->nparts; ++p) {
                const rec *w = &s->recs[c->parts[p]];
                if (!w->fenced || !vc_leq(&w->fence, &s->th[t].vc)) {
                    vfail(s, R_FENCE, "the async-proxy store of step %lld (%s) reads slot %d "
                          "with no proxy fence between the compute's shared-memory writes "
                          "and the store", gs, role_name(a->role), ci / s->nst);
                    return;
                }
            }
            c->read_step[t] = gs;
            if (async) {
                int ri = new_rec(s, REC_STORE, t, ci, gs);
                s->recs[ri].grp = s->th[t].committed;
                c->store_rec[t] = ri;
            } else {
                c->read_at[t] = s->th[t].vc.c[t];
            }
        }
    }
}

/* A proxy fence: the compute writes its thread sees are now visible to the async proxy,
 * and (by the init thread) the barriers' initialisation. */
static void do_fence(sim *s, const agent *a)
{
    for (int k = 0; k < 2; ++k) {
        int t = a->th + k;
        if (t == s->init_thread && s->init_clock && !s->init_fence)
            s->init_fence = s->th[t].vc.c[t];
        for (int ci = 0; ci < s->S * s->nst; ++ci) {
            cell *c = &s->cells[ci];
            for (int p = 0; is_output(s, ci % s->nst) && p < c->nparts; ++p) {
                rec *w = &s->recs[c->parts[p]];
                if (!w->fenced && vc_leq(&w->done, &s->th[t].vc)) {
                    w->fenced = true;
                    w->fence = s->th[t].vc;
                }
            }
        }
    }
}

static void join_threads(sim *s, unsigned mask)
{
    vclock all = {{0}};
    for (int t = 0; t < s->nthr; ++t)
        if (mask & (1u << t))
            vc_join(&all, &s->th[t].vc);
    for (int t = 0; t < s->nthr; ++t)
        if (mask & (1u << t))
            s->th[t].vc = all;
}

/* The share of a role's nthreads arrivals that representative thread k brings. */
static int arrival_share(int nthreads, int k)
{
    return k == 0 ? nthreads - nthreads / 2 : nthreads / 2;
}

static void do_arrive(sim *s, const agent *a, const ir_op *op, int set, long long gs)
{
    int b = bar_index(s, set, slot_of(s, gs));
    if (op->kind == OP_ARRIVE_TX) {
        /* The elected thread expects the phase's bytes; it arrives alone, or (all_arrive)
         * with the role's other threads. */
        if (!bar_ready(s, a, a->th, false, gs))
            return;
        s->bars[b].tx += op->bytes;
        s->bars[b].expected += op->bytes;
        if (!op->all_arrive) {
            bar_arrive(s, b, 1, &s->th[a->th].vc, gs);
            return;
        }
    }
    for (int k = 0; k < 2 && !s->failed; ++k) {
        int t = a->th + k;
        if (!bar_ready(s, a, t, false, gs))
            return;
        /* One arrival per warp; cluster-wide on every block's barrier, the cluster's other
         * blocks (in step with this one) bringing theirs to this one's. */
        int m = arrival_share(op->per_warp ? a->nthreads / 32 : a->nthreads, k)
                * (op->cluster ? s->sc->cluster : 1);
        if (op->on_copies && op->kind == OP_ARRIVE) {
            event *e = new_event(s, b, t);
            e->arrivals = m;
            e->step = gs;
            e->rec_hi = s->nrecs;
        } else {
            bar_arrive(s, b, m, &s->th[t].vc, gs);
        }
    }
}

/* WAIT_PARITY and ACQUIRE: false while the phase this use waits for has not completed. */
static bool do_wait_parity(sim *s, agent *a, const ir_op *op, int set, long long gs)
{
    int slot = slot_of(s, gs);
    long long k = gs / s->S;
    int parity = (int)(k & 1) ^ (set == BAR_EMPTY) ^ op->parity_flip;
    long long need = set == BAR_FULL ? k + 1 : k;
    int b = bar_index(s, set, slot);
    for (int i = 0; i < 2; ++i)
        if (!bar_ready(s, a, a->th + i, false, gs))
            return true;
    mbar *B = &s->bars[b];
    if ((B->completed & 1) == parity) {
        a->wait_bar = b;
        a->wait_parity = parity;
        a->wait_step = gs;
        return false;
    }
    if (B->completed < need) {
        vfail(s, R_PARITY, "%s waits at step %lld (slot %d, use %lld) for parity %d of the %s "
              "barrier, which passes before phase %lld completes (%lld phases completed): the "
              "parity of use k is %s", role_name(a->role), gs, slot, k, parity, set_name(set),
              need - 1, B->completed, set == BAR_FULL ? "k & 1" : "(k & 1) ^ 1");
        return true;
    }
    for (int i = 0; i < 2; ++i)
        vc_join(&s->th[a->th + i].vc, &B->last);
    return true;
}

/* ------------------------------------------------------------------ claims */

/* Both threads of the agent read step gs's work item: its guard, its tile origin, the
 * loop's test. The claim must be the step's and published to the reader. */
static void read_item(sim *s, const agent *a, long long gs, const char *what)
{
    claim *c = &s->claims[gs % s->sc->claim_ring];
    for (int t = a->th; t < a->th + 2 && !s->failed; ++t) {
        vthread *th = &s->th[t];
        th->vc.c[t]++;
        if (c->step != gs)
            vfail(s, R_RAW, "%s reads step %lld's work item (%s) from claim ring entry %lld, "
                  "which holds %s", role_name(a->role), gs, what, gs % s->sc->claim_ring,
                  c->step < 0 ? "no claim yet" : arena_printf(s->a, "step %lld's", c->step));
        else if (th->vc.c[c->thread] < c->at)
            vfail(s, R_RAW, "%s reads step %lld's work item (%s) before its claim is "
                  "published to it (no barrier between)", role_name(a->role), gs, what);
        c->read_at[t] = th->vc.c[t];
    }
}

/* Thread 0 of the agent overwrites the entry: every read of what it held came first. */
static void do_claim(sim *s, const agent *a, long long gs)
{
    claim *c = &s->claims[gs % s->sc->claim_ring];
    const vthread *th = &s->th[a->th];
    for (int t = 0; t < s->nthr && !s->failed; ++t)
        if (t != a->th && c->read_at[t] && th->vc.c[t] < c->read_at[t])
            vfail(s, R_WAR, "the claim of step %lld overwrites step %lld's work item (claim "
                  "ring entry %lld of %d) before every thread read it", gs, c->step,
                  gs % s->sc->claim_ring, s->sc->claim_ring);
    *c = (claim){.step = gs, .thread = a->th, .at = th->vc.c[a->th]};
}

static bool reads_item(const ir_op *op)
{
    return op->guarded || op->kind == OP_COPY || op->kind == OP_COMPUTE || op->kind == OP_STORE;
}

static long long loop_var(const sim *s, const ir_section *sec, int iter)
{
    return sec->kind == SEC_EPILOGUE ? s->trips : iter;
}

static bool op_skipped(const sim *s, const ir_op *op, long long gs)
{
    return op->guarded && (gs < 0 || gs >= s->trips);
}

static bool op_has_step(ir_op_kind k)
{
    return k == OP_COPY || k == OP_COMPUTE || k == OP_STORE || k == OP_ARRIVE
           || k == OP_ARRIVE_TX || k == OP_WAIT_PARITY || k == OP_ACQUIRE || k == OP_RELEASE
           || k == OP_CLAIM;
}

/* Execute the agent's current operation; false when it blocks. */
static bool agent_exec(sim *s, agent *a)
{
    const ir_section *sec = &s->sc->secs[a->sec];
    const ir_op *op = &sec->ops[a->op];
    long long var = loop_var(s, sec, a->iter);
    long long gs = var + op->step_off;
    if (s->claims && reads_item(op) && gs >= 0)
        read_item(s, a, gs, ir_op_name(op->kind));
    if (op_skipped(s, op, gs))
        return true;
    if (op_has_step(op->kind) && gs < 0) {
        vfail(s, R_IR, "%s runs an unguarded %s of step %lld", role_name(a->role),
              ir_op_name(op->kind), gs);
        return true;
    }
    if (op->kind == OP_BARRIER && op->role == ROLE_ALL && s->nagents == 2) {
        a->at_barrier = true;
        return false;
    }
    for (int k = 0; k < 2; ++k)
        s->th[a->th + k].vc.c[a->th + k]++;
    switch (op->kind) {
    case OP_COPY: do_copy(s, a, op, gs); break;
    case OP_COMMIT:
        s->th[a->th].committed++;
        s->th[a->th + 1].committed++;
        break;
    case OP_WAIT: do_wait(s, a, op, sec, var); break;
    case OP_ACQUIRE: return do_wait_parity(s, a, op, BAR_EMPTY, gs);
    case OP_WAIT_PARITY: return do_wait_parity(s, a, op, op->bar, gs);
    case OP_RELEASE: do_arrive(s, a, op, BAR_EMPTY, gs); break;
    case OP_ARRIVE: case OP_ARRIVE_TX: do_arrive(s, a, op, op->bar, gs); break;
    case OP_INIT:
        if (a->th == s->init_thread)
            s->init_clock = s->th[a->th].vc.c[a->th];
        break;
    case OP_FENCE: do_fence(s, a); break;
    case OP_BARRIER: join_threads(s, 3u << a->th); break;
    case OP_COMPUTE: do_compute(s, a, op, gs); break;
    case OP_STORE: do_store(s, a, op, gs); break;
    case OP_CLAIM: do_claim(s, a, gs); break;
    case OP__COUNT: break;
    }
    return true;
}

/* ------------------------------------------------------------------ scheduling */

static bool runs_op(const sim *s, const agent *a, const ir_op *op)
{
    return s->nagents == 1 || op->role == ROLE_ALL || op->role == a->role;
}

static int sec_iters(const sim *s, const ir_section *sec)
{
    return sec->kind == SEC_PROLOGUE ? sec->count : sec->kind == SEC_LOOP ? s->trips : 1;
}

/* Move the agent to its next operation (the current one included); false when done. */
static bool agent_seek(sim *s, agent *a)
{
    const sched *sc = s->sc;
    while (a->sec < sc->nsecs) {
        const ir_section *sec = &sc->secs[a->sec];
        if (s->claims && sec->kind == SEC_LOOP && a->op == 0 && a->tested != a->iter) {
            a->tested = a->iter;
            read_item(s, a, a->iter, "the loop's test");
        }
        if (a->iter >= sec_iters(s, sec)) {
            a->sec++;
            a->iter = a->op = 0;
            a->tested = -1;
        } else if (a->op >= sec->nops) {
            a->iter++;
            a->op = 0;
        } else if (runs_op(s, a, &sec->ops[a->op])) {
            return true;
        } else {
            a->op++;
        }
    }
    a->done = true;
    return false;
}

static void describe_agent(sim *s, strbuf *sb, const agent *a)
{
    if (a->done) {
        sb_printf(sb, "%s has finished", role_name(a->role));
    } else if (a->at_barrier) {
        sb_printf(sb, "%s waits at a block barrier that the other role never reaches",
                  role_name(a->role));
    } else {
        const mbar *B = &s->bars[a->wait_bar];
        sb_printf(sb, "%s waits at step %lld for parity %d of the %s barrier of slot %d "
                  "(phase %lld: %d of %d arrivals", role_name(a->role), a->wait_step,
                  a->wait_parity, set_name(a->wait_bar / s->S), a->wait_bar % s->S,
                  B->completed, B->arrived, B->count);
        if (B->tx)
            sb_printf(sb, ", %lld of the %lld bytes it expects missing", B->tx, B->expected);
        sb_puts(sb, ")");
    }
}

static void report_deadlock(sim *s)
{
    strbuf sb;
    sb_init(&sb, s->a);
    const mbar *short_tx = NULL;
    for (int i = 0; i < s->nagents; ++i) {
        const agent *a = &s->ag[i];
        if (!a->done && !a->at_barrier && s->bars[a->wait_bar].pending == 0
            && s->bars[a->wait_bar].tx > 0 && !short_tx)
            short_tx = &s->bars[a->wait_bar];
        if (a->done && s->nagents == 1)
            continue;
        if (sb.len)
            sb_puts(&sb, "; ");
        describe_agent(s, &sb, a);
    }
    if (short_tx)
        vfail(s, R_EXPECT_TX, "a phase expects %lld bytes but its copies deliver %lld, so it "
              "never completes (deadlock): %s", short_tx->expected,
              short_tx->expected - short_tx->tx, sb.data);
    else
        vfail(s, R_DEADLOCK, "no wait can be satisfied: %s", sb.data);
}

/* Both agents at a block barrier pass it together. */
static bool rendezvous(sim *s)
{
    if (s->nagents != 2 || !s->ag[0].at_barrier || !s->ag[1].at_barrier)
        return false;
    for (int t = 0; t < s->nthr; ++t)
        s->th[t].vc.c[t]++;
    join_threads(s, (1u << s->nthr) - 1);
    for (int i = 0; i < 2; ++i) {
        s->ag[i].at_barrier = false;
        s->ag[i].op++;
    }
    return true;
}

static bool all_done(const sim *s)
{
    for (int i = 0; i < s->nagents; ++i)
        if (!s->ag[i].done)
            return false;
    return true;
}

/* Run every agent to the end, or to the first violation. */
static void sim_run(sim *s, int first)
{
    long long budget = 1000000;
    while (!s->failed && budget-- > 0) {
        bool moved = false;
        for (int i = 0; i < s->nagents && !s->failed; ++i) {
            agent *a = &s->ag[(first + i) % s->nagents];
            while (!s->failed && agent_seek(s, a) && agent_exec(s, a)) {
                a->op++;
                moved = true;
            }
        }
        if (s->failed || all_done(s))
            break;
        if (rendezvous(s) || moved)
            continue;
        bool forced = false;
        for (int i = 0; i < s->nagents && !forced; ++i)
            if (!s->ag[i].done && !s->ag[i].at_barrier)
                forced = force_for(s, &s->ag[i]);
        if (!forced) {
            report_deadlock(s);
            return;
        }
    }
    if (budget <= 0)
        vfail(s, R_DEADLOCK, "the simulation did not terminate");
}

/* At exit: nothing may still be copied into, or stored from, shared memory. */
static void check_drain(sim *s)
{
    for (int i = s->first_open; i < s->nrecs && !s->failed; ++i) {
        const rec *r = &s->recs[i];
        if (r->complete)
            continue;
        vfail(s, R_DRAIN, "the block exits with step %lld's %s slot %d in flight (no wait "
              "covers it)", r->step, r->kind == REC_STORE ? "async store from" : "copy into",
              r->cell / s->nst);
    }
}

/* ------------------------------------------------------------------ one run */

static void sim_masks(sim *s)
{
    const sched *sc = s->sc;
    for (int i = 0; i < sc->nsecs; ++i)
        for (int j = 0; j < sc->secs[i].nops; ++j) {
            const ir_op *op = &sc->secs[i].ops[j];
            if (op->kind != OP_COMPUTE && op->kind != OP_STORE)
                continue;
            for (int g = 0; g < s->nagents; ++g) {
                if (!runs_op(s, &s->ag[g], op))
                    continue;
                bool one = op->kind == OP_STORE && op->fence == FENCE_PROXY_ASYNC;
                unsigned m = (one ? 1u : 3u) << s->ag[g].th;
                for (int st = 0; st < s->nst; ++st)
                    if (stage_selected(op, st) && op->kind == OP_COMPUTE && !is_output(s, st))
                        s->readers[st] |= m;
                    else if (stage_selected(op, st) && op->kind == OP_STORE && is_output(s, st))
                        s->storers[st] |= m;
            }
        }
}

static void sim_agents(sim *s)
{
    const sched *sc = s->sc;
    if (!uses_roles(sc)) {
        s->nagents = 1;
        s->ag[0] = (agent){.role = ROLE_ALL, .nthreads = sc->threads, .wait_bar = -1,
                           .tested = -1};
    } else {
        s->nagents = 2;
        s->ag[0] = (agent){.role = ROLE_PRODUCER, .nthreads = sc->producer_threads,
                           .wait_bar = -1, .tested = -1};
        s->ag[1] = (agent){.role = ROLE_CONSUMER, .nthreads = sc->threads - sc->producer_threads,
                           .th = 2, .wait_bar = -1, .tested = -1};
    }
    s->nthr = 2 * s->nagents;
    for (int t = 0; t < s->nthr; ++t)
        s->th[t] = (vthread){.last_wait = -1};
    for (int t = 0; t < s->nthr; ++t)
        s->th[t].vc.c[t] = 1;
}

static bool sched_has(const sched *sc, bool (*pred)(const ir_op *))
{
    for (int i = 0; i < sc->nsecs; ++i)
        for (int j = 0; j < sc->secs[i].nops; ++j)
            if (pred(&sc->secs[i].ops[j]))
                return true;
    return false;
}

static bool is_arrive_tx(const ir_op *op) { return op->kind == OP_ARRIVE_TX; }

/* An implied barrier is one block barrier, right after the wait or init that performs it. */
static bool implied_ok(const ir_section *sec, int j)
{
    const ir_op *op = &sec->ops[j];
    return op->kind == OP_BARRIER && op->role == ROLE_ALL && j > 0
           && (sec->ops[j - 1].kind == OP_WAIT || sec->ops[j - 1].kind == OP_INIT);
}

static bool is_bar_op(const ir_op *op)
{
    return op->kind == OP_ARRIVE || op->kind == OP_ARRIVE_TX || op->kind == OP_WAIT_PARITY
           || op->kind == OP_ACQUIRE || op->kind == OP_RELEASE;
}

static void sim_init(sim *s, arena *a, vreport *rep, int trips)
{
    const sched *sc = rep->sc;
    *s = (sim){.sc = sc, .rep = rep, .a = a, .S = sc->nslots, .nst = sc->spec->nstaged,
               .trips = trips};
    s->tx = sc->track == TRACK_BARRIER && sched_has(sc, is_arrive_tx);
    sim_agents(s);
    int ncells = s->S * (s->nst ? s->nst : 1);
    s->cells = arena_alloc(a, sizeof *s->cells * ncells);
    for (int i = 0; i < ncells; ++i) {
        s->cells[i].step = -1;
        for (int t = 0; t < VERIFY_THREADS; ++t) {
            s->cells[i].read_step[t] = -1;
            s->cells[i].store_rec[t] = -1;
        }
    }
    if (sc->claim_ring > 0) {
        s->claims = arena_alloc(a, sizeof *s->claims * (size_t)sc->claim_ring);
        for (int i = 0; i < sc->claim_ring; ++i)
            s->claims[i] = (claim){.step = -1};
    }
    s->bars = arena_alloc(a, sizeof *s->bars * 2 * s->S);
    for (int i = 0; i < 2 * s->S; ++i) {
        int count = i < s->S ? sc->full_arrivals : sc->empty_arrivals;
        s->bars[i] = (mbar){.count = count, .pending = count};
    }
    sim_masks(s);
}

/* Simulate one sequence of work items in one agent order. */
static void simulate(arena *a, vreport *rep, int trips, int first,
                     phase_step *trace, int ntrace)
{
    sim s;
    sim_init(&s, a, rep, trips);
    s.trace = trace;
    s.ntrace = ntrace;
    sim_run(&s, first % s.nagents);
    if (!s.failed)
        check_drain(&s);
}

/* ------------------------------------------------------------------ the checks */

static bool is_cluster_barrier(const ir_op *op)
{
    return op->kind == OP_BARRIER && op->cluster && op->role == ROLE_ALL;
}

/* The frame's barrier and the last operation of the last section sync the cluster. */
static bool cluster_bracketed(const sched *sc)
{
    const ir_section *first = &sc->secs[0], *last = &sc->secs[sc->nsecs - 1];
    bool init = false;
    for (int j = 0; first->kind == SEC_FRAME && j < first->nops; ++j)
        init |= is_cluster_barrier(&first->ops[j]);
    return init && sc->nsecs > 1 && last->nops > 0
           && is_cluster_barrier(&last->ops[last->nops - 1]);
}

static bool regs_count_ok(int n) { return n >= 24 && n <= 256 && n % 8 == 0; }

/* setmaxnreg (sched.regs_*): every warp of a warpgroup executes it, so both roles must be
 * whole warpgroups; PTX takes counts of 24 to 256 in multiples of 8; and the block's pool
 * holds what it launched with, so a take beyond what the keeps give back waits forever. */
static void check_registers(vreport *rep)
{
    const sched *sc = rep->sc;
    if (!sc->regs_launch)
        return;
    const int p = sc->producer_threads, c = sc->threads - p;
    const int keep = sc->regs_producer, take = sc->regs_consumer, launch = sc->regs_launch;
    const long long pool = (long long)launch * sc->threads;
    const long long asked = (long long)p * keep + (long long)c * take;
    const vrule r = R_REGISTERS;
    if (!uses_roles(sc) || p % WARPGROUP_THREADS || c % WARPGROUP_THREADS)
        vfail_pre(rep, r, "setmaxnreg needs whole warpgroups in both roles, not %d producer "
                  "and %d consumer threads", p, c);
    else if (!regs_count_ok(keep) || !regs_count_ok(take))
        vfail_pre(rep, r, "setmaxnreg counts %d and %d: PTX takes multiples of 8 from 24 to "
                  "256", keep, take);
    else if (launch % 8 || pool > SM_REGISTERS)
        vfail_pre(rep, r, "a launch of %d registers for each of %d threads: an SM has 65536, "
                  "given in multiples of 8", launch, sc->threads);
    else if (keep > launch || take < launch)
        vfail_pre(rep, r, "the producers keep %d registers and the consumers take %d of a "
                  "launch's %d: setmaxnreg.dec may only lower the count, .inc only raise it",
                  keep, take, launch);
    else if (asked > pool)
        vfail_pre(rep, r, "the producers keep %d x %d registers and the consumers take %d x "
                  "%d, %lld in all, but the block launched with %d x %d = %lld: the "
                  "consumers' setmaxnreg.inc would wait forever", p, keep, c, take, asked,
                  sc->threads, launch, pool);
}

/* Where the ring's slots end in shared memory. */
static long long ring_end(const sched *sc)
{
    long long end = 0;
    for (int i = 0; i < sc->spec->nstaged; ++i) {
        const long long e = sc->copy[i].off + sc->copy[i].slot_bytes * sc->copy[i].nslots;
        end = e > end ? e : end;
    }
    return end;
}

/* The array accumulators' places: one in registers is by column (each index its column,
 * which the spec proves) with an owner for every column; shared bins lie past the ring's
 * slots (which the copies overwrite while the bins add) and inside the block's memory. */
static void check_accums(vreport *rep)
{
    const sched *sc = rep->sc;
    const spec *s = sc->spec;
    const int cnt = sc->threads - sc->producer_threads;
    for (int i = 0; sc->accum_off && i < s->naccums && !rep->broken; ++i) {
        const spec_accum *acc = &s->accums[i];
        const long long bytes = spec_accum_bin_bytes(acc, sc->threads);
        if (!acc->is_array)
            continue;
        if (sc->accum_off[i] < 0 && !spec_accum_by_column(s, i))
            vfail_pre(rep, R_ACCUM, "accumulator '%s' is kept in registers by column, but not "
                      "every index of it is the column", acc->name);
        else if (sc->accum_off[i] < 0 && (long long)sc->accum_regs[i] * cnt < acc->extent)
            vfail_pre(rep, R_ACCUM, "accumulator '%s' by column keeps %d registers in each of "
                      "%d computing threads: its columns from %lld on have no owner",
                      acc->name, sc->accum_regs[i], cnt, (long long)sc->accum_regs[i] * cnt);
        else if (sc->accum_off[i] >= 0
                 && (sc->accum_off[i] < ring_end(sc) || sc->accum_off[i] + bytes > sc->smem_bytes))
            vfail_pre(rep, R_ACCUM, "the bins of accumulator '%s', at [%lld, %lld) of shared "
                      "memory, overlap the ring's slots, which end at %lld, or pass the block's "
                      "%lld bytes", acc->name, sc->accum_off[i], sc->accum_off[i] + bytes,
                      ring_end(sc), sc->smem_bytes);
    }
}

/* What the simulation relies on; a schedule that breaks it is reported as such. */
static bool check_ir(vreport *rep)
{
    const sched *sc = rep->sc;
    const spec *sp = sc->spec;
    if (sc->nslots < 1 || sc->nslots > 4096)
        vfail_pre(rep, R_IR, "the ring has %d slots", sc->nslots);
    else if (sp->nstaged > VERIFY_MAX_STAGES)
        vfail_pre(rep, R_IR, "%d staged arrays; at most %d", sp->nstaged, VERIFY_MAX_STAGES);
    else if (sc->claim_ring < 0 || sc->claim_ring > 4096
             || (sc->claim_ring && uses_roles(sc)))
        vfail_pre(rep, R_IR, "a claim ring of %d entries%s", sc->claim_ring,
                  uses_roles(sc) ? " in a schedule with roles" : "");
    else if (uses_roles(sc) && sc->producer_threads >= sc->threads)
        vfail_pre(rep, R_IR, "%d producer threads of %d", sc->producer_threads, sc->threads);
    bool full = sc->track == TRACK_BARRIER, empty = false;
    for (int i = 0; i < sc->nsecs && !rep->broken; ++i) {
        const ir_section *sec = &sc->secs[i];
        if (sec->kind == SEC_PROLOGUE && (sec->count < 0 || sec->count > 4096))
            vfail_pre(rep, R_IR, "a prologue of %d iterations", sec->count);
        if (sec->kind == SEC_FRAME && i > 0)
            vfail_pre(rep, R_IR, "the frame is section %d, not the first", i);
        for (int j = 0; j < sec->nops && !rep->broken; ++j) {
            const ir_op *op = &sec->ops[j];
            const char *name = ir_op_name(op->kind);
            if (op->role != ROLE_ALL && !uses_roles(sc))
                vfail_pre(rep, R_IR, "operation '%s' of %s in a schedule without roles "
                          "(producer_threads 0)", name, role_name(op->role));
            else if (op->stage < -1 || op->stage >= sp->nstaged)
                vfail_pre(rep, R_IR, "operation '%s' of stage %d; the spec has %d", name,
                          op->stage, sp->nstaged);
            else if (op->kind == OP_CLAIM && (sc->claim_ring == 0 || sec->kind == SEC_FRAME
                                              || op->step_off < 0))
                vfail_pre(rep, R_IR, "a claim %s", sc->claim_ring ? "of no step of its own" :
                          "without a claim ring");
            else if (op->kind == OP_WAIT && op->n < 0)
                vfail_pre(rep, R_IR, "wait %d", op->n);
            else if (op->kind == OP_ARRIVE_TX && op->bytes < 0)
                vfail_pre(rep, R_IR, "arrive_tx of %lld bytes", op->bytes);
            else if (op->step_off < -4096 || op->step_off > 4096)
                vfail_pre(rep, R_IR, "operation '%s' at step offset %d", name, op->step_off);
            else if (op->implied && !implied_ok(sec, j))
                vfail_pre(rep, R_IR, "an implied barrier must follow the wait or init that "
                          "performs it, not operation '%s'", name);
            bool on_empty = op->kind == OP_ACQUIRE || op->kind == OP_RELEASE
                            || ((op->kind == OP_ARRIVE || op->kind == OP_WAIT_PARITY
                                 || op->kind == OP_ARRIVE_TX) && op->bar == BAR_EMPTY);
            empty = empty || on_empty;
            full = full || (is_bar_op(op) && !on_empty);
        }
    }
    if (!rep->broken && sc->cluster > 1 && !cluster_bracketed(sc))
        vfail_pre(rep, R_IR, "a schedule of clusters of %d blocks must sync the cluster after "
                  "the barriers' initialisation and last, before a block exits while others "
                  "may still copy into it or arrive on its barriers", sc->cluster);
    if (!rep->broken && full && sc->full_arrivals < 1)
        vfail_pre(rep, R_IR, "full barriers are used but full_arrivals is %d",
                  sc->full_arrivals);
    else if (!rep->broken && empty && sc->empty_arrivals < 1)
        vfail_pre(rep, R_IR, "empty barriers are used but empty_arrivals is %d",
                  sc->empty_arrivals);
    if (!rep->broken)
        check_registers(rep);
    if (!rep->broken)
        check_accums(rep);
    return !rep->broken;
}

/* The trip counts of docs/verifier.md: the ring's edges, then long runs for a block's
 * several persistent waves (the ring and the parities wrap more than once). */
static int verify_trips(int S, int *trips)
{
    const int all[] = {0, 1, 2, S - 1, S, S + 1, 2 * S - 1, 2 * S, 2 * S + 1, 3 * S + 1,
                       4 * S + 2};
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof *all; ++i) {
        bool dup = all[i] < 0;
        for (int j = 0; j < n && !dup; ++j)
            dup = trips[j] == all[i];
        if (!dup)
            trips[n++] = all[i];
    }
    return n;
}

/* The run whose trace the source's phase table shows, 2 * S + 1 trips in the first
 * order: its steps in sc, cleared (NULL for the other runs). */
static phase_step *trace_for(sched *sc, int trips, int order)
{
    if (trips != 2 * sc->nslots + 1 || order)
        return NULL;
    sc->nphases = trips < PHASE_TRACE_MAX ? trips : PHASE_TRACE_MAX;
    for (int i = 0; i < sc->nphases; ++i)
        sc->phases[i] = (phase_step){.grp = -1, .wait_n = -1, .bytes = -1};
    return sc->phases;
}

bool verify_schedule(diag_ctx *d, sched *sc)
{
    const spec *sp = sc->spec;
    vreport rep = {.d = d, .sc = sc, .loc = sp->nstaged ? sp->stages[0].loc : sp->loc};
    sc->nphases = 0;
    sc->unproven = !check_ir(&rep);
    if (sc->unproven)
        return false;
    arena *a = arena_new();
    int trips[16];
    int n = verify_trips(sc->nslots, trips);
    int orders = uses_roles(sc) ? 2 : 1;
    for (int i = 0; i < n; ++i)
        for (int o = 0; o < orders; ++o) {
            phase_step *trace = trace_for(sc, trips[i], o);
            simulate(a, &rep, trips[i], o, trace, trace ? sc->nphases : 0);
        }
    arena_free(a);
    sc->unproven = rep.broken;
    return !rep.broken;
}

/* ------------------------------------------------------------------ fault injection */

typedef bool (*op_pred)(const ir_op *);

static bool is_wait(const ir_op *op) { return op->kind == OP_WAIT; }
static bool is_commit(const ir_op *op) { return op->kind == OP_COMMIT; }
static bool is_fence(const ir_op *op) { return op->kind == OP_FENCE; }
static bool is_full_wait(const ir_op *op)
{
    return op->kind == OP_WAIT_PARITY && op->bar == BAR_FULL;
}
static bool is_parity_wait(const ir_op *op)
{
    return op->kind == OP_WAIT_PARITY || op->kind == OP_ACQUIRE;
}
static bool is_release(const ir_op *op)
{
    return op->kind == OP_RELEASE || (op->kind == OP_ARRIVE && op->bar == BAR_EMPTY);
}
static bool is_full_arrive(const ir_op *op)
{
    return (op->kind == OP_ARRIVE || op->kind == OP_ARRIVE_TX) && op->bar == BAR_FULL;
}
static bool is_any_arrive(const ir_op *op)
{
    return op->kind == OP_ARRIVE || op->kind == OP_ARRIVE_TX;
}
static bool is_async_store(const ir_op *op)
{
    return op->kind == OP_STORE && op->fence == FENCE_PROXY_ASYNC;
}

/* The first operation pred accepts, in the loop first (where the steady state is), then in
 * the other sections in order. */
static ir_op *find_op(sched *sc, op_pred pred, ir_section **in)
{
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < sc->nsecs; ++i) {
            ir_section *sec = &sc->secs[i];
            if ((sec->kind == SEC_LOOP) != (pass == 0))
                continue;
            for (int j = 0; j < sec->nops; ++j)
                if (pred(&sec->ops[j])) {
                    if (in)
                        *in = sec;
                    return &sec->ops[j];
                }
        }
    return NULL;
}

static void remove_op(ir_section *sec, ir_op *op)
{
    int j = (int)(op - sec->ops);
    memmove(op, op + 1, sizeof *op * (size_t)(sec->nops - j - 1));
    sec->nops--;
}

static bool drop_first(sched *sc, op_pred pred)
{
    ir_section *sec;
    ir_op *op = find_op(sc, pred, &sec);
    if (op)
        remove_op(sec, op);
    return op != NULL;
}

/* A dropped wait takes the barrier it implies with it (cg's wait is also its sync). */
static bool drop_wait(sched *sc)
{
    ir_section *sec;
    ir_op *op = find_op(sc, is_wait, &sec);
    if (!op)
        return false;
    if (op + 1 < sec->ops + sec->nops && op[1].implied)
        remove_op(sec, op + 1);
    remove_op(sec, op);
    return true;
}

static void drop_all(sched *sc, op_pred pred)
{
    ir_section *sec;
    ir_op *op;
    while ((op = find_op(sc, pred, &sec)))
        remove_op(sec, op);
}

static bool roles_meet(ir_role a, ir_role b) { return a == b || a == ROLE_ALL || b == ROLE_ALL; }

/* The ring's depth is built into the schedule when, in the loop, a copy runs ahead of a
 * compute of the same threads. A ring paced only by barriers (warp-specialized) is correct
 * with any number of slots: one slot fewer is no bug there. */
static bool has_lookahead(const sched *sc)
{
    for (int i = 0; i < sc->nsecs; ++i) {
        const ir_section *sec = &sc->secs[i];
        for (int j = 0; sec->kind == SEC_LOOP && j < sec->nops; ++j)
            for (int k = 0; k < sec->nops; ++k) {
                const ir_op *c = &sec->ops[j], *u = &sec->ops[k];
                if (c->kind == OP_COPY && u->kind == OP_COMPUTE && c->step_off > u->step_off
                    && roles_meet(c->role, u->role))
                    return true;
            }
    }
    return false;
}

/* Move a release in front of the compute it follows (same section, step and threads). */
/* A block-wide barrier between positions a and b of a section: it orders every thread's
 * compute before any later write, wherever the release stands. */
static bool block_barrier_between(const ir_section *sec, int a, int b)
{
    for (int i = a + 1; i < b; ++i)
        if (sec->ops[i].kind == OP_BARRIER && sec->ops[i].role == ROLE_ALL)
            return true;
    return false;
}

/* Move a release before the compute it follows. Where a block-wide barrier separates them
 * the move is harmless (the barrier already orders the reads before any refill), so the
 * fault does not apply there. */
static bool move_release_early(sched *sc)
{
    for (int i = 0; i < sc->nsecs; ++i) {
        ir_section *sec = &sc->secs[i];
        for (int j = 0; j < sec->nops; ++j) {
            if (!is_release(&sec->ops[j]))
                continue;
            for (int k = j - 1; k >= 0; --k) {
                const ir_op *c = &sec->ops[k];
                if (c->kind != OP_COMPUTE || c->step_off != sec->ops[j].step_off
                    || !roles_meet(c->role, sec->ops[j].role))
                    continue;
                if (block_barrier_between(sec, k, j))
                    break;
                ir_op rel = sec->ops[j];
                memmove(&sec->ops[k + 1], &sec->ops[k], sizeof rel * (size_t)(j - k));
                sec->ops[k] = rel;
                return true;
            }
        }
    }
    return false;
}

static bool inject_tx(sched *sc, long long delta)
{
    ir_op *op = find_op(sc, is_arrive_tx, NULL);
    if (!op || op->bytes <= 0)
        return false;
    op->bytes = op->bytes + delta < 0 ? 0 : op->bytes + delta;
    return true;
}

/* Only where an operation uses the async proxy does a proxy fence order anything. */
static bool inject_drop_fence(sched *sc)
{
    bool async = (sc->track == TRACK_BARRIER && sched_has(sc, is_arrive_tx))
                 || sched_has(sc, is_async_store);
    if (!async || !sched_has(sc, is_fence))
        return false;
    drop_all(sc, is_fence);
    return true;
}

static bool is_cluster_release(const ir_op *op) { return op->kind == OP_RELEASE && op->cluster; }

/* Each cluster-wide release arrives on its own block's barrier only. */
static bool inject_local_release(sched *sc)
{
    bool any = false;
    for (ir_op *op = NULL; (op = find_op(sc, is_cluster_release, NULL)); any = true)
        op->cluster = false;
    return any;
}

/* The first accumulator by column keeps one register a thread fewer: its last columns'
 * sums are lost. */
static bool inject_accum_regs_short(sched *sc)
{
    for (int i = 0; sc->accum_off && i < sc->spec->naccums; ++i)
        if (sc->accum_regs[i]) {
            sc->accum_regs[i]--;
            return true;
        }
    return false;
}

/* The first accumulator's shared bins start in the ring's last slot. */
static bool inject_bins_on_ring(sched *sc)
{
    const long long end = ring_end(sc);
    for (int i = 0; sc->accum_off && end > 0 && i < sc->spec->naccums; ++i)
        if (sc->spec->accums[i].is_array && sc->accum_off[i] >= 0) {
            sc->accum_off[i] = end - 16;
            return true;
        }
    return false;
}

bool verify_inject(sched *sc, fault_kind k)
{
    ir_op *op;
    switch (k) {
    case FAULT_DROP_WAIT: return drop_wait(sc);
    case FAULT_WAIT_PLUS_ONE:
        if (!(op = find_op(sc, is_wait, NULL)))
            return false;
        op->n++;
        return true;
    case FAULT_DROP_COMMIT: return drop_first(sc, is_commit);
    case FAULT_FLIP_PARITY:
        if (!(op = find_op(sc, is_full_wait, NULL)) && !(op = find_op(sc, is_parity_wait, NULL)))
            return false;
        op->parity_flip = !op->parity_flip;
        return true;
    case FAULT_EXPECT_TX_SHORT: return inject_tx(sc, -16);
    case FAULT_EXPECT_TX_LONG: return inject_tx(sc, 16);
    case FAULT_DROP_FENCE: return inject_drop_fence(sc);
    case FAULT_ONE_SLOT_SHORT:
        if (sc->nslots < 2 || !has_lookahead(sc))
            return false;
        sc->nslots--;
        return true;
    case FAULT_CLAIM_RING_SHORT:
        if (sc->claim_ring < 3)
            return false;
        sc->claim_ring -= 2;
        return true;
    case FAULT_REGS_OVER:
        if (!sc->regs_launch)
            return false;
        sc->regs_consumer += 8;
        return true;
    case FAULT_ACCUM_REGS_SHORT: return inject_accum_regs_short(sc);
    case FAULT_BINS_ON_RING: return inject_bins_on_ring(sc);
    case FAULT_DROP_RELEASE: return drop_first(sc, is_release);
    case FAULT_DROP_ARRIVE: return drop_first(sc, is_full_arrive) || drop_first(sc, is_any_arrive);
    case FAULT_EARLY_RELEASE: return move_release_early(sc);
    case FAULT_LOCAL_RELEASE: return inject_local_release(sc);
    case FAULT_CLUSTER_COUNT_SHORT:
        if (sc->cluster < 2)
            return false;
        sc->empty_arrivals /= sc->cluster;
        return true;
    case FAULT_DROP_ARRAY_CHECK: case FAULT_LATE_SELECT: case FAULT_DROP_PARAM:
    case FAULT_CHUNK_BUFFERS_SHORT: case FAULT_CHUNK_COPY_OUT_EARLY:
    case FAULT_CHUNK_PART_OUT_EARLY: case FAULT_FOLD_BEFORE_END:
        break;   /* the host plan's (verify_inject_host) */
    case FAULT_NONE: case FAULT__COUNT: break;
    }
    return false;
}
