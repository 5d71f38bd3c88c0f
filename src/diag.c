/* diag: compiler diagnostics in the usual `file:line:col: error: message` form, followed by
 * the quoted source line and a caret under the column. Counts errors and warnings; after
 * max_errors errors it says so once and stays quiet (still counting), so a badly broken
 * input cannot flood the terminal. */
#include "pipegen.h"

#include <string.h>

enum { DEFAULT_MAX_ERRORS = 20 };

typedef enum diag_kind { DK_ERROR, DK_WARNING, DK_NOTE } diag_kind;

static const char *const kind_names[] = { "error", "warning", "note" };

void diag_init(diag_ctx *d, FILE *out, const char *file, const char *src, size_t len)
{
    memset(d, 0, sizeof *d);
    d->out = out;
    d->file = file;
    d->src = src;
    d->src_len = len;
    d->max_errors = DEFAULT_MAX_ERRORS;
}

bool diag_too_many(const diag_ctx *d)
{
    return d->max_errors > 0 && d->errors > d->max_errors;
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
        return true;
    if (k == DK_ERROR && d->errors == d->max_errors + 1 && d->out)
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
    fputs("^\n", d->out);
}

/* Only locations in the file being compiled can be quoted. */
static bool diag_same_file(const diag_ctx *d, srcloc at)
{
    return !at.file || !d->file || at.file == d->file || strcmp(at.file, d->file) == 0;
}

static void diag_report(diag_ctx *d, srcloc at, diag_kind k, const char *fmt, va_list ap)
{
    if (!diag_count(d, k) || !d->out)
        return;
    const char *file = at.file ? at.file : d->file ? d->file : "<input>";
    if (at.line > 0)
        fprintf(d->out, "%s:%d:%d: %s: ", file, at.line, at.col, kind_names[k]);
    else
        fprintf(d->out, "%s: %s: ", file, kind_names[k]);
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    if (diag_same_file(d, at))
        diag_quote(d, at);
}

void diag_verror(diag_ctx *d, srcloc at, const char *fmt, va_list ap)
{
    diag_report(d, at, DK_ERROR, fmt, ap);
}

void diag_error(diag_ctx *d, srcloc at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_report(d, at, DK_ERROR, fmt, ap);
    va_end(ap);
}

void diag_warning(diag_ctx *d, srcloc at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_report(d, at, DK_WARNING, fmt, ap);
    va_end(ap);
}

void diag_note(diag_ctx *d, srcloc at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_report(d, at, DK_NOTE, fmt, ap);
    va_end(ap);
}

void diag_fatal_noloc(diag_ctx *d, const char *fmt, ...)
{
    if (!diag_count(d, DK_ERROR) || !d->out)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("pipegen: error: ", d->out);
    vfprintf(d->out, fmt, ap);
    fputc('\n', d->out);
    va_end(ap);
}
