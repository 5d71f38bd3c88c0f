/* diag: compiler diagnostics in the usual `file:line:col: error: message` form, followed by
 * the quoted source line and a caret under the column. Counts errors and warnings; after
 * max_errors errors it says so once and stays quiet (still counting), so a badly broken
 * input cannot flood the terminal. Warnings belong to classes that the command line turns
 * off (-Wno-NAME, -w) or into errors (-Werror). The same reports can be coloured as gcc
 * colours them, or printed as one JSON array for tools. */
#include "pipegen.h"

#include <stdlib.h>
#include <string.h>

enum { DEFAULT_MAX_ERRORS = 20 };

typedef enum diag_kind { DK_ERROR, DK_WARNING, DK_NOTE } diag_kind;

static const char *const kind_names[] = { "error", "warning", "note" };
/* gcc's default colours (GCC_COLORS): error red, warning magenta, note cyan, caret green;
 * the location bold. */
static const char *const kind_colors[] = { "\033[01;31m", "\033[01;35m", "\033[01;36m" };
#define SGR_BOLD "\033[01m"
#define SGR_CARET "\033[01;32m"
#define SGR_RESET "\033[m"

static const char *const warn_names[W__COUNT] = {
    [W_STAGES] = "stages", [W_HINTS] = "hints", [W_PERF] = "perf",
};

/* One report, its message already formatted. */
typedef struct report {
    srcloc at;
    bool cmdline;          /* no place in a file: "pipegen: error: ..." */
    const char *opt;       /* the option that caused it, put in front of the message */
    diag_kind kind;
    const char *flag;      /* "-Wstages", "-Werror=stages" or NULL */
    char *msg;
} report;

void diag_init(diag_ctx *d, FILE *out, const char *file, const char *src, size_t len)
{
    memset(d, 0, sizeof *d);
    d->out = out;
    d->max_errors = DEFAULT_MAX_ERRORS;
    diag_set_source(d, file, src, len);
}

void diag_set_source(diag_ctx *d, const char *file, const char *src, size_t len)
{
    d->file = file;
    d->src = src;
    d->src_len = len;
}

bool diag_too_many(const diag_ctx *d)
{
    return d->max_errors > 0 && d->errors > d->max_errors;
}

const char *diag_warn_name(diag_warn w) { return warn_names[w]; }

diag_warn diag_warn_from_name(const char *name)
{
    for (int w = 0; w < W__COUNT; ++w)
        if (strcmp(warn_names[w], name) == 0)
            return (diag_warn)w;
    return W__COUNT;
}

/* Levenshtein distance, for suggestions: names are short, so one row of ints suffices. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t nb = strlen(b), row[64];
    if (nb >= sizeof row / sizeof row[0])
        return (size_t)-1;
    for (size_t j = 0; j <= nb; ++j)
        row[j] = j;
    for (size_t i = 1; a[i - 1]; ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; ++j) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

const char *diag_closest(const char *word, const char *(*name)(int i), int n)
{
    size_t limit = strlen(word) / 3 > 2 ? strlen(word) / 3 : 2;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (int i = 0; i < n; ++i) {
        size_t dist = edit_distance(word, name(i));
        if (dist < best_d) {
            best = name(i);
            best_d = dist;
        }
    }
    return best;
}

/* Count a report; false when it must not be printed. The first error past the limit
 * prints the one-line notice. */
static bool diag_count(diag_ctx *d, diag_kind k)
{
    if (k == DK_ERROR)
        d->errors++;
    else if (k == DK_WARNING)
        d->warnings++;
    if (!diag_too_many(d))
        return d->out != NULL;
    if (k == DK_ERROR && d->errors == d->max_errors + 1 && d->out && !d->json)
        fputs("pipegen: too many errors, stopping\n", d->out);
    return false;
}

/* Find line `line` (1-based) of the source: its start and length without the newline
 * (a CR before it is dropped too). False when the source has no such line. */
