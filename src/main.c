/* main: the command line. Read the spec, check it, plan one schedule per architecture,
 * verify every schedule, and only then write the outputs, each through a temporary file
 * renamed into place (src/output.c), so that an error leaves nothing behind. */
#define _XOPEN_SOURCE 700   /* realpath */
#include "pipegen.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>   /* isatty */

/* A depfile target: as given (-MT), or quoted for make (-MQ). */
typedef struct dep_target {
    const char *name;
    bool quote;
} dep_target;

typedef struct options {
    const char *input;
    const char *output;          /* -o; "-" for stdout */
    const char *header;          /* --header */
    const char *test_out;        /* --emit-test */
    const char *bench_out;       /* --emit-bench */
    const char *depfile;         /* -MF (with -MD) */
    dep_target *dep_targets;     /* -MT, -MQ, each */
    int ndep_targets;
    bool depend;                 /* -MD */
    bool dep_phony;              /* -MP */
    bool lines;
    bool verify_only, dump_ast, dump_ir;
    const char **prefix_maps;    /* -ffile-prefix-map=OLD=NEW, each as given */
    int nprefix_maps;
    const char *color;           /* -fdiagnostics-color: never, always, auto */
    fault_kind fault;
    const char *fault_opt;       /* --inject-fault as written */
    bool no_verify;              /* --no-verify: write even an unproven schedule (testing) */
    bool verbose;                /* -v: the version and each step on standard error */
    const char *wisdom;          /* --wisdom, else $PIPEGEN_WISDOM (NULL: none) */
    const char *wisdom_gpu;      /* --wisdom-gpu, else $PIPEGEN_WISDOM_GPU (NULL: any) */
    bool spec_hash;              /* --spec-hash */
    bool spec_threads;           /* --spec-threads */
    long long watchdog;          /* --watchdog[=CYCLES] */
    target tgt;                  /* --arch, and the overrides --lower, --grid, --producer-warps,
                                    --threads */
} options;

static const char usage[] =
    "usage: pipegen [options] SPEC.pipe     (SPEC.pipe '-': standard input)\n"
    "\n"
    "Options that take a value accept --opt=VALUE and --opt VALUE (-oFILE and -o FILE).\n"
    "  -o FILE, --output FILE  write the CUDA source to FILE (and its header beside it,\n"
    "                      .cuh); '-' writes the source to standard output\n"
    "  --header FILE       write the header to FILE\n"
    "  --emit-test FILE    also write a standalone differential test driver\n"
    "  --emit-bench FILE   also write a standalone benchmark driver\n"
    "  -MD                 write a make depfile (default name: the source's, plus .d)\n"
    "  -MF FILE            the depfile's name\n"
    "  -MT TARGET          a target of the depfile, as given (instead of the outputs)\n"
    "  -MQ TARGET          a target of the depfile, quoted for make\n"
    "  -MP                 a phony target for the spec\n"
    "  --no-lines          no #line directives into the spec\n"
    "  -ffile-prefix-map=OLD=NEW\n"
    "                      write the spec's path with OLD replaced by NEW (#line, banner)\n"
    "  --lower NAME        lower every staged array with lowering NAME\n"
    "  --list-lowerings    list the lowerings and exit\n"
    "  --arch LIST         target architectures, e.g. sm_80,sm_90 (default sm_80,sm_90)\n"
    "  --grid KIND         per_tile or persistent, overriding the spec's 'grid'\n"
    "  --wisdom FILE       auto takes the lowering a tuning run recorded for the spec and\n"
    "                      target in FILE (default: $PIPEGEN_WISDOM, where set)\n"
    "  --wisdom-gpu NAME   only the records measured on GPU NAME, as nvidia-smi names it\n"
    "                      (default: $PIPEGEN_WISDOM_GPU, where set; else any GPU's)\n"
    "  --spec-hash         print the spec's hash (the key of its wisdom records) and exit\n"
    "  --spec-threads      print the block sizes the spec's 'threads' offers and exit\n"
    "  --threads N         the block size N, one of those the spec's 'threads' offers\n"
    "  --producer-warps N  warp-specialize: N warps copy, the others compute\n"
    "  --watchdog[=CYCLES] barrier waits trap with a message after CYCLES (default 2e9)\n"
    "  --verify            check the spec and prove its schedules; write nothing\n"
    "  --dump-ast, --dump-ir\n"
    "                      print the AST or the schedule IR and exit\n"
    "  --inject-fault KIND corrupt the schedule before verification (testing the verifier)\n"
    "  --no-verify         write the output even when the verifier finds an error (with\n"
    "                      --inject-fault and --watchdog: see a fault trap on the GPU)\n"
    "  -Wstages            warn about 'stages N' slots a block never fills\n"
    "  -Whints             warn about cache, prefetch, evict hints the lowering ignores\n"
    "  -Wperf              warn about plans with a measured performance cliff\n"
    "  -Wno-NAME           no warnings of class NAME\n"
    "  -w                  no warnings at all\n"
    "  -Werror             make every warning an error\n"
    "  -fdiagnostics-color[=never|always|auto]\n"
    "                      colour diagnostics (default auto: on a terminal, unless NO_COLOR)\n"
    "  -fdiagnostics-format=text|json\n"
    "                      json: one JSON array of {file, line, column, severity, message}\n"
    "  --                  what follows is the spec's name, even if it starts with '-'\n"
    "  -Wall, -Wextra      taken as gcc takes them: every class is on by default\n"
    "  -v                  print the version and each step of the run on standard error\n"
    "  -h, --help, --version\n";

/* ------------------------------------------------------------------ options */

static void bad_arch(const char *list, diag_ctx *d)
{
    char valid[128] = "";
    int specific = 0;
    for (int i = 0; i < arch_count(); ++i) {
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%ssm_%d",
                 i ? ", " : "", arch_at(i)->sm);
        if (!specific && arch_at(i)->has_specific)
            specific = arch_at(i)->sm;
    }
    diag_fatal_noloc(d, "bad --arch '%s' (expected a comma-separated list of %s, those from "
                     "sm_%d on also arch-specific as sm_%da; nvcc's other names, such as sm_75 "
                     "or sm_101, have no kernel here)", list, valid, specific, specific);
}

/* Insert sm into the ascending list: the launcher tries the highest first. sm_90 and
 * sm_90a are one target, arch-specific if either was. */
static bool add_arch(target *t, int sm, bool specific, diag_ctx *d)
{
    int i = 0;
    while (i < t->narch && t->sm[i] < sm)
        ++i;
    if (i < t->narch && t->sm[i] == sm) {
        t->specific[i] |= specific;
        return true;
    }
    if (t->narch == MAX_ARCHS) {
        diag_fatal_noloc(d, "too many architectures in --arch");
        return false;
    }
    memmove(&t->sm[i + 1], &t->sm[i], sizeof t->sm[0] * (size_t)(t->narch - i));
    memmove(&t->specific[i + 1], &t->specific[i], sizeof t->specific[0] * (size_t)(t->narch - i));
    t->sm[i] = sm;
    t->specific[i] = specific;
    t->narch++;
    return true;
}

