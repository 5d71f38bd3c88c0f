/* A fake of the few CUDA runtime functions libpipert calls, linked instead of libcudart
 * into the runtime's unit tests (tests/runtime/test_pipert.c), so that its CPU-side logic
 * runs without a GPU, under ASan/UBSan.
 *
 * Devices are a table (fake_devices); "device memory" and pinned memory are malloc'd
 * host memory the fake keeps track of; a stream is a queue that runs its work (copies,
 * host functions, event records and waits, test "kernels" put there by fake_enqueue) when
 * it is synchronized or destroyed, so that the work of different streams runs in an
 * order other than the order it was enqueued in. Every call can be made to fail
 * (fake_fail), and the fake counts what a test checks: live objects, calls, copies that
 * leave a device allocation, work on the default stream, CUDA calls from host functions.
 * An event is stamped by a clock that ticks once per record that runs (1 tick = 1 ms of
 * cudaEventElapsedTime), so a trace shows the order the work ran in.
 * Single-threaded. */
#ifndef FAKE_CUDART_H
#define FAKE_CUDART_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#define FAKE_MAX_DEVICES 8

typedef struct fake_device {
    int major, minor, sm_count, smem_optin, smem_per_sm, l2_bytes, threads_per_sm;
    int async_engines, concurrent_kernels;
    int priority_least, priority_greatest;
    size_t mem_free, mem_total;
} fake_device;

extern fake_device fake_devices[FAKE_MAX_DEVICES];
extern int fake_ndevices;

/* Two H100-like devices (the second with one copy engine and no concurrent kernels),
 * current device 0, nothing live, no failure armed, counters zero. */
void fake_reset(void);
/* A stream whose synchronization was made to fail is stuck: its work runs neither at a
 * later synchronization nor when it is destroyed; its host functions run here, after the
 * test's run has ended (as they might after a fault), and its copies never. */
void fake_run_orphans(void);
/* The nth call of function fn from now (1: the next) returns err. */
void fake_fail(const char *fn, int nth, cudaError_t err);
/* Calls of fn since the reset; "*" counts every call. */
int fake_calls(const char *fn);

int fake_live_streams(void);
int fake_live_events(void);
int fake_live_device_allocs(void);
int fake_live_host_allocs(void);
int fake_live_registrations(void);
int fake_current_device(void);
/* The last error the fake recorded, without clearing it. */
cudaError_t fake_last_error(void);

/* What went wrong: work on the default stream (0), copies not within a device
 * allocation (or on a stream of another device than the allocation's), CUDA calls from a
 * host function, kernels enqueued while another device than the stream's was current. */
int fake_default_stream_uses(void);
int fake_bad_copies(void);
int fake_calls_in_host_funcs(void);
int fake_wrong_device_launches(void);

/* A stream's device, priority and flags (-1 for a handle that is not a live stream). */
int fake_stream_device(cudaStream_t s);
int fake_stream_priority(cudaStream_t s);
int fake_stream_flags(cudaStream_t s);
/* Whether [p, p+bytes) lies in one live device allocation; its device in *device. */
int fake_device_range(const void *p, size_t bytes, int *device);
/* The flags a live pinned allocation or registration starting at p was made with (-1). */
int fake_host_flags(const void *p);
/* The start of the registered range holding p (NULL: none). */
const void *fake_registration_at(const void *p);

/* A "kernel": fn(arg) runs when the stream gets to it. */
void fake_enqueue(cudaStream_t s, void (*fn)(void *), void *arg);

/* Kernels known to cudaFuncGetAttributes and the occupancy calculator. */
void fake_kernel(const void *func, int ptx_version, int blocks_per_sm);
/* A kernel's cudaFuncAttributeMaxDynamicSharedMemorySize on the current device (48 KiB
 * until set, and again after cudaDeviceReset); -1 for an unknown kernel. */
int fake_kernel_max_dynamic_smem(const void *func);

#endif
