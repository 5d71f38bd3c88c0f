/* The runtime across cudaDeviceReset (issue 31): a kernel past 48 KiB of dynamic shared
 * memory needs its opt-in (cudaFuncAttributeMaxDynamicSharedMemorySize) in the device's
 * context, and cudaDeviceReset gives the device a new one where the opt-in is gone while
 * pipert_kernel.ready still says "prepared". pipert_kernel_prepare must apply it again.
 *
 * Rounds 0 .. RT_ROUNDS (default 6): allocate, launch reduce_sum (65536 bytes a block) and
 * sgemm (159744) on a new stream, check both results exactly against the host's
 * (tests/gpu/rt_common.h), free, cudaDeviceReset, and again. The rounds take x at
 * different alignments, so that some prepare a kernel of the table anew after a reset and
 * most take one prepared before it. Every call is checked: a launch refused after a reset
 * (cudaErrorInvalidValue, the opt-in lost) fails its round.
 *
 * A control kernel of this file (64 KiB of dynamic shared memory) shows that the reset
 * does drop an opt-in on this GPU: opted in and launched in round 0, launched without
 * opting in again after each reset, where it must be refused ("control" lines; where it is
 * not, the rounds do not test the re-apply, and the line says so).
 *
 * Prints "ok   round R: ..." or "FAIL round R: ..." per round and ends with
 * "rt_reset: N passed, M failed"; exit 0 when all passed, 1 otherwise, 77 without a GPU.
 * tests/gpu/lib.sh (gpu_runtime_cases) also builds it against a pipert.h that does not
 * re-apply the opt-in, where round 1 must fail. */
#include "rt_common.h"

#define RT_CONTROL_SMEM (64 * 1024)

__global__ void rt_control(int *out)
{
    extern __shared__ int rt_buf[];
    for (int i = threadIdx.x; i < RT_CONTROL_SMEM / 4; i += blockDim.x)
        rt_buf[i] = i;
    __syncthreads();
    if (threadIdx.x == 0)
        *out = rt_buf[RT_CONTROL_SMEM / 4 - 1];
}

/* The control kernel with 64 KiB: cudaSuccess (and the value it wrote checked) or the
 * launch's error (cleared). */
static cudaError_t control_launch(int *got)
{
    int *d = NULL;
    cudaError_t err = cudaMalloc((void **)&d, sizeof(int));
    if (err != cudaSuccess)
        return err;
    rt_control<<<1, 128, RT_CONTROL_SMEM>>>(d);
    err = cudaGetLastError();
    if (err == cudaSuccess)
        err = cudaMemcpy(got, d, sizeof(int), cudaMemcpyDeviceToHost);
    (void)cudaFree(d);
    return err;
}

int main(void)
{
    if (rt_no_device("rt_reset"))
        return 77;
    const int rounds = rt_env_int("RT_ROUNDS", 6);
    const uint64_t seed = rt_seed();
    /* x's offset in floats per round: 0 takes the 16-byte kernel (prepared in round 0,
     * then only re-checked), 1 and 2 the 4- and 8-byte ones (prepared after a reset). */
    static const int xoffs[] = {0, 0, 1, 0, 2, 0, 0};
    int passed = 0, failed = 0, dropped = 0;
    printf("rt_reset: RT_SEED=%" PRIu64 ", %d resets\n", seed, rounds);

    for (int r = 0; r <= rounds; ++r) {
        int got = 0;
        cudaError_t err;
        if (r == 0) {
            err = cudaFuncSetAttribute(rt_control, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       RT_CONTROL_SMEM);
            if (err == cudaSuccess)
                err = control_launch(&got);
            if (err != cudaSuccess || got != RT_CONTROL_SMEM / 4 - 1) {
                printf("FAIL control: the 64 KiB kernel, opted in, did not run: %s\n",
                       pipert_error_string(err));
                ++failed;
            }
        } else {
            /* After the reset: the control kernel's opt-in must be gone. */
            err = control_launch(&got);
            if (err != cudaSuccess)
                ++dropped;
            else
                printf("note control: after reset %d the 64 KiB kernel ran without opting in "
                       "again: this GPU keeps the opt-in, the rounds do not test its "
                       "re-apply\n", r);
        }

        rt_problem p;
        const int64_t n = (1 << 20) + (int64_t)(seed % 4096) + r;
        rt_problem_init(&p, seed + (uint64_t)r, n, xoffs[r % 7], 300, 200, 100);
        cudaStream_t stream = NULL;
        err = rt_problem_alloc(&p);
        if (err == cudaSuccess) {
            err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
            if (err != cudaSuccess)
                rt_why(&p, "cudaStreamCreateWithFlags: %s", pipert_error_string(err));
        }
        /* Twice: the first launch after the reset, and one more. */
        for (int again = 0; again < 2 && err == cudaSuccess; ++again)
            err = rt_problem_run(&p, stream, r % 2);
        if (err == cudaSuccess) {
            printf("ok   round %d: reduce_sum n=%" PRId64 " (x+%d) and sgemm 300x200x100, "
                   "twice, exact%s\n", r, n, p.xoff, r ? " after cudaDeviceReset" : "");
            ++passed;
        } else {
            printf("FAIL round %d%s: %s\n", r, r ? " (after cudaDeviceReset)" : "", p.why);
            ++failed;
        }
        if (stream)
            (void)cudaStreamDestroy(stream);
        (void)rt_problem_free_device(&p, 0);
        rt_problem_free_host(&p);
        if (r < rounds) {
            err = cudaDeviceReset();
            if (err != cudaSuccess) {
                printf("FAIL reset %d: cudaDeviceReset: %s\n", r + 1, pipert_error_string(err));
                ++failed;
                break;
            }
        }
    }
    printf("control: %d of %d resets dropped the 64 KiB opt-in\n", dropped, rounds);
    printf("rt_reset: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