/* A run of n decimal digits at p (n > 0), and nothing else: no sign, no blank, no base
 * prefix (what strtol, strtod and scanf's %d would also take). */
static bool all_digits(const char *p, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (p[i] < '0' || p[i] > '9')
            return false;
    return n > 0;
}

static bool parse_arch(const char *list, target *t, diag_ctx *d)
{
    t->narch = 0;
    for (const char *p = list; *p;) {
        /* Each name exactly sm_NN or sm_NNN, as nvcc spells it (not "sm_ 80", "sm_+80",
         * "sm_080"), from sm_90 on also with nvcc's arch-specific "a". */
        size_t n = strcspn(p, ",");
        const bool specific = n > 3 && p[n - 1] == 'a';
        const size_t digits = n - 3 - specific;
        int sm = (digits == 2 || digits == 3) && !strncmp(p, "sm_", 3)
                 && all_digits(p + 3, digits) && p[3] != '0' ? atoi(p + 3) : 0;
        const arch_info *arch = arch_find(sm);
        if (!arch || (specific && !arch->has_specific) || (p[n] == ',' && !p[n + 1])) {
            bad_arch(list, d);
            return false;
        }
        if (!add_arch(t, sm, specific, d))
            return false;
        p += n + (p[n] == ',');
    }
    if (t->narch == 0)
        bad_arch(list, d);
    return t->narch > 0;
}

/* How an option takes its value. */
typedef enum opt_arg {
    ARG_NONE,
    ARG_REQUIRED,    /* --opt=V or --opt V; a one-letter or -M option also -oV */
    ARG_OPTIONAL,    /* --opt or --opt=V */
    ARG_EQUALS,      /* -fopt=V only, as gcc */
    ARG_JOINED,      /* -WNAME: the rest of the word */
} opt_arg;

typedef enum opt_id {
    O_OUTPUT, O_HEADER, O_EMIT_TEST, O_EMIT_BENCH, O_MD, O_MF, O_MT, O_MQ, O_MP, O_NO_LINES,
    O_PREFIX_MAP, O_LOWER, O_LIST_LOWERINGS, O_ARCH, O_GRID, O_PRODUCER_WARPS, O_WATCHDOG,
    O_VERIFY, O_DUMP_AST, O_DUMP_IR, O_INJECT_FAULT, O_NO_VERIFY, O_WARN, O_NO_WARNINGS,
    O_COLOR, O_FORMAT, O_VERSION, O_HELP, O_VERBOSE, O_WISDOM, O_WISDOM_GPU, O_SPEC_HASH,
    O_SPEC_THREADS, O_THREADS,
} opt_id;

static const struct opt {
    const char *name;
    opt_arg arg;
    opt_id id;
} opt_table[] = {
    {"-o", ARG_REQUIRED, O_OUTPUT}, {"--output", ARG_REQUIRED, O_OUTPUT},
    {"--header", ARG_REQUIRED, O_HEADER}, {"--emit-test", ARG_REQUIRED, O_EMIT_TEST},
    {"--emit-bench", ARG_REQUIRED, O_EMIT_BENCH}, {"-MD", ARG_NONE, O_MD},
    {"-MF", ARG_REQUIRED, O_MF}, {"-MT", ARG_REQUIRED, O_MT}, {"-MQ", ARG_REQUIRED, O_MQ},
    {"-MP", ARG_NONE, O_MP}, {"--no-lines", ARG_NONE, O_NO_LINES},
    {"-ffile-prefix-map", ARG_EQUALS, O_PREFIX_MAP}, {"--lower", ARG_REQUIRED, O_LOWER},
    {"--list-lowerings", ARG_NONE, O_LIST_LOWERINGS}, {"--arch", ARG_REQUIRED, O_ARCH},
    {"--grid", ARG_REQUIRED, O_GRID}, {"--producer-warps", ARG_REQUIRED, O_PRODUCER_WARPS},
    {"--watchdog", ARG_OPTIONAL, O_WATCHDOG}, {"--verify", ARG_NONE, O_VERIFY},
    {"--dump-ast", ARG_NONE, O_DUMP_AST}, {"--dump-ir", ARG_NONE, O_DUMP_IR},
    {"--inject-fault", ARG_REQUIRED, O_INJECT_FAULT}, {"--no-verify", ARG_NONE, O_NO_VERIFY},
    {"-W", ARG_JOINED, O_WARN}, {"-w", ARG_NONE, O_NO_WARNINGS},
    {"-fdiagnostics-color", ARG_OPTIONAL, O_COLOR},
    {"-fdiagnostics-format", ARG_EQUALS, O_FORMAT}, {"--version", ARG_NONE, O_VERSION},
    {"-h", ARG_NONE, O_HELP}, {"--help", ARG_NONE, O_HELP}, {"-v", ARG_NONE, O_VERBOSE},
    {"--wisdom", ARG_REQUIRED, O_WISDOM}, {"--wisdom-gpu", ARG_REQUIRED, O_WISDOM_GPU},
    {"--spec-hash", ARG_NONE, O_SPEC_HASH}, {"--spec-threads", ARG_NONE, O_SPEC_THREADS},
    {"--threads", ARG_REQUIRED, O_THREADS},
};
enum { NOPTS = sizeof opt_table / sizeof opt_table[0] };

/* An option as written: its table entry, its value (NULL: none) and its normal spelling
 * ("--lower=bulk") for the diagnostics it causes. */
typedef struct opt_use {
    const struct opt *opt;
    const char *value;
    const char *spelled;
} opt_use;

/* Whether word is the option opt; its value from the word, or from next (*took_next). */
static bool opt_match(const struct opt *opt, const char *word, const char *next,
                      opt_use *use, bool *took_next)
{
    size_t n = strlen(opt->name);
    if (strncmp(word, opt->name, n) != 0)
        return false;
    const char *rest = word + n;
    bool joined = opt->name[1] != '-';   /* -oFILE, -MFFILE as gcc; --opt=V for the others */
    *use = (opt_use){.opt = opt};
    *took_next = false;
    switch (opt->arg) {
    case ARG_NONE:
        return !*rest;
    case ARG_JOINED:
        use->value = rest;
        return *rest;
    case ARG_OPTIONAL:
    case ARG_EQUALS:
        use->value = *rest == '=' ? rest + 1 : NULL;
        return *rest == '=' || (!*rest && opt->arg == ARG_OPTIONAL);
    case ARG_REQUIRED:
        if (!*rest) {
            use->value = next;
            *took_next = next != NULL;
            return true;
        }
        use->value = joined ? rest : *rest == '=' ? rest + 1 : NULL;
        return use->value != NULL;
    }
    return false;
}

