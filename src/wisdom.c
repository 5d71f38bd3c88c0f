/* wisdom: what a tuning run measured, read back for `auto` (--wisdom=FILE or
 * PIPEGEN_WISDOM; docs/cli.md, "Wisdom"). The file is text, one record a line, '#' to the
 * end of a line a comment:
 *
 *   HASH ARCH GPU SIZE LOWERING [LOWERING=RATIO ...]
 *
 * HASH the spec's 16 hex digits (pipegen --spec-hash: FNV-1a of its bytes), ARCH the
 * target it was measured for (sm_90, sm_90a), GPU the device's name ('_' for spaces),
 * SIZE the size class measured, LOWERING the choice (LOWERING@THREADS: at a block size
 * the spec's `threads` offers after its own; then ,packP=LOWERING for the kernel of rows
 * packed P a work item where it takes another lowering), then each candidate's ratio to
 * the same-shape reference. A record decides auto's lowering for its spec and target (and GPU,
 * where --wisdom-gpu names one); the others are the file's business: a record for another
 * spec or GPU is not an error. */
#include "pipegen.h"

#include <stdlib.h>
#include <string.h>

/* The next field of the line at *p (blanks before it skipped; a '#' ends the line):
 * its text and column, NULL at the end of the line. */
static const char *next_field(arena *a, const char **p, const char *line, int *col)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r')
        ++s;
    if (!*s || *s == '\n' || *s == '#')
        return NULL;
    const char *e = s;
    while (*e && *e != ' ' && *e != '\t' && *e != '\r' && *e != '\n' && *e != '#')
        ++e;
    *p = e;
    *col = (int)(s - line) + 1;
    return arena_strndup(a, s, (size_t)(e - s));
}

static bool parse_hash(const char *f, unsigned long long *h)
{
    char *end;
    if (strlen(f) != 16)
        return false;
    *h = strtoull(f, &end, 16);
    return *end == '\0' && f[0] != '-' && f[0] != '+';
}

static bool parse_arch_field(const char *f, int *sm, bool *specific)
{
    char *end;
    if (strncmp(f, "sm_", 3) || f[3] < '1' || f[3] > '9')
        return false;
    long v = strtol(f + 3, &end, 10);
    *specific = *end == 'a';
    if (*specific)
        ++end;
    *sm = (int)v;
    return *end == '\0' && v < 1000 && arch_find(*sm);
}

/* LOWERING[@THREADS]: the lowering chosen, and the block size where it is not the spec's
 * own (one `threads N, M, ...` offers: a multiple of 32 up to 1024). */
static bool parse_lowering(arena *a, const char *f, wisdom_record *r)
{
    const char *at = strchr(f, '@');
    r->threads = 0;
    if (at) {
        char *end = NULL;
        long n = at[1] >= '1' && at[1] <= '9' ? strtol(at + 1, &end, 10) : 0;
        if (n < 32 || n > 1024 || n % 32 || *end)
            return false;
        r->threads = (int)n;
    }
    r->lowering = mech_from_name(at ? arena_strndup(a, f, (size_t)(at - f)) : f);
    return mech_known(r->lowering) && !mech_is_auto(r->lowering);
}

/* packP=LOWERING: rows packed P a work item (a power of two from 2 to 1024, each pack
 * once) take that lowering. */
static bool parse_pack(const char *f, wisdom_record *r)
{
    if (strncmp(f, "pack", 4) || f[4] < '1' || f[4] > '9' || r->npacks == SPEC_MAX_PACKS - 1)
        return false;
    char *end = NULL;
    const long long p = strtoll(f + 4, &end, 10);
    if (*end != '=' || p < 2 || p > 1024 || (p & (p - 1)))
        return false;
    for (int i = 0; i < r->npacks; ++i)
        if (r->packs[i].pack == p)
            return false;
    const mech m = mech_from_name(end + 1);
    r->packs[r->npacks++] = (struct wisdom_pack){p, m};
    return mech_known(m) && !mech_is_auto(m);
}

