/* Unit tests of libpipert's CPU-side logic against a fake CUDA runtime (fake_cudart.c):
 * the chunk planner over many sizes (0, 1, tails, fewer chunks than streams, several
 * devices, halos, memory limits, extremes), argument validation, the stream pools, pinned
 * memory, timers and events, and whole runs (elementwise and a row stencil with a halo)
 * computed by CPU "kernels" through the fake's streams, with every error path: nothing is
 * left behind, the current device is restored, no error is left pending, nothing touches
 * the default stream and no host function calls CUDA. Built and run under ASan/UBSan
 * (make runtime-test). */
#include "pipert.h"
#include "fake_cudart.h"

#include <check.h>
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef PG_EXPECT_VERSION
#define PG_EXPECT_VERSION "unknown"
#endif

static void setup(void)
{
    fake_reset();
}

static void teardown(void)
{
    fake_reset();
}

/* Nothing of the fake is left and no error is pending. */
static void expect_clean(void)
{
    ck_assert_int_eq(fake_live_streams(), 0);
    ck_assert_int_eq(fake_live_events(), 0);
    ck_assert_int_eq(fake_live_device_allocs(), 0);
    ck_assert_int_eq(fake_live_host_allocs(), 0);
    ck_assert_int_eq(fake_live_registrations(), 0);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    ck_assert_int_eq(fake_default_stream_uses(), 0);
    ck_assert_int_eq(fake_bad_copies(), 0);
    ck_assert_int_eq(fake_calls_in_host_funcs(), 0);
    ck_assert_int_eq(fake_wrong_device_launches(), 0);
}

/* ------------------------------------------------------------------ planner helpers */

static pipert_stream_device dev_of(int id, int engines, int concurrent, size_t mem_free)
{
    pipert_stream_device d;
    memset(&d, 0, sizeof d);
    d.device = id;
    d.async_engines = engines;
    d.concurrent_kernels = concurrent;
    d.priority_least = 0;
    d.priority_greatest = -5;
    d.mem_free = mem_free;
    return d;
}

static const pipert_stream_array float_in_out[2] = { { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };

static pipert_stream_problem problem(int64_t n, int64_t halo, int64_t align)
{
    pipert_stream_problem p = { n, halo, align, float_in_out, 2 };
    return p;
}

/* A check of check_layout: Check's own assertions report every passing one to the parent
 * process, too slow for the thousands of layouts of the sweep. */
#define REQ(cond)                                                                           \
    do {                                                                                    \
        if (!(cond))                                                                        \
            ck_abort_msg("line %d: %s (elements %lld, halo %lld, align %lld, chunk %lld, "  \
                         "chunks %lld, devices %d, streams %d)", __LINE__, #cond,           \
                         (long long)p->elements, (long long)p->halo, (long long)p->align,  \
                         (long long)l->chunk_elements, (long long)l->chunks, l->ndevices,  \
                         l->streams_per_device);                                            \
    } while (0)

/* Check every property a layout promises; for its chunks, all of them when there are few,
 * else the first, the last and some between. */
static void check_layout(const pipert_stream_layout *l, const pipert_stream_plan *plan,
                         const pipert_stream_problem *p, int nd, int spd_max)
{
    int64_t n = p->elements;
    REQ((l->elements) == (n));
    REQ((l->halo) == (p->halo));
    if (n == 0) {
        REQ((l->chunks) == (0));
        REQ((l->chunk_elements) == (0));
        REQ((l->tail_elements) == (0));
        REQ((l->ndevices) == (0));
        REQ((l->streams_per_device) == (0));
        REQ((l->slots) == (0));
        return;
    }
    int64_t chunk = l->chunk_elements;
    REQ((chunk) >= (1));
    REQ((chunk) <= (n));
    REQ((l->chunks) == (n / chunk + (n % chunk != 0)));
    REQ((l->tail_elements) >= (1));
    REQ((l->tail_elements) <= (chunk));
    REQ(((l->chunks - 1) * chunk + l->tail_elements) == (n));
    REQ((l->ndevices) == (l->chunks < nd ? l->chunks : nd));
    REQ((l->streams_per_device) >= (1));
    REQ((l->streams_per_device) <= (spd_max));
    int64_t per_dev = l->chunks / l->ndevices + (l->chunks % l->ndevices != 0);
    REQ((l->streams_per_device) <= (per_dev));
    REQ((l->slots) == (l->ndevices * l->streams_per_device));
    if (plan && plan->chunk_elements > 0)
        REQ((chunk) == (plan->chunk_elements < n ? plan->chunk_elements : n));
    else if (p->align > 1 && chunk != n)
        REQ((chunk % p->align) == (0));

    int64_t idx[16];
    int nidx = 0;
    if (l->chunks <= 16) {
        for (int64_t i = 0; i < l->chunks; ++i)
            idx[nidx++] = i;
    } else {
        int64_t pick[] = { 0, 1, 2, l->slots - 1, l->slots, l->slots + 1, l->chunks / 2,
                           l->chunks - 3, l->chunks - 2, l->chunks - 1 };
        for (size_t i = 0; i < sizeof pick / sizeof pick[0]; ++i)
            if (pick[i] >= 0 && pick[i] < l->chunks)
                idx[nidx++] = pick[i];
    }
    int64_t next_first = 0;
    for (int k = 0; k < nidx; ++k) {
        pipert_chunk c;
        int64_t i = idx[k];
        REQ(pipert_stream_chunk_at(l, i, &c) == cudaSuccess);
        REQ((c.index) == (i));
        REQ((c.first) == (i * chunk));
        if (l->chunks <= 16) {
            REQ((c.first) == (next_first));      /* contiguous, no gap, no overlap */
            next_first = c.first + c.count;
        }
        REQ((c.count) == (i == l->chunks - 1 ? l->tail_elements : chunk));
        REQ((c.slot) == (i % l->slots));
        REQ((c.device_index) == (c.slot % l->ndevices));
        REQ((c.stream_index) == (c.slot / l->ndevices));
        REQ((c.stream_index) < (l->streams_per_device));
        if (plan && plan->ndevices > 0)
            REQ((c.device) == (plan->devices[c.device_index]));
        int64_t end = c.first + c.count;
        int64_t want_in = c.first > p->halo ? c.first - p->halo : 0;
        int64_t want_end = n - end > p->halo ? end + p->halo : n;
        REQ((c.in_first) == (want_in));
        REQ((c.in_first + c.in_count) == (want_end));
        REQ(c.stream == NULL);
        REQ(c.buffers == NULL);
    }
    if (l->chunks <= 16)
        REQ((next_first) == (n));
    pipert_chunk c;
    REQ(pipert_stream_chunk_at(l, l->chunks, &c) == cudaErrorInvalidValue);
    REQ(pipert_stream_chunk_at(l, -1, &c) == cudaErrorInvalidValue);
}

/* ------------------------------------------------------------------ the planner */

START_TEST(plan_zero_elements)
{
    pipert_stream_problem p = problem(0, 0, 0);
    pipert_stream_layout l;
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, NULL, 0, &l), cudaSuccess);
    check_layout(&l, NULL, &p, 1, 1);
    pipert_stream_device d = dev_of(3, 2, 1, 0);
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, &d, 1, &l), cudaSuccess);
    check_layout(&l, NULL, &p, 1, 1);
    /* With overrides and a halo too. */
    int devs[] = { 1, 0 };
    pipert_stream_plan plan = { devs, 2, 3, 100, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    p.halo = 4;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, NULL, 0, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 2, 3);
    /* The query reads no device for nothing. */
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaSuccess);
    ck_assert_int_eq(fake_calls("*"), 0);
}
END_TEST

START_TEST(plan_one_element)
{
    pipert_stream_problem p = problem(1, 0, 2048);
    pipert_stream_device d[2] = { dev_of(0, 2, 1, 0), dev_of(1, 2, 1, 0) };
    int devs[] = { 0, 1 };
    pipert_stream_plan plan = { devs, 2, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    pipert_stream_layout l;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, d, 2, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 2, 4);
    ck_assert_int_eq(l.chunks, 1);
    ck_assert_int_eq(l.chunk_elements, 1);
    ck_assert_int_eq(l.tail_elements, 1);
    ck_assert_int_eq(l.ndevices, 1);
    ck_assert_int_eq(l.streams_per_device, 1);
    ck_assert_int_eq(l.slots, 1);
    ck_assert_uint_eq(l.slot_bytes, 2 * 256);   /* two arrays, each rounded up */
    pipert_chunk c;
    ck_assert_int_eq(pipert_stream_chunk_at(&l, 0, &c), cudaSuccess);
    ck_assert_int_eq(c.device, 0);
    ck_assert_int_eq(c.first, 0);
    ck_assert_int_eq(c.count, 1);
}
END_TEST

START_TEST(plan_fewer_chunks_than_streams)
{
    /* 3 chunks over 2 devices x 4 streams: both devices, 2 streams each. */
    pipert_stream_problem p = problem(25, 0, 0);
    pipert_stream_device d[2] = { dev_of(4, 2, 1, 0), dev_of(2, 2, 1, 0) };
    int devs[] = { 4, 2 };
    pipert_stream_plan plan = { devs, 2, 4, 10, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    pipert_stream_layout l;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, d, 2, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 2, 4);
    ck_assert_int_eq(l.chunks, 3);
    ck_assert_int_eq(l.tail_elements, 5);
    ck_assert_int_eq(l.ndevices, 2);
    ck_assert_int_eq(l.streams_per_device, 2);
    pipert_chunk c;
    int want_dev[] = { 4, 2, 4 }, want_stream[] = { 0, 0, 1 };
    for (int i = 0; i < 3; ++i) {
        ck_assert_int_eq(pipert_stream_chunk_at(&l, i, &c), cudaSuccess);
        ck_assert_int_eq(c.device, want_dev[i]);
        ck_assert_int_eq(c.stream_index, want_stream[i]);
    }
    /* 2 chunks over 3 devices: the first two devices, one stream each. */
    int three[] = { 0, 1, 2 };
    pipert_stream_device d3[3] = { dev_of(0, 2, 1, 0), dev_of(1, 2, 1, 0), dev_of(2, 2, 1, 0) };
    plan.devices = three;
    plan.ndevices = 3;
    p.elements = 11;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, d3, 3, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 3, 4);
    ck_assert_int_eq(l.chunks, 2);
    ck_assert_int_eq(l.ndevices, 2);
    ck_assert_int_eq(l.streams_per_device, 1);
    ck_assert_int_eq(l.tail_elements, 1);
}
END_TEST