static const char *warn_name_at(int i) { return diag_warn_name((diag_warn)i); }

/* -WNAME, -Wno-NAME, -Werror. */
static bool set_warning(diag_ctx *d, const char *v)
{
    if (!strcmp(v, "error")) {
        d->werror = true;
        return true;
    }
    /* gcc's groups, in makefiles written for gcc: every class is on by default, and a
     * -Wno-NAME wins over a group whatever the order, as in gcc; so they change nothing. */
    if (!strcmp(v, "all") || !strcmp(v, "extra"))
        return true;
    bool off = !strncmp(v, "no-", 3);
    const char *name = off ? v + 3 : v;
    diag_warn w = diag_warn_from_name(name);
    if (w == W__COUNT && off)
        return true;   /* as gcc: turning off a class this version does not have is no error */
    if (w == W__COUNT) {
        const char *near = diag_closest(name, warn_name_at, W__COUNT);
        if (near)
            diag_fatal_noloc(d, "unknown warning option '-W%s'; did you mean '-W%s%s'?", v,
                             off ? "no-" : "", near);
        else
            diag_fatal_noloc(d, "unknown warning option '-W%s' (pipegen --help lists them)",
                             v);
        return false;
    }
    d->warn_off = off ? d->warn_off | (1u << w) : d->warn_off & ~(1u << w);
    return true;
}

/* The value is one of words (NULL-terminated); reported otherwise. */
static bool one_of(const opt_use *u, const char *const *words, diag_ctx *d)
{
    char expected[128] = "";
    for (int i = 0; words[i]; ++i) {
        if (!strcmp(u->value, words[i]))
            return true;
        size_t n = strlen(expected);
        snprintf(expected + n, sizeof expected - n, "%s%s", !i ? "" : words[i + 1] ? ", "
                 : " or ", words[i]);
    }
    diag_fatal_noloc(d, "bad %s '%s' (expected %s)", u->opt->name, u->value, expected);
    return false;
}

static bool set_lower(options *o, const opt_use *u, diag_ctx *d)
{
    mech m = sema_mech(d, (diag_origin){.opt = u->spelled}, u->value);
    o->tgt.lower = (cmd_override){u->spelled, (int)m};
    return mech_known(m);
}

static bool set_producer_warps(options *o, const opt_use *u, diag_ctx *d)
{
    /* Digits only: strtol alone also takes blanks, a sign and "-0". */
    long n = all_digits(u->value, strlen(u->value)) ? strtol(u->value, NULL, 10) : -1;
    if (n < 0 || n > 31) {
        diag_fatal_noloc(d, "bad --producer-warps '%s' (expected 0 to 31)", u->value);
        return false;
    }
    o->tgt.producer_warps = (cmd_override){u->spelled, (int)n};
    return true;
}

/* Whether the spec offers it is sema's to say (choose_threads). */
static bool set_threads(options *o, const opt_use *u, diag_ctx *d)
{
    long n = all_digits(u->value, strlen(u->value)) && strlen(u->value) <= 4
             ? strtol(u->value, NULL, 10) : -1;
    if (n < 32 || n > 1024 || n % 32) {
        diag_fatal_noloc(d, "bad --threads '%s' (expected a block size: a multiple of 32 "
                         "from 32 to 1024)", u->value);
        return false;
    }
    o->tgt.threads = (cmd_override){u->spelled, (int)n};
    return true;
}

/* A whole number of cycles, written DIGITS[.DIGITS][e|E DIGITS] (2e9, 1.5e6, 1000):
 * strtod alone also takes blanks, a sign, hexadecimal, inf and nan. */
static bool cycles_spelling(const char *v)
{
    size_t n = strspn(v, "0123456789");
    if (!n)
        return false;
    v += n;
    if (*v == '.') {
        n = strspn(++v, "0123456789");
        if (!n)
            return false;
        v += n;
    }
    if (*v == 'e' || *v == 'E') {
        n = strspn(++v, "0123456789");
        if (!n)
            return false;
        v += n;
    }
    return !*v;
}

static bool set_watchdog(options *o, const char *v, diag_ctx *d)
{
    double c = v && cycles_spelling(v) ? strtod(v, NULL) : v ? 0 : 2e9;
    /* NaN fails every comparison: only a whole number in range passes. */
    if (v && !(c >= 1 && c <= 9e18 && c == (double)(long long)c)) {
        diag_fatal_noloc(d, "bad --watchdog '%s' (expected a number of cycles)", v);
        return false;
    }
    o->watchdog = (long long)c;
    return true;
}

static bool set_fault(options *o, const opt_use *u, diag_ctx *d)
{
    o->fault = verify_fault_from_name(u->value);
    o->fault_opt = u->spelled;
    if (o->fault == FAULT__COUNT || o->fault == FAULT_NONE) {
        diag_fatal_noloc(d, "unknown fault kind '%s'", u->value);
        return false;
    }
    return true;
}

static void list_lowerings(void)
{
    for (int m = 0; m < mech_count(); ++m) {
        char from[16] = "all";
        if (mech_min_sm((mech)m))
            snprintf(from, sizeof from, "sm_%d", mech_min_sm((mech)m));
        printf("%-18s %-6s %s\n", mech_name((mech)m), from,
               mech_implemented((mech)m) ? "implemented" : "not implemented yet");
    }
}

/* What an option does to the run: go on, finish with status 0 (--help), or with 1. */
enum { GO_ON = 0, DONE_OK = 1, DONE_BAD = 2 };

static bool add_dep_target(options *o, const char *name, bool quote)
{
    o->dep_targets[o->ndep_targets++] = (dep_target){name, quote};
    return true;
}

