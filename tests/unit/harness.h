/* What the unit tests share (tests/unit/harness.c, linked into every test binary): text
 * written to a FILE kept in memory, a spec string run through the phases as the command
 * line runs them (parse, check, plan, verify) with every diagnostic kept in memory, and
 * the main() of a Check suite. */
#ifndef PIPEGEN_TEST_HARNESS_H
#define PIPEGEN_TEST_HARNESS_H

#include "pipegen.h"

#include <check.h>
#include <stdio.h>

/* ------------------------------------------------------------------ text in memory */

/* What is written to f, in memory (open_memstream). */
typedef struct memfile {
    FILE *f;
    char *text;
    size_t len;
} memfile;

/* Open m (the test fails when it cannot); returns m->f. */
FILE *mem_open(memfile *m);
/* What was written so far, NUL-terminated (m stays open). */
const char *mem_text(memfile *m);
/* Close m; returns its text, which the caller frees. */
char *mem_close(memfile *m);

/* The AST dump and the IR dump as text, which the caller frees. */
char *ast_text(const ast_file *f);
char *ir_text(const sched *sc);

/* How many times needle occurs in hay (occurrences do not overlap). */
int count(const char *hay, const char *needle);

/* ------------------------------------------------------------------ the phases */

/* One spec through the phases. Every phase reports to d, whose text stays in memory until
 * h_end; the fields below it are what the phases made. */
typedef struct harness {
    arena *a;
    diag_ctx d;
    memfile dm;             /* d's output while open */
    const char *file, *src; /* the spec's name in diagnostics, and its text (a copy) */
    char *diags;            /* every diagnostic (h_end; "" for none) */
    size_t diags_len;
    int errors;             /* errors counted (h_end) */
    ast_file *f;            /* h_parse */
    spec s;                 /* h_check */
    bool ok;                /* h_check's verdict */
    sched *sc;              /* the last h_plan */
} harness;

/* Start: a fresh arena, the diagnostics of file with (a copy of) src quoted. */
void h_start(harness *h, const char *file, const char *src);
/* Diagnostics from here on alone (those so far dropped), with src quoted. */
void h_restart_diags(harness *h, const char *src);
/* Parse src into h->f (errors are reported, not asserted). */
ast_file *h_parse(harness *h);
/* Check h->f for t into h->s; parses first where h->f is NULL, and then src must parse
 * without a diagnostic. Returns h->ok. */
bool h_check(harness *h, const target *t);
/* Plan h->s for m on sm into h->sc (NULL where the planner refused). */
sched *h_plan(harness *h, mech m, int sm);
/* Verify sc, reporting to h's diagnostics. */
bool h_verify(harness *h, sched *sc);
/* The diagnostics so far (while h is not ended). */
const char *h_diags(harness *h);
/* The end of the run: diags, diags_len and errors are final. */
void h_end(harness *h);
/* Free the arena and the text (ends h when it was not ended). */
void h_free(harness *h);

/* ------------------------------------------------------------------ Check */

/* Run every test of s; the exit status of a test binary. */
int run_suite(Suite *s);

#endif