START_TEST(plan_sweep)
{
    /* Sizes x chunk overrides x devices x streams x alignments x halos: every property
     * check_layout knows. */
    const int64_t sizes[] = { 0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 1023, 1024, 1025, 4097,
                              (1 << 20) - 1, 1 << 20, (1 << 20) + 1, ((int64_t)1 << 31) + 3,
                              ((int64_t)1 << 40) + 7, INT64_MAX / 8 };
    const int64_t chunks[] = { 0, 1, 2, 3, 7, 64, 1000, 1 << 20 };
    const int ndevs[] = { 1, 2, 3, 8 };
    const int streams[] = { 0, 1, 2, 5, 32 };
    const int64_t aligns[] = { 0, 1, 7, 2048 };
    const int64_t halos[] = { 0, 1, 3 };
    int devs[8] = { 7, 6, 5, 4, 3, 2, 1, 0 };
    pipert_stream_device d[8];
    for (int k = 0; k < 8; ++k)
        d[k] = dev_of(devs[k], k % 3, k % 2, 0);
    long cases = 0;
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; ++a)
    for (size_t b = 0; b < sizeof chunks / sizeof chunks[0]; ++b)
    for (size_t c = 0; c < sizeof ndevs / sizeof ndevs[0]; ++c)
    for (size_t e = 0; e < sizeof streams / sizeof streams[0]; ++e)
    for (size_t f = 0; f < sizeof aligns / sizeof aligns[0]; ++f)
    for (size_t h = 0; h < sizeof halos / sizeof halos[0]; ++h) {
        pipert_stream_problem p = problem(sizes[a], halos[h], aligns[f]);
        pipert_stream_plan plan = { devs, ndevs[c], streams[e], chunks[b], NULL, 0, 0, NULL,
                                    NULL, NULL, 0, NULL };
        pipert_stream_layout l;
        cudaError_t err = pipert_stream_layout_plan(&plan, &p, d, ndevs[c], &l);
        if (err != cudaSuccess)
            ck_abort_msg("n=%lld chunk=%lld nd=%d spd=%d align=%lld: %d", (long long)sizes[a],
                         (long long)chunks[b], ndevs[c], streams[e], (long long)aligns[f], err);
        int spd_max = streams[e] ? streams[e] : 4;
        check_layout(&l, &plan, &p, ndevs[c], spd_max);
        ++cases;
    }
    ck_assert_int_gt(cases, 10000);
}
END_TEST

START_TEST(plan_default_streams)
{
    pipert_stream_problem p = problem((int64_t)1 << 30, 0, 0);
    pipert_stream_layout l;
    struct { int engines, concurrent, want; } t[] = {
        { 0, 0, 1 }, { 0, 1, 1 }, { 1, 0, 2 }, { 1, 1, 2 }, { 2, 0, 3 }, { 2, 1, 4 }, { 3, 1, 4 } };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i) {
        pipert_stream_device d = dev_of(0, t[i].engines, t[i].concurrent, 0);
        ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, &d, 1, &l), cudaSuccess);
        ck_assert_int_eq(l.streams_per_device, t[i].want);
        ck_assert_int_eq(l.device0, 0);
        ck_assert_ptr_null(l.devices);
    }
    /* Several devices: the fewest any of them wants. */
    int devs[] = { 0, 1 };
    pipert_stream_device d2[2] = { dev_of(0, 2, 1, 0), dev_of(1, 1, 0, 0) };
    pipert_stream_plan plan = { devs, 2, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, d2, 2, &l), cudaSuccess);
    ck_assert_int_eq(l.streams_per_device, 2);
    /* Asked for: as asked. */
    plan.streams_per_device = 7;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, d2, 2, &l), cudaSuccess);
    ck_assert_int_eq(l.streams_per_device, 7);
}
END_TEST

START_TEST(plan_default_chunk_sizes)
{
    pipert_stream_device d = dev_of(0, 2, 1, 0);
    pipert_stream_layout l;
    /* Small: one chunk (not worth splitting below 1 MiB). */
    pipert_stream_problem p = problem(1000, 0, 2048);
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, &d, 1, &l), cudaSuccess);
    ck_assert_int_eq(l.chunks, 1);
    ck_assert_int_eq(l.chunk_elements, 1000);
    /* Large: each chunk moves 1 .. 64 MiB, a multiple of the tile. */
    const int64_t sizes[] = { (int64_t)1 << 20, (int64_t)3 << 20, (int64_t)1 << 26,
                              (int64_t)1 << 30, (int64_t)1 << 36 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        p.elements = sizes[i];
        ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, &d, 1, &l), cudaSuccess);
        int64_t bytes = l.chunk_elements * 8;
        ck_assert_int_eq(l.chunk_elements % 2048, 0);
        ck_assert_int_ge(bytes, (int64_t)1 << 20);
        ck_assert_int_le(bytes, ((int64_t)64 << 20) + 2048 * 8);
        ck_assert_int_ge(l.chunks, l.slots);   /* every stream gets work */
    }
    /* No arrays: one chunk per slot. */
    pipert_stream_problem none = { 1000, 0, 0, NULL, 0 };
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &none, &d, 1, &l), cudaSuccess);
    ck_assert_int_eq(l.chunks, 4);
    ck_assert_int_eq(l.chunk_elements, 250);
    ck_assert_uint_eq(l.slot_bytes, 0);
}
END_TEST

START_TEST(plan_halo_rows)
{
    /* 100 rows of 1000 floats in and out, halo 2, chunks of 10. */
    const pipert_stream_array rows[2] = { { PIPERT_IN, 4000 }, { PIPERT_OUT, 4000 } };
    pipert_stream_problem p = { 100, 2, 0, rows, 2 };
    pipert_stream_plan plan = { NULL, 0, 2, 10, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    pipert_stream_device d = dev_of(0, 2, 1, 0);
    pipert_stream_layout l;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 1, 2);
    ck_assert_int_eq(l.chunks, 10);
    ck_assert_uint_eq(l.slot_bytes, 2 * ((14 * 4000 + 255) / 256 * 256));
    pipert_chunk c;
    ck_assert_int_eq(pipert_stream_chunk_at(&l, 0, &c), cudaSuccess);
    ck_assert_int_eq(c.in_first, 0);
    ck_assert_int_eq(c.in_count, 12);
    ck_assert_int_eq(pipert_stream_chunk_at(&l, 5, &c), cudaSuccess);
    ck_assert_int_eq(c.in_first, 48);
    ck_assert_int_eq(c.in_count, 14);
    ck_assert_int_eq(pipert_stream_chunk_at(&l, 9, &c), cudaSuccess);
    ck_assert_int_eq(c.in_first, 88);
    ck_assert_int_eq(c.in_count, 12);
    /* A halo wider than the problem: every chunk reads all of it. */
    p.halo = 1000;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 1, 2);
    ck_assert_int_eq(pipert_stream_chunk_at(&l, 4, &c), cudaSuccess);
    ck_assert_int_eq(c.in_first, 0);
    ck_assert_int_eq(c.in_count, 100);
    ck_assert_uint_eq(l.slot_bytes, 2 * ((100 * 4000 + 255) / 256 * 256));
    /* Chunks of one row, halo 1. */
    p.halo = 1;
    plan.chunk_elements = 1;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 1, 2);
    ck_assert_int_eq(l.chunks, 100);
}
END_TEST

START_TEST(plan_memory_fit)
{
    /* 1 GiB free: half of it for the slots. */
    size_t free_bytes = (size_t)1 << 30, budget = free_bytes / 2;
    pipert_stream_problem p = problem((int64_t)1 << 34, 0, 2048);
    pipert_stream_device d = dev_of(0, 2, 1, free_bytes);
    pipert_stream_layout l;
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, &d, 1, &l), cudaSuccess);
    ck_assert_uint_le(l.slot_bytes * (size_t)l.streams_per_device, budget);
    /* 16 MiB free, asking for 64 MiB chunks: a chosen stream count gives way. */
    d.mem_free = (size_t)16 << 20;
    pipert_stream_plan plan = { NULL, 0, 0, (int64_t)1 << 20, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaSuccess);
    ck_assert_int_eq(l.chunk_elements, (int64_t)1 << 20);       /* 8 MiB a slot */
    ck_assert_int_eq(l.streams_per_device, 1);
    /* ... an asked-for stream count does not: out of memory. */
    plan.streams_per_device = 2;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaErrorMemoryAllocation);
    ck_assert_int_eq(l.chunks, 0);
    /* A chosen chunk shrinks to fit, still a multiple of the tile. */
    plan.chunk_elements = 0;
    plan.streams_per_device = 4;
    d.mem_free = (size_t)8 << 20;        /* 4 MiB for 4 slots: 1 MiB each */
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaSuccess);
    ck_assert_int_eq(l.streams_per_device, 4);
    ck_assert_uint_le(l.slot_bytes * 4, (size_t)4 << 20);
    ck_assert_int_eq(l.chunk_elements % 2048, 0);
    ck_assert_int_eq(l.chunk_elements, 131072);     /* 4 x 2 x 4 bytes x 131072 = 4 MiB */
    /* Not even one row fits: out of memory. */
    d.mem_free = 600;                    /* 300 bytes: less than two 256-byte buffers */
    plan.streams_per_device = 0;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaErrorMemoryAllocation);
    /* The device with the least memory decides. */
    int devs[] = { 0, 1 };
    pipert_stream_device d2[2] = { dev_of(0, 2, 1, (size_t)64 << 30),
                                   dev_of(1, 2, 1, (size_t)64 << 20) };
    pipert_stream_plan two = { devs, 2, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    ck_assert_int_eq(pipert_stream_layout_plan(&two, &p, d2, 2, &l), cudaSuccess);
    ck_assert_uint_le(l.slot_bytes * (size_t)l.streams_per_device, (size_t)32 << 20);
    /* Unknown free memory (0): not checked. */
    d.mem_free = 0;
    plan.chunk_elements = INT64_MAX / 64;
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaSuccess);
}
END_TEST

START_TEST(plan_extremes)
{
    pipert_stream_device d = dev_of(0, 2, 1, 0);
    pipert_stream_layout l;
    const pipert_stream_array one[1] = { { PIPERT_INOUT, 1 } };
    pipert_stream_problem p = { INT64_MAX, 0, 0, one, 1 };
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, &d, 1, &l), cudaSuccess);
    check_layout(&l, NULL, &p, 1, 4);
    ck_assert_int_eq(l.chunk_elements, (int64_t)32 << 20);   /* 64 MiB moved: in and out */
    /* A huge halo and a huge alignment do not overflow. */
    const pipert_stream_array in1[1] = { { PIPERT_IN, 1 } };
    pipert_stream_problem q = { INT64_MAX, INT64_MAX, INT64_MAX, in1, 1 };
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &q, &d, 1, &l), cudaSuccess);
    check_layout(&l, NULL, &q, 1, 4);
    ck_assert_int_eq(l.chunks, 1);
    /* Chunks of one element of INT64_MAX. */
    pipert_stream_plan plan = { NULL, 0, 32, 1, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, &d, 1, &l), cudaSuccess);
    check_layout(&l, &plan, &p, 1, 32);
    ck_assert_int_eq(l.chunks, INT64_MAX);
    /* Rows whose bytes do not fit size_t: refused. */
    const pipert_stream_array big[1] = { { PIPERT_IN, SIZE_MAX / 2 } };
    pipert_stream_problem r = { 3, 0, 0, big, 1 };
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &r, &d, 1, &l), cudaErrorInvalidValue);
}
END_TEST