static bool set_value_opt(options *o, const opt_use *u, diag_ctx *d)
{
    const char *v = u->value;
    switch (u->opt->id) {
    case O_OUTPUT: o->output = v; return true;
    case O_WISDOM: o->wisdom = v; return true;
    case O_WISDOM_GPU: o->wisdom_gpu = v; return true;
    case O_HEADER: o->header = v; return true;
    case O_EMIT_TEST: o->test_out = v; return true;
    case O_EMIT_BENCH: o->bench_out = v; return true;
    case O_MF: o->depfile = v; return true;
    case O_MT: return add_dep_target(o, v, false);
    case O_MQ: return add_dep_target(o, v, true);
    case O_PREFIX_MAP:
        o->prefix_maps[o->nprefix_maps++] = v;
        if (strchr(v, '='))
            return true;
        diag_fatal_noloc(d, "bad -ffile-prefix-map '%s' (expected OLD=NEW)", v);
        return false;
    case O_LOWER: return set_lower(o, u, d);
    case O_ARCH: return parse_arch(v, &o->tgt, d);
    case O_GRID:
        o->tgt.grid = (cmd_override){u->spelled, strcmp(v, "persistent") ? GRID_PER_TILE
                                                                          : GRID_PERSISTENT};
        return one_of(u, (const char *const[]){"per_tile", "persistent", NULL}, d);
    case O_PRODUCER_WARPS: return set_producer_warps(o, u, d);
    case O_THREADS: return set_threads(o, u, d);
    case O_WATCHDOG: return set_watchdog(o, v, d);
    case O_INJECT_FAULT: return set_fault(o, u, d);
    case O_WARN: return set_warning(d, v);
    case O_COLOR:
        o->color = v ? v : "always";
        return !v || one_of(u, (const char *const[]){"never", "always", "auto", NULL}, d);
    case O_FORMAT:
        d->json = !strcmp(v, "json");
        return one_of(u, (const char *const[]){"text", "json", NULL}, d);
    default: return true;
    }
}

static int apply_opt(options *o, const opt_use *u, diag_ctx *d)
{
    switch (u->opt->id) {
    case O_MD: o->depend = true; break;
    case O_MP: o->dep_phony = true; break;
    case O_NO_LINES: o->lines = false; break;
    case O_VERIFY: o->verify_only = true; break;
    case O_NO_VERIFY: o->no_verify = true; break;
    case O_DUMP_AST: o->dump_ast = true; break;
    case O_DUMP_IR: o->dump_ir = true; break;
    case O_NO_WARNINGS: d->no_warnings = true; break;
    case O_VERBOSE: o->verbose = true; break;
    case O_SPEC_HASH: o->spec_hash = true; break;
    case O_SPEC_THREADS: o->spec_threads = true; break;
    case O_VERSION: printf("pipegen %s\n", PIPEGEN_VERSION); return DONE_OK;
    case O_HELP: fputs(usage, stdout); return DONE_OK;
    case O_LIST_LOWERINGS: list_lowerings(); return DONE_OK;
    default: return set_value_opt(o, u, d) ? GO_ON : DONE_BAD;
    }
    return GO_ON;
}

static const char *long_opt_at(int i)
{
    return !strncmp(opt_table[i].name, "--", 2) ? opt_table[i].name : "";
}

/* A misspelled long option (its value aside) gets the closest one. */
static void unknown_option(arena *a, const char *word, diag_ctx *d)
{
    const char *near = NULL;
    if (!strncmp(word, "--", 2))
        near = diag_closest(arena_strndup(a, word, strcspn(word, "=")), long_opt_at, NOPTS);
    if (near)
        diag_fatal_noloc(d, "unknown option '%s'; did you mean '%s'?", word, near);
    else
        diag_fatal_noloc(d, "unknown option '%s' (pipegen --help)", word);
}

/* The option at argv[*i] (moving *i past its value); NULL after reporting it. */
static const struct opt *find_opt(arena *a, char **argv, int argc, int *i, opt_use *u,
                                  diag_ctx *d)
{
    const char *word = argv[*i], *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    for (int k = 0; k < NOPTS; ++k) {
        bool took_next;
        if (!opt_match(&opt_table[k], word, next, u, &took_next))
            continue;
        if (u->opt->arg == ARG_REQUIRED && !u->value) {
            diag_fatal_noloc(d, "option '%s' needs an argument", word);
            return NULL;
        }
        *i += took_next;
        u->spelled = u->value ? arena_printf(a, "%s=%s", u->opt->name, u->value) : word;
        return u->opt;
    }
    unknown_option(a, word, d);
    return NULL;
}

/* Diagnostics options are applied in a first pass, so that they shape every report,
 * those about the other options included. */
static bool early_opt(const opt_use *u)
{
    return u->opt->id == O_COLOR || u->opt->id == O_FORMAT;
}

static int parse_pass(arena *a, int argc, char **argv, options *o, diag_ctx *d, bool early)
{
    bool operands = false;   /* after "--" */
    for (int i = 1; i < argc; ++i) {
        const char *w = argv[i];
        if (!operands && !strcmp(w, "--")) {
            operands = true;
        } else if (operands || w[0] != '-' || !w[1]) {
            if (early)
                continue;
            if (o->input) {
                diag_fatal_noloc(d, "more than one input file");
                return DONE_BAD;
            }
            o->input = w;
        } else {
            opt_use u;
            /* The first pass reports nothing but what it applies. */
            diag_ctx quiet = {0};
            if (!find_opt(a, argv, argc, &i, &u, early ? &quiet : d)) {
                if (early)
                    continue;
                return DONE_BAD;
            }
            int status = early_opt(&u) == early ? apply_opt(o, &u, d) : GO_ON;
            if (status)
                return status;
        }
    }
    return GO_ON;
}

/* -fdiagnostics-color: auto is on when standard error is a terminal and NO_COLOR is unset
 * or empty (no-color.org); the option itself wins over NO_COLOR; JSON has no colour. */
static bool want_color(const char *when, const diag_ctx *d)
{
    if (d->json || !strcmp(when, "never"))
        return false;
    const char *no_color = getenv("NO_COLOR");
    return !strcmp(when, "always") || (isatty(fileno(d->out)) && !(no_color && *no_color));
}

/* -v: a line about the run on standard error (none in JSON, which must stay one array). */
static void say(const options *o, const diag_ctx *d, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const options *o, const diag_ctx *d, const char *fmt, ...)
{
    if (!o->verbose || d->json)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(d->out, fmt, ap);
    va_end(ap);
}

/* Returns GO_ON, or DONE_OK / DONE_BAD for a run that ends with the options. */
static int parse_args(arena *a, int argc, char **argv, options *o, diag_ctx *d)
{
    int status = parse_pass(a, argc, argv, o, d, true);
    d->color = want_color(o->color, d);
    if (!status)
        status = parse_pass(a, argc, argv, o, d, false);
    if (!status)
        say(o, d, "pipegen version %s (pipert ABI %d)\n", PIPEGEN_VERSION, PIPEGEN_PIPERT_ABI);
    if (!status && !o->input) {
        /* As gcc: -v alone asks for the version only. */
        if (o->verbose)
            return DONE_OK;
        diag_fatal_noloc(d, "no input files");
        return DONE_BAD;
    }
    return status;
}

/* ------------------------------------------------------------------ files */

/* A spec is text a person wrote: past this size the input is a mistake (pipegen
 * /dev/zero), refused as it is read instead of filling memory. docs/cli.md. */
enum { SPEC_MAX_MIB = 16, SPEC_MAX_BYTES = SPEC_MAX_MIB << 20 };

/* The spec at path ("-": standard input), named `name` in the messages; NULL after
 * reporting why it cannot be read. */
