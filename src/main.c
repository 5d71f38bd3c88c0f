/* main: the command line. Read the spec, check it, plan one schedule per architecture,
 * verify every schedule, and only then write the outputs, each through a temporary file
 * renamed into place (src/output.c), so that an error leaves nothing behind. */
#include "pipegen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    const char *input;
    const char *output;          /* -o; "-" for stdout */
    const char *header;          /* --header */
    const char *test_out;        /* --emit-test= */
    const char *bench_out;       /* --emit-bench= */
    const char *depfile;         /* -MF (with -MD) */
    const char **dep_targets;    /* -MT, each */
    int ndep_targets;
    bool depend;                 /* -MD */
    bool lines;
    bool verify_only, dump_ast, dump_ir;
    mech lower;                  /* MECH__COUNT: as the spec says */
    int grid;                    /* --grid: -1 as the spec says, else an ast_grid */
    fault_kind fault;
    bool no_verify;              /* --no-verify: write even an unproven schedule (testing) */
    long long watchdog;          /* --watchdog[=CYCLES] */
    int producer_warps;          /* --producer-warps=N; -1 as the spec says */
    target tgt;
} options;

static const char usage[] =
    "usage: pipegen [options] SPEC.pipe\n"
    "\n"
    "  -o FILE             write the CUDA source to FILE (and its header beside it, .cuh);\n"
    "                      '-' writes the source to standard output\n"
    "  --header FILE       write the header to FILE\n"
    "  --lower=NAME        lower every staged array with mechanism NAME\n"
    "  --arch=LIST         target architectures, e.g. sm_80,sm_90 (default sm_80,sm_90)\n"
    "  --grid=KIND         per_tile or persistent, overriding the spec's 'grid'\n"
    "  --list-lowerings    list the mechanisms and exit\n"
    "  --verify            check the spec and prove its schedules; write nothing\n"
    "  --emit-test=FILE    also write a standalone differential test driver\n"
    "  --emit-bench=FILE   also write a standalone benchmark driver\n"
    "  -MD, -MF FILE, -MT TARGET\n"
    "                      write a make depfile (as gcc does)\n"
    "  --no-lines          no #line directives into the spec\n"
    "  --dump-ast, --dump-ir\n"
    "                      print the AST or the schedule IR and exit\n"
    "  --producer-warps=N  warp-specialize: N warps copy, the others compute\n"
    "  --watchdog[=CYCLES] barrier waits trap with a message after CYCLES (default 2e9)\n"
    "  --inject-fault=KIND corrupt the schedule before verification (testing the verifier)\n"
    "  --no-verify         write the output even when the verifier finds an error (with\n"
    "                      --inject-fault and --watchdog: see a fault trap on the GPU)\n"
    "  --version, --help\n";

/* ------------------------------------------------------------------ options */

static bool parse_arch(const char *list, target *t, diag_ctx *d)
{
    t->narch = 0;
    const char *p = list;
    while (*p) {
        int sm = 0, n = 0;
        if (sscanf(p, "sm_%d%n", &sm, &n) != 1 || (sm != 80 && sm != 86 && sm != 87 && sm != 89
                                                   && sm != 90)) {
            diag_fatal_noloc(d, "bad --arch '%s' (expected a list of sm_80, sm_86, sm_87, "
                             "sm_89, sm_90)", list);
            return false;
        }
        for (int i = 0; i < t->narch; ++i)
            if (t->sm[i] == sm)
                sm = 0;
        if (sm && t->narch == MAX_ARCHS) {
            diag_fatal_noloc(d, "too many architectures in --arch");
            return false;
        }
        if (sm)
            t->sm[t->narch++] = sm;
        p += n;
        if (*p == ',')
            ++p;
        else if (*p) {
            diag_fatal_noloc(d, "bad --arch '%s'", list);
            return false;
        }
    }
    /* Ascending order: the launcher tries the highest first. */
    for (int i = 1; i < t->narch; ++i)
        for (int j = i; j > 0 && t->sm[j - 1] > t->sm[j]; --j) {
            int x = t->sm[j];
            t->sm[j] = t->sm[j - 1];
            t->sm[j - 1] = x;
        }
    if (t->narch == 0)
        diag_fatal_noloc(d, "bad --arch '%s' (expected a list of sm_80, sm_86, sm_87, sm_89, "
                         "sm_90)", list);
    return t->narch > 0;
}

