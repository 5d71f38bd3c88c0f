/* pipert: the pipegen runtime. A small C library that generated launchers link against:
 * device capabilities (cached per device), launch configuration (dynamic shared-memory
 * opt-in, occupancy, persistent grid size), pointer checks, error strings, and the host
 * streaming a generated NAME_stream is made of (streams, page-locked memory, events,
 * callbacks, the chunk planner, runs).
 *
 * Contract: C11, includable from C and C++, no CCCL in this header, every fallible call
 * returns a cudaError_t, and the library never exits or prints. It allocates device memory
 * only for a host-streaming run's buffers (pipert_stream_begin, freed by pipert_stream_end).
 * Thread-safe: caches are filled once, by the first caller, published by atomics; the pure
 * functions are reentrant; an object (pool, buffer, timer, run) is used by one thread at a
 * time. docs/runtime.md has every call, its errors and its thread-safety.
 */
#ifndef PIPERT_H
#define PIPERT_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

/* What the library exports. libpipert is built with -fvisibility=hidden: only what is
 * declared with PIPERT_API is visible outside libpipert.so. */
#if defined(_WIN32) || defined(__CYGWIN__)
#define PIPERT_API
#elif defined(__GNUC__) || defined(__clang__)
#define PIPERT_API __attribute__((visibility("default")))
#else
#define PIPERT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration below, or a device header's function or template that
 * generated code calls, changes incompatibly; generated code checks it at compile time. */
#define PIPERT_ABI_VERSION 7
#define PIPERT_MAX_DEVICES 64

/* What a launcher needs to know about a device. */
typedef struct pipert_caps {
    int device;
    int sm;                      /* compute capability as major*10 + minor (90 for H100) */
    int sm_count;
    size_t smem_optin;           /* max dynamic shared memory per block after opt-in */
    size_t smem_per_sm;
    int l2_bytes;
    int max_threads_per_sm;
} pipert_caps;

/* Capabilities of a device, read once and cached. */
PIPERT_API cudaError_t pipert_device_caps(int device, pipert_caps *out);
/* Capabilities of the calling thread's current device. */
PIPERT_API cudaError_t pipert_current_caps(pipert_caps *out);

/* One kernel as a launcher sees it. Generated code defines one static instance per kernel
 * variant; the per-device fields are filled by pipert_kernel_prepare. */
typedef struct pipert_kernel {
    const void *func;            /* the __global__ function */
    int threads;                 /* block size */
    size_t smem_bytes;           /* dynamic shared memory per block */
    int ready[PIPERT_MAX_DEVICES];          /* PIPERT_KERNEL_NEW, _READY or _FILLING on
                                               this device (atomic) */
    int blocks_per_sm[PIPERT_MAX_DEVICES];  /* occupancy on this device */
    int ptx_version[PIPERT_MAX_DEVICES];    /* virtual arch of the code the device runs
                                               (x10), 0 when it has no image for it */
} pipert_kernel;

/* Blocks for a persistent grid: occupancy x SMs, at most work_items, at least 1. */
PIPERT_API unsigned pipert_persistent_grid(const pipert_kernel *k, const pipert_caps *caps,
                                           int64_t work_items);



/* The largest power of two <= 16 that divides the address (16 for NULL). */
PIPERT_API unsigned pipert_ptr_alignment(const void *p);
/* The smaller of width and the alignment of p. */
PIPERT_API unsigned pipert_min_align(unsigned width, const void *p);
/* How many halvings take max_width down to width (the column of a kernel table whose
 * widths run from max_width down by halves). */
PIPERT_API int pipert_vec_index(unsigned max_width, unsigned width);

/* ceil(n / d) for n >= 0 and d > 0, without the overflow of (n + d - 1) / d. */
static inline int64_t pipert_div_up(int64_t n, int64_t d)
{
    return n / d + (n % d != 0);
}

