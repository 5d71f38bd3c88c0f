/* pipert: host streaming. Stream pools, page-locked host memory, events and timers, host
 * callbacks, device queries, the chunk planner and the run a generated NAME_stream drives.
 * See pipert.h and docs/runtime.md for the contract. */
#include "pipert.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A call of the CUDA runtime failed with err: leave no error pending (the caller sees it
 * in the return value) and return it. Sticky errors stay, as they must. */
static cudaError_t cuda_fail(cudaError_t err)
{
    (void)cudaGetLastError();
    return err;
}

/* The first error of two. */
static cudaError_t first_error(cudaError_t a, cudaError_t b)
{
    return a != cudaSuccess ? a : b;
}

/* ------------------------------------------------------------------ stream pools */

cudaError_t pipert_stream_pool_create(pipert_stream_pool *pool, int device, int count,
                                      const int *priorities, int npriorities)
{
    if (!pool)
        return cudaErrorInvalidValue;
    memset(pool, 0, sizeof *pool);
    pool->device = device;
    if (count < 1 || count > PIPERT_MAX_STREAMS || npriorities < 0
        || (npriorities > 0 && !priorities))
        return cudaErrorInvalidValue;
    if (device < 0)
        return cudaErrorInvalidDevice;
    int prev = 0;
    cudaError_t err = cudaGetDevice(&prev);
    if (err != cudaSuccess)
        return cuda_fail(err);
    if ((err = cudaSetDevice(device)) != cudaSuccess)
        return cuda_fail(err);
    int least = 0, greatest = 0;
    err = cudaDeviceGetStreamPriorityRange(&least, &greatest);
    pool->priority_least = least;
    pool->priority_greatest = greatest;
    for (int i = 0; err == cudaSuccess && i < count; ++i) {
        int p = npriorities ? priorities[i % npriorities] : least;
        if (p > least)          /* lower numbers are more urgent: greatest <= p <= least */
            p = least;
        if (p < greatest)
            p = greatest;
        err = cudaStreamCreateWithPriority(&pool->stream[i], cudaStreamNonBlocking, p);
        if (err == cudaSuccess) {
            pool->priority[i] = p;
            pool->count = i + 1;
        }
    }
    err = first_error(err, cudaSetDevice(prev));
    if (err != cudaSuccess) {
        for (int i = 0; i < pool->count; ++i)
            (void)cudaStreamDestroy(pool->stream[i]);
        memset(pool->stream, 0, sizeof pool->stream);
        memset(pool->priority, 0, sizeof pool->priority);
        pool->count = 0;
        return cuda_fail(err);
    }
    return cudaSuccess;
}

cudaError_t pipert_stream_pool_sync(const pipert_stream_pool *pool)
{
    if (!pool || pool->count < 0 || pool->count > PIPERT_MAX_STREAMS)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    for (int i = 0; i < pool->count; ++i)
        err = first_error(err, cudaStreamSynchronize(pool->stream[i]));
    return err != cudaSuccess ? cuda_fail(err) : err;
}

cudaError_t pipert_stream_pool_destroy(pipert_stream_pool *pool)
{
    if (!pool || pool->count < 0 || pool->count > PIPERT_MAX_STREAMS)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    for (int i = 0; i < pool->count; ++i)
        err = first_error(err, cudaStreamDestroy(pool->stream[i]));
    int device = pool->device;
    memset(pool, 0, sizeof *pool);
    pool->device = device;
    return err != cudaSuccess ? cuda_fail(err) : err;
}

/* ------------------------------------------------------------------ page-locked host memory */

cudaError_t pipert_host_alloc(pipert_host_buffer *b, size_t bytes)
{
    if (!b)
        return cudaErrorInvalidValue;
    memset(b, 0, sizeof *b);
    if (bytes == 0)
        return cudaSuccess;
    void *p = NULL;
    cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (err != cudaSuccess)
        return cuda_fail(err);
    b->ptr = p;
    b->bytes = bytes;
    b->owner = PIPERT_HOST_ALLOCATED;
    return cudaSuccess;
}

/* A run page-locks a host array that is not page-locked already. Asking first keeps
 * cudaHostRegister from refusing memory that cudaHostAlloc or the caller pinned (an API
 * error that compute-sanitizer reports, even when it is cleared). */
static void register_unpinned(pipert_host_buffer *b, void *p, size_t bytes)
{
    memset(b, 0, sizeof *b);
    struct cudaPointerAttributes at;
    if (!p || !bytes)
        return;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    if (at.type == cudaMemoryTypeUnregistered)
        (void)pipert_host_register(b, p, bytes, 0);
}

cudaError_t pipert_host_register(pipert_host_buffer *b, void *p, size_t bytes, unsigned flags)
{
    if (!b)
        return cudaErrorInvalidValue;
    memset(b, 0, sizeof *b);
    if (bytes == 0)
        return cudaSuccess;
    if (!p)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaHostRegister(p, bytes, flags | cudaHostRegisterPortable);
    if (err == cudaErrorHostMemoryAlreadyRegistered) {
        (void)cudaGetLastError();
        b->ptr = p;              /* page-locked already, by someone else: not ours to undo */
        b->bytes = bytes;
        return cudaSuccess;
    }
    if (err != cudaSuccess)
        return cuda_fail(err);
    b->ptr = p;
    b->bytes = bytes;
    b->owner = PIPERT_HOST_REGISTERED;
    return cudaSuccess;
}