static const char *opt_value(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

static bool parse_value_opt(options *o, const char *arg, diag_ctx *d)
{
    const char *v;
    if ((v = opt_value(arg, "--lower"))) {
        o->lower = mech_from_name(v);
        if (o->lower == MECH__COUNT) {
            diag_fatal_noloc(d, "unknown lowering '%s' (pipegen --list-lowerings)", v);
            return false;
        }
    } else if ((v = opt_value(arg, "--grid"))) {
        if (strcmp(v, "per_tile") && strcmp(v, "persistent")) {
            diag_fatal_noloc(d, "bad --grid '%s' (expected per_tile or persistent)", v);
            return false;
        }
        o->grid = strcmp(v, "per_tile") ? GRID_PERSISTENT : GRID_PER_TILE;
    } else if ((v = opt_value(arg, "--producer-warps"))) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || end == v || n < 0 || n > 31) {
            diag_fatal_noloc(d, "bad --producer-warps '%s' (expected 0 to 31)", v);
            return false;
        }
        o->producer_warps = (int)n;
    } else if ((v = opt_value(arg, "--watchdog"))) {
        char *end;
        double c = strtod(v, &end);
        /* NaN fails every comparison: only a number in range passes. */
        if (*end || end == v || !(c >= 1 && c <= 9e18)) {
            diag_fatal_noloc(d, "bad --watchdog '%s' (expected a number of cycles)", v);
            return false;
        }
        o->watchdog = (long long)c;
    } else if ((v = opt_value(arg, "--arch"))) {
        return parse_arch(v, &o->tgt, d);
    } else if ((v = opt_value(arg, "--emit-test"))) {
        o->test_out = v;
    } else if ((v = opt_value(arg, "--emit-bench"))) {
        o->bench_out = v;
    } else if ((v = opt_value(arg, "--inject-fault"))) {
        o->fault = verify_fault_from_name(v);
        if (o->fault == FAULT__COUNT || o->fault == FAULT_NONE) {
            diag_fatal_noloc(d, "unknown fault kind '%s'", v);
            return false;
        }
    } else {
        diag_fatal_noloc(d, "unknown option '%s' (pipegen --help)", arg);
        return false;
    }
    return true;
}

static void list_lowerings(void)
{
    for (int m = 0; m < MECH__COUNT; ++m)
        printf("%-18s %-6s %s\n", mech_name((mech)m),
               mech_min_sm((mech)m) ? (mech_min_sm((mech)m) == 90 ? "sm_90" : "sm_80") : "all",
               mech_implemented((mech)m) ? "implemented" : "not implemented yet");
}

/* Returns 0 to go on, or the exit status (+1) for options that finish the run. */
static int parse_args(int argc, char **argv, options *o, diag_ctx *d)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
        if ((!strcmp(a, "-o") || !strcmp(a, "--header") || !strcmp(a, "-MF")
             || !strcmp(a, "-MT")) && !has_next) {
            diag_fatal_noloc(d, "option '%s' needs an argument", a);
            return 2;
        }
        if (!strcmp(a, "-o")) o->output = argv[++i];
        else if (!strcmp(a, "--header")) o->header = argv[++i];
        else if (!strcmp(a, "-MF")) o->depfile = argv[++i];
        else if (!strcmp(a, "-MT")) o->dep_targets[o->ndep_targets++] = argv[++i];
        else if (!strcmp(a, "-MD")) o->depend = true;
        else if (!strcmp(a, "--no-lines")) o->lines = false;
        else if (!strcmp(a, "--verify")) o->verify_only = true;
        else if (!strcmp(a, "--no-verify")) o->no_verify = true;
        else if (!strcmp(a, "--watchdog")) o->watchdog = 2000000000LL;
        else if (!strcmp(a, "--dump-ast")) o->dump_ast = true;
        else if (!strcmp(a, "--dump-ir")) o->dump_ir = true;
        else if (!strcmp(a, "--version")) { printf("pipegen %s\n", PIPEGEN_VERSION); return 1; }
        else if (!strcmp(a, "--help")) { fputs(usage, stdout); return 1; }
        else if (!strcmp(a, "--list-lowerings")) { list_lowerings(); return 1; }
        else if (a[0] == '-' && a[1]) { if (!parse_value_opt(o, a, d)) return 2; }
        else if (o->input) { diag_fatal_noloc(d, "more than one input file"); return 2; }
        else o->input = a;
    }
    if (!o->input) {
        fputs(usage, stderr);
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------------ files */

static char *read_file(arena *a, const char *path, size_t *len, diag_ctx *d)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        diag_fatal_noloc(d, "cannot read '%s': %s", path, strerror(errno));
        return NULL;
    }
    strbuf sb;
    sb_init(&sb, a);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_putn(&sb, buf, n);
    bool bad = ferror(f);
    if (f != stdin)
        fclose(f);
    if (bad) {
        diag_fatal_noloc(d, "cannot read '%s'", path);
        return NULL;
    }
    *len = sb.len;
    return sb.data;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* "dir/out.cu" -> "dir/out" + ext */