START_TEST(plan_validation)
{
    pipert_stream_device d[2] = { dev_of(0, 2, 1, 0), dev_of(1, 2, 1, 0) };
    pipert_stream_problem p = problem(100, 0, 0);
    pipert_stream_layout l;
    int devs[] = { 0, 1 }, dup[] = { 1, 1 }, neg[] = { -1 }, big[] = { PIPERT_MAX_DEVICES };
    int prio[] = { 0 };
#define PLAN_ERR(want, planp, probp, dv, nd)                                                \
    do {                                                                                    \
        memset(&l, 0x5a, sizeof l);                                                         \
        ck_assert_int_eq(pipert_stream_layout_plan(planp, probp, dv, nd, &l), want);        \
        ck_assert_int_eq(l.chunks, 0);                                                      \
    } while (0)
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &p, d, 1, NULL), cudaErrorInvalidValue);
    PLAN_ERR(cudaErrorInvalidValue, NULL, NULL, d, 1);
    pipert_stream_problem bad = p;
    bad.elements = -1;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    bad = p; bad.halo = -1;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    bad = p; bad.align = -1;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    bad = p; bad.narrays = -1;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    bad = p; bad.arrays = NULL;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    const pipert_stream_array wrong_dir[1] = { { 5, 4 } }, zero_dir[1] = { { 0, 4 } };
    bad = p; bad.arrays = wrong_dir; bad.narrays = 1;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    bad.arrays = zero_dir;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    /* INOUT with a halo: a race between neighbouring chunks, refused. */
    const pipert_stream_array inout[1] = { { PIPERT_INOUT, 4 } };
    bad = p; bad.arrays = inout; bad.narrays = 1; bad.halo = 1;
    PLAN_ERR(cudaErrorInvalidValue, NULL, &bad, d, 1);
    bad.halo = 0;
    ck_assert_int_eq(pipert_stream_layout_plan(NULL, &bad, d, 1, &l), cudaSuccess);

    pipert_stream_plan plan = { devs, 2, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    ck_assert_int_eq(pipert_stream_layout_plan(&plan, &p, d, 2, &l), cudaSuccess);
    pipert_stream_plan b = plan; b.ndevices = -1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.devices = NULL;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.ndevices = PIPERT_MAX_DEVICES + 1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    /* A device named twice: two shares, two pools. */
    pipert_stream_device twice[2] = { dev_of(1, 2, 1, 1 << 20), dev_of(1, 2, 1, 1 << 20) };
    b = plan; b.devices = dup; b.chunk_elements = 10;
    ck_assert_int_eq(pipert_stream_layout_plan(&b, &p, twice, 2, &l), cudaSuccess);
    ck_assert_int_eq(l.ndevices, 2);
    ck_assert_uint_le(l.slot_bytes * (size_t)l.slots, (1u << 20) / 2);
    b = plan; b.trace_chunks = -1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.trace_chunks = 1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.devices = neg; b.ndevices = 1;
    PLAN_ERR(cudaErrorInvalidDevice, &b, &p, d, 1);
    b = plan; b.devices = big; b.ndevices = 1;
    PLAN_ERR(cudaErrorInvalidDevice, &b, &p, d, 1);
    b = plan; b.streams_per_device = -1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.streams_per_device = PIPERT_MAX_STREAMS + 1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.streams_per_device = PIPERT_MAX_STREAMS;
    ck_assert_int_eq(pipert_stream_layout_plan(&b, &p, d, 2, &l), cudaSuccess);
    b = plan; b.chunk_elements = -1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.npriorities = -1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b = plan; b.npriorities = 1;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    b.priorities = prio;
    ck_assert_int_eq(pipert_stream_layout_plan(&b, &p, d, 2, &l), cudaSuccess);
    b = plan; b.host_register = 2;
    PLAN_ERR(cudaErrorInvalidValue, &b, &p, d, 2);
    /* The devices' descriptions must match the plan's devices. */
    PLAN_ERR(cudaErrorInvalidValue, &plan, &p, NULL, 0);
    PLAN_ERR(cudaErrorInvalidValue, &plan, &p, d, 1);
    pipert_stream_device swapped[2] = { d[1], d[0] };
    PLAN_ERR(cudaErrorInvalidValue, &plan, &p, swapped, 2);
    PLAN_ERR(cudaErrorInvalidValue, NULL, &p, d, 2);
    pipert_stream_device negdev = dev_of(-1, 2, 1, 0);
    PLAN_ERR(cudaErrorInvalidValue, NULL, &p, &negdev, 1);
#undef PLAN_ERR
    ck_assert_int_eq(fake_calls("*"), 0);
}
END_TEST

START_TEST(plan_query)
{
    /* Device 0: two copy engines and concurrent kernels (4 streams); device 1: one engine. */
    pipert_stream_problem p = problem((int64_t)1 << 28, 0, 0);
    pipert_stream_layout l;
    ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
    ck_assert_int_eq(pipert_stream_layout_query(NULL, &p, &l), cudaSuccess);
    ck_assert_int_eq(l.device0, 1);
    ck_assert_int_eq(l.streams_per_device, 2);
    ck_assert_int_eq(fake_current_device(), 1);
    int devs[] = { 0 };
    pipert_stream_plan plan = { devs, 1, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaSuccess);
    ck_assert_int_eq(l.streams_per_device, 4);
    ck_assert_int_eq(fake_current_device(), 1);
    int both[] = { 0, 1 };
    plan.devices = both;
    plan.ndevices = 2;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaSuccess);
    ck_assert_int_eq(l.streams_per_device, 2);
    ck_assert_int_eq(l.ndevices, 2);
    /* Free memory is read: 64 MiB free on device 1 caps the slots at 32 MiB. */
    fake_devices[1].mem_free = (size_t)64 << 20;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaSuccess);
    ck_assert_uint_le(l.slot_bytes * (size_t)l.streams_per_device, (size_t)32 << 20);
    /* A device that is not there. */
    int absent[] = { 5 };
    plan.devices = absent;
    plan.ndevices = 1;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaErrorInvalidDevice);
    ck_assert_int_eq(l.chunks, 0);
    ck_assert_int_eq(fake_current_device(), 1);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    /* An attribute that cannot be read. */
    plan.devices = devs;
    fake_fail("cudaDeviceGetAttribute", 2, cudaErrorUnknown);
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaErrorUnknown);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    fake_fail("cudaMemGetInfo", 1, cudaErrorUnknown);
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaErrorUnknown);
    ck_assert_int_eq(fake_current_device(), 1);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    /* Invalid arguments, before any CUDA call. */
    int before = fake_calls("*");
    plan.streams_per_device = -1;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &p, &l), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_layout_query(NULL, NULL, &l), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_layout_query(NULL, &p, NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(fake_calls("*"), before);
    /* The device query itself. */
    pipert_stream_device dq;
    ck_assert_int_eq(pipert_stream_device_query(0, &dq), cudaSuccess);
    ck_assert_int_eq(dq.async_engines, 2);
    ck_assert_int_eq(dq.concurrent_kernels, 1);
    ck_assert_int_eq(dq.priority_least, 0);
    ck_assert_int_eq(dq.priority_greatest, -5);
    ck_assert_uint_eq(dq.mem_free, (size_t)70 << 30);
    ck_assert_int_eq(pipert_stream_device_query(-1, &dq), cudaErrorInvalidDevice);
    ck_assert_int_eq(pipert_stream_device_query(0, NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(fake_current_device(), 1);
    expect_clean();
}
END_TEST

/* ------------------------------------------------------------------ pools, buffers, events */

START_TEST(pool_create_destroy)
{
    pipert_stream_pool pool;
    int prio[] = { -1, 0, -9, 5 };
    ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 6, prio, 4), cudaSuccess);
    ck_assert_int_eq(pool.count, 6);
    ck_assert_int_eq(pool.device, 0);
    ck_assert_int_eq(pool.priority_least, 0);
    ck_assert_int_eq(pool.priority_greatest, -5);
    int want[] = { -1, 0, -5, 0, -1, 0 };
    for (int i = 0; i < 6; ++i) {
        ck_assert_int_eq(pool.priority[i], want[i]);
        ck_assert_int_eq(fake_stream_priority(pool.stream[i]), want[i]);
        ck_assert_int_eq(fake_stream_device(pool.stream[i]), 0);
        ck_assert_int_eq(fake_stream_flags(pool.stream[i]), cudaStreamNonBlocking);
    }
    ck_assert_int_eq(fake_current_device(), 1);
    ck_assert_int_eq(pipert_stream_pool_sync(&pool), cudaSuccess);
    ck_assert_int_eq(pipert_stream_pool_destroy(&pool), cudaSuccess);
    ck_assert_int_eq(pool.count, 0);
    ck_assert_int_eq(pipert_stream_pool_destroy(&pool), cudaSuccess);   /* empty: nothing */
    /* No priorities: the device's default (least). */
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 1, PIPERT_MAX_STREAMS, NULL, 0),
                     cudaSuccess);
    for (int i = 0; i < PIPERT_MAX_STREAMS; ++i)
        ck_assert_int_eq(fake_stream_priority(pool.stream[i]), 0);
    ck_assert_int_eq(pipert_stream_pool_destroy(&pool), cudaSuccess);
    expect_clean();
}
END_TEST