/* A launch's workspace of partials (8 bytes each, the widest accumulator): p not NULL and
 * bytes >= need (cudaErrorInvalidValue), p 8-byte aligned (cudaErrorMisalignedAddress:
 * the kernel's 4- and 8-byte stores there would fault). Inline: generated launchers call
 * it, whatever libpipert they are linked with. */
static inline cudaError_t pipert_check_workspace(const void *p, size_t bytes, size_t need)
{
    if (!p || bytes < need)
        return cudaErrorInvalidValue;
    return (uintptr_t)p % 8 ? cudaErrorMisalignedAddress : cudaSuccess;
}

/* An array argument of extents d0 x d1 x d2 (unused ones 1) and elements of esize bytes:
 * every extent not negative and the byte count not past what size_t and int64_t hold
 * (cudaErrorInvalidValue), stored in *bytes; p not NULL when there are bytes
 * (cudaErrorInvalidValue) and aligned to esize (cudaErrorMisalignedAddress). */
PIPERT_API cudaError_t pipert_check_array(const void *p, int64_t d0, int64_t d1, int64_t d2,
                                          size_t esize, size_t *bytes);

/* ------------------------------------------------------------------ kernels
 * The calls that take a kernel's host stub are inline, compiled into the program's own
 * translation unit: a stub is known only to the CUDA runtime its kernel was registered
 * with, and libpipert.so (on the shared libcudart) may sit in a program linked with the
 * static one (nvcc's default). Everything else in the library works across the two: both
 * runtimes share the device's primary context, its pointers, streams and events. */

/* pipert_kernel.ready on a device: not prepared, prepared, or being prepared by one
 * thread (the others wait for it: it makes a few host calls). */
enum { PIPERT_KERNEL_NEW = 0, PIPERT_KERNEL_READY = 1, PIPERT_KERNEL_FILLING = 2 };
/* Dynamic shared memory a kernel takes without opting in. */
#define PIPERT_SMEM_DEFAULT (48 * 1024)

/* The queries of a first prepare on device dev; an error leaves none pending. */
static inline cudaError_t pipert_kernel_fill(pipert_kernel *k, int dev)
{
    struct cudaFuncAttributes attr;
    int blocks = 0;
    cudaError_t err = cudaFuncGetAttributes(&attr, k->func);
    if (err == cudaSuccess) {
        k->ptx_version[dev] = attr.ptxVersion;
        err = cudaFuncSetAttribute(k->func, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)k->smem_bytes);
    }
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k->func, k->threads,
                                                            k->smem_bytes);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();   /* not sticky: clear it so later launches report their own */
        return err == cudaErrorInvalidDeviceFunction ? cudaErrorNoKernelImageForDevice : err;
    }
    k->blocks_per_sm[dev] = blocks;
    return blocks < 1 ? cudaErrorInvalidConfiguration : cudaSuccess;
}

/* cudaDeviceReset gives the device a new context, where a kernel's shared-memory opt-in
 * is back to the default: a prepared kernel past the default checks it (a host-side
 * query) and applies it again where it is gone. */
static inline cudaError_t pipert_kernel_keep_optin(const pipert_kernel *k)
{
    struct cudaFuncAttributes attr;
    cudaError_t err = cudaFuncGetAttributes(&attr, k->func);
    if (err == cudaSuccess && (size_t)attr.maxDynamicSharedSizeBytes < k->smem_bytes)
        err = cudaFuncSetAttribute(k->func, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   (int)k->smem_bytes);
    if (err != cudaSuccess)
        (void)cudaGetLastError();
    return err;
}

/* Raise the kernel's dynamic shared-memory limit and compute its occupancy, once per
 * device (threads racing to be first: one queries, the others wait for its result); past
 * 48 KiB the limit is checked again at every call and restored after a cudaDeviceReset.
 * Returns cudaErrorInvalidConfiguration when the block does not fit at all and
 * cudaErrorNoKernelImageForDevice when the device has no code for the kernel. The
 * launcher compares ptx_version with the architecture a variant was generated for: a
 * variant JIT-compiled from older PTX is not used. */
