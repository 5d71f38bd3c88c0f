/* pipert: the pipegen runtime. A small C library that generated launchers link against:
 * device capabilities (cached per device), launch configuration (dynamic shared-memory
 * opt-in, occupancy, persistent grid size), pointer checks, and error strings.
 *
 * Contract: C11, includable from C and C++, no CCCL in this header, every fallible call
 * returns a cudaError_t, and the library never exits, prints or allocates device memory.
 * Thread-safe: caches are filled with idempotent writes guarded by atomics.
 */
#ifndef PIPERT_H
#define PIPERT_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a declaration below changes incompatibly; generated code checks it at
 * compile time. */
#define PIPERT_ABI_VERSION 2
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
cudaError_t pipert_device_caps(int device, pipert_caps *out);
/* Capabilities of the calling thread's current device. */
cudaError_t pipert_current_caps(pipert_caps *out);

/* One kernel as a launcher sees it. Generated code defines one static instance per kernel
 * variant; the per-device fields are filled by pipert_kernel_prepare. */
typedef struct pipert_kernel {
    const void *func;            /* the __global__ function */
    int threads;                 /* block size */
    size_t smem_bytes;           /* dynamic shared memory per block */
    int ready[PIPERT_MAX_DEVICES];          /* prepared on this device (0/1) */
    int blocks_per_sm[PIPERT_MAX_DEVICES];  /* occupancy on this device */
    int ptx_version[PIPERT_MAX_DEVICES];    /* virtual arch of the code the device runs
                                               (x10), 0 when it has no image for it */
} pipert_kernel;

/* Raise the kernel's dynamic shared-memory limit (once per device) and compute its
 * occupancy. Returns cudaErrorInvalidConfiguration when the block does not fit at all and
 * cudaErrorNoKernelImageForDevice when the device has no code for the kernel. The
 * launcher compares ptx_version with the architecture a variant was generated for: a
 * variant JIT-compiled from older PTX is not used. */
cudaError_t pipert_kernel_prepare(pipert_kernel *k, const pipert_caps *caps);

/* Blocks for a persistent grid: occupancy x SMs, at most work_items, at least 1. */
unsigned pipert_persistent_grid(const pipert_kernel *k, const pipert_caps *caps,
                                int64_t work_items);

/* The largest power of two <= 16 that divides the address (16 for NULL). */
unsigned pipert_ptr_alignment(const void *p);
/* The smaller of width and the alignment of p. */
unsigned pipert_min_align(unsigned width, const void *p);
/* How many halvings take max_width down to width (the column of a kernel table whose
 * widths run from max_width down by halves). */
int pipert_vec_index(unsigned max_width, unsigned width);

/* ceil(n / d) for n >= 0 and d > 0, without the overflow of (n + d - 1) / d. */
static inline int64_t pipert_div_up(int64_t n, int64_t d)
{
    return n / d + (n % d != 0);
}

/* An array argument of extents d0 x d1 x d2 (unused ones 1) and elements of esize bytes:
 * every extent not negative and the byte count not past what size_t and int64_t hold
 * (cudaErrorInvalidValue), stored in *bytes; p not NULL when there are bytes
 * (cudaErrorInvalidValue) and aligned to esize (cudaErrorMisalignedAddress). */
cudaError_t pipert_check_array(const void *p, int64_t d0, int64_t d1, int64_t d2, size_t esize,
                               size_t *bytes);

/* Choose the kernel for the device: kernels is a table of nvariants rows (architectures
 * sm[v], highest first) of nvecs copy widths; the first row whose architecture the device
 * has, and whose code it runs as built for that architecture or newer (not JIT-compiled
 * from older PTX, which would run an empty body), is prepared (pipert_kernel_prepare) and
 * its column vi returned in *out. cudaErrorNoKernelImageForDevice when none is. */
cudaError_t pipert_select_variant(pipert_kernel *kernels, const int *sm, int nvariants,
                                  int nvecs, int vi, const pipert_caps *caps,
                                  pipert_kernel **out);

/* Return the code of a call that fails (for launchers). */
#define PIPERT_TRY(call)                                                                    \
    do {                                                                                    \
        cudaError_t pipert_err_ = (call);                                                   \
        if (pipert_err_ != cudaSuccess)                                                     \
            return pipert_err_;                                                             \
    } while (0)

/* Whether [a, a+abytes) and [b, b+bbytes) overlap. */
int pipert_ranges_overlap(const void *a, size_t abytes, const void *b, size_t bbytes);

/* Options of a NAME_launch_ex call; a zeroed struct means "as planned". */
typedef struct pipert_launch_opts {
    unsigned grid_blocks;        /* persistent grids: force this many blocks (tests) */
} pipert_launch_opts;

/* cudaGetErrorString, plus the meaning pipegen launchers give to the codes they return. */
const char *pipert_error_string(cudaError_t err);

#ifdef __cplusplus
}
#endif
#endif