START_TEST(pool_errors)
{
    pipert_stream_pool pool;
    int prio[] = { 0 };
    ck_assert_int_eq(pipert_stream_pool_create(NULL, 0, 1, NULL, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 0, NULL, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, PIPERT_MAX_STREAMS + 1, NULL, 0),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 1, NULL, 1), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 1, prio, -1), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, -1, 1, NULL, 0), cudaErrorInvalidDevice);
    ck_assert_int_eq(fake_calls("*"), 0);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 7, 1, NULL, 0), cudaErrorInvalidDevice);
    ck_assert_int_eq(pool.count, 0);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    /* The third stream cannot be made: none is left, the device is restored. */
    ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
    fake_fail("cudaStreamCreateWithPriority", 3, cudaErrorMemoryAllocation);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 4, NULL, 0), cudaErrorMemoryAllocation);
    ck_assert_int_eq(pool.count, 0);
    ck_assert_int_eq(fake_live_streams(), 0);
    ck_assert_int_eq(fake_current_device(), 1);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    /* Restoring the device fails: all or none still. */
    fake_fail("cudaSetDevice", 2, cudaErrorUnknown);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 2, NULL, 0), cudaErrorUnknown);
    ck_assert_int_eq(fake_live_streams(), 0);
    /* Sync and destroy report the first error, after doing all. */
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 3, NULL, 0), cudaSuccess);
    fake_fail("cudaStreamSynchronize", 2, cudaErrorIllegalAddress);
    ck_assert_int_eq(pipert_stream_pool_sync(&pool), cudaErrorIllegalAddress);
    ck_assert_int_eq(fake_calls("cudaStreamSynchronize"), 3);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    fake_fail("cudaStreamDestroy", 1, cudaErrorUnknown);
    ck_assert_int_eq(pipert_stream_pool_destroy(&pool), cudaErrorUnknown);
    ck_assert_int_eq(pool.count, 0);
    ck_assert_int_eq(fake_live_streams(), 1);           /* the one the fake refused */
    ck_assert_int_eq(pipert_stream_pool_sync(NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_pool_destroy(NULL), cudaErrorInvalidValue);
}
END_TEST

START_TEST(host_buffers)
{
    pipert_host_buffer b;
    ck_assert_int_eq(pipert_host_alloc(&b, 0), cudaSuccess);
    ck_assert_ptr_null(b.ptr);
    ck_assert_int_eq(b.owner, PIPERT_HOST_NONE);
    ck_assert_int_eq(pipert_host_release(&b), cudaSuccess);
    ck_assert_int_eq(pipert_host_alloc(&b, 100), cudaSuccess);
    ck_assert_ptr_nonnull(b.ptr);
    ck_assert_uint_eq(b.bytes, 100);
    ck_assert_int_eq(b.owner, PIPERT_HOST_ALLOCATED);
    ck_assert_int_eq(fake_host_flags(b.ptr), cudaHostAllocPortable);
    memset(b.ptr, 1, 100);
    ck_assert_int_eq(pipert_host_release(&b), cudaSuccess);
    ck_assert_ptr_null(b.ptr);
    ck_assert_int_eq(fake_live_host_allocs(), 0);
    fake_fail("cudaHostAlloc", 1, cudaErrorMemoryAllocation);
    ck_assert_int_eq(pipert_host_alloc(&b, 100), cudaErrorMemoryAllocation);
    ck_assert_ptr_null(b.ptr);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    ck_assert_int_eq(pipert_host_alloc(NULL, 1), cudaErrorInvalidValue);

    /* Registering user memory; memory registered already is not ours to unregister. */
    char *mem = malloc(4096);
    pipert_host_buffer r, again;
    ck_assert_int_eq(pipert_host_register(&r, mem, 4096, 0), cudaSuccess);
    ck_assert_int_eq(r.owner, PIPERT_HOST_REGISTERED);
    ck_assert_int_eq(fake_host_flags(mem), cudaHostRegisterPortable);
    ck_assert_int_eq(pipert_host_register(&again, mem + 100, 50, 0), cudaSuccess);
    ck_assert_int_eq(again.owner, PIPERT_HOST_NONE);
    ck_assert_ptr_eq(again.ptr, mem + 100);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    ck_assert_int_eq(pipert_host_release(&again), cudaSuccess);
    ck_assert_int_eq(fake_live_registrations(), 1);
    ck_assert_int_eq(pipert_host_release(&r), cudaSuccess);
    ck_assert_int_eq(fake_live_registrations(), 0);
    ck_assert_int_eq(pipert_host_register(&r, mem, 0, 0), cudaSuccess);
    ck_assert_int_eq(r.owner, PIPERT_HOST_NONE);
    ck_assert_int_eq(pipert_host_register(&r, NULL, 10, 0), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_host_register(NULL, mem, 10, 0), cudaErrorInvalidValue);
    fake_fail("cudaHostRegister", 1, cudaErrorNotSupported);
    ck_assert_int_eq(pipert_host_register(&r, mem, 10, 0), cudaErrorNotSupported);
    ck_assert_int_eq(r.owner, PIPERT_HOST_NONE);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    ck_assert_int_eq(pipert_host_release(NULL), cudaErrorInvalidValue);
    r.owner = 9;
    ck_assert_int_eq(pipert_host_release(&r), cudaErrorInvalidValue);
    free(mem);
    expect_clean();
}
END_TEST

static int produced;
static void produce(void *arg)
{
    (void)arg;
    produced = 1;
}
static void consume(void *arg)
{
    *(int *)arg = produced;
}
static int host_func_ran;
static void host_func(void *arg)
{
    host_func_ran = *(int *)arg;
}