cudaError_t pipert_host_release(pipert_host_buffer *b)
{
    if (!b)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    if (b->owner == PIPERT_HOST_ALLOCATED)
        err = cudaFreeHost(b->ptr);
    else if (b->owner == PIPERT_HOST_REGISTERED)
        err = cudaHostUnregister(b->ptr);
    else if (b->owner != PIPERT_HOST_NONE)
        return cudaErrorInvalidValue;
    memset(b, 0, sizeof *b);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

/* ------------------------------------------------------------------ events, timers, callbacks */

cudaError_t pipert_event_create(cudaEvent_t *ev, int timing)
{
    if (!ev)
        return cudaErrorInvalidValue;
    *ev = NULL;
    cudaError_t err = cudaEventCreateWithFlags(ev, timing ? cudaEventDefault
                                                          : cudaEventDisableTiming);
    if (err != cudaSuccess) {
        *ev = NULL;
        return cuda_fail(err);
    }
    return cudaSuccess;
}

cudaError_t pipert_stream_after(cudaStream_t waiter, cudaStream_t producer, cudaEvent_t ev)
{
    if (!ev)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaEventRecord(ev, producer);
    if (err == cudaSuccess)
        err = cudaStreamWaitEvent(waiter, ev, 0);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

cudaError_t pipert_timer_create(pipert_timer *t)
{
    if (!t)
        return cudaErrorInvalidValue;
    memset(t, 0, sizeof *t);
    cudaError_t err = pipert_event_create(&t->start, 1);
    if (err != cudaSuccess)
        return err;
    err = pipert_event_create(&t->stop, 1);
    if (err != cudaSuccess) {
        (void)cudaEventDestroy(t->start);
        memset(t, 0, sizeof *t);
        return cuda_fail(err);
    }
    return cudaSuccess;
}

cudaError_t pipert_timer_start(pipert_timer *t, cudaStream_t stream)
{
    if (!t || !t->start)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaEventRecord(t->start, stream);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

cudaError_t pipert_timer_stop(pipert_timer *t, cudaStream_t stream)
{
    if (!t || !t->stop)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaEventRecord(t->stop, stream);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

cudaError_t pipert_timer_elapsed(pipert_timer *t, float *ms)
{
    if (!t || !t->start || !t->stop || !ms)
        return cudaErrorInvalidValue;
    *ms = 0;
    cudaError_t err = cudaEventSynchronize(t->stop);
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(ms, t->start, t->stop);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

cudaError_t pipert_timer_destroy(pipert_timer *t)
{
    if (!t)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaSuccess;
    if (t->start)
        err = cudaEventDestroy(t->start);
    if (t->stop)
        err = first_error(err, cudaEventDestroy(t->stop));
    memset(t, 0, sizeof *t);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

cudaError_t pipert_host_func(cudaStream_t stream, void (*fn)(void *), void *user)
{
    if (!fn)
        return cudaErrorInvalidValue;
    cudaError_t err = cudaLaunchHostFunc(stream, fn, user);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

/* ------------------------------------------------------------------ device queries */

cudaError_t pipert_stream_device_query(int device, pipert_stream_device *out)
{
    if (!out)
        return cudaErrorInvalidValue;
    memset(out, 0, sizeof *out);
    if (device < 0)
        return cudaErrorInvalidDevice;
    out->device = device;
    cudaError_t err = cudaDeviceGetAttribute(&out->async_engines, cudaDevAttrAsyncEngineCount,
                                             device);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&out->concurrent_kernels, cudaDevAttrConcurrentKernels,
                                     device);
    if (err != cudaSuccess)
        return cuda_fail(err);
    /* The priority range and free memory are the current device's. */
    int prev = 0;
    if ((err = cudaGetDevice(&prev)) != cudaSuccess || (err = cudaSetDevice(device)) != cudaSuccess)
        return cuda_fail(err);
    size_t free_bytes = 0, total_bytes = 0;
    err = cudaDeviceGetStreamPriorityRange(&out->priority_least, &out->priority_greatest);
    if (err == cudaSuccess)
        err = cudaMemGetInfo(&free_bytes, &total_bytes);
    out->mem_free = free_bytes;
    err = first_error(err, cudaSetDevice(prev));
    return err != cudaSuccess ? cuda_fail(err) : err;
}

/* ------------------------------------------------------------------ the chunk planner */

#define BUF_ALIGN 256u                       /* each array's buffer in a slot */
#define CHUNK_MIN_BYTES ((int64_t)1 << 20)   /* planned chunks move at least this ... */
#define CHUNK_MAX_BYTES ((int64_t)64 << 20)  /* ... and at most this, when they can */
/* Chunks a stream gets, when the sizes allow (on an H100, saxpy over 256 MiB arrays
 * reached 0.945 of its bound with two chunks a stream, 0.923 with eight: a chunk's own
 * cost outweighs the shorter ends). */
#define CHUNKS_PER_STREAM 2

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The plan's devices: how many (1 when it names none), checked. */
static cudaError_t check_plan(const pipert_stream_plan *plan, int *ndevices)
{
    *ndevices = 1;
    if (!plan)
        return cudaSuccess;
    if (plan->ndevices < 0 || plan->ndevices > PIPERT_MAX_DEVICES
        || (plan->ndevices > 0 && !plan->devices))
        return cudaErrorInvalidValue;
    for (int i = 0; i < plan->ndevices; ++i) {
        int d = plan->devices[i];
        if (d < 0 || d >= PIPERT_MAX_DEVICES)
            return cudaErrorInvalidDevice;
    }
    if (plan->streams_per_device < 0 || plan->streams_per_device > PIPERT_MAX_STREAMS
        || plan->chunk_elements < 0 || plan->npriorities < 0
        || (plan->npriorities > 0 && !plan->priorities)
        || (plan->host_register != PIPERT_REGISTER_AUTO
            && plan->host_register != PIPERT_REGISTER_NEVER)
        || plan->trace_chunks < 0 || (plan->trace_chunks > 0 && !plan->trace))
        return cudaErrorInvalidValue;
    if (plan->ndevices > 0)
        *ndevices = plan->ndevices;
    return cudaSuccess;
}

static cudaError_t check_problem(const pipert_stream_problem *p)
{
    if (!p || p->elements < 0 || p->halo < 0 || p->align < 0 || p->narrays < 0
        || (p->narrays > 0 && !p->arrays))
        return cudaErrorInvalidValue;
    for (int i = 0; i < p->narrays; ++i) {
        const pipert_stream_array *a = &p->arrays[i];
        int64_t bytes;
        if (a->dir != PIPERT_IN && a->dir != PIPERT_OUT && a->dir != PIPERT_INOUT
            && a->dir != PIPERT_SCRATCH)
            return cudaErrorInvalidValue;
        /* An INOUT array with a halo would have a chunk read rows that its neighbour
         * writes back, in whatever order their streams run. */
        if (a->dir == PIPERT_INOUT && p->halo > 0)
            return cudaErrorInvalidValue;
        if (a->row_bytes > (size_t)INT64_MAX
            || __builtin_mul_overflow(p->elements, (int64_t)a->row_bytes, &bytes)
            || (uint64_t)bytes > SIZE_MAX)
            return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}

/* Rows a chunk of chunk rows holds on the device at most: chunk + 2 halo, at most n. */
static int64_t rows_held(int64_t chunk, int64_t halo, int64_t n)
{
    int64_t r;
    if (__builtin_mul_overflow(halo, 2, &r) || __builtin_add_overflow(r, chunk, &r))
        return n;
    return min64(r, n);
}

/* The device memory of one slot holding rows rows of every array; 0 on overflow (the
 * caller treats it as "does not fit"). Each array's buffer starts BUF_ALIGN-aligned. */
static int slot_bytes_of(const pipert_stream_problem *p, int64_t rows, size_t *out)
{
    size_t total = 0;
    for (int i = 0; i < p->narrays; ++i) {
        size_t b;
        if (__builtin_mul_overflow((size_t)rows, p->arrays[i].row_bytes, &b)
            || __builtin_add_overflow(b, (size_t)BUF_ALIGN - 1, &b))
            return 0;
        b &= ~(size_t)(BUF_ALIGN - 1);
        if (__builtin_add_overflow(total, b, &total))
            return 0;
    }
    *out = total;
    return 1;
}

/* Whether streams slots of chunk rows fit the budget (0: no budget). */
static int fits(const pipert_stream_problem *p, int64_t chunk, int streams, size_t budget)
{
    size_t sb, all;
    if (!slot_bytes_of(p, rows_held(chunk, p->halo, p->elements), &sb))
        return 0;
    if (budget == 0)
        return 1;
    return !__builtin_mul_overflow(sb, (size_t)streams, &all) && all <= budget;
}

/* The largest chunk c, floor <= c <= chunk, that fits, preferring multiples of align; 0
 * when none does. */
static int64_t largest_fitting(const pipert_stream_problem *p, int64_t chunk, int64_t floor,
                               int64_t align, int streams, size_t budget)
{
    if (fits(p, chunk, streams, budget))
        return chunk;
    for (int64_t unit = align; ; unit = 1) {
        int64_t lo = pipert_div_up(max64(floor, 1), unit), hi = (chunk - 1) / unit;
        if (lo <= hi && fits(p, lo * unit, streams, budget)) {
            while (lo < hi) {             /* fits(lo * unit); the answer is in [lo, hi] */
                int64_t mid = lo + (hi - lo + 1) / 2;
                if (fits(p, mid * unit, streams, budget))
                    lo = mid;
                else
                    hi = mid - 1;
            }
            return lo * unit;
        }
        if (unit == 1)
            return 0;
    }
}

/* Streams a device overlaps chunks with: one without a copy engine (copies and kernels
 * serialize anyway), two with one (a copy beside a kernel), three with two (copy in, kernel,
 * copy out), and one more where kernels run concurrently (a chunk's kernel beside the tail
 * of the one before). */
static int default_streams(const pipert_stream_device *d)
{
    if (d->async_engines <= 0)
        return 1;
    if (d->async_engines == 1)
        return 2;
    return d->concurrent_kernels ? 4 : 3;
}

cudaError_t pipert_stream_layout_plan(const pipert_stream_plan *plan,
                                      const pipert_stream_problem *prob,
                                      const pipert_stream_device *devs, int ndevs,
                                      pipert_stream_layout *out)
{
    if (!out)
        return cudaErrorInvalidValue;
    memset(out, 0, sizeof *out);
    out->device0 = -1;
    int nd;
    cudaError_t err = check_plan(plan, &nd);
    if (err == cudaSuccess)
        err = check_problem(prob);
    if (err != cudaSuccess)
        return err;
    const int *named = plan && plan->ndevices > 0 ? plan->devices : NULL;
    int64_t n = prob->elements;
    if (devs || n > 0) {
        if (!devs || ndevs != nd)
            return cudaErrorInvalidValue;
        for (int k = 0; k < nd; ++k) {
            if (named ? devs[k].device != named[k] : devs[k].device < 0)
                return cudaErrorInvalidValue;
            if (devs[k].device >= PIPERT_MAX_DEVICES)
                return cudaErrorInvalidDevice;
        }
        out->device0 = devs[0].device;
    }
    out->elements = n;
    out->halo = prob->halo;
    out->devices = named;
    if (n == 0)
        return cudaSuccess;

    int64_t align = prob->align > 1 ? prob->align : 1;
    int spd = plan ? plan->streams_per_device : 0;
    int spd_fixed = spd > 0;
    int64_t chunk_asked = plan ? plan->chunk_elements : 0;
    size_t budget = 0;        /* half the free memory of the device with the least,
                                 per time it is named */
    if (!spd_fixed)
        spd = PIPERT_MAX_STREAMS;
    for (int k = 0; k < nd; ++k) {
        if (!spd_fixed && default_streams(&devs[k]) < spd)
            spd = default_streams(&devs[k]);
        /* a device named several times holds the buffers of each of its shares */
        size_t named_times = 0;
        for (int j = 0; j < nd; ++j)
            named_times += devs[j].device == devs[k].device;
        size_t half = devs[k].mem_free / 2 / named_times;
        if (devs[k].mem_free && (budget == 0 || half < budget))
            budget = half ? half : 1;
    }

    /* Bytes a row moves (in, out, or both), saturated. */
    int64_t per_row = 0;
    for (int i = 0; i < prob->narrays; ++i) {
        int64_t b = (int64_t)prob->arrays[i].row_bytes;
        if (prob->arrays[i].dir == PIPERT_INOUT && __builtin_mul_overflow(b, 2, &b))
            b = INT64_MAX;
        if (__builtin_add_overflow(per_row, b, &per_row))
            per_row = INT64_MAX;
    }

    int64_t chunk;
    if (chunk_asked > 0) {
        chunk = min64(chunk_asked, n);
    } else {
        /* About CHUNKS_PER_STREAM chunks per stream, each moving CHUNK_MIN_BYTES ..
         * CHUNK_MAX_BYTES. */
        int64_t slots = (int64_t)nd * spd;
        if (per_row == 0) {
            chunk = pipert_div_up(n, slots);
        } else {
            int64_t total, target;
            if (__builtin_mul_overflow(n, per_row, &total))
                total = INT64_MAX;
            target = total / (slots * CHUNKS_PER_STREAM);
            target = max64(CHUNK_MIN_BYTES, min64(CHUNK_MAX_BYTES, target));
            chunk = max64(1, target / per_row);
        }
        int64_t rounded;
        if (chunk >= n || __builtin_mul_overflow(pipert_div_up(chunk, align), align, &rounded)
            || rounded >= n)
            chunk = n;
        else
            chunk = rounded;
    }

    /* Fit the device memory: a chosen chunk shrinks (not below CHUNK_MIN_BYTES while
     * streams can go instead), then chosen streams go; what was asked for never changes. */
    int64_t fitted = 0;
    for (;;) {
        if (chunk_asked > 0) {
            fitted = fits(prob, chunk, spd, budget) ? chunk : 0;
        } else {
            int64_t floor = 1;
            if (spd > 1 && !spd_fixed && per_row > 0)
                floor = min64(chunk, pipert_div_up(CHUNK_MIN_BYTES, per_row));
            fitted = largest_fitting(prob, chunk, floor, align, spd, budget);
        }
        if (fitted > 0 || spd_fixed || spd == 1)
            break;
        --spd;
    }
    if (fitted == 0)
        return cudaErrorMemoryAllocation;
    chunk = fitted;

    out->chunk_elements = chunk;
    out->chunks = pipert_div_up(n, chunk);
    out->tail_elements = n - (out->chunks - 1) * chunk;
    out->ndevices = (int)min64(nd, out->chunks);
    out->streams_per_device = (int)min64(spd, pipert_div_up(out->chunks, out->ndevices));
    out->slots = out->ndevices * out->streams_per_device;
    (void)slot_bytes_of(prob, rows_held(chunk, prob->halo, n), &out->slot_bytes);
    return cudaSuccess;
}

cudaError_t pipert_stream_layout_query(const pipert_stream_plan *plan,
                                       const pipert_stream_problem *prob,
                                       pipert_stream_layout *out)
{
    int nd;
    cudaError_t err = check_plan(plan, &nd);
    if (err == cudaSuccess)
        err = check_problem(prob);
    if (err != cudaSuccess || !out) {
        if (out)
            memset(out, 0, sizeof *out);
        return err != cudaSuccess ? err : cudaErrorInvalidValue;
    }
    if (prob->elements == 0)
        return pipert_stream_layout_plan(plan, prob, NULL, 0, out);
    pipert_stream_device devs[PIPERT_MAX_DEVICES];
    for (int k = 0; k < nd; ++k) {
        int device = 0;
        if (plan && plan->ndevices > 0)
            device = plan->devices[k];
        else if ((err = cudaGetDevice(&device)) != cudaSuccess)
            return cuda_fail(err);
        if ((err = pipert_stream_device_query(device, &devs[k])) != cudaSuccess) {
            memset(out, 0, sizeof *out);
            return err;
        }
    }
    return pipert_stream_layout_plan(plan, prob, devs, nd, out);
}

cudaError_t pipert_stream_chunk_at(const pipert_stream_layout *l, int64_t index,
                                   pipert_chunk *c)
{
    if (!c)
        return cudaErrorInvalidValue;
    memset(c, 0, sizeof *c);
    if (!l || index < 0 || index >= l->chunks || l->slots < 1 || l->ndevices < 1
        || l->chunk_elements < 1 || l->halo < 0)
        return cudaErrorInvalidValue;
    int64_t n = l->elements;
    c->index = index;
    c->slot = (int)(index % l->slots);
    c->device_index = c->slot % l->ndevices;
    c->stream_index = c->slot / l->ndevices;
    c->device = l->devices ? l->devices[c->device_index] : l->device0;
    c->first = index * l->chunk_elements;
    c->count = index == l->chunks - 1 ? l->tail_elements : l->chunk_elements;
    int64_t end = c->first + c->count;
    c->in_first = c->first - min64(l->halo, c->first);
    c->in_count = (l->halo >= n - end ? n : end + l->halo) - c->in_first;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ the buffer cache */

#define CACHE_BLOCKS (PIPERT_MAX_DEVICES * PIPERT_MAX_STREAMS)

typedef struct cache_block {
    int device;
    size_t bytes;
    void *ptr;
} cache_block;

struct pipert_stream_cache {
    atomic_flag busy;              /* a run is using it */
    int nblocks;
    cache_block block[CACHE_BLOCKS];
};

cudaError_t pipert_stream_cache_create(pipert_stream_cache **out)
{
    if (!out)
        return cudaErrorInvalidValue;
    *out = calloc(1, sizeof **out);
    if (!*out)
        return cudaErrorMemoryAllocation;
    atomic_flag_clear(&(*out)->busy);
    return cudaSuccess;
}

/* Free the cache's blocks of device (every device: -1) that are smaller than below bytes
 * (all: SIZE_MAX); the current device is left on the last block's. */
static cudaError_t cache_drop(pipert_stream_cache *c, int device, size_t below)
{
    cudaError_t err = cudaSuccess;
    int kept = 0;
    for (int i = 0; i < c->nblocks; ++i) {
        cache_block *b = &c->block[i];
        if ((device >= 0 && b->device != device) || b->bytes >= below) {
            c->block[kept++] = *b;
            continue;
        }
        cudaError_t e = cudaSetDevice(b->device);
        err = first_error(err, e == cudaSuccess ? cudaFree(b->ptr) : e);
    }
    c->nblocks = kept;
    return err;
}

cudaError_t pipert_stream_cache_destroy(pipert_stream_cache *c)
{
    if (!c)
        return cudaSuccess;
    if (atomic_flag_test_and_set(&c->busy))
        return cudaErrorNotPermitted;
    int caller = -1;
    cudaError_t err = c->nblocks ? cudaGetDevice(&caller) : cudaSuccess;
    err = first_error(err, cache_drop(c, -1, SIZE_MAX));
    if (caller >= 0)
        err = first_error(err, cudaSetDevice(caller));
    free(c);
    return err != cudaSuccess ? cuda_fail(err) : err;
}

cudaError_t pipert_stream_cache_held(const pipert_stream_cache *c, int *buffers, size_t *bytes)
{
    if (!c)
        return cudaErrorInvalidValue;
    size_t total = 0;
    for (int i = 0; i < c->nblocks; ++i)
        total += c->block[i].bytes;
    if (buffers)
        *buffers = c->nblocks;
    if (bytes)
        *bytes = total;
    return cudaSuccess;
}

/* Device memory of at least bytes on device (the current one): the smallest large
 * enough block of the cache, else cudaMalloc, after freeing the cache's blocks of the
 * device that are too small (sizes of earlier problems). *got: the block's bytes. */
static cudaError_t cache_take(pipert_stream_cache *c, int device, size_t bytes, void **p,
                              size_t *got)
{
    *p = NULL;
    *got = bytes;
    if (c) {
        int best = -1;
        for (int i = 0; i < c->nblocks; ++i)
            if (c->block[i].device == device && c->block[i].bytes >= bytes
                && (best < 0 || c->block[i].bytes < c->block[best].bytes))
                best = i;
        if (best >= 0) {
            *p = c->block[best].ptr;
            *got = c->block[best].bytes;
            c->block[best] = c->block[--c->nblocks];
            return cudaSuccess;
        }
        cudaError_t err = cache_drop(c, device, bytes);
        cudaError_t back = cudaSetDevice(device);
        if (err != cudaSuccess || back != cudaSuccess)
            return first_error(err, back);
    }
    return cudaMalloc(p, bytes);
}

/* Give a block back to the cache, or free it (no cache, or a full one); device current. */
static cudaError_t cache_give(pipert_stream_cache *c, int device, void *p, size_t bytes)
{
    if (c && c->nblocks < CACHE_BLOCKS) {
        c->block[c->nblocks++] = (cache_block){ device, bytes, p };
        return cudaSuccess;
    }
    return cudaFree(p);
}

/* ------------------------------------------------------------------ the run */

typedef struct slot_rec {
    pipert_stream_run *run;
    int index;
    int64_t completed;        /* its progress reports so far: written by its stream's host
                                 functions only, which run one after another */
    void *base;               /* its device memory */
    size_t base_bytes;        /* its size (a cached block may be larger than needed) */
    void **buffers;           /* per array, into base */
} slot_rec;

struct pipert_stream_run {
    pipert_stream_layout layout;
    int devices[PIPERT_MAX_DEVICES];
    int narrays;
    pipert_stream_array *arrays;
    unsigned char **host;
    pipert_host_buffer *pinned;
    pipert_stream_pool *pools;     /* per device used */
    int npools;
    slot_rec *slots;
    void **buffer_table;
    int caller_device;             /* restored at the end; -1: never read */
    int current;                   /* the device last made current; -1: none */
    int64_t issued;
    int closed;                    /* the last chunk handed out was closed by done */
    int reported;                  /* a progress report was enqueued */
    pipert_progress_fn progress;
    void *progress_user;
    atomic_llong chunks_done;
    atomic_llong elements_done;
    pipert_stream_cache *cache;    /* the plan's, held (busy) from begin to end */
    pipert_chunk_trace *trace;     /* the plan's, filled at the end */
    int64_t ntrace;                /* chunks traced: the first ntrace */
    cudaEvent_t *marks;            /* TRACE_MARKS per traced chunk, on its device */
    unsigned char *marked;         /* per traced chunk: a bit per mark recorded */
    cudaEvent_t origin[PIPERT_MAX_DEVICES]; /* per device used: when the run began there */
};

/* Make device current for the run. */
static cudaError_t run_device(pipert_stream_run *r, int device)
{
    if (r->current == device)
        return cudaSuccess;
    cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess)
        return err;
    r->current = device;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ traces */

/* The events of a traced chunk, recorded on its stream: before and after its copies in,
 * before and after its copies out. */
enum { MARK_H2D_BEGIN, MARK_H2D_END, MARK_D2H_BEGIN, MARK_D2H_END, TRACE_MARKS };

/* Create the events of a traced run, each on its chunk's device, and record each device's
 * origin on its first stream. */
static cudaError_t trace_begin(pipert_stream_run *r)
{
    r->marks = calloc((size_t)r->ntrace * TRACE_MARKS, sizeof *r->marks);
    r->marked = calloc((size_t)r->ntrace, 1);
    if (!r->marks || !r->marked)
        return cudaErrorMemoryAllocation;
    cudaError_t err = cudaSuccess;
    for (int d = 0; err == cudaSuccess && d < r->layout.ndevices; ++d) {
        err = run_device(r, r->devices[d]);
        if (err == cudaSuccess)
            err = pipert_event_create(&r->origin[d], 1);
        if (err == cudaSuccess)
            err = cudaEventRecord(r->origin[d], r->pools[d].stream[0]);
    }
    for (int64_t i = 0; err == cudaSuccess && i < r->ntrace; ++i) {
        pipert_chunk c;
        err = pipert_stream_chunk_at(&r->layout, i, &c);
        if (err == cudaSuccess)
            err = run_device(r, c.device);
        for (int k = 0; err == cudaSuccess && k < TRACE_MARKS; ++k)
            err = pipert_event_create(&r->marks[i * TRACE_MARKS + k], 1);
    }
    return err;
}

/* Record mark k of chunk c, where c is traced. */
static cudaError_t trace_mark(pipert_stream_run *r, const pipert_chunk *c, cudaStream_t stream,
                              int k)
{
    if (c->index >= r->ntrace)
        return cudaSuccess;
    cudaError_t err = cudaEventRecord(r->marks[c->index * TRACE_MARKS + k], stream);
    if (err != cudaSuccess)
        return cuda_fail(err);
    r->marked[c->index] |= (unsigned char)(1u << k);
    return cudaSuccess;
}

/* After the streams finished: the trace of every traced chunk; a chunk whose copies were
 * not all enqueued (a run its caller ended early) gets chunk -1. */
static cudaError_t trace_collect(pipert_stream_run *r)
{
    cudaError_t err = cudaSuccess;
    for (int64_t i = 0; err == cudaSuccess && i < r->ntrace; ++i) {
        pipert_chunk c;
        pipert_chunk_trace *t = &r->trace[i];
        memset(t, 0, sizeof *t);
        t->chunk = -1;
        if (r->marked[i] != (1u << TRACE_MARKS) - 1
            || pipert_stream_chunk_at(&r->layout, i, &c) != cudaSuccess)
            continue;
        t->chunk = i;
        t->first = c.first;
        t->count = c.count;
        t->device = c.device;
        t->device_index = c.device_index;
        t->stream = c.stream_index;
        float *at[TRACE_MARKS] = { &t->h2d_begin, &t->h2d_end, &t->d2h_begin, &t->d2h_end };
        for (int k = 0; err == cudaSuccess && k < TRACE_MARKS; ++k)
            err = cudaEventElapsedTime(at[k], r->origin[c.device_index],
                                       r->marks[i * TRACE_MARKS + k]);
    }
    return err;
}

static cudaError_t trace_release(pipert_stream_run *r)
{
    cudaError_t err = cudaSuccess;
    for (int d = 0; d < PIPERT_MAX_DEVICES; ++d)
        if (r->origin[d]) {
            err = first_error(err, cudaEventDestroy(r->origin[d]));
            r->origin[d] = NULL;
        }
    if (r->marks)
        for (int64_t i = 0; i < r->ntrace * TRACE_MARKS; ++i)
            if (r->marks[i]) {
                err = first_error(err, cudaEventDestroy(r->marks[i]));
                r->marks[i] = NULL;
            }
    return err;
}

/* Free what the run holds on the devices and the host registrations, and restore the
 * caller's device; the first error. The run's own memory stays. */
static cudaError_t run_release(pipert_stream_run *r)
{
    cudaError_t err = cudaSuccess;
    if (r->slots)
        for (int s = 0; s < r->layout.slots; ++s) {
            if (!r->slots[s].base)
                continue;
            int device = r->devices[s % r->layout.ndevices];
            cudaError_t e = run_device(r, device);
            if (e == cudaSuccess)
                e = cache_give(r->cache, device, r->slots[s].base, r->slots[s].base_bytes);
            err = first_error(err, e);
            r->slots[s].base = NULL;
        }
    if (r->pools)
        for (int d = 0; d < r->npools; ++d)
            err = first_error(err, pipert_stream_pool_destroy(&r->pools[d]));
    r->npools = 0;
    err = first_error(err, trace_release(r));
    if (r->cache) {
        atomic_flag_clear(&r->cache->busy);
        r->cache = NULL;
    }
    if (r->pinned)
        for (int i = 0; i < r->narrays; ++i)
            err = first_error(err, pipert_host_release(&r->pinned[i]));
    if (r->caller_device >= 0 && r->current != r->caller_device)
        err = first_error(err, cudaSetDevice(r->caller_device));
    r->current = r->caller_device;
    return err;
}

static void run_free(pipert_stream_run *r)
{
    free(r->arrays);
    free(r->host);
    free(r->pinned);
    free(r->pools);
    free(r->slots);
    free(r->buffer_table);
    free(r->marks);
    free(r->marked);
    free(r);
}

cudaError_t pipert_stream_begin(const pipert_stream_plan *plan, const pipert_stream_problem *prob,
                                const pipert_stream_layout *layout, const void *const *host,
                                pipert_stream_run **out)
{
    if (!out)
        return cudaErrorInvalidValue;
    *out = NULL;
    int nd;
    cudaError_t err = check_plan(plan, &nd);
    if (err == cudaSuccess)
        err = check_problem(prob);
    if (err != cudaSuccess)
        return err;
    const pipert_stream_layout *l = layout;
    if (!l || l->elements != prob->elements || l->halo != prob->halo || l->chunks < 0
        || (l->chunks > 0 && (l->ndevices < 1 || l->ndevices > nd || l->streams_per_device < 1
                              || l->streams_per_device > PIPERT_MAX_STREAMS
                              || l->slots != l->ndevices * l->streams_per_device
                              || l->chunk_elements < 1 || (!l->devices && l->device0 < 0))))
        return cudaErrorInvalidValue;
    if (prob->narrays > 0 && !host)
        return cudaErrorInvalidValue;
    for (int i = 0; i < prob->narrays; ++i)
        if (!host[i] && prob->elements > 0 && prob->arrays[i].row_bytes > 0
            && prob->arrays[i].dir != PIPERT_SCRATCH)
            return cudaErrorInvalidValue;

    pipert_stream_run *r = calloc(1, sizeof *r);
    if (!r)
        return cudaErrorMemoryAllocation;
    r->layout = *l;
    r->narrays = prob->narrays;
    r->caller_device = -1;
    r->current = -1;
    r->closed = 1;
    if (plan) {
        r->progress = plan->progress;
        r->progress_user = plan->progress_user;
        r->trace = plan->trace;
        r->ntrace = min64(plan->trace_chunks, l->chunks);
    }
    atomic_init(&r->chunks_done, 0);
    atomic_init(&r->elements_done, 0);
    for (int d = 0; d < l->ndevices; ++d)
        r->devices[d] = l->devices ? l->devices[d] : l->device0;
    r->layout.devices = l->chunks > 0 ? r->devices : NULL;
    size_t na = prob->narrays ? (size_t)prob->narrays : 1;
    size_t ns = l->slots > 0 ? (size_t)l->slots : 1;
    r->arrays = calloc(na, sizeof *r->arrays);
    r->host = calloc(na, sizeof *r->host);
    r->pinned = calloc(na, sizeof *r->pinned);
    r->pools = calloc(l->ndevices > 0 ? (size_t)l->ndevices : 1, sizeof *r->pools);
    r->slots = calloc(ns, sizeof *r->slots);
    r->buffer_table = calloc(ns * na, sizeof *r->buffer_table);
    if (!r->arrays || !r->host || !r->pinned || !r->pools || !r->slots || !r->buffer_table) {
        run_free(r);
        return cudaErrorMemoryAllocation;
    }
    for (int i = 0; i < prob->narrays; ++i) {
        r->arrays[i] = prob->arrays[i];
        r->host[i] = (unsigned char *)(uintptr_t)host[i];
    }
    for (int s = 0; s < l->slots; ++s) {
        r->slots[s].run = r;
        r->slots[s].index = s;
        r->slots[s].buffers = &r->buffer_table[(size_t)s * na];
    }
    if (l->chunks == 0) {          /* nothing to do: no device is touched */
        *out = r;
        return cudaSuccess;
    }

    if (plan && plan->cache) {
        if (atomic_flag_test_and_set(&plan->cache->busy)) {
            run_free(r);
            return cudaErrorNotPermitted;
        }
        r->cache = plan->cache;
    }
    if ((err = cudaGetDevice(&r->caller_device)) != cudaSuccess) {
        (void)run_release(r);
        run_free(r);
        return cuda_fail(err);
    }
    r->current = r->caller_device;
    /* Page-lock the host arrays, where they are not already: best effort. Memory that
     * cannot be registered (read-only pages, a limit) is copied as it is, correctly but
     * without overlap. */
    if (!plan || plan->host_register == PIPERT_REGISTER_AUTO)
        for (int i = 0; i < prob->narrays; ++i)
            if (prob->arrays[i].dir != PIPERT_SCRATCH)   /* no host memory */
                register_unpinned(&r->pinned[i], r->host[i],
                                  (size_t)prob->elements * prob->arrays[i].row_bytes);
    for (int d = 0; err == cudaSuccess && d < l->ndevices; ++d) {
        err = pipert_stream_pool_create(&r->pools[d], r->devices[d], l->streams_per_device,
                                        plan ? plan->priorities : NULL,
                                        plan ? plan->npriorities : 0);
        if (err == cudaSuccess)
            r->npools = d + 1;
    }
    int64_t rows = rows_held(l->chunk_elements, l->halo, l->elements);
    for (int s = 0; err == cudaSuccess && s < l->slots; ++s) {
        size_t bytes;
        if (!slot_bytes_of(prob, rows, &bytes)) {
            err = cudaErrorInvalidValue;
            break;
        }
        if (bytes == 0)
            continue;
        err = run_device(r, r->devices[s % l->ndevices]);
        if (err == cudaSuccess)
            err = cache_take(r->cache, r->current, bytes, &r->slots[s].base,
                             &r->slots[s].base_bytes);
        if (err != cudaSuccess) {
            r->slots[s].base = NULL;
            break;
        }
        size_t off = 0;
        for (int i = 0; i < prob->narrays; ++i) {
            r->slots[s].buffers[i] = (unsigned char *)r->slots[s].base + off;
            size_t b = (size_t)rows * prob->arrays[i].row_bytes;
            off += (b + BUF_ALIGN - 1) & ~(size_t)(BUF_ALIGN - 1);
        }
    }
    if (err == cudaSuccess && r->ntrace > 0)
        err = trace_begin(r);
    if (err != cudaSuccess) {
        (void)run_release(r);
        run_free(r);
        return cuda_fail(err);
    }
    *out = r;
    return cudaSuccess;
}

cudaError_t pipert_stream_next(pipert_stream_run *r, pipert_chunk *c)
{
    if (!r || !c)
        return cudaErrorInvalidValue;
    memset(c, 0, sizeof *c);
    /* With progress reports every chunk must be closed (pipert_stream_done) before the
     * next: a slot's k-th report is its k-th chunk. */
    if (r->issued >= r->layout.chunks || (r->progress && !r->closed))
        return cudaErrorInvalidValue;
    cudaError_t err = pipert_stream_chunk_at(&r->layout, r->issued, c);
    if (err != cudaSuccess)
        return err;
    if ((err = run_device(r, c->device)) != cudaSuccess) {
        memset(c, 0, sizeof *c);
        return cuda_fail(err);
    }
    c->stream = r->pools[c->device_index].stream[c->stream_index];
    c->buffers = r->slots[c->slot].buffers;
    ++r->issued;
    r->closed = 0;
    return cudaSuccess;
}

/* Whether c is a chunk this run handed out; its stream in *stream. */
static int run_chunk(const pipert_stream_run *r, const pipert_chunk *c, cudaStream_t *stream)
{
    pipert_chunk want;
    if (!r || !c || c->index < 0 || c->index >= r->issued
        || pipert_stream_chunk_at(&r->layout, c->index, &want) != cudaSuccess
        || c->slot != want.slot || c->first != want.first || c->count != want.count
        || c->in_first != want.in_first || c->in_count != want.in_count)
        return 0;
    *stream = r->pools[want.device_index].stream[want.stream_index];
    return 1;
}

cudaError_t pipert_stream_copy_in(pipert_stream_run *r, const pipert_chunk *c)
{
    cudaStream_t stream;
    if (!run_chunk(r, c, &stream))
        return cudaErrorInvalidValue;
    void *const *buf = r->slots[c->slot].buffers;
    cudaError_t err = trace_mark(r, c, stream, MARK_H2D_BEGIN);
    for (int i = 0; err == cudaSuccess && i < r->narrays; ++i) {
        size_t rb = r->arrays[i].row_bytes;
        if (!(r->arrays[i].dir & PIPERT_IN) || rb == 0 || c->in_count == 0)
            continue;
        err = cudaMemcpyAsync(buf[i], r->host[i] + (size_t)c->in_first * rb,
                              (size_t)c->in_count * rb, cudaMemcpyHostToDevice, stream);
        if (err != cudaSuccess)
            return cuda_fail(err);
    }
    return err == cudaSuccess ? trace_mark(r, c, stream, MARK_H2D_END) : err;
}

cudaError_t pipert_stream_copy_out(pipert_stream_run *r, const pipert_chunk *c)
{
    cudaStream_t stream;
    if (!run_chunk(r, c, &stream))
        return cudaErrorInvalidValue;
    void *const *buf = r->slots[c->slot].buffers;
    cudaError_t err = trace_mark(r, c, stream, MARK_D2H_BEGIN);
    for (int i = 0; err == cudaSuccess && i < r->narrays; ++i) {
        size_t rb = r->arrays[i].row_bytes;
        if (!(r->arrays[i].dir & PIPERT_OUT) || rb == 0 || c->count == 0)
            continue;
        err = cudaMemcpyAsync(r->host[i] + (size_t)c->first * rb,
                              (unsigned char *)buf[i] + (size_t)(c->first - c->in_first) * rb,
                              (size_t)c->count * rb, cudaMemcpyDeviceToHost, stream);
        if (err != cudaSuccess)
            return cuda_fail(err);
    }
    return err == cudaSuccess ? trace_mark(r, c, stream, MARK_D2H_END) : err;
}

/* A progress report, on a CUDA thread: no CUDA call here. */
static void report(void *p)
{
    slot_rec *s = p;
    pipert_stream_run *r = s->run;
    int64_t index = s->completed++ * r->layout.slots + s->index;
    pipert_chunk c;
    if (pipert_stream_chunk_at(&r->layout, index, &c) != cudaSuccess)
        return;
    pipert_progress pr;
    pr.device = c.device;
    pr.stream = c.stream_index;
    pr.chunk = index;
    pr.chunks = r->layout.chunks;
    pr.first = c.first;
    pr.count = c.count;
    pr.chunks_done = atomic_fetch_add(&r->chunks_done, 1) + 1;
    pr.elements_done = atomic_fetch_add(&r->elements_done, c.count) + c.count;
    r->progress(&pr, r->progress_user);
}

cudaError_t pipert_stream_done(pipert_stream_run *r, const pipert_chunk *c)
{
    cudaStream_t stream;
    if (!run_chunk(r, c, &stream) || c->index != r->issued - 1 || r->closed)
        return cudaErrorInvalidValue;
    if (r->progress) {
        cudaError_t err = cudaLaunchHostFunc(stream, report, &r->slots[c->slot]);
        if (err != cudaSuccess)
            return cuda_fail(err);
        r->reported = 1;
    }
    r->closed = 1;
    return cudaSuccess;
}

cudaError_t pipert_stream_end(pipert_stream_run *r, cudaError_t err)
{
    if (!r)
        return err;
    cudaError_t sync = cudaSuccess;
    for (int d = 0; d < r->npools; ++d)
        sync = first_error(sync, pipert_stream_pool_sync(&r->pools[d]));
    cudaError_t traced = cudaSuccess;
    if (sync == cudaSuccess && r->ntrace > 0)
        traced = trace_collect(r);
    cudaError_t rel = first_error(traced, run_release(r));
    /* A progress report still pending after a failed wait would find the run freed: keep
     * its memory (a small leak, after an error that is usually fatal to the context). */
    if (sync == cudaSuccess || !r->reported)
        run_free(r);
    err = first_error(err, first_error(sync, rel));
    if (sync != cudaSuccess || rel != cudaSuccess)
        (void)cudaGetLastError();
    return err;
}