/* LOWERING[@THREADS][,packP=LOWERING]...: the choice, and the packed rows' own. */
static bool parse_choice(arena *a, const char *f, wisdom_record *r)
{
    const char *comma = strchr(f, ',');
    r->npacks = 0;
    if (!parse_lowering(a, comma ? arena_strndup(a, f, (size_t)(comma - f)) : f, r))
        return false;
    while (comma) {
        const char *next = strchr(comma + 1, ',');
        const char *part = next ? arena_strndup(a, comma + 1, (size_t)(next - comma - 1))
                                : comma + 1;
        if (!parse_pack(part, r))
            return false;
        comma = next;
    }
    return true;
}

mech wisdom_pack_lowering(const wisdom_record *r, long long pack, mech otherwise)
{
    for (int i = 0; r && i < r->npacks; ++i)
        if (r->packs[i].pack == pack)
            return r->packs[i].lowering;
    return otherwise;
}

/* One record from the line (which holds at least one field); false after an error. */
static bool parse_record(arena *a, diag_ctx *d, srcloc at, const char *line, wisdom_record *r)
{
    const char *p = line, *f[5];
    int col[5];
    for (int i = 0; i < 5; ++i) {
        f[i] = next_field(a, &p, line, &col[i]);
        if (!f[i]) {
            at.col = (int)(p - line) + 1;
            diag_error(d, at, "a wisdom record has five fields and the ratios: HASH ARCH GPU "
                       "SIZE LOWERING (this one ends after %d)", i);
            return false;
        }
    }
    static const char *const what[] = {"a spec hash (16 hex digits, pipegen --spec-hash)",
                                       "an architecture (sm_90, sm_90a)", NULL, NULL,
                                       "a lowering (pipegen --list-lowerings), or one "
                                       "and a block size (cp.async@256), then any packed "
                                       "rows' own (,pack2=barrier)"};
    bool ok[5] = {parse_hash(f[0], &r->hash), parse_arch_field(f[1], &r->sm, &r->specific),
                  true, true, parse_choice(a, f[4], r)};
    for (int i = 0; i < 5; ++i)
        if (!ok[i]) {
            at.col = col[i];
            diag_error(d, at, "'%s' is not %s", f[i], what[i]);
            return false;
        }
    r->line = at.line;
    r->gpu = f[2];
    r->size = f[3];
    return true;
}

bool wisdom_parse(arena *a, diag_ctx *d, const char *path, const char *gpu, const char *text,
                  wisdom *w)
{
    *w = (wisdom){.path = path, .gpu = gpu};
    int cap = 0, line = 1;
    for (const char *s = text; *s; ++line) {
        const char *nl = strchr(s, '\n'), *p = s;
        int col;
        if (next_field(a, &p, s, &col)) {
            w->recs = arena_grow(a, w->recs, &cap, w->n + 1, sizeof *w->recs);
            if (!parse_record(a, d, (srcloc){path, line, 1}, s, &w->recs[w->n]))
                return false;
            ++w->n;
        }
        s = nl ? nl + 1 : s + strlen(s);
    }
    return true;
}

/* Whether a record's GPU (its name with '_' for spaces) is the one asked for, named as
 * nvidia-smi prints it or as the record writes it. */
static bool same_gpu(const char *rec, const char *want)
{
    for (; *rec && *want; ++rec, ++want)
        if (*rec != (*want == ' ' ? '_' : *want))
            return false;
    return *rec == *want;
}

const wisdom_record *wisdom_choice(const wisdom *w, diag_ctx *d, unsigned long long hash,
                                   int sm, bool specific)
{
    const wisdom_record *first = NULL;
    for (int i = 0; i < w->n; ++i) {
        const wisdom_record *r = &w->recs[i];
        if (r->hash != hash || r->sm != sm || r->specific != specific)
            continue;
        if (w->gpu && !same_gpu(r->gpu, w->gpu))
            diag_note(d, (srcloc){w->path, r->line, 1}, "this record for the spec and "
                      "sm_%d%s is ignored: measured on %s, not on the wisdom GPU, %s", sm,
                      specific ? "a" : "", r->gpu, w->gpu);
        else if (!first)
            first = r;
        else
            diag_note(d, (srcloc){w->path, r->line, 1}, "a second record for this spec and "
                      "sm_%d%s (%s, %s) is ignored: line %d, the first, chose", sm,
                      specific ? "a" : "", r->gpu, r->size, first->line);
    }
    return first;
}