START_TEST(events_and_timers)
{
    pipert_stream_pool pool;
    ck_assert_int_eq(pipert_stream_pool_create(&pool, 0, 2, NULL, 0), cudaSuccess);
    pipert_timer t;
    ck_assert_int_eq(pipert_timer_create(&t), cudaSuccess);
    ck_assert_int_eq(fake_live_events(), 2);
    ck_assert_int_eq(pipert_timer_start(&t, pool.stream[0]), cudaSuccess);
    ck_assert_int_eq(pipert_timer_stop(&t, pool.stream[0]), cudaSuccess);
    float ms = 0;
    ck_assert_int_eq(pipert_timer_elapsed(&t, &ms), cudaSuccess);
    ck_assert_float_eq(ms, 1.0f);      /* the fake's clock: one tick per record */
    ck_assert_int_eq(pipert_timer_elapsed(&t, NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_timer_destroy(&t), cudaSuccess);
    ck_assert_int_eq(fake_live_events(), 0);
    ck_assert_int_eq(pipert_timer_start(&t, pool.stream[0]), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_timer_elapsed(&t, &ms), cudaErrorInvalidValue);
    /* The second event cannot be made: the first is destroyed. */
    fake_fail("cudaEventCreateWithFlags", 2, cudaErrorMemoryAllocation);
    ck_assert_int_eq(pipert_timer_create(&t), cudaErrorMemoryAllocation);
    ck_assert_int_eq(fake_live_events(), 0);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    /* A timer whose stop was never recorded. */
    ck_assert_int_eq(pipert_timer_create(&t), cudaSuccess);
    ck_assert_int_eq(pipert_timer_start(&t, pool.stream[0]), cudaSuccess);
    ck_assert_int_eq(pipert_timer_elapsed(&t, &ms), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    ck_assert_int_eq(pipert_timer_destroy(&t), cudaSuccess);

    /* stream_after: the consumer's work sees the producer's, whichever stream runs first. */
    cudaEvent_t ev;
    ck_assert_int_eq(pipert_event_create(&ev, 0), cudaSuccess);
    produced = 0;
    int seen = -1;
    fake_enqueue(pool.stream[0], produce, NULL);
    ck_assert_int_eq(pipert_stream_after(pool.stream[1], pool.stream[0], ev), cudaSuccess);
    fake_enqueue(pool.stream[1], consume, &seen);
    ck_assert_int_eq(cudaStreamSynchronize(pool.stream[1]), cudaSuccess);
    ck_assert_int_eq(seen, 1);
    ck_assert_int_eq(pipert_stream_after(pool.stream[1], pool.stream[0], NULL),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(cudaEventDestroy(ev), cudaSuccess);
    ck_assert_int_eq(pipert_event_create(NULL, 1), cudaErrorInvalidValue);
    fake_fail("cudaEventCreateWithFlags", 1, cudaErrorUnknown);
    ck_assert_int_eq(pipert_event_create(&ev, 1), cudaErrorUnknown);
    ck_assert_ptr_null(ev);

    /* Host functions run in stream order. */
    int arg = 7;
    host_func_ran = 0;
    ck_assert_int_eq(pipert_host_func(pool.stream[0], host_func, &arg), cudaSuccess);
    ck_assert_int_eq(host_func_ran, 0);
    ck_assert_int_eq(pipert_stream_pool_sync(&pool), cudaSuccess);
    ck_assert_int_eq(host_func_ran, 7);
    ck_assert_int_eq(pipert_host_func(pool.stream[0], NULL, &arg), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_pool_destroy(&pool), cudaSuccess);
    expect_clean();
}
END_TEST

/* ------------------------------------------------------------------ runs */

/* A CPU "kernel" over one chunk's device buffers, enqueued on its stream. */
typedef struct job {
    const pipert_chunk *c;
    pipert_chunk chunk;
    int64_t cols;
    int64_t halo;
    int64_t rows;
} job;

/* z = 2 x + y over the chunk's rows (arrays x, y, z). */
static void saxpy_kernel(void *p)
{
    job *j = p;
    const float *x = j->chunk.buffers[0], *y = j->chunk.buffers[1];
    float *z = j->chunk.buffers[2];
    for (int64_t i = 0; i < j->chunk.in_count; ++i)
        z[i] = 2 * x[i] + y[i];
}

/* out[r][c] = in[r-1][c] + 2 in[r][c] + in[r+1][c] + r, with rows outside the problem 0:
 * computed over the sub-problem (rows in_first .. in_first + in_count), whose edge rows
 * are wrong unless they are the problem's. */
static void stencil_kernel(void *p)
{
    job *j = p;
    const float *in = j->chunk.buffers[0];
    float *out = j->chunk.buffers[1];
    int64_t n = j->chunk.in_count, C = j->cols;
    for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < C; ++c) {
            float up = r > 0 ? in[(r - 1) * C + c] : 0;
            float down = r + 1 < n ? in[(r + 1) * C + c] : 0;
            out[r * C + c] = up + 2 * in[r * C + c] + down + (float)(j->chunk.in_first + r);
        }
}

static float stencil_ref(const float *in, int64_t rows, int64_t C, int64_t r, int64_t c)
{
    float up = r > 0 ? in[(r - 1) * C + c] : 0;
    float down = r + 1 < rows ? in[(r + 1) * C + c] : 0;
    return up + 2 * in[r * C + c] + down + (float)r;
}

typedef struct progress_log {
    int64_t calls;
    int64_t chunks, seen_max_done, elements;
    unsigned char *seen;      /* per chunk */
    int bad;
} progress_log;

static pipert_stream_layout progress_layout;

static void on_progress(const pipert_progress *p, void *user)
{
    progress_log *g = user;
    pipert_chunk c;
    g->calls++;
    if (p->chunk < 0 || p->chunk >= g->chunks || g->seen[p->chunk]++
        || pipert_stream_chunk_at(&progress_layout, p->chunk, &c) != cudaSuccess
        || c.first != p->first || c.count != p->count || c.device != p->device
        || c.stream_index != p->stream || p->chunks != g->chunks
        || p->chunks_done != g->calls)
        g->bad++;
    g->elements += p->count;
    if (p->elements_done != g->elements)
        g->bad++;
}

/* A sum over the chunk's rows of x (buffer 0) into its slot's scratch s (buffer 1, one
 * float), through its workspace (buffer 2, a double per row), as a reduction's launch. */
static void sum_kernel(void *p)
{
    job *j = p;
    const float *x = j->chunk.buffers[0];
    double *ws = j->chunk.buffers[2];
    float *s = j->chunk.buffers[1];
    for (int64_t i = 0; i < j->chunk.in_count; ++i)
        ws[i] = x[i];
    *s = 0;
    for (int64_t i = 0; i < j->chunk.in_count; ++i)
        *s += (float)ws[i];
}

/* Reductions: where drive copies each chunk's result (buffer 1's first float), at its
 * index, on its stream after its kernel, as a generated NAME_stream does; NULL: none. */
static float *drive_parts;

/* Drive a whole run the way a generated NAME_stream does, with kernel k over narrays
 * arrays; returns the first error. */
static cudaError_t drive(const pipert_stream_plan *plan, const pipert_stream_problem *prob,
                         const void *const *host, void (*k)(void *), int64_t cols,
                         pipert_stream_layout *lay)
{
    cudaError_t err = pipert_stream_layout_query(plan, prob, lay);
    if (err != cudaSuccess)
        return err;
    progress_layout = *lay;
    pipert_stream_run *run;
    if ((err = pipert_stream_begin(plan, prob, lay, host, &run)) != cudaSuccess)
        return err;
    job *jobs = calloc(lay->chunks ? (size_t)lay->chunks : 1, sizeof *jobs);
    ck_assert_ptr_nonnull(jobs);
    for (int64_t i = 0; err == cudaSuccess && i < lay->chunks; ++i) {
        job *j = &jobs[i];
        if ((err = pipert_stream_next(run, &j->chunk)) != cudaSuccess)
            break;
        ck_assert_int_eq(fake_current_device(), j->chunk.device);
        ck_assert_int_eq(fake_stream_device(j->chunk.stream), j->chunk.device);
        j->cols = cols;
        if ((err = pipert_stream_copy_in(run, &j->chunk)) != cudaSuccess)
            break;
        fake_enqueue(j->chunk.stream, k, j);
        if (drive_parts
            && (err = cudaMemcpyAsync(drive_parts + i, j->chunk.buffers[1], sizeof *drive_parts,
                                      cudaMemcpyDeviceToHost, j->chunk.stream)) != cudaSuccess)
            break;
        if ((err = pipert_stream_copy_out(run, &j->chunk)) != cudaSuccess)
            break;
        err = pipert_stream_done(run, &j->chunk);
    }
    err = pipert_stream_end(run, err);
    free(jobs);
    return err;
}

START_TEST(run_elementwise)
{
    const int64_t sizes[] = { 1, 2, 5, 100, 1000, 4097 };
    const int64_t chunk[] = { 0, 1, 3, 64, 100, 5000 };
    int devs[] = { 1, 0 };
    const pipert_stream_array arr[3] = { { PIPERT_IN, 4 }, { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; ++a)
    for (size_t b = 0; b < sizeof chunk / sizeof chunk[0]; ++b)
    for (int nd = 0; nd <= 2; ++nd)
    for (int spd = 0; spd <= 3; spd += 3) {
        int64_t n = sizes[a];
        float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
        for (int64_t i = 0; i < n; ++i) {
            x[i] = (float)i;
            y[i] = (float)(3 * i % 17);
            z[i] = -1;
        }
        const void *host[3] = { x, y, z };
        pipert_stream_problem prob = { n, 0, 8, arr, 3 };
        pipert_stream_plan plan = { devs, nd, spd, chunk[b], NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
        pipert_stream_layout lay;
        ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
        ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaSuccess);
        for (int64_t i = 0; i < n; ++i)
            ck_assert_msg(z[i] == 2 * x[i] + y[i], "n=%lld chunk=%lld nd=%d: z[%lld]=%g",
                          (long long)n, (long long)chunk[b], nd, (long long)i, z[i]);
        ck_assert_int_eq(fake_current_device(), 1);
        expect_clean();
        free(x);
        free(y);
        free(z);
    }
}
END_TEST

/* A reduction: x in, its result and workspace as PIPERT_SCRATCH (device memory per
 * slot, no host memory, never copied by the run); each chunk's result copied to its own
 * partial, the partials added in chunk order after the end: every size, chunk size,
 * device and stream count gives the sum, the partials of every chunk were written. */
START_TEST(run_scratch_reduce)
{
    const int64_t sizes[] = { 0, 1, 2, 5, 100, 4097 };
    const int64_t chunk[] = { 0, 1, 3, 64, 5000 };
    int devs[] = { 1, 0 };
    const pipert_stream_array arr[3] = { { PIPERT_IN, 4 }, { PIPERT_SCRATCH, 4 },
                                         { PIPERT_SCRATCH, 8 } };
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; ++a)
    for (size_t b = 0; b < sizeof chunk / sizeof chunk[0]; ++b)
    for (int nd = 0; nd <= 2; ++nd)
    for (int spd = 0; spd <= 3; spd += 3) {
        int64_t n = sizes[a];
        float *x = malloc(n ? n * 4 : 1), want = 0;
        for (int64_t i = 0; i < n; ++i) {
            x[i] = (float)(i % 7);
            want += x[i];
        }
        const void *host[3] = { x, NULL, NULL };
        pipert_stream_problem prob = { n, 0, 8, arr, 3 };
        pipert_stream_plan plan = { devs, nd, spd, chunk[b], NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
        pipert_stream_layout lay;
        ck_assert_int_eq(pipert_stream_layout_query(&plan, &prob, &lay), cudaSuccess);
        float *parts = malloc((size_t)(lay.chunks + 1) * sizeof *parts);
        for (int64_t i = 0; i <= lay.chunks; ++i)
            parts[i] = -1;
        int regs = fake_calls("cudaHostRegister"), copies = fake_calls("cudaMemcpyAsync");
        drive_parts = parts;
        ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
        ck_assert_int_eq(drive(&plan, &prob, host, sum_kernel, 1, &lay), cudaSuccess);
        drive_parts = NULL;
        float got = 0;
        for (int64_t i = 0; i < lay.chunks; ++i)
            got += parts[i];
        ck_assert_msg(got == want, "n=%lld chunk=%lld nd=%d: %g, want %g", (long long)n,
                      (long long)chunk[b], nd, got, want);
        ck_assert(parts[lay.chunks] == -1);
        /* x alone registered; its copies in and the partials, nothing of the scratch. */
        ck_assert_int_le(fake_calls("cudaHostRegister"), regs + 1);
        ck_assert_int_eq(fake_calls("cudaMemcpyAsync"), copies + 2 * lay.chunks);
        expect_clean();
        free(parts);
        free(x);
    }
}
END_TEST

START_TEST(run_stencil_halo)
{
    const int64_t rows_of[] = { 1, 2, 3, 10, 37 };
    const int64_t chunks[] = { 1, 2, 3, 7, 100 };
    const int64_t C = 5;
    int devs[] = { 0, 1 };
    const pipert_stream_array arr[2] = { { PIPERT_IN, C * 4 }, { PIPERT_OUT, C * 4 } };
    for (size_t a = 0; a < sizeof rows_of / sizeof rows_of[0]; ++a)
    for (size_t b = 0; b < sizeof chunks / sizeof chunks[0]; ++b)
    for (int nd = 1; nd <= 2; ++nd) {
        int64_t R = rows_of[a];
        float *in = malloc(R * C * 4), *out = malloc(R * C * 4);
        for (int64_t i = 0; i < R * C; ++i) {
            in[i] = (float)(i * 7 % 13);
            out[i] = -1;
        }
        const void *host[2] = { in, out };
        pipert_stream_problem prob = { R, 1, 0, arr, 2 };
        pipert_stream_plan plan = { devs, nd, 2, chunks[b], NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
        pipert_stream_layout lay;
        ck_assert_int_eq(drive(&plan, &prob, host, stencil_kernel, C, &lay), cudaSuccess);
        for (int64_t r = 0; r < R; ++r)
            for (int64_t c = 0; c < C; ++c)
                ck_assert_msg(out[r * C + c] == stencil_ref(in, R, C, r, c),
                              "R=%lld chunk=%lld nd=%d: out[%lld][%lld]=%g, want %g",
                              (long long)R, (long long)chunks[b], nd, (long long)r,
                              (long long)c, out[r * C + c], stencil_ref(in, R, C, r, c));
        expect_clean();
        free(in);
        free(out);
    }
}
END_TEST

START_TEST(run_progress)
{
    int devs[] = { 0, 1 };
    const pipert_stream_array arr[3] = { { PIPERT_IN, 4 }, { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    int64_t n = 1001;
    float *x = calloc(n, 4), *y = calloc(n, 4), *z = calloc(n, 4);
    const void *host[3] = { x, y, z };
    progress_log g;
    memset(&g, 0, sizeof g);
    g.chunks = 101;
    g.seen = calloc(g.chunks, 1);
    int prio[] = { -3, 0 };
    pipert_stream_plan plan = { devs, 2, 3, 10, prio, 2, 0, on_progress, &g, NULL, 0, NULL };
    pipert_stream_problem prob = { n, 0, 0, arr, 3 };
    pipert_stream_layout lay;
    ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaSuccess);
    ck_assert_int_eq(lay.chunks, 101);
    ck_assert_int_eq(g.calls, 101);
    ck_assert_int_eq(g.bad, 0);
    ck_assert_int_eq(g.elements, n);
    for (int64_t i = 0; i < g.chunks; ++i)
        ck_assert_int_eq(g.seen[i], 1);
    expect_clean();
    free(g.seen);
    free(x);
    free(y);
    free(z);
}
END_TEST

START_TEST(run_device_named_twice)
{
    int devs[] = { 1, 0, 1 };
    const pipert_stream_array arr[3] = { { PIPERT_IN, 4 }, { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    const int64_t sizes[] = { 1, 2, 3, 29, 1000 };
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; ++a) {
        int64_t n = sizes[a];
        float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
        for (int64_t i = 0; i < n; ++i) {
            x[i] = (float)(i % 101);
            y[i] = (float)(5 * i % 23);
            z[i] = -1;
        }
        const void *host[3] = { x, y, z };
        pipert_stream_problem prob = { n, 0, 0, arr, 3 };
        pipert_stream_plan plan = { devs, 3, 2, 10, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
        pipert_stream_layout lay;
        ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaSuccess);
        ck_assert_int_eq(lay.ndevices, lay.chunks < 3 ? lay.chunks : 3);
        for (int64_t i = 0; i < n; ++i)
            ck_assert_msg(z[i] == 2 * x[i] + y[i], "n=%lld: z[%lld]=%g", (long long)n,
                          (long long)i, z[i]);
        expect_clean();
        free(x);
        free(y);
        free(z);
    }
}
END_TEST

/* A traced run: every traced chunk's marks in the order its stream ran them, and a
 * stream's chunks one after another. */
static void check_trace(const pipert_chunk_trace *t, int64_t ntrace,
                        const pipert_stream_layout *lay)
{
    for (int64_t i = 0; i < ntrace; ++i) {
        pipert_chunk c;
        ck_assert_int_eq(pipert_stream_chunk_at(lay, i, &c), cudaSuccess);
        ck_assert_int_eq(t[i].chunk, i);
        ck_assert_int_eq(t[i].first, c.first);
        ck_assert_int_eq(t[i].count, c.count);
        ck_assert_int_eq(t[i].device, c.device);
        ck_assert_int_eq(t[i].device_index, c.device_index);
        ck_assert_int_eq(t[i].stream, c.stream_index);
        ck_assert(t[i].h2d_begin >= 0);
        ck_assert(t[i].h2d_begin < t[i].h2d_end);
        ck_assert(t[i].h2d_end < t[i].d2h_begin);
        ck_assert(t[i].d2h_begin < t[i].d2h_end);
        if (i >= lay->slots)
            ck_assert(t[i - lay->slots].d2h_end < t[i].h2d_begin);
    }
}

START_TEST(run_trace)
{
    int devs[] = { 0, 1 };
    const pipert_stream_array arr[3] = { { PIPERT_IN, 4 }, { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    float x[95], y[95], z[95];
    for (int i = 0; i < 95; ++i) {
        x[i] = (float)i;
        y[i] = (float)(i % 7);
    }
    const void *host[3] = { x, y, z };
    pipert_stream_problem prob = { 95, 0, 0, arr, 3 };
    pipert_chunk_trace t[12];
    for (int64_t cap = 0; cap <= 12; cap += 4) {
        memset(t, 0x5a, sizeof t);
        pipert_stream_plan plan = { devs, 2, 2, 10, NULL, 0, 0, NULL, NULL, t, cap, NULL };
        pipert_stream_layout lay;
        ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaSuccess);
        ck_assert_int_eq(lay.chunks, 10);
        check_trace(t, cap < 10 ? cap : 10, &lay);
        for (int64_t i = cap < 10 ? cap : 10; i < 12; ++i)
            ck_assert_int_eq(t[i].chunk, 0x5a5a5a5a5a5a5a5a);   /* not written */
        for (int i = 0; i < 95; ++i)
            ck_assert(z[i] == 2 * x[i] + y[i]);
        expect_clean();
    }
    /* The events cannot all be made: begin fails and leaves nothing. */
    pipert_stream_plan plan = { devs, 2, 2, 10, NULL, 0, 0, NULL, NULL, t, 12, NULL };
    pipert_stream_layout lay;
    pipert_stream_run *run = NULL;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &prob, &lay), cudaSuccess);
    fake_fail("cudaEventCreateWithFlags", 5, cudaErrorMemoryAllocation);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run),
                     cudaErrorMemoryAllocation);
    ck_assert_ptr_null(run);
    expect_clean();
    /* A run ended after its first chunk's copy in: that chunk and the rest are not traced. */
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    pipert_chunk c;
    ck_assert_int_eq(pipert_stream_next(run, &c), cudaSuccess);
    ck_assert_int_eq(pipert_stream_copy_in(run, &c), cudaSuccess);
    ck_assert_int_eq(pipert_stream_end(run, cudaErrorLaunchFailure), cudaErrorLaunchFailure);
    for (int i = 0; i < 10; ++i)
        ck_assert_int_eq(t[i].chunk, -1);
    expect_clean();
}
END_TEST

/* Runs sharing a cache of buffers: the second and later runs of a size allocate nothing;
 * a larger size drops the smaller blocks; each block stays on its device. */
START_TEST(run_cache)
{
    int devs[] = { 1, 0 };
    const pipert_stream_array arr[3] = { { PIPERT_IN, 4 }, { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    enum { N = 400 };
    float x[N], y[N], z[N];
    for (int i = 0; i < N; ++i) {
        x[i] = (float)(i % 13);
        y[i] = (float)(i % 5);
    }
    const void *host[3] = { x, y, z };
    pipert_stream_cache *cache = NULL;
    ck_assert_int_eq(pipert_stream_cache_create(&cache), cudaSuccess);
    pipert_stream_plan plan = { devs, 2, 2, 10, NULL, 0, 0, NULL, NULL, NULL, 0, cache };
    const int64_t sizes[] = { 100, 100, 95, 400, 400 };
    int mallocs[5];
    for (int k = 0; k < 5; ++k) {
        pipert_stream_problem prob = { sizes[k], 0, 0, arr, 3 };
        pipert_stream_layout lay;
        memset(z, 0, sizeof z);
        int before = fake_calls("cudaMalloc");
        plan.chunk_elements = sizes[k] / 4;
        ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaSuccess);
        mallocs[k] = fake_calls("cudaMalloc") - before;
        for (int64_t i = 0; i < sizes[k]; ++i)
            ck_assert(z[i] == 2 * x[i] + y[i]);
        int held = 0;
        ck_assert_int_eq(pipert_stream_cache_held(cache, &held, NULL), cudaSuccess);
        ck_assert_int_eq(held, lay.slots);
        ck_assert_int_eq(fake_live_device_allocs(), lay.slots);
        ck_assert_int_eq(fake_live_streams(), 0);
    }
    ck_assert_int_eq(mallocs[0], 4);
    ck_assert_int_eq(mallocs[1], 0);       /* the same size again */
    ck_assert_int_eq(mallocs[2], 0);       /* smaller: the blocks it holds do */
    ck_assert_int_eq(mallocs[3], 4);       /* larger: new blocks, the old ones freed */
    ck_assert_int_eq(mallocs[4], 0);
    /* One run at a time. */
    pipert_stream_problem prob = { 100, 0, 0, arr, 3 };
    pipert_stream_layout lay;
    pipert_stream_run *run = NULL, *second = NULL;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &prob, &lay), cudaSuccess);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &second), cudaErrorNotPermitted);
    ck_assert_ptr_null(second);
    ck_assert_int_eq(pipert_stream_cache_destroy(cache), cudaErrorNotPermitted);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    /* A failed begin gives its blocks back and frees the cache for the next run. */
    fake_fail("cudaStreamCreateWithPriority", 1, cudaErrorUnknown);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaErrorUnknown);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
    ck_assert_int_eq(pipert_stream_cache_destroy(cache), cudaSuccess);
    ck_assert_int_eq(fake_current_device(), 1);
    ck_assert_int_eq(pipert_stream_cache_destroy(NULL), cudaSuccess);
    ck_assert_int_eq(pipert_stream_cache_create(NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_cache_held(NULL, NULL, NULL), cudaErrorInvalidValue);
    expect_clean();
}
END_TEST

