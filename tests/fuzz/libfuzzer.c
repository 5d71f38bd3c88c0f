/* libFuzzer harness over the whole compiler but its file I/O: one input is a command line
 * and a spec, run as main.c runs them (parse, sema with the overrides, plan and verify
 * per architecture, the host plan and its verifier, every emitter) into memory, with
 * diagnostics and dumps going to /dev/null. Built with clang -fsanitize=fuzzer,address,
 * undefined (make build/fuzz/fuzz-pipegen); run by tests/fuzz/libfuzzer.sh.
 *
 * The input's first HDR bytes are the command line, the rest the spec:
 *   byte 0  --lower: 0 the spec's own, else mechanism (b - 1) % MECH__COUNT (auto included)
 *   byte 1  --grid: b % 3: 0 the spec's own, 1 per_tile, 2 persistent
 *   byte 2  --arch: a bit per known architecture (sm_80 86 87 89 90; the first MAX_ARCHS
 *           set), none: the default sm_80,sm_90
 *   byte 3  --producer-warps: 0 the spec's own, else (b - 1) % 32
 *   byte 4  flags: 1 -fdiagnostics-format=json, 2 -Werror, 4 -w, 8 --no-lines,
 *           16 --watchdog, 32 --inject-fault (byte 5), 64 --dump-ast and --dump-ir,
 *           128 -Wno-stages -Wno-hints
 *   byte 5  the fault: 1 + b % (FAULT__COUNT - 1)
 * An input of HDR zero bytes and a spec is `pipegen SPEC`: tests/fuzz/libfuzzer.sh makes
 * the seed corpus so. A crash, a sanitizer report, a leak or a timeout is a finding. */
#include "pipegen.h"

#include <stdlib.h>
#include <string.h>

enum { HDR = 6 };

static const int archs[] = {80, 86, 87, 89, 90};

static FILE *sink(void)
{
    static FILE *null;
    if (!null)
        null = fopen("/dev/null", "w");
    if (!null)
        abort();
    return null;
}

/* What main.c's plan_all does: a schedule per architecture, faulted and verified, then the
 * host plan. Returns false when the spec stops there (with diagnostics). */
static bool plan_all(arena *a, diag_ctx *d, const spec *s, const target *t, fault_kind fault,
                     bool dump, emit_unit *u)
{
    u->spec = s;
    u->scheds = arena_alloc(a, sizeof(sched *) * MAX_ARCHS);
    for (int i = 0; i < t->narch; ++i) {
        sched *sc = plan_schedule(a, d, s, s->mech, t->sm[i], t->specific[i]);
        if (!sc)
            return false;
        if (fault != FAULT_NONE && fault < FAULT_DROP_ARRAY_CHECK && !verify_inject(sc, fault))
            return false;
        if (dump)
            ir_dump(sink(), sc);
        if (!verify_schedule(d, sc))
            return false;
        u->scheds[u->nscheds++] = sc;
    }
    host_plan *hp = plan_host(a, s, u->scheds, u->nscheds);
    if (fault >= FAULT_DROP_ARRAY_CHECK && !verify_inject_host(hp, fault))
        return false;
    if (dump)
        host_dump(sink(), hp, u->scheds);
    u->host = hp;
    return verify_host(d, s, hp);
}

static void emit_all(arena *a, emit_unit *u, bool lines, long long watchdog)
{
    u->opts = (emit_opts){.lines = lines, .spec_path = "fuzz.pipe", .source_name = "fuzz.cu",
                          .header_name = "fuzz.cuh", .guard = "PIPEGEN_FUZZ_CUH_",
                          .watchdog = watchdog};
    strbuf out;
    sb_init(&out, a);
    emit_source(&out, u);
    sb_init(&out, a);
    emit_header(&out, u);
    if (u->spec->has_reference) {
        sb_init(&out, a);
        emit_test(&out, u);
    }
    sb_init(&out, a);
    emit_bench(&out, u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < HDR)
        return 0;
    const uint8_t *h = data;
    data += HDR;
    size -= HDR;

    arena *a = arena_new();
    diag_ctx d;
    diag_init(&d, sink(), NULL, NULL, 0);
    d.json = h[4] & 1;
    d.werror = h[4] & 2;
    d.no_warnings = h[4] & 4;
    if (h[4] & 128)
        d.warn_off = (1u << W__COUNT) - 1;

    target t = {.narch = 0};
    for (int i = 0; i < 5 && t.narch < MAX_ARCHS; ++i)
        if (h[2] & (1 << i))
            t.sm[t.narch++] = archs[i];
    if (!t.narch) {
        t.sm[t.narch++] = 80;
        t.sm[t.narch++] = 90;
    }
    if (h[0])
        t.lower = (cmd_override){"--lower=fuzz", (h[0] - 1) % MECH__COUNT};
    if (h[1] % 3)
        t.grid = (cmd_override){"--grid=fuzz", h[1] % 3 == 1 ? GRID_PER_TILE : GRID_PERSISTENT};
    if (h[3])
        t.producer_warps = (cmd_override){"--producer-warps=fuzz", (h[3] - 1) % 32};
    fault_kind fault = h[4] & 32 ? (fault_kind)(1 + h[5] % (FAULT__COUNT - 1)) : FAULT_NONE;
    bool dump = h[4] & 64;

    /* The spec as main.c reads it: the bytes, NUL-terminated (NULs inside kept). */
    char *src = arena_alloc(a, size + 1);
    if (size)
        memcpy(src, data, size);
    diag_set_source(&d, "fuzz.pipe", src, size);
    ast_file *f = parse_source(a, &d, "fuzz.pipe", src, size);
    if (!d.errors) {
        if (dump)
            ast_dump(sink(), f);
        spec s;
        emit_unit u;
        memset(&s, 0, sizeof s);
        memset(&u, 0, sizeof u);
        if (sema_check(a, &d, f, &t, &s)) {
            s.file = "fuzz.pipe";
            if (plan_all(a, &d, &s, &t, fault, dump, &u))
                emit_all(a, &u, !(h[4] & 8), h[4] & 16 ? 2000000000LL : 0);
        }
    }
    diag_finish(&d);
    arena_free(a);
    return 0;
}