static char *read_file(arena *a, const char *path, const char *name, size_t *len, diag_ctx *d)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        diag_fatal_noloc(d, "cannot read '%s': %s", name, strerror(errno));
        return NULL;
    }
    strbuf sb;
    sb_init(&sb, a);
    char buf[65536];
    size_t n;
    while (sb.len <= SPEC_MAX_BYTES && (n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_putn(&sb, buf, n);
    int err = !ferror(f) ? 0 : errno ? errno : EIO;   /* read's errno: EISDIR for '.' */
    if (f != stdin)
        fclose(f);
    if (err)
        diag_fatal_noloc(d, "cannot read '%s': %s", name, strerror(err));
    else if (sb.len > SPEC_MAX_BYTES)
        diag_fatal_noloc(d, "cannot read '%s': larger than %d MiB", name, SPEC_MAX_MIB);
    if (err || sb.len > SPEC_MAX_BYTES)
        return NULL;
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

/* How a file written beside `from` names `to` in #include "...": to's path relative to
 * from's directory, both resolved; to's base name when a directory cannot be resolved (the
 * write fails then anyway). */
static char *real_dir(arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dir = !slash ? "." : slash == path ? "/" : arena_strndup(a, path, (size_t)(slash - path));
    return realpath(dir, NULL);
}

static const char *include_path(arena *a, const char *from, const char *to)
{
    char *fd = real_dir(a, from), *td = real_dir(a, to);
    const char *path = base_name(to);
    if (fd && td) {
        /* Both end in '/' ("/" itself as ""), so the common part ends at a '/'. */
        const char *f = arena_printf(a, "%s/", strcmp(fd, "/") ? fd : "");
        const char *t = arena_printf(a, "%s/", strcmp(td, "/") ? td : "");
        size_t common = 0;
        for (size_t i = 0; f[i] && f[i] == t[i]; ++i)
            if (f[i] == '/')
                common = i + 1;
        strbuf sb;
        sb_init(&sb, a);
        for (const char *p = f + common; *p; ++p)
            if (*p == '/')
                sb_puts(&sb, "../");
        sb_printf(&sb, "%s%s", t + common, path);
        path = sb.data;
    }
    free(fd);
    free(td);
    return path;
}

/* ------------------------------------------------------------------ the run */

typedef struct run {
    arena *a;
    diag_ctx d;
    options o;
    spec s;
    emit_unit u;
    unsigned long long spec_hash;   /* of the spec's bytes: its wisdom records' key */
    wisdom wisdom;                  /* path NULL: none given */
    const ast_file *ast;            /* the spec parsed: checked again at a record's
                                       block size (record_spec) */
} run;

/* The spec as the outputs name it (#line, banner): <stdin>, or its path with
 * -ffile-prefix-map's OLD replaced by NEW where the path starts with OLD; of several, the
 * last given that matches, as gcc. */
static const char *spec_name(run *r)
{
    const char *in = r->o.input;
    if (!strcmp(in, "-"))
        return "<stdin>";
    for (int i = r->o.nprefix_maps - 1; i >= 0; --i) {
        const char *map = r->o.prefix_maps[i];
        size_t n = (size_t)(strchr(map, '=') - map);
        if (!strncmp(in, map, n))
            return arena_printf(r->a, "%s%s", map + n + 1, in + n);
    }
    return in;
}

/* The host plan of the schedules, faulted, dumped and verified as they are; the exit
 * status as plan_all's. */
static int plan_launcher(run *r)
{
    host_plan *hp = plan_host(r->a, &r->s, r->u.scheds, r->u.nscheds);
    if (r->o.fault >= FAULT_DROP_ARRAY_CHECK && !verify_inject_host(hp, r->o.fault)) {
        diag_error_from(&r->d, (diag_origin){.opt = r->o.fault_opt}, "fault '%s' is not "
                        "applicable to this host plan (it streams no chunks)",
                        verify_fault_name(r->o.fault));
        return 2;
    }
    if (r->o.dump_ir)
        host_dump(stdout, hp, r->u.scheds);
    r->u.host = hp;
    return verify_host(&r->d, &r->s, hp) || r->o.no_verify ? 0 : 1;
}

/* The option's value, else the environment variable's where set and not empty; an empty
 * value (--wisdom=): none, whatever the environment. */
static const char *opt_or_env(const char *opt, const char *var)
{
    const char *v = opt ? opt : getenv(var);
    return v && *v ? v : NULL;
}

/* The wisdom file of --wisdom or $PIPEGEN_WISDOM, its errors quoted from it; false after
 * one. */
static bool load_wisdom(run *r)
{
    const char *path = opt_or_env(r->o.wisdom, "PIPEGEN_WISDOM");
    if (!path)
        return true;
    say(&r->o, &r->d, " reading wisdom %s\n", path);
    size_t len = 0;
    const char *text = read_file(r->a, path, path, &len, &r->d);
    if (!text)
        return false;
    if (memchr(text, '\0', len)) {
        diag_fatal_noloc(&r->d, "cannot read wisdom '%s': a NUL byte (not a text file)", path);
        return false;
    }
    const char *file = r->d.file, *src = r->d.src;
    const size_t src_len = r->d.src_len;
    diag_set_source(&r->d, path, text, len);
    bool ok = wisdom_parse(r->a, &r->d, path, opt_or_env(r->o.wisdom_gpu, "PIPEGEN_WISDOM_GPU"),
                           text, &r->wisdom);
    diag_set_source(&r->d, file, src, src_len);
    return ok;
}

/* --spec-threads: the block sizes `threads` offers, the spec's own first. */
static void print_block_sizes(const spec *s)
{
    if (!s->nthreads_offered)
        printf("%d", s->threads);
    for (int i = 0; i < s->nthreads_offered; ++i)
        printf("%s%d", i ? " " : "", s->threads_offered[i]);
    putchar('\n');
}

/* A record that cannot choose for target i: said, with how to see why. */
static void note_record_unplanned(run *r, const wisdom_record *rec, int i, int threads)
{
    const int sm = r->o.tgt.sm[i];
    const bool specific = r->o.tgt.specific[i];
    char at[32] = "";
    if (threads != spec_own_threads(&r->s))
        snprintf(at, sizeof at, " --threads=%d", threads);
    diag_note(&r->d, (srcloc){r->wisdom.path, rec->line, 1}, "this record's lowering, %s, "
              "does not plan the spec for sm_%d%s (--lower=%s%s says why): auto's own rule "
              "chooses", mech_name(rec->lowering), sm, specific ? "a" : "",
              mech_name(rec->lowering), at);
}

/* The spec checked again for target i alone, with lowering `lower` and `threads` threads
 * (why: what chose them, where not the spec as the command line has it), as --lower and
 * --threads would check it, so that the lowering's own rules hold (the compute threads its
 * producer warps leave, barriers in bodies, hints). NULL where they do not; the errors are
 * quiet's. */
static spec *spec_for_target(run *r, int i, cmd_override lower, int threads, const char *why,
                             diag_ctx *quiet)
{
    target t = r->o.tgt;
    t.narch = 1;
    t.sm[0] = r->o.tgt.sm[i];
    t.specific[0] = r->o.tgt.specific[i];
    t.lower = lower;
    if (threads != r->s.threads)
        t.threads = (cmd_override){why, threads};
    spec *again = arena_alloc(r->a, sizeof *again);
    return sema_check(r->a, quiet, r->ast, &t, again) ? again : NULL;
}

/* The spec as a wisdom record's choice for target i has it (spec_for_target). NULL, after
 * a note, where the lowering's rules refuse it, or where the command line asks for another
 * block size. */
static const spec *record_spec(run *r, const wisdom_record *rec, int i, diag_ctx *quiet)
{
    const spec *s = &r->s;
    const int want = rec->threads ? rec->threads : spec_own_threads(s);
    const srcloc at = {r->wisdom.path, rec->line, 1};
    if (want != s->threads && r->o.tgt.threads.opt) {
        diag_note(&r->d, at, "this record's block size, %d, is not %s: auto's own rule "
                  "chooses", want, r->o.tgt.threads.opt);
        return NULL;
    }
    if (!spec_offers_threads(s, want)) {
        diag_note(&r->d, at, "this record's block size, %d, is not one the spec's 'threads' "
                  "offers: auto's own rule chooses", want);
        return NULL;
    }
    const cmd_override lower = {"a wisdom record's lowering", (int)rec->lowering};
    const spec *again = spec_for_target(r, i, lower, want, "a wisdom record's block size",
                                        quiet);
    if (!again)
        note_record_unplanned(r, rec, i, want);
    return again;
}

/* auto's own rule for target i, block size included: where the spec offers several sizes
 * and nothing else picked one, the size whose plan fits the most blocks an SM, the spec's
 * own on a tie. The tile is the same at every size, so more blocks keep more of it in
 * flight (H200, cp.async: softmax8k 0.82 of cudaMemcpy at its own 512 threads, 4 blocks
 * an SM; 0.97 at 256, 6 blocks). */
static sched *plan_auto(run *r, int i)
{
    const spec *s = &r->s;
    const int sm = r->o.tgt.sm[i];
    const bool specific = r->o.tgt.specific[i];
    sched *own = plan_schedule(r->a, &r->d, s, s->mech, sm, specific), *best = own;
    if (!own || !mech_is_auto(s->mech) || s->nthreads_offered < 2 || r->o.tgt.threads.opt)
        return own;
    for (int k = 1; k < s->nthreads_offered; ++k) {
        diag_ctx quiet;
        diag_init(&quiet, NULL, r->d.file, r->d.src, r->d.src_len);
        const spec *at = spec_for_target(r, i, r->o.tgt.lower, s->threads_offered[k],
                                         "auto's block size", &quiet);
        sched *sc = at ? plan_schedule(r->a, &quiet, at, at->mech, sm, specific) : NULL;
        if (sc && !quiet.errors && plan_blocks_per_sm(sc) > plan_blocks_per_sm(best))
            best = sc;
    }
    if (best != own)
        best->own_size_blocks = plan_blocks_per_sm(own);
    return best;
}

/* The schedule for target i: where the spec leaves the lowering to auto and the wisdom
 * holds a record for the spec and the target, the record's lowering and block size (a
 * record whose choice no longer plans the spec gives way to auto's rule, with a note). */
static sched *plan_target(run *r, int i)
{
    const spec *s = &r->s;
    const int sm = r->o.tgt.sm[i];
    const bool specific = r->o.tgt.specific[i], ask = r->wisdom.path && mech_is_auto(s->mech);
    const wisdom_record *rec = ask ? wisdom_choice(&r->wisdom, &r->d, r->spec_hash, sm,
                                                   specific) : NULL;
    if (ask && !rec)
        diag_note(&r->d, (srcloc){0}, "wisdom '%s' holds no record for this spec (%016llx) "
                  "and sm_%d%s%s%s: auto's own rule chooses", r->wisdom.path, r->spec_hash, sm,
                  specific ? "a" : "", r->wisdom.gpu ? " measured on " : "",
                  r->wisdom.gpu ? r->wisdom.gpu : "");
    if (rec) {
        diag_ctx quiet;
        diag_init(&quiet, NULL, r->d.file, r->d.src, r->d.src_len);
        const spec *at = record_spec(r, rec, i, &quiet);
        sched *sc = at ? plan_schedule(r->a, &quiet, at, rec->lowering, sm, specific) : NULL;
        if (sc && !quiet.errors) {
            sc->chosen_by = rec;
            sc->wisdom_path = out_c_escape(r->a, base_name(r->wisdom.path));
            return sc;
        }
        if (at)
            note_record_unplanned(r, rec, i, at->threads);
    }
    return plan_auto(r, i);
}

/* Whether schedule sc may pack rows: per tile only (on the persistent grid, rmsnorm's
 * packed kernels spilled 12 to 40 bytes under five lowerings, ptxas sm_90, and none has
 * been timed), and with no host steps (the launcher's are the base schedules', for
 * kernels of their own shape). */
static bool packs_rows(const sched *sc)
{
    return !mech_host_steps(sc->mech) && sc->grid == GRID_PER_TILE;
}

/* The variant of base schedule sc for spec s (sc's, or one checked for lowering m)
 * packed by pack, planned quietly under m: NULL where it does not plan, or where it or sc
 * may not pack rows. */
static sched *plan_pack_as(run *r, const sched *sc, const spec *s, mech m, long long pack)
{
    if (!packs_rows(sc) || mech_host_steps(m))
        return NULL;
    diag_ctx quiet;
    diag_init(&quiet, NULL, r->d.file, r->d.src, r->d.src_len);
    sched *p = plan_schedule(r->a, &quiet, spec_packed(r->a, s, pack), m, sc->sm, sc->specific);
    if (!p || quiet.errors || p->claim_ring != sc->claim_ring || p->threads != sc->threads)
        return NULL;
    p->pack = pack;
    p->packed_from = sc;
    p->chosen_by = sc->chosen_by;
    p->wisdom_path = sc->wisdom_path;
    p->own_size_blocks = sc->own_size_blocks;
    return p;
}

/* Base schedule sc (of target i) packed by pack: under its own lowering, or under the one
 * the wisdom record that chose sc gives that pack, the spec checked again for it
 * (spec_for_target); where that does not plan, a note, and sc's lowering. */
static sched *plan_pack(run *r, const sched *sc, int i, long long pack)
{
    const mech m = wisdom_pack_lowering(sc->chosen_by, pack, sc->mech);
    if (m != sc->mech && packs_rows(sc)) {
        diag_ctx quiet;
        diag_init(&quiet, NULL, r->d.file, r->d.src, r->d.src_len);
        const cmd_override lower = {"a wisdom record's lowering for packed rows", (int)m};
        const spec *at = spec_for_target(r, i, lower, sc->threads,
                                         "a wisdom record's block size", &quiet);
        sched *p = at ? plan_pack_as(r, sc, at, m, pack) : NULL;
        if (p)
            return p;
        diag_note(&r->d, (srcloc){r->wisdom.path, sc->chosen_by->line, 1}, "this record's "
                  "lowering for rows packed %lld a work item, %s, does not plan them for "
                  "sm_%d%s: the record's %s takes them", pack, mech_name(m), sc->sm,
                  sc->specific ? "a" : "", mech_name(sc->mech));
    }
    return plan_pack_as(r, sc, sc->spec, sc->mech, pack);
}

/* A wisdom record's lowerings for packs that schedule sc's unit will not have: every
 * pack where sc's own lowering or grid packs no rows, else those the spec does not pack
 * (packs[1 .. npacks - 1]). Said, and nothing else. */
static void note_packs_unplanned(run *r, const sched *sc, const long long *packs, int npacks)
{
    const wisdom_record *rec = sc->chosen_by;
    const srcloc at = {rec ? r->wisdom.path : NULL, rec ? rec->line : 0, 1};
    if (rec && rec->npacks && !packs_rows(sc)) {
        diag_note(&r->d, at, "this record's lowerings for packed rows are ignored for "
                  "sm_%d%s: its %s packs no rows%s", sc->sm, sc->specific ? "a" : "",
                  mech_name(sc->mech), sc->grid == GRID_PER_TILE ? "" : " on the persistent grid");
        return;
    }
    for (int k = 0; rec && k < rec->npacks; ++k) {
        bool known = false;
        for (int p = 1; p < npacks; ++p)
            known |= packs[p] == rec->packs[k].pack;
        if (!known)
            diag_note(&r->d, at, "this record names rows packed %lld a work item, which the "
                      "spec's kernels for sm_%d%s do not pack: ignored", rec->packs[k].pack,
                      sc->sm, sc->specific ? "a" : "");
    }
}

/* The packed rows' schedules (spec_row_packs), each proven; none where any base schedule
 * has no packed twin. False on a verifier error. */
static bool plan_packs(run *r)
{
    long long packs[SPEC_MAX_PACKS];
    const int npacks = r->o.fault != FAULT_NONE ? 1 : spec_row_packs(&r->s, packs);
    const int n = r->u.nscheds;
    r->u.npacks = 1;
    for (int i = 0; i < n && r->o.fault == FAULT_NONE; ++i)
        note_packs_unplanned(r, r->u.scheds[i], packs, npacks);
    if (npacks < 2)
        return true;
    r->u.packed = arena_alloc(r->a, sizeof(sched *) * (size_t)((npacks - 1) * n));
    for (int p = 1; p < npacks; ++p)
        for (int i = 0; i < n; ++i)
            if (!(r->u.packed[(p - 1) * n + i] = plan_pack(r, r->u.scheds[i], i, packs[p])))
                return true;
    for (int i = 0; i < n; ++i) {
        sched *sc = r->u.scheds[i];
        sc->npacks = npacks - 1;
        sc->packs = arena_alloc(r->a, sizeof(sched *) * (size_t)sc->npacks);
        for (int p = 1; p < npacks; ++p)
            sc->packs[p - 1] = r->u.packed[(p - 1) * n + i];
    }
    for (int k = 0; k < (npacks - 1) * n; ++k) {
        sched *sc = r->u.packed[k];
        if (r->o.dump_ir)
            ir_dump(stdout, sc);
        if (!verify_schedule(&r->d, sc) && !r->o.no_verify)
            return false;
        say(&r->o, &r->d, " sm_%d%s, rows packed %lld a work item: %d slot(s), %lld bytes of "
            "shared memory, proven\n", sc->sm, sc->specific ? "a" : "", sc->pack, sc->nslots,
            sc->smem_bytes);
    }
    r->u.npacks = npacks;
    return true;
}

/* Returns the exit status: 0, 1 on an error, 2 for a fault that does not apply. */
static int plan_all(run *r)
{
    const spec *s = &r->s;
    r->u.spec = s;
    r->u.scheds = arena_alloc(r->a, sizeof(sched *) * MAX_ARCHS);
    for (int i = 0; i < r->o.tgt.narch; ++i) {
        sched *sc = plan_target(r, i);
        if (!sc)
            return 1;
        if (r->o.fault != FAULT_NONE && r->o.fault < FAULT_DROP_ARRAY_CHECK
            && !verify_inject(sc, r->o.fault)) {
            diag_error_from(&r->d, (diag_origin){.opt = r->o.fault_opt}, "fault '%s' is not "
                            "applicable to the %s lowering", verify_fault_name(r->o.fault),
                            mech_name(sc->mech));
            return 2;
        }
        if (r->o.dump_ir)
            ir_dump(stdout, sc);
        if (!verify_schedule(&r->d, sc) && !r->o.no_verify)
            return 1;
        say(&r->o, &r->d, " sm_%d%s: %s, %d slot(s), %lld bytes of shared memory, %d threads, "
            "proven\n", sc->sm, sc->specific ? "a" : "", mech_name(sc->mech), sc->nslots,
            sc->smem_bytes, sc->threads);
        r->u.scheds[r->u.nscheds++] = sc;
    }
    if (!plan_packs(r))
        return 1;
    const int errors = r->d.errors;   /* --no-verify's, which do not stop it */
    lint_perf(&r->d, s, r->u.scheds, r->u.nscheds);
    if (r->d.errors > errors)   /* -Werror */
        return 1;
    return plan_launcher(r);
}

/* The outputs of a run: a file name and its text. */
typedef struct output {
    const char *path;
    strbuf text;
} output;

/* A name in a depfile, quoted for make as gcc's -MQ does: spaces and '#' with a
 * backslash, '$' doubled. */
static void dep_quoted(strbuf *sb, const char *name)
{
    for (const char *c = name; *c; ++c) {
        if (*c == ' ' || *c == '#')
            sb_putn(sb, "\\", 1);
        if (*c == '$')
            sb_putn(sb, "$", 1);
        sb_putn(sb, c, 1);
    }
}

/* Targets: the -MT (as given) and -MQ (quoted) ones, or else every output file; the spec
 * (none from standard input) and the wisdom file are the prerequisites, with -MP also
 * phony targets so that make does not stop when one is renamed or deleted. */
static void write_depfile(run *r, strbuf *sb, const output *outs, int n)
{
    const options *o = &r->o;
    sb_init(sb, r->a);
    for (int i = 0; i < o->ndep_targets; ++i) {
        sb_puts(sb, i ? " " : "");
        if (o->dep_targets[i].quote)
            dep_quoted(sb, o->dep_targets[i].name);
        else
            sb_puts(sb, o->dep_targets[i].name);
    }
    /* Every output but standard output is a target. */
    const char *sep = "";
    for (int i = 0; i < n && !o->ndep_targets; ++i) {
        if (strcmp(outs[i].path, "-") == 0)
            continue;
        sb_puts(sb, sep);
        dep_quoted(sb, outs[i].path);
        sep = " ";
    }
    bool from_file = strcmp(o->input, "-") != 0;
    const char *prereqs[2] = {from_file ? o->input : NULL, r->wisdom.path};
    sb_puts(sb, ":");
    for (int i = 0; i < 2; ++i)
        if (prereqs[i]) {
            sb_puts(sb, " ");
            dep_quoted(sb, prereqs[i]);
        }
    sb_puts(sb, "\n");
    for (int i = 0; i < 2 && o->dep_phony; ++i)
        if (prereqs[i]) {
            sb_puts(sb, "\n");
            dep_quoted(sb, prereqs[i]);
            sb_puts(sb, ":\n");
        }
}

/* A driver (test or bench) at path, when asked for: its #line directives lead back into
 * itself, and it includes the header by a path from its own directory. */
static int add_driver(run *r, output *out, const char *path, const char *cuh,
                      void (*emit)(strbuf *, const emit_unit *))
{
    if (!path)
        return 0;
    emit_unit driver = r->u;
    driver.opts.source_name = out_c_escape(r->a, base_name(path));
    driver.opts.header_name = include_path(r->a, path, cuh);
    out->path = path;
    sb_init(&out->text, r->a);
    emit(&out->text, &driver);
    return 1;
}

static bool emit_all(run *r)
{
    const options *o = &r->o;
    bool to_stdout = o->output && !strcmp(o->output, "-");
    const char *cu = o->output && !to_stdout ? o->output
                                             : arena_printf(r->a, "%s.cu", r->s.name);
    const char *cuh = o->header ? o->header
                      : to_stdout ? arena_printf(r->a, "%s.cuh", r->s.name)
                                  : with_ext(r->a, cu, ".cuh");
    const char *include = include_path(r->a, cu, cuh);
    if (!out_includable(&r->d, include))
        return false;
    if (o->test_out && !r->s.has_reference) {
        /* The driver compares with the reference: without one it printed "(null)". */
        diag_error(&r->d, r->s.loc, "--emit-test needs a 'reference' body in pipeline '%s'",
                   r->s.name);
        return false;
    }
    /* File names go into #line as C strings: a '"' or a newline in one must not end it. */
    r->u.opts = (emit_opts){.lines = o->lines, .spec_path = out_c_escape(r->a, spec_name(r)),
                            .source_name = to_stdout ? "<stdout>"
                                                     : out_c_escape(r->a, base_name(cu)),
                            .header_name = include, .guard = guard_of(r->a, cuh),
                            .watchdog = o->watchdog};
    /* The header first, written or not: the source and the drivers check its stamp. */
    strbuf header;
    sb_init(&header, r->a);
    emit_header(&header, &r->u);
    r->u.opts.stamp = emit_stamp_resolve(&header, &r->u.opts);
    output outs[5];
    int n = 0;
    outs[n].path = to_stdout ? "-" : cu;
    sb_init(&outs[n].text, r->a);
    emit_source(&outs[n++].text, &r->u);
    if (!to_stdout || o->header)
        outs[n++] = (output){.path = cuh, .text = header};
    n += add_driver(r, &outs[n], o->test_out, cuh, emit_test);
    n += add_driver(r, &outs[n], o->bench_out, cuh, emit_bench);
    if (o->depend) {
        /* After the generated file (OUT.cu.d): nvcc -MD writes OUT.d for the object. */
        outs[n].path = o->depfile ? o->depfile : arena_printf(r->a, "%s.d", cu);
        write_depfile(r, &outs[n].text, outs, n);
        ++n;
    }
    out_set *set = out_new(r->a, &r->d);
    out_input(set, o->input);
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) {
        say(o, &r->d, " writing %s\n", strcmp(outs[i].path, "-") ? outs[i].path : "<stdout>");
        ok = out_add(set, outs[i].path, &outs[i].text);
    }
    return ok && out_commit(set);
}

static int compile(run *r)
{
    size_t len = 0;
    const char *name = strcmp(r->o.input, "-") ? r->o.input : "<stdin>";
    say(&r->o, &r->d, " reading %s\n", name);
    char *src = read_file(r->a, r->o.input, name, &len, &r->d);
    if (!src)
        return 1;
    diag_set_source(&r->d, name, src, len);
    r->spec_hash = text_hash(src, len);
    if (r->o.spec_hash) {
        printf("%016llx\n", r->spec_hash);
        return 0;
    }
    ast_file *f = parse_source(r->a, &r->d, name, src, len);
    if (r->d.errors)
        return 1;
    if (r->o.dump_ast) {
        ast_dump(stdout, f);
        return 0;
    }
    r->ast = f;
    if (!sema_check(r->a, &r->d, f, &r->o.tgt, &r->s))
        return 1;
    if (r->o.spec_threads) {
        print_block_sizes(&r->s);
        return 0;
    }
    if (!load_wisdom(r))
        return 1;
    r->s.file = out_c_escape(r->a, base_name(spec_name(r)));   /* for the banner */
    int status = plan_all(r);
    if (status || r->o.verify_only || r->o.dump_ir)
        return status;
    return emit_all(r) ? 0 : 1;
}

int main(int argc, char **argv)
{
    out_ignore_write_signals();   /* before anything is printed (--help, the dumps) */
    run r = {.a = arena_new()};
    diag_init(&r.d, stderr, NULL, NULL, 0);
    r.o = (options){.lines = true, .fault = FAULT_NONE, .color = "auto"};
    parse_arch("sm_80,sm_90", &r.o.tgt, &r.d);
    r.o.dep_targets = arena_alloc(r.a, sizeof(dep_target) * (size_t)argc);
    r.o.prefix_maps = arena_alloc(r.a, sizeof(const char *) * (size_t)argc);
    int status = parse_args(r.a, argc, argv, &r.o, &r.d);
    if (status == GO_ON)
        status = compile(&r);
    else
        status = status == DONE_OK ? 0 : 1;
    /* What --help, the dumps or -o - printed is lost unless its flush succeeds. */
    if (!out_close_stdout(&r.d) && status == 0)
        status = 1;
    diag_finish(&r.d);
    arena_free(r.a);
    return status;
}