static void count_progress(const pipert_progress *p, void *user)
{
    (void)p;
    ++*(int *)user;
}

START_TEST(run_protocol)
{
    /* With progress reports, chunks are closed in order. */
    const pipert_stream_array arr[1] = { { PIPERT_INOUT, 4 } };
    float data[40] = { 0 };
    const void *host[1] = { data };
    int calls = 0;
    pipert_stream_plan plan = { NULL, 0, 2, 10, NULL, 0, 0, count_progress, &calls, NULL, 0, NULL };
    pipert_stream_problem prob = { 40, 0, 0, arr, 1 };
    pipert_stream_layout lay;
    pipert_stream_run *run;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &prob, &lay), cudaSuccess);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    pipert_chunk c0, c1, fake;
    ck_assert_int_eq(pipert_stream_next(run, &c0), cudaSuccess);
    ck_assert_int_eq(pipert_stream_next(run, &c1), cudaErrorInvalidValue);   /* not closed */
    ck_assert_int_eq(pipert_stream_done(run, &c0), cudaSuccess);
    ck_assert_int_eq(pipert_stream_done(run, &c0), cudaErrorInvalidValue);   /* twice */
    ck_assert_int_eq(pipert_stream_next(run, &c1), cudaSuccess);
    ck_assert_int_eq(pipert_stream_done(run, &c0), cudaErrorInvalidValue);   /* not the last */
    /* Chunks this run did not hand out. */
    fake = c1;
    fake.index = 3;
    ck_assert_int_eq(pipert_stream_copy_in(run, &fake), cudaErrorInvalidValue);
    fake = c1;
    fake.count = 11;
    ck_assert_int_eq(pipert_stream_copy_out(run, &fake), cudaErrorInvalidValue);
    fake = c1;
    fake.slot = 0;
    ck_assert_int_eq(pipert_stream_done(run, &fake), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_copy_in(run, NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_copy_in(NULL, &c1), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_next(NULL, &c1), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_done(run, &c1), cudaSuccess);
    pipert_chunk c;
    ck_assert_int_eq(pipert_stream_next(run, &c), cudaSuccess);
    ck_assert_int_eq(pipert_stream_done(run, &c), cudaSuccess);
    ck_assert_int_eq(pipert_stream_next(run, &c), cudaSuccess);
    ck_assert_int_eq(pipert_stream_done(run, &c), cudaSuccess);
    ck_assert_int_eq(pipert_stream_next(run, &c), cudaErrorInvalidValue);    /* past the end */
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    ck_assert_int_eq(calls, 4);
    expect_clean();
    ck_assert_int_eq(pipert_stream_end(NULL, cudaSuccess), cudaSuccess);
    ck_assert_int_eq(pipert_stream_end(NULL, cudaErrorUnknown), cudaErrorUnknown);

    /* Without progress reports, done may be left out. */
    plan.progress = NULL;
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    for (int i = 0; i < 4; ++i)
        ck_assert_int_eq(pipert_stream_next(run, &c), cudaSuccess);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    expect_clean();
}
END_TEST