static bool diag_find_line(const diag_ctx *d, int line, const char **start, size_t *len)
{
    const char *p = d->src, *end = d->src + d->src_len;
    for (int l = 1; l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return false;
        p = nl + 1;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (n > 0 && p[n - 1] == '\r')
        n--;
    *start = p;
    *len = n;
    return true;
}

static void sgr(const diag_ctx *d, const char *code)
{
    if (d->color)
        fputs(code, d->out);
}

/* The quoted line, then spaces up to the column (tabs kept so the caret lines up). */
static void diag_quote(const diag_ctx *d, srcloc at)
{
    const char *line;
    size_t len;
    if (!d->src || at.line < 1 || !diag_find_line(d, at.line, &line, &len))
        return;
    fwrite(line, 1, len, d->out);
    fputc('\n', d->out);
    size_t col = at.col > 1 ? (size_t)at.col - 1 : 0;
    if (col > len)
        col = len;
    for (size_t i = 0; i < col; i++)
        fputc(line[i] == '\t' ? '\t' : ' ', d->out);
    sgr(d, SGR_CARET);
    fputc('^', d->out);
    sgr(d, SGR_RESET);
    fputc('\n', d->out);
}

/* Only locations in the file being compiled can be quoted. */
static bool diag_same_file(const diag_ctx *d, srcloc at)
{
    return !at.file || !d->file || at.file == d->file || strcmp(at.file, d->file) == 0;
}

static const char *report_file(const diag_ctx *d, const report *r)
{
    if (r->cmdline || (!r->at.file && !d->file))
        return "pipegen";
    return r->at.file ? r->at.file : d->file;
}

static void print_text(diag_ctx *d, const report *r)
{
    srcloc at = r->at;
    bool located = !r->cmdline && at.line > 0;
    sgr(d, SGR_BOLD);
    fputs(report_file(d, r), d->out);
    if (located)
        fprintf(d->out, ":%d:%d", at.line, at.col);
    fputs(": ", d->out);
    sgr(d, SGR_RESET);
    sgr(d, kind_colors[r->kind]);
    fprintf(d->out, "%s:", kind_names[r->kind]);
    sgr(d, SGR_RESET);
    fputc(' ', d->out);
    fputs(r->msg, d->out);
    if (r->flag)
        fprintf(d->out, " [%s]", r->flag);
    fputc('\n', d->out);
    if (located && diag_same_file(d, at))
        diag_quote(d, at);
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* One object of the array: file (null for the command line), line, column, severity,
 * message, option (the warning's flag). */
static void print_json(diag_ctx *d, const report *r)
{
    fputs(d->printed ? ",\n" : "[\n", d->out);
    fputs("  {\"file\": ", d->out);
    if (!strcmp(report_file(d, r), "pipegen"))
        fputs("null", d->out);
    else
        json_string(d->out, report_file(d, r));
    int line = r->cmdline ? 0 : r->at.line;
    fprintf(d->out, ", \"line\": %d, \"column\": %d, \"severity\": \"%s\", \"message\": ",
            line, line > 0 ? r->at.col : 0, kind_names[r->kind]);
    json_string(d->out, r->msg);
    if (r->flag) {
        fputs(", \"option\": ", d->out);
        json_string(d->out, r->flag);
    }
    fputs("}", d->out);
}

static void diag_report(diag_ctx *d, report *r, const char *fmt, va_list ap)
{
    if (!diag_count(d, r->kind))
        return;
    /* "OPT: " and the message, in one string for both forms. */
    size_t pre = r->opt ? strlen(r->opt) + 2 : 0;
    va_list ap2;
    va_copy(ap2, ap);
    size_t n = pre + (size_t)vsnprintf(NULL, 0, fmt, ap2) + 1;
    va_end(ap2);
    r->msg = malloc(n);
    if (!r->msg)
        abort();
    if (r->opt)
        snprintf(r->msg, n, "%s: ", r->opt);
    vsnprintf(r->msg + pre, n - pre, fmt, ap);
    if (d->json)
        print_json(d, r);
    else
        print_text(d, r);
    d->printed++;
    free(r->msg);
}

void diag_finish(diag_ctx *d)
{
    if (d->json && d->out)
        fputs(d->printed ? "\n]\n" : "[]\n", d->out);
}

void diag_verror(diag_ctx *d, srcloc at, const char *fmt, va_list ap)
{
    report r = {.at = at, .kind = DK_ERROR};
    diag_report(d, &r, fmt, ap);
}

void diag_error(diag_ctx *d, srcloc at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, at, fmt, ap);
    va_end(ap);
}

void diag_error_from(diag_ctx *d, diag_origin o, const char *fmt, ...)
{
    report r = {.at = o.at, .cmdline = o.opt != NULL, .opt = o.opt, .kind = DK_ERROR};
    va_list ap;
    va_start(ap, fmt);
    diag_report(d, &r, fmt, ap);
    va_end(ap);
}

void diag_warning(diag_ctx *d, diag_warn w, srcloc at, const char *fmt, ...)
{
    if (d->no_warnings || (d->warn_off & (1u << w)))
        return;
    char flag[64];
    snprintf(flag, sizeof flag, "-W%s%s", d->werror ? "error=" : "", warn_names[w]);
    report r = {.at = at, .kind = d->werror ? DK_ERROR : DK_WARNING, .flag = flag};
    va_list ap;
    va_start(ap, fmt);
    diag_report(d, &r, fmt, ap);
    va_end(ap);
}

void diag_note(diag_ctx *d, srcloc at, const char *fmt, ...)
{
    report r = {.at = at, .kind = DK_NOTE};
    va_list ap;
    va_start(ap, fmt);
    diag_report(d, &r, fmt, ap);
    va_end(ap);
}

void diag_fatal_noloc(diag_ctx *d, const char *fmt, ...)
{
    report r = {.cmdline = true, .kind = DK_ERROR};
    va_list ap;
    va_start(ap, fmt);
    diag_report(d, &r, fmt, ap);
    va_end(ap);
}

srcloc diag_loc_in_text(const char *text, srcloc start, size_t offset)
{
    for (size_t k = 0; k < offset; ++k) {
        if (text[k] == '\n') {
            start.line++;
            start.col = 1;
        } else {
            start.col++;
        }
    }
    return start;
}
