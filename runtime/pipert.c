/* pipert: device capabilities, launch configuration and pointer checks for the
 * launchers pipegen generates. See pipert.h for the contract. */
#include "pipert.h"

#include <stdatomic.h>
#include <string.h>

/* Cached capabilities per device. The first caller claims an entry (CAPS_FILLING), writes
 * it and publishes it (CAPS_READY); a caller racing it reads the device itself instead of
 * writing the entry too (plain stores from two threads would be a data race). */
enum { CAPS_EMPTY, CAPS_FILLING, CAPS_READY };
static pipert_caps caps_cache[PIPERT_MAX_DEVICES];
static atomic_int caps_state[PIPERT_MAX_DEVICES];

static cudaError_t read_caps(int device, pipert_caps *c)
{
    struct { enum cudaDeviceAttr attr; int *dst; } want[6];
    int major = 0, minor = 0, optin = 0, per_sm = 0;
    memset(c, 0, sizeof *c);
    want[0].attr = cudaDevAttrComputeCapabilityMajor;            want[0].dst = &major;
    want[1].attr = cudaDevAttrComputeCapabilityMinor;            want[1].dst = &minor;
    want[2].attr = cudaDevAttrMultiProcessorCount;               want[2].dst = &c->sm_count;
    want[3].attr = cudaDevAttrMaxSharedMemoryPerBlockOptin;      want[3].dst = &optin;
    want[4].attr = cudaDevAttrMaxSharedMemoryPerMultiprocessor;  want[4].dst = &per_sm;
    want[5].attr = cudaDevAttrL2CacheSize;                       want[5].dst = &c->l2_bytes;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        cudaError_t err = cudaDeviceGetAttribute(want[i].dst, want[i].attr, device);
        if (err != cudaSuccess)
            return err;
    }
    cudaError_t err = cudaDeviceGetAttribute(&c->max_threads_per_sm,
                                             cudaDevAttrMaxThreadsPerMultiProcessor, device);
    if (err != cudaSuccess)
        return err;
    c->device = device;
    c->sm = major * 10 + minor;
    c->smem_optin = (size_t)optin;
    c->smem_per_sm = (size_t)per_sm;
    return cudaSuccess;
}

cudaError_t pipert_device_caps(int device, pipert_caps *out)
{
    if (device < 0 || device >= PIPERT_MAX_DEVICES || !out)
        return cudaErrorInvalidValue;
    if (atomic_load_explicit(&caps_state[device], memory_order_acquire) == CAPS_READY) {
        *out = caps_cache[device];
        return cudaSuccess;
    }
    int empty = CAPS_EMPTY;
    if (!atomic_compare_exchange_strong(&caps_state[device], &empty, CAPS_FILLING))
        return read_caps(device, out);   /* another thread fills the entry */
    cudaError_t err = read_caps(device, &caps_cache[device]);
    if (err == cudaSuccess)
        *out = caps_cache[device];
    atomic_store_explicit(&caps_state[device], err == cudaSuccess ? CAPS_READY : CAPS_EMPTY,
                          memory_order_release);
    return err;
}

cudaError_t pipert_current_caps(pipert_caps *out)
{
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess)
        return err;
    return pipert_device_caps(device, out);
}

unsigned pipert_persistent_grid(const pipert_kernel *k, const pipert_caps *caps,
                                int64_t work_items)
{
    int64_t grid = (int64_t)k->blocks_per_sm[caps->device] * caps->sm_count;
    if (grid > work_items)
        grid = work_items;
    return grid < 1 ? 1u : (unsigned)grid;
}

unsigned pipert_ptr_alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    unsigned align = 16;
    while (align > 1 && (a & (align - 1)))
        align >>= 1;
    return align;
}

unsigned pipert_min_align(unsigned width, const void *p)
{
    unsigned a = pipert_ptr_alignment(p);
    return a < width ? a : width;
}

int pipert_vec_index(unsigned max_width, unsigned width)
{
    int i = 0;
    for (unsigned w = max_width; w > width && w > 1; w /= 2)
        ++i;
    return i;
}

cudaError_t pipert_check_array(const void *p, int64_t d0, int64_t d1, int64_t d2, size_t esize,
                               size_t *bytes)
{
    int64_t n = 0;
    *bytes = 0;
    if (d0 < 0 || d1 < 0 || d2 < 0 || __builtin_mul_overflow(d0, d1, &n)
        || __builtin_mul_overflow(n, d2, &n) || __builtin_mul_overflow(n, (int64_t)esize, &n)
        || (uint64_t)n > SIZE_MAX)
        return cudaErrorInvalidValue;
    *bytes = (size_t)n;
    if (n && !p)
        return cudaErrorInvalidValue;
    return pipert_ptr_alignment(p) < esize ? cudaErrorMisalignedAddress : cudaSuccess;
}

int pipert_ranges_overlap(const void *a, size_t abytes, const void *b, size_t bbytes)
{
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    if (!abytes || !bbytes)
        return 0;
    return a0 < b0 + bbytes && b0 < a0 + abytes;
}

const char *pipert_error_string(cudaError_t err)
{
    switch (err) {
    case cudaErrorMisalignedAddress:
        return "misaligned address: a pointer passed to a pipegen launcher is not aligned "
               "to its element size";
    case cudaErrorInvalidConfiguration:
        return "invalid configuration: the pipeline's shared memory or block size does not "
               "fit this device";
    case cudaErrorNoKernelImageForDevice:
        return "no kernel image for this device: the pipeline was generated for other "
               "architectures (pipegen --arch)";
    default:
        return cudaGetErrorString(err);
    }
}

/* The build passes pipegen's version (Makefile: PIPERT_VERSION_STRING). */
#ifndef PIPERT_VERSION_STRING
#define PIPERT_VERSION_STRING "unknown"
#endif

const char *pipert_version(void)
{
    return PIPERT_VERSION_STRING;
}

int pipert_abi_version(void)
{
    return PIPERT_ABI_VERSION;
}