START_TEST(run_zero_elements)
{
    const pipert_stream_array arr[1] = { { PIPERT_IN, 4 } };
    const void *host[1] = { NULL };
    pipert_stream_problem prob = { 0, 0, 0, arr, 1 };
    pipert_stream_layout lay;
    pipert_stream_run *run;
    ck_assert_int_eq(pipert_stream_layout_query(NULL, &prob, &lay), cudaSuccess);
    ck_assert_int_eq(lay.chunks, 0);
    ck_assert_int_eq(pipert_stream_begin(NULL, &prob, &lay, host, &run), cudaSuccess);
    pipert_chunk c;
    ck_assert_int_eq(pipert_stream_next(run, &c), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    ck_assert_int_eq(fake_calls("*"), 0);
}
END_TEST

START_TEST(run_begin_validation)
{
    const pipert_stream_array arr[2] = { { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    float x[10] = { 0 }, z[10] = { 0 };
    const void *host[2] = { x, z }, *nohost[2] = { x, NULL };
    pipert_stream_problem prob = { 10, 0, 0, arr, 2 };
    pipert_stream_layout lay;
    pipert_stream_run *run = (pipert_stream_run *)1;
    ck_assert_int_eq(pipert_stream_layout_query(NULL, &prob, &lay), cudaSuccess);
    int before = fake_calls("*");
    ck_assert_int_eq(pipert_stream_begin(NULL, &prob, &lay, host, NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_begin(NULL, &prob, NULL, host, &run), cudaErrorInvalidValue);
    ck_assert_ptr_null(run);
    ck_assert_int_eq(pipert_stream_begin(NULL, &prob, &lay, NULL, &run), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_stream_begin(NULL, &prob, &lay, nohost, &run), cudaErrorInvalidValue);
    pipert_stream_problem other = prob;
    other.elements = 11;
    ck_assert_int_eq(pipert_stream_begin(NULL, &other, &lay, host, &run), cudaErrorInvalidValue);
    pipert_stream_layout bad = lay;
    bad.slots = 7;
    ck_assert_int_eq(pipert_stream_begin(NULL, &prob, &bad, host, &run), cudaErrorInvalidValue);
    int devs[] = { 0, 1 };
    pipert_stream_plan plan = { devs, 2, 0, 0, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    bad = lay;
    bad.ndevices = 3;
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &bad, host, &run), cudaErrorInvalidValue);
    plan.host_register = 5;
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaErrorInvalidValue);
    ck_assert_int_eq(fake_calls("*"), before);
    /* A scratch array has no host memory: NULL is fine there, and only there. */
    const pipert_stream_array scratch[2] = { { PIPERT_IN, 4 }, { PIPERT_SCRATCH, 4 } };
    prob.arrays = scratch;
    ck_assert_int_eq(pipert_stream_begin(NULL, &prob, &lay, nohost, &run), cudaSuccess);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    expect_clean();
}
END_TEST

START_TEST(run_registration)
{
    const pipert_stream_array arr[2] = { { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    enum { N = 1 << 20 };      /* 4 MiB each, on 64 KiB pages: registered whole */
    float *x = aligned_alloc(1 << 16, N * 4), *z = aligned_alloc(1 << 16, N * 4);
    const void *host[2] = { x, z };
    pipert_stream_problem prob = { N, 0, 0, arr, 2 };
    pipert_stream_plan plan = { NULL, 0, 2, N / 2, NULL, 0, PIPERT_REGISTER_AUTO, NULL, NULL, NULL, 0, NULL };
    pipert_stream_layout lay;
    pipert_stream_run *run;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &prob, &lay), cudaSuccess);
    /* AUTO: both registered for the run, unregistered at its end. */
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    ck_assert_int_eq(fake_live_registrations(), 2);
    ck_assert_int_eq(fake_host_flags(x), cudaHostRegisterPortable);
    ck_assert_int_eq(fake_live_device_allocs(), 2);             /* one per slot */
    ck_assert_int_eq(fake_live_streams(), 2);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    expect_clean();
    /* Memory the caller pinned stays pinned. */
    pipert_host_buffer mine;
    ck_assert_int_eq(pipert_host_register(&mine, z, N * 4, 0), cudaSuccess);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    ck_assert_int_eq(fake_live_registrations(), 2);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    ck_assert_int_eq(fake_live_registrations(), 1);
    ck_assert_int_eq(pipert_host_release(&mine), cudaSuccess);
    /* Memory page-locked already (cudaHostAlloc) is not registered again. */
    {
        pipert_host_buffer pin;
        ck_assert_int_eq(pipert_host_alloc(&pin, N * 4), cudaSuccess);
        const void *ph[2] = { pin.ptr, z };
        int regs = fake_calls("cudaHostRegister");
        ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, ph, &run), cudaSuccess);
        ck_assert_int_eq(fake_calls("cudaHostRegister"), regs + 1);   /* z alone */
        ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
        ck_assert_int_eq(pipert_host_release(&pin), cudaSuccess);
    }
    /* Registration fails: the run goes on with pageable memory, no error pending. */
    fake_fail("cudaHostRegister", 1, cudaErrorNotSupported);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    ck_assert_int_eq(fake_live_registrations(), 1);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    expect_clean();
    /* NEVER: no registration at all. */
    plan.host_register = PIPERT_REGISTER_NEVER;
    int regs = fake_calls("cudaHostRegister");
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    ck_assert_int_eq(fake_calls("cudaHostRegister"), regs);
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    expect_clean();
    free(x);
    free(z);
}
END_TEST

START_TEST(run_priorities)
{
    const pipert_stream_array arr[1] = { { PIPERT_IN, 4 } };
    float x[64] = { 0 };
    const void *host[1] = { x };
    int devs[] = { 1, 0 }, prio[] = { -7, 3, -2 };
    pipert_stream_plan plan = { devs, 2, 3, 1, prio, 3, 0, NULL, NULL, NULL, 0, NULL };
    pipert_stream_problem prob = { 64, 0, 0, arr, 1 };
    pipert_stream_layout lay;
    pipert_stream_run *run;
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &prob, &lay), cudaSuccess);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), cudaSuccess);
    int want[] = { -5, 0, -2 };
    for (int i = 0; i < lay.slots; ++i) {
        pipert_chunk c;
        ck_assert_int_eq(pipert_stream_next(run, &c), cudaSuccess);
        ck_assert_int_eq(fake_stream_priority(c.stream), want[c.stream_index]);
        ck_assert_int_eq(fake_stream_device(c.stream), devs[c.device_index]);
        ck_assert_int_eq(fake_stream_flags(c.stream), cudaStreamNonBlocking);
    }
    ck_assert_int_eq(pipert_stream_end(run, cudaSuccess), cudaSuccess);
    expect_clean();
}
END_TEST