static const char *with_ext(arena *a, const char *path, const char *ext)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    return arena_printf(a, "%.*s%s", (int)n, path, ext);
}

static const char *guard_of(arena *a, const char *header)
{
    char *g = arena_printf(a, "PIPEGEN_%s_", base_name(header));
    for (char *p = g; *p; ++p)
        *p = (*p >= 'a' && *p <= 'z') ? (char)(*p - 32)
             : ((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')) ? *p : '_';
    return g;
}

/* ------------------------------------------------------------------ the run */

typedef struct run {
    arena *a;
    diag_ctx d;
    options o;
    spec s;
    emit_unit u;
} run;

/* The host plan of the schedules, faulted, dumped and verified as they are. */
static bool plan_launcher(run *r)
{
    host_plan *hp = plan_host(r->a, &r->s, r->u.scheds, r->u.nscheds);
    bool host_fault = r->o.fault >= FAULT_DROP_ARRAY_CHECK;
    if (host_fault && !verify_inject_host(hp, r->o.fault)) {
        diag_fatal_noloc(&r->d, "fault '%s' does not apply to the host plan",
                         verify_fault_name(r->o.fault));
        return false;
    }
    if (r->o.dump_ir)
        host_dump(stdout, hp, r->u.scheds);
    r->u.host = hp;
    return verify_host(&r->d, &r->s, hp) || r->o.no_verify;
}

static bool plan_all(run *r)
{
    const spec *s = &r->s;
    mech m = r->o.lower != MECH__COUNT ? r->o.lower : s->mech;
    r->u.spec = s;
    r->u.scheds = arena_alloc(r->a, sizeof(sched *) * MAX_ARCHS);
    for (int i = 0; i < r->o.tgt.narch; ++i) {
        int sm = r->o.tgt.sm[i];
        sched *sc = plan_schedule(r->a, &r->d, s, m == MECH_AUTO ? mech_auto(s, sm) : m, sm);
        if (!sc)
            return false;
        if (r->o.fault != FAULT_NONE && r->o.fault < FAULT_DROP_ARRAY_CHECK
            && !verify_inject(sc, r->o.fault)) {
            fprintf(stderr, "pipegen: fault '%s' is not applicable to the %s lowering\n",
                    verify_fault_name(r->o.fault), mech_name(sc->mech));
            exit(2);
        }
        if (r->o.dump_ir)
            ir_dump(stdout, sc);
        if (!verify_schedule(&r->d, sc) && !r->o.no_verify)
            return false;
        r->u.scheds[r->u.nscheds++] = sc;
    }
    return plan_launcher(r);
}

/* A name in a depfile, escaped as gcc does: spaces and '#' with a backslash, '$' doubled. */
static void dep_name(strbuf *sb, const char *name)
{
    for (const char *c = name; *c; ++c) {
        if (*c == ' ' || *c == '#')
            sb_putn(sb, "\\", 1);
        if (*c == '$')
            sb_putn(sb, "$", 1);
        sb_putn(sb, c, 1);
    }
}

static void write_depfile(run *r, strbuf *sb, const char *cu, const char *cuh)
{
    sb_init(sb, r->a);
    for (int i = 0; i < r->o.ndep_targets; ++i) {
        sb_puts(sb, i ? " " : "");
        dep_name(sb, r->o.dep_targets[i]);
    }
    if (!r->o.ndep_targets) {
        dep_name(sb, cu);
        sb_puts(sb, " ");
        dep_name(sb, cuh);
    }
    sb_puts(sb, ": ");
    dep_name(sb, r->o.input);
    sb_puts(sb, "\n");
}

static bool emit_all(run *r)
{
    const options *o = &r->o;
    bool to_stdout = o->output && !strcmp(o->output, "-");
    const char *cu = o->output ? o->output : arena_printf(r->a, "%s.cu", r->s.name);
    const char *cuh = o->header ? o->header
                      : to_stdout ? arena_printf(r->a, "%s.cuh", r->s.name)
                                  : with_ext(r->a, cu, ".cuh");
    if (!out_includable(&r->d, base_name(cuh)))
        return false;
    /* File names go into #line as C strings: a '"' or a newline in one must not end it. */
    r->u.opts = (emit_opts){.lines = o->lines, .spec_path = out_c_escape(r->a, o->input),
                            .source_name = to_stdout ? "<stdout>"
                                                     : out_c_escape(r->a, base_name(cu)),
                            .header_name = base_name(cuh), .guard = guard_of(r->a, cuh),
                            .watchdog = o->watchdog};
    out_set *outs = out_new(r->a, &r->d);
    out_input(outs, o->input);
    strbuf text;
    sb_init(&text, r->a);
    emit_source(&text, &r->u);
    bool ok = out_add(outs, cu, &text);
    if (!to_stdout || o->header) {
        sb_init(&text, r->a);
        emit_header(&text, &r->u);
        ok = ok && out_add(outs, cuh, &text);
    }
    /* The drivers' #line directives lead back into the drivers themselves. */
    emit_unit driver = r->u;
    if (o->test_out && !r->s.has_reference) {
        /* The driver compares with the reference: without one it printed "(null)". */
        diag_fatal_noloc(&r->d, "--emit-test needs a 'reference' body in the spec");
        return false;
    }
    if (o->test_out) {
        driver.opts.source_name = out_c_escape(r->a, base_name(o->test_out));
        sb_init(&text, r->a);
        emit_test(&text, &driver);
        ok = ok && out_add(outs, o->test_out, &text);
    }
    if (o->bench_out) {
        driver.opts.source_name = out_c_escape(r->a, base_name(o->bench_out));
        sb_init(&text, r->a);
        emit_bench(&text, &driver);
        ok = ok && out_add(outs, o->bench_out, &text);
    }
    if (o->depend) {
        write_depfile(r, &text, cu, cuh);
        ok = ok && out_add(outs, o->depfile ? o->depfile : with_ext(r->a, cu, ".d"), &text);
    }
    return ok && out_commit(outs);
}

static int compile(run *r)
{
    size_t len = 0;
    char *src = read_file(r->a, r->o.input, &len, &r->d);
    if (!src)
        return 1;
    diag_init(&r->d, stderr, r->o.input, src, len);
    ast_file *f = parse_source(r->a, &r->d, r->o.input, src, len);
    if (r->d.errors)
        return 1;
    if (r->o.dump_ast) {
        ast_dump(stdout, f);
        return 0;
    }
    if (!sema_check(r->a, &r->d, f, &r->o.tgt, &r->s))
        return 1;
    r->s.file = out_c_escape(r->a, base_name(r->o.input));   /* for the banner */
    if (r->o.grid >= 0)
        r->s.grid = (ast_grid)r->o.grid;
    if (r->o.producer_warps >= 0)
        r->s.producer_warps = r->o.producer_warps;
    if (r->s.producer_warps * 32 >= r->s.threads) {
        diag_fatal_noloc(&r->d, "%d producer warps leave no consumer warp in a block of %d "
                         "threads", r->s.producer_warps, r->s.threads);
        return 1;
    }
    if (!plan_all(r))
        return 1;
    if (r->o.verify_only || r->o.dump_ir)
        return 0;
    return emit_all(r) ? 0 : 1;
}

int main(int argc, char **argv)
{
    run r = {.a = arena_new()};
    diag_init(&r.d, stderr, "pipegen", "", 0);
    r.o = (options){.lines = true, .lower = MECH__COUNT, .fault = FAULT_NONE,
                  .grid = -1, .producer_warps = -1};
    parse_arch("sm_80,sm_90", &r.o.tgt, &r.d);
    r.o.dep_targets = arena_alloc(r.a, sizeof(const char *) * (size_t)argc);
    int status = parse_args(argc, argv, &r.o, &r.d);
    if (status)
        status -= 1;
    else
        status = compile(&r);
    /* What --help, the dumps or -o - printed is lost unless its flush succeeds. */
    if (!out_close_stdout(&r.d) && status == 0)
        status = 1;
    arena_free(r.a);
    return status;
}