static inline cudaError_t pipert_kernel_prepare(pipert_kernel *k, const pipert_caps *caps)
{
    int dev = caps->device;
    if (dev < 0 || dev >= PIPERT_MAX_DEVICES)
        return cudaErrorInvalidDevice;
    if (k->smem_bytes > caps->smem_optin)
        return cudaErrorInvalidConfiguration;
    for (;;) {
        int state = __atomic_load_n(&k->ready[dev], __ATOMIC_ACQUIRE);
        if (state == PIPERT_KERNEL_READY)
            return k->smem_bytes > PIPERT_SMEM_DEFAULT ? pipert_kernel_keep_optin(k)
                                                       : cudaSuccess;
        if (state == PIPERT_KERNEL_NEW
            && __atomic_compare_exchange_n(&k->ready[dev], &state, PIPERT_KERNEL_FILLING, 0,
                                           __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            cudaError_t err = pipert_kernel_fill(k, dev);
            __atomic_store_n(&k->ready[dev], err == cudaSuccess ? PIPERT_KERNEL_READY
                                                                : PIPERT_KERNEL_NEW,
                             __ATOMIC_RELEASE);
            return err;
        }
    }
}

/* Choose the kernel for the device: kernels is a table of nvariants rows (architectures
 * sm[v], highest first) of nvecs copy widths; the first row whose architecture the device
 * has, and whose code it runs as built for that architecture or newer (not JIT-compiled
 * from older PTX, which would run an empty body), is prepared (pipert_kernel_prepare) and
 * its column vi returned in *out. cudaErrorNoKernelImageForDevice when none is. */
static inline cudaError_t pipert_select_variant(pipert_kernel *kernels, const int *sm,
                                                int nvariants, int nvecs, int vi,
                                                const pipert_caps *caps,
                                                pipert_kernel **out)
{
    for (int v = 0; v < nvariants; ++v) {
        if (caps->sm < sm[v])
            continue;
        pipert_kernel *k = &kernels[v * nvecs + vi];
        cudaError_t err = pipert_kernel_prepare(k, caps);
        if (err == cudaErrorNoKernelImageForDevice)
            continue;
        if (err != cudaSuccess)
            return err;
        if (k->ptx_version[caps->device] >= sm[v]) {
            *out = k;
            return cudaSuccess;
        }
    }
    return cudaErrorNoKernelImageForDevice;
}

/* Blocks for a kernel compiled in clusters of `cluster` blocks (__cluster_dims__, the
 * kernel prepared) over `groups` work items of a cluster each: a cluster per item, or
 * (persistent) as many clusters as the device runs at once, at most one per item. An
 * occupancy query (inline, as pipert_kernel_prepare: it takes the kernel's stub),
 * capture-safe. cudaErrorInvalidValue past 2^31 - 1 blocks, cudaErrorInvalidConfiguration
 * where no cluster fits on the device. */
static inline cudaError_t pipert_cluster_grid(const pipert_kernel *k, int cluster,
                                              int64_t groups, int persistent, unsigned *grid)
{
    int64_t n = groups < 1 ? 1 : groups;
    if (persistent) {
        cudaLaunchConfig_t cfg;   /* every field set below (C and C++ alike) */
        int fit = 0;
        cfg.gridDim.x = (unsigned)cluster;
        cfg.gridDim.y = cfg.gridDim.z = 1;
        cfg.blockDim.x = (unsigned)k->threads;
        cfg.blockDim.y = cfg.blockDim.z = 1;
        cfg.dynamicSmemBytes = (size_t)k->smem_bytes;
        cfg.stream = 0;
        cfg.attrs = NULL;
        cfg.numAttrs = 0;
        cudaError_t err = cudaOccupancyMaxActiveClusters(&fit, k->func, &cfg);
        if (err != cudaSuccess)
            return err;
        if (fit < 1)
            return cudaErrorInvalidConfiguration;
        n = n < fit ? n : fit;
    }
    if (n > 0x7fffffff / cluster)
        return cudaErrorInvalidValue;
    *grid = (unsigned)(n * cluster);
    return cudaSuccess;
}


/* Return the code of a call that fails (for launchers). */
#define PIPERT_TRY(call)                                                                    \
    do {                                                                                    \
        cudaError_t pipert_err_ = (call);                                                   \
        if (pipert_err_ != cudaSuccess)                                                     \
            return pipert_err_;                                                             \
    } while (0)

/* Whether [a, a+abytes) and [b, b+bbytes) overlap. */
PIPERT_API int pipert_ranges_overlap(const void *a, size_t abytes, const void *b, size_t bbytes);

/* Options of a NAME_launch_ex call; a zeroed struct means "as planned". */
typedef struct pipert_launch_opts {
    unsigned grid_blocks;        /* persistent grids: force this many blocks (tests) */
} pipert_launch_opts;

/* cudaGetErrorString, plus the meaning pipegen launchers give to the codes they return. */
PIPERT_API const char *pipert_error_string(cudaError_t err);

/* The version of pipegen the library was built with ("0.1.0"), and the PIPERT_ABI_VERSION it
 * was built with: a program linked against libpipert.so can compare the latter with the
 * PIPERT_ABI_VERSION it was compiled against. */
PIPERT_API const char *pipert_version(void);
PIPERT_API int pipert_abi_version(void);

/* ------------------------------------------------------------------ host streaming
 * The building blocks of a generated NAME_stream (docs/runtime.md): streams, pinned host
 * memory, events, host callbacks, device queries, a chunk planner (pure CPU) and a run
 * that moves a problem through the devices chunk by chunk. Every call returns a
 * cudaError_t, never exits and never prints; a call that fails leaves no error pending in
 * the CUDA runtime (it clears the non-sticky last error), so that the error is seen once,
 * in its return value. Every stream is an explicit non-blocking stream: nothing here
 * touches the legacy or per-thread default stream, so the behaviour is the same under
 * nvcc --default-stream legacy and per-thread. */

#define PIPERT_MAX_STREAMS 32            /* streams of one pool (of one device) */

/* Non-blocking streams on one device, with priorities in the device's range. */
typedef struct pipert_stream_pool {
    int device;
    int count;                           /* streams in stream[]; 0 when empty */
    int priority_least;                  /* cudaDeviceGetStreamPriorityRange */
    int priority_greatest;
    cudaStream_t stream[PIPERT_MAX_STREAMS];
    int priority[PIPERT_MAX_STREAMS];    /* as created, after clamping */
} pipert_stream_pool;

/* Create count (1..PIPERT_MAX_STREAMS) streams on device; stream i gets the CUDA
 * priority priorities[i % npriorities] clamped to the device's range (lower is more
 * urgent), or the device's default (least) priority when npriorities is 0. All or none:
 * on failure no stream is left and pool->count is 0. The calling thread's current device
 * is restored. */
PIPERT_API cudaError_t pipert_stream_pool_create(pipert_stream_pool *pool, int device, int count,
                                                 const int *priorities, int npriorities);
/* Wait for every stream of the pool; the first error, after waiting for all. */
PIPERT_API cudaError_t pipert_stream_pool_sync(const pipert_stream_pool *pool);
/* Destroy the streams (work already enqueued still completes) and empty the pool.
 * Destroying an empty pool does nothing. */
PIPERT_API cudaError_t pipert_stream_pool_destroy(pipert_stream_pool *pool);

/* Page-locked host memory: allocated here, or user memory registered here. */
enum { PIPERT_HOST_NONE = 0, PIPERT_HOST_ALLOCATED = 1, PIPERT_HOST_REGISTERED = 2 };
typedef struct pipert_host_buffer {
    void *ptr;
    size_t bytes;
    int owner;                 /* what pipert_host_release undoes: PIPERT_HOST_* */
} pipert_host_buffer;

/* cudaHostAlloc(cudaHostAllocPortable) (cudaMallocHost, usable from every device).
 * bytes 0 gives an empty buffer (ptr NULL). */
PIPERT_API cudaError_t pipert_host_alloc(pipert_host_buffer *b, size_t bytes);
/* Page-lock [p, p+bytes) with cudaHostRegister(flags | cudaHostRegisterPortable). Memory
 * that is already registered (cudaErrorHostMemoryAlreadyRegistered) is not an error: the
 * buffer then owns nothing and pipert_host_release leaves it registered. bytes 0 does
 * nothing. */
PIPERT_API cudaError_t pipert_host_register(pipert_host_buffer *b, void *p, size_t bytes,
                                            unsigned flags);
/* Undo what the buffer owns (cudaFreeHost, cudaHostUnregister) and empty it; an empty
 * buffer does nothing. */
PIPERT_API cudaError_t pipert_host_release(pipert_host_buffer *b);

/* Events and timing. pipert_event_create: timing 0 gives cudaEventDisableTiming (cheapest,
 * for dependencies). pipert_stream_after: waiter waits (on the device) for what is
 * enqueued on producer so far, through ev. */
PIPERT_API cudaError_t pipert_event_create(cudaEvent_t *ev, int timing);
PIPERT_API cudaError_t pipert_stream_after(cudaStream_t waiter, cudaStream_t producer,
                                           cudaEvent_t ev);
typedef struct pipert_timer {
    cudaEvent_t start, stop;
} pipert_timer;
/* Two timing events on the current device. */
PIPERT_API cudaError_t pipert_timer_create(pipert_timer *t);
PIPERT_API cudaError_t pipert_timer_start(pipert_timer *t, cudaStream_t stream);
PIPERT_API cudaError_t pipert_timer_stop(pipert_timer *t, cudaStream_t stream);
/* Waits for the stop event, then the milliseconds between start and stop. */
PIPERT_API cudaError_t pipert_timer_elapsed(pipert_timer *t, float *ms);
PIPERT_API cudaError_t pipert_timer_destroy(pipert_timer *t);

/* fn(user) on a CUDA thread once what stream holds so far is done (cudaLaunchHostFunc).
 * fn must not call CUDA. */
PIPERT_API cudaError_t pipert_host_func(cudaStream_t stream, void (*fn)(void *), void *user);

/* What the chunk planner needs of one device. */
typedef struct pipert_stream_device {
    int device;
    int async_engines;         /* asyncEngineCount: copy engines (0, 1 or 2) */
    int concurrent_kernels;    /* concurrentKernels (0 or 1) */
    int priority_least;        /* cudaDeviceGetStreamPriorityRange */
    int priority_greatest;
    size_t mem_free;           /* cudaMemGetInfo; 0: unknown, not checked */
} pipert_stream_device;
/* Read them (the calling thread's current device is restored). */
PIPERT_API cudaError_t pipert_stream_device_query(int device, pipert_stream_device *out);

/* A chunk's progress, reported to the plan's progress callback. */
typedef struct pipert_progress {
    int device;                /* the device the chunk ran on */
    int stream;                /* its stream's index in the device's pool */
    int64_t chunk;             /* its index, 0 .. chunks-1 */
    int64_t chunks;            /* chunks of the run */
    int64_t first, count;      /* the elements (rows) it computed */
    int64_t chunks_done;       /* chunks finished so far, this one included */
    int64_t elements_done;     /* elements (rows) finished so far, this chunk's included */
} pipert_progress;
/* Called on a CUDA thread when a chunk's results are in host memory, possibly at the same
 * time for chunks on different streams; chunks finish in any order. Must not call CUDA. */
typedef void (*pipert_progress_fn)(const pipert_progress *p, void *user);

enum { PIPERT_REGISTER_AUTO = 0, PIPERT_REGISTER_NEVER = 1 };

/* One chunk of a traced run, on its device's clock: milliseconds since the run began on
 * that device (an event recorded there when the run began). Its launch ran between
 * h2d_end and d2h_begin. Clocks of different devices start within microseconds of each
 * other (the events are recorded one after another), close enough for a timeline. */
typedef struct pipert_chunk_trace {
    int64_t chunk, first, count;
    int device;                /* the CUDA device */
    int device_index;          /* into the plan's devices */
    int stream;                /* its stream's index in the device's pool */
    float h2d_begin, h2d_end;  /* its copies in (equal when it copies nothing in) */
    float d2h_begin, d2h_end;  /* its copies out */
} pipert_chunk_trace;

/* Device buffers kept from one run to the next. A run allocates a buffer per slot
 * (cudaMalloc) and frees it at its end (cudaFree, which waits for the device): together
 * about a millisecond for a few hundred MiB, as long as a chunk's copies. A run whose plan
 * names a cache takes its buffers from it, where it holds large enough ones of the right
 * device, and gives them back at its end; they stay allocated until
 * pipert_stream_cache_destroy. One run at a time per cache (a second is refused with
 * cudaErrorNotPermitted while the first is under way); destroy it before cudaDeviceReset. */
typedef struct pipert_stream_cache pipert_stream_cache;
PIPERT_API cudaError_t pipert_stream_cache_create(pipert_stream_cache **out);
/* Free the buffers it holds (each on its device; the current device is restored) and the
 * cache; NULL is a no-op. The first error, after freeing everything it can. */
PIPERT_API cudaError_t pipert_stream_cache_destroy(pipert_stream_cache *cache);
/* Buffers it holds now, and their bytes (either pointer may be NULL). */
PIPERT_API cudaError_t pipert_stream_cache_held(const pipert_stream_cache *cache, int *buffers,
                                                size_t *bytes);

/* How a NAME_stream call spreads its work; a zeroed plan (or NULL) means the calling
 * thread's current device and everything chosen by the planner. */
typedef struct pipert_stream_plan {
    const int *devices;        /* devices to spread the chunks over, in order; a device
                                  named k times gets k pools of streams and k shares */
    int ndevices;              /* 0: the calling thread's current device */
    int streams_per_device;    /* 0: from the devices' copy engines; at most PIPERT_MAX_STREAMS */
    int64_t chunk_elements;    /* elements (rows) per chunk; 0: chosen by the planner */
    const int *priorities;     /* stream i of a device gets priorities[i % npriorities] */
    int npriorities;           /* 0: the devices' default priority */
    int host_register;         /* PIPERT_REGISTER_AUTO: page-lock pageable host arrays for
                                  the call; PIPERT_REGISTER_NEVER: copy them as they are */
    pipert_progress_fn progress;   /* NULL: none */
    void *progress_user;
    pipert_chunk_trace *trace;     /* NULL: none; else the run records CUDA events around
                                      the copies of its first trace_chunks chunks and the
                                      call fills trace[0 .. min(trace_chunks, chunks) - 1] */
    int64_t trace_chunks;
    pipert_stream_cache *cache;    /* NULL: the run allocates and frees its buffers */
} pipert_stream_plan;

/* The arrays a chunk moves, chunked along their slowest dimension (dimension 0).
 * PIPERT_SCRATCH: device memory only, row_bytes per row a slot holds, never copied and
 * with no host memory (its host pointer may be NULL): what a chunk's launch needs beside
 * its rows, e.g. a reduction's workspace and its results, copied out by the caller. */
enum { PIPERT_IN = 1, PIPERT_OUT = 2, PIPERT_INOUT = 3, PIPERT_SCRATCH = 4 };
typedef struct pipert_stream_array {
    int dir;                   /* PIPERT_IN, PIPERT_OUT, PIPERT_INOUT, PIPERT_SCRATCH */
    size_t row_bytes;          /* bytes of one element (of one row, contiguous) */
} pipert_stream_array;

typedef struct pipert_stream_problem {
    int64_t elements;          /* elements (rows, for a row-chunked 2D problem) */
    int64_t halo;              /* rows a chunk reads beyond its own on each side */
    int64_t align;             /* planned chunk sizes are multiples of it (the tile); 0: 1 */
    const pipert_stream_array *arrays;
    int narrays;
} pipert_stream_problem;

/* What the planner decided. */
typedef struct pipert_stream_layout {
    int64_t elements;
    int64_t halo;
    int64_t chunk_elements;    /* of every chunk but the last; 0 when elements is 0 */
    int64_t chunks;            /* ceil(elements / chunk_elements); 0 when elements is 0 */
    int64_t tail_elements;     /* of the last chunk */
    int ndevices;              /* devices used: the first ndevices of the plan's */
    int streams_per_device;    /* streams used on each */
    int slots;                 /* ndevices * streams_per_device */
    size_t slot_bytes;         /* device memory of one slot's buffers */
    const int *devices;        /* the plan's devices (NULL: device0 alone) */
    int device0;
} pipert_stream_layout;

/* One chunk: chunk i runs on slot i % slots, that is device (i % slots) % ndevices and
 * stream (i % slots) / ndevices of it. */
typedef struct pipert_chunk {
    int64_t index;
    int slot;
    int device_index;          /* into the plan's devices */
    int device;
    int stream_index;
    int64_t first, count;      /* the elements (rows) it computes and copies back */
    int64_t in_first, in_count;/* the rows it reads: first - halo .. first + count + halo,
                                  within [0, elements) */
    cudaStream_t stream;       /* from pipert_stream_next: its stream */
    void *const *buffers;      /* from pipert_stream_next: per array, device memory holding
                                  its rows in_first .. in_first + in_count */
} pipert_chunk;

/* The chunk planner, pure CPU: from the plan's overrides, the problem and the devices
 * (devs[k] describes the plan's k-th device, or the current device when the plan names
 * none; devs may be NULL when elements is 0), the chunk size, count and streams. */
PIPERT_API cudaError_t pipert_stream_layout_plan(const pipert_stream_plan *plan,
                                                 const pipert_stream_problem *prob,
                                                 const pipert_stream_device *devs, int ndevs,
                                                 pipert_stream_layout *out);
/* The same, with the devices read by pipert_stream_device_query (none when elements is 0). */
PIPERT_API cudaError_t pipert_stream_layout_query(const pipert_stream_plan *plan,
                                                  const pipert_stream_problem *prob,
                                                  pipert_stream_layout *out);
/* Chunk index of a layout (pure CPU; stream and buffers NULL). */
PIPERT_API cudaError_t pipert_stream_chunk_at(const pipert_stream_layout *l, int64_t index,
                                              pipert_chunk *out);

/* A run: streams and device buffers for every slot of a layout, the host arrays
 * page-locked, chunks handed out in order. */
typedef struct pipert_stream_run pipert_stream_run;
/* host[i]: array i's host memory (elements x row_bytes bytes; writable for OUT and INOUT). */
PIPERT_API cudaError_t pipert_stream_begin(const pipert_stream_plan *plan,
                                           const pipert_stream_problem *prob,
                                           const pipert_stream_layout *layout,
                                           const void *const *host, pipert_stream_run **out);
/* The next chunk, its device made current. */
PIPERT_API cudaError_t pipert_stream_next(pipert_stream_run *run, pipert_chunk *c);
/* Enqueue the host-to-device copies of the chunk's rows in_first .. of every IN and INOUT
 * array, and the device-to-host copies of its rows first .. of every OUT and INOUT array. */
PIPERT_API cudaError_t pipert_stream_copy_in(pipert_stream_run *run, const pipert_chunk *c);
PIPERT_API cudaError_t pipert_stream_copy_out(pipert_stream_run *run, const pipert_chunk *c);
/* The chunk is enqueued: with a progress callback, enqueue its report. */
PIPERT_API cudaError_t pipert_stream_done(pipert_stream_run *run, const pipert_chunk *c);
/* Wait for everything, free the buffers and streams, unregister what begin registered,
 * restore the current device; err if it is an error, else the first error of the end.
 * run may be NULL (returns err). */
PIPERT_API cudaError_t pipert_stream_end(pipert_stream_run *run, cudaError_t err);

#ifdef __cplusplus
}
#endif
#endif