/* A run's begin fails at the nth call of fn: nothing is left, the device is restored. */
static void begin_fails(const char *fn, int nth, cudaError_t err)
{
    const pipert_stream_array arr[2] = { { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    float x[100] = { 0 }, z[100] = { 0 };
    const void *host[2] = { x, z };
    int devs[] = { 0, 1 };
    pipert_stream_plan plan = { devs, 2, 2, 10, NULL, 0, 0, NULL, NULL, NULL, 0, NULL };
    pipert_stream_problem prob = { 100, 0, 0, arr, 2 };
    pipert_stream_layout lay;
    pipert_stream_run *run = NULL;
    ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
    ck_assert_int_eq(pipert_stream_layout_query(&plan, &prob, &lay), cudaSuccess);
    fake_fail(fn, nth, err);
    ck_assert_int_eq(pipert_stream_begin(&plan, &prob, &lay, host, &run), err);
    ck_assert_ptr_null(run);
    ck_assert_int_eq(fake_current_device(), 1);
    expect_clean();
}

START_TEST(run_begin_errors)
{
    begin_fails("cudaMalloc", 1, cudaErrorMemoryAllocation);
    fake_reset();
    begin_fails("cudaMalloc", 3, cudaErrorMemoryAllocation);
    fake_reset();
    begin_fails("cudaStreamCreateWithPriority", 3, cudaErrorUnknown);   /* second device */
    fake_reset();
    begin_fails("cudaGetDevice", 1, cudaErrorNoDevice);
}
END_TEST

static void no_kernel(void *p)
{
    (void)p;
}

START_TEST(run_chunk_errors)
{
    /* A copy fails: end returns that error and leaves nothing behind. */
    const pipert_stream_array arr[3] = { { PIPERT_IN, 4 }, { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    enum { N = 100 };
    float *x = calloc(N, 4), *y = calloc(N, 4), *z = calloc(N, 4);
    const void *host[3] = { x, y, z };
    int devs[] = { 0, 1 };
    int calls = 0;
    pipert_stream_plan plan = { devs, 2, 2, 10, NULL, 0, 0, count_progress, &calls, NULL, 0, NULL };
    pipert_stream_problem prob = { N, 0, 0, arr, 3 };
    pipert_stream_layout lay;
    const char *fns[] = { "cudaMemcpyAsync", "cudaLaunchHostFunc", "cudaSetDevice" };
    for (size_t f = 0; f < 3; ++f) {
        ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
        fake_fail(fns[f], 5, cudaErrorLaunchFailure);
        ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaErrorLaunchFailure);
        ck_assert_int_eq(fake_current_device(), 1);
        expect_clean();
        fake_reset();
    }
    /* The wait at the end fails, with progress reports enqueued: the run's memory is kept
     * (a report may still be pending), everything else is released. */
    __lsan_disable();
    fake_fail("cudaStreamSynchronize", 1, cudaErrorIllegalAddress);
    calls = 0;
    ck_assert_int_eq(drive(&plan, &prob, host, no_kernel, 1, &lay), cudaErrorIllegalAddress);
    __lsan_enable();
    expect_clean();
    int before = calls;
    fake_run_orphans();            /* the reports that were pending: the run is still there */
    ck_assert_int_gt(calls, before);
    ck_assert_int_eq(calls, 10);
    /* The same without progress reports: all freed (LSan would tell). */
    plan.progress = NULL;
    fake_fail("cudaStreamSynchronize", 2, cudaErrorIllegalAddress);
    ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaErrorIllegalAddress);
    expect_clean();
    /* Freeing fails at the end: reported, the rest still released. */
    fake_fail("cudaFree", 1, cudaErrorUnknown);
    ck_assert_int_eq(drive(&plan, &prob, host, saxpy_kernel, 1, &lay), cudaErrorUnknown);
    ck_assert_int_eq(fake_live_streams(), 0);
    ck_assert_int_eq(fake_live_registrations(), 0);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    free(x);
    free(y);
    free(z);
}
END_TEST

/* ------------------------------------------------------------------ the launcher's side */

static int kernel_runs;
static void kernel_a(void) { kernel_runs += 1; }
static void kernel_b(void) { kernel_runs += 2; }

START_TEST(caps_and_kernels)
{
    pipert_caps caps;
    ck_assert_int_eq(pipert_device_caps(0, &caps), cudaSuccess);
    ck_assert_int_eq(caps.sm, 90);
    ck_assert_int_eq(caps.sm_count, 132);
    ck_assert_uint_eq(caps.smem_optin, 227 * 1024);
    int calls = fake_calls("cudaDeviceGetAttribute");
    ck_assert_int_eq(pipert_device_caps(0, &caps), cudaSuccess);      /* cached */
    ck_assert_int_eq(fake_calls("cudaDeviceGetAttribute"), calls);
    ck_assert_int_eq(pipert_device_caps(-1, &caps), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_device_caps(PIPERT_MAX_DEVICES, &caps), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
    ck_assert_int_eq(pipert_current_caps(&caps), cudaSuccess);
    ck_assert_int_eq(caps.device, 1);

    /* A kernel without code for the device: NoKernelImage, and no error left pending. */
    pipert_kernel k[2] = { { (const void *)kernel_a, 256, 1024, { 0 }, { 0 }, { 0 } },
                           { (const void *)kernel_b, 256, 1024, { 0 }, { 0 }, { 0 } } };
    ck_assert_int_eq(pipert_kernel_prepare(&k[0], &caps), cudaErrorNoKernelImageForDevice);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    fake_kernel((const void *)kernel_a, 90, 3);
    fake_kernel((const void *)kernel_b, 80, 2);
    ck_assert_int_eq(pipert_kernel_prepare(&k[0], &caps), cudaSuccess);
    ck_assert_int_eq(k[0].blocks_per_sm[1], 3);
    ck_assert_int_eq(pipert_persistent_grid(&k[0], &caps, 1000000), 3 * 132);
    ck_assert_int_eq(pipert_persistent_grid(&k[0], &caps, 5), 5);
    ck_assert_int_eq(pipert_persistent_grid(&k[0], &caps, 0), 1);
    /* Clusters of 2: one per group, or (persistent) 3 * 132 / 2 of them at most. */
    unsigned grid = 0;
    ck_assert_int_eq(pipert_cluster_grid(&k[0], 2, 1000, 0, &grid), cudaSuccess);
    ck_assert_uint_eq(grid, 2000);
    ck_assert_int_eq(pipert_cluster_grid(&k[0], 2, 1000, 1, &grid), cudaSuccess);
    ck_assert_uint_eq(grid, 3 * 132);
    ck_assert_int_eq(pipert_cluster_grid(&k[0], 2, 5, 1, &grid), cudaSuccess);
    ck_assert_uint_eq(grid, 10);
    ck_assert_int_eq(pipert_cluster_grid(&k[0], 4, 0x20000000, 0, &grid), cudaErrorInvalidValue);
    pipert_kernel big = { (const void *)kernel_a, 256, caps.smem_optin + 1, { 0 }, { 0 }, { 0 } };
    ck_assert_int_eq(pipert_kernel_prepare(&big, &caps), cudaErrorInvalidConfiguration);
    /* Variants: sm_90 first, then sm_80. */
    int sm[2] = { 90, 80 };
    pipert_kernel *chosen = NULL;
    ck_assert_int_eq(pipert_select_variant(k, sm, 2, 1, 0, &caps, &chosen), cudaSuccess);
    ck_assert_ptr_eq(chosen, &k[0]);
    caps.sm = 86;
    ck_assert_int_eq(pipert_select_variant(k, sm, 2, 1, 0, &caps, &chosen), cudaSuccess);
    ck_assert_ptr_eq(chosen, &k[1]);
    caps.sm = 75;
    ck_assert_int_eq(pipert_select_variant(k, sm, 2, 1, 0, &caps, &chosen),
                     cudaErrorNoKernelImageForDevice);
}
END_TEST

/* cudaDeviceReset drops the kernels' >48 KiB opt-in: the next prepare applies it again
 * (a launch would fail, its shared memory past the default). */
START_TEST(kernel_prepare_after_reset)
{
    pipert_caps caps;
    ck_assert_int_eq(pipert_device_caps(0, &caps), cudaSuccess);
    pipert_kernel big = { (const void *)kernel_a, 256, 100 * 1024, { 0 }, { 0 }, { 0 } };
    pipert_kernel small = { (const void *)kernel_b, 256, 1024, { 0 }, { 0 }, { 0 } };
    fake_kernel((const void *)kernel_a, 90, 1);
    fake_kernel((const void *)kernel_b, 90, 4);
    ck_assert_int_eq(pipert_kernel_prepare(&big, &caps), cudaSuccess);
    ck_assert_int_eq(pipert_kernel_prepare(&small, &caps), cudaSuccess);
    ck_assert_int_eq(fake_kernel_max_dynamic_smem((const void *)kernel_a), 100 * 1024);
    int gets = fake_calls("cudaFuncGetAttributes");
    ck_assert_int_eq(pipert_kernel_prepare(&small, &caps), cudaSuccess);   /* cached */
    ck_assert_int_eq(fake_calls("cudaFuncGetAttributes"), gets);
    ck_assert_int_eq(cudaDeviceReset(), cudaSuccess);
    ck_assert_int_eq(fake_kernel_max_dynamic_smem((const void *)kernel_a), 48 * 1024);
    ck_assert_int_eq(pipert_kernel_prepare(&big, &caps), cudaSuccess);
    ck_assert_int_eq(fake_kernel_max_dynamic_smem((const void *)kernel_a), 100 * 1024);
    ck_assert_int_eq(big.blocks_per_sm[0], 1);
    /* Its failure is the prepare's, and leaves no error pending. */
    ck_assert_int_eq(cudaDeviceReset(), cudaSuccess);
    fake_fail("cudaFuncSetAttribute", 1, cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_kernel_prepare(&big, &caps), cudaErrorInvalidValue);
    ck_assert_int_eq(fake_last_error(), cudaSuccess);
    ck_assert_int_eq(pipert_kernel_prepare(&big, &caps), cudaSuccess);
    ck_assert_int_eq(fake_kernel_max_dynamic_smem((const void *)kernel_a), 100 * 1024);
}
END_TEST

/* An accumulator's workspace holds 8-byte partials: NULL or short is InvalidValue, an
 * address off 8 bytes MisalignedAddress (the kernel's stores would fault). */
START_TEST(workspace_checks)
{
    _Alignas(8) unsigned char ws[64];
    ck_assert_int_eq(pipert_check_workspace(ws, 64, 64), cudaSuccess);
    ck_assert_int_eq(pipert_check_workspace(ws, 64, 56), cudaSuccess);
    ck_assert_int_eq(pipert_check_workspace(ws, 56, 64), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_check_workspace(NULL, 64, 64), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_check_workspace(ws + 4, 60, 56), cudaErrorMisalignedAddress);
    ck_assert_int_eq(pipert_check_workspace(ws + 1, 63, 8), cudaErrorMisalignedAddress);
    ck_assert_int_eq(pipert_check_workspace(ws + 8, 56, 56), cudaSuccess);
}
END_TEST

START_TEST(pointer_checks_and_strings)
{
    size_t bytes = 1;
    float f[4] = { 0 };
    ck_assert_int_eq(pipert_check_array(f, 4, 1, 1, 4, &bytes), cudaSuccess);
    ck_assert_uint_eq(bytes, 16);
    ck_assert_int_eq(pipert_check_array(NULL, 0, 1, 1, 4, &bytes), cudaSuccess);
    ck_assert_int_eq(pipert_check_array(NULL, 1, 1, 1, 4, &bytes), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_check_array(f, -1, 1, 1, 4, &bytes), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_check_array(f, INT64_MAX, 2, 1, 4, &bytes), cudaErrorInvalidValue);
    ck_assert_int_eq(pipert_check_array((char *)f + 1, 1, 1, 1, 4, &bytes),
                     cudaErrorMisalignedAddress);
    ck_assert_int_eq(pipert_ptr_alignment((void *)48), 16);
    ck_assert_int_eq(pipert_ptr_alignment((void *)12), 4);
    ck_assert_int_eq(pipert_min_align(8, (void *)48), 8);
    ck_assert_int_eq(pipert_vec_index(16, 4), 2);
    ck_assert_int_eq(pipert_ranges_overlap(f, 8, (char *)f + 4, 8), 1);
    ck_assert_int_eq(pipert_ranges_overlap(f, 4, (char *)f + 4, 8), 0);
    ck_assert_int_eq(pipert_ranges_overlap(f, 0, f, 8), 0);
    ck_assert_ptr_nonnull(strstr(pipert_error_string(cudaErrorNoKernelImageForDevice), "--arch"));
    ck_assert_str_eq(pipert_error_string(cudaErrorUnknown), "fake CUDA error");
    ck_assert_str_eq(pipert_version(), PG_EXPECT_VERSION);
    ck_assert_int_eq(pipert_abi_version(), PIPERT_ABI_VERSION);
    ck_assert_int_eq(pipert_div_up(0, 7), 0);
    ck_assert_int_eq(pipert_div_up(INT64_MAX, 1), INT64_MAX);
    ck_assert_int_eq(pipert_div_up(INT64_MAX, 2), INT64_MAX / 2 + 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipert");
    TCase *plan = tcase_create("planner");
    tcase_add_checked_fixture(plan, setup, teardown);
    tcase_set_timeout(plan, 60);
    tcase_add_test(plan, plan_zero_elements);
    tcase_add_test(plan, plan_one_element);
    tcase_add_test(plan, plan_fewer_chunks_than_streams);
    tcase_add_test(plan, plan_sweep);
    tcase_add_test(plan, plan_default_streams);
    tcase_add_test(plan, plan_default_chunk_sizes);
    tcase_add_test(plan, plan_halo_rows);
    tcase_add_test(plan, plan_memory_fit);
    tcase_add_test(plan, plan_extremes);
    tcase_add_test(plan, plan_validation);
    tcase_add_test(plan, plan_query);
    suite_add_tcase(s, plan);

    TCase *objs = tcase_create("objects");
    tcase_add_checked_fixture(objs, setup, teardown);
    tcase_add_test(objs, pool_create_destroy);
    tcase_add_test(objs, pool_errors);
    tcase_add_test(objs, host_buffers);
    tcase_add_test(objs, events_and_timers);
    suite_add_tcase(s, objs);

    TCase *runs = tcase_create("runs");
    tcase_add_checked_fixture(runs, setup, teardown);
    tcase_set_timeout(runs, 60);
    tcase_add_test(runs, run_elementwise);
    tcase_add_test(runs, run_scratch_reduce);
    tcase_add_test(runs, run_stencil_halo);
    tcase_add_test(runs, run_progress);
    tcase_add_test(runs, run_device_named_twice);
    tcase_add_test(runs, run_trace);
    tcase_add_test(runs, run_cache);
    tcase_add_test(runs, run_protocol);
    tcase_add_test(runs, run_zero_elements);
    tcase_add_test(runs, run_begin_validation);
    tcase_add_test(runs, run_registration);
    tcase_add_test(runs, run_priorities);
    tcase_add_test(runs, run_begin_errors);
    tcase_add_test(runs, run_chunk_errors);
    suite_add_tcase(s, runs);

    TCase *launch = tcase_create("launcher");
    tcase_add_checked_fixture(launch, setup, teardown);
    tcase_add_test(launch, caps_and_kernels);
    tcase_add_test(launch, kernel_prepare_after_reset);
    tcase_add_test(launch, workspace_checks);
    tcase_add_test(launch, pointer_checks_and_strings);
    suite_add_tcase(s, launch);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
