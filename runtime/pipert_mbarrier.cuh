/* pipert_mbarrier.cuh: mbarrier initialisation, arrivals and parity waits (with the watchdog), and the
 * named barrier of one role (lowering cp.async.mbarrier).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 */
#ifndef PIPERT_MBARRIER_CUH
#define PIPERT_MBARRIER_CUH
#include "pipert_cp_async.cuh"

#ifdef __CUDACC__
/* ---- mbarrier (sm_80+; try_wait on sm_90, test_wait before) ---- */
__device__ __forceinline__ void pg_mbar_init(uint64_t *bar, unsigned count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(pg_smem_addr(bar)), "r"(count)
                 : "memory");
#endif
}

/* Make barrier initialisation visible to the async proxy (sm_90: TMA completes on them). */
__device__ __forceinline__ void pg_fence_mbar_init()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void pg_mbar_arrive(uint64_t *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}\n"
                 ::"r"(pg_smem_addr(bar)) : "memory");
#endif
}

/* One arrival per warp, once every lane of it got here (its reads done), on the barrier
 * at this address in each of the N blocks of the cluster (N == 1: this block's own). */
template <int N>
__device__ __forceinline__ void pg_mbar_arrive_warp(uint64_t *bar)
{
    __syncwarp();
    if ((threadIdx.x & 31) != 0)
        return;
    if constexpr (N == 1) {
        pg_mbar_arrive(bar);
    } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        for (unsigned r = 0; r < N; ++r) {
            unsigned at;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(at)
                         : "r"(pg_smem_addr(bar)), "r"(r));
            /* release at the block's scope, as CUTLASS's consumers do: .release.cluster
             * took gemm_bf16 from 0.73 to 0.39 of cuBLAS */
            asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(at) : "memory");
        }
#endif
    }
}

/* Every thread of every block of the cluster meets here; what a thread wrote before is
 * visible to all after (the barriers' initialisation, before any block uses another's). */
__device__ __forceinline__ void pg_cluster_sync()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}

/* This block's rank in its cluster (0 without clusters). */
__device__ __forceinline__ unsigned pg_cluster_rank()
{
    unsigned r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
    return r;
}

/* Arrive on the barrier when all of this thread's earlier cp.async copies complete; the
 * arrival is one of the barrier's expected count (.noinc). */
__device__ __forceinline__ void pg_cp_async_mbar_arrive(uint64_t *bar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(pg_smem_addr(bar))
                 : "memory");
#endif
}

__device__ __forceinline__ bool pg_mbar_test_parity(uint64_t *bar, unsigned parity)
{
    unsigned done = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done)
                 : "r"(pg_smem_addr(bar)), "r"(parity) : "memory");
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done)
                 : "r"(pg_smem_addr(bar)), "r"(parity) : "memory");
#endif
    return done != 0;
}

/* Wait until the barrier completed the phase of the given parity. With WATCHDOG (a cycle
 * bound, 0 for none) a wait that outlasts it traps with a message naming the pipeline,
 * the barrier, its slot and the phase, instead of hanging. */
template <long long WATCHDOG>
__device__ __forceinline__ void pg_mbar_wait(uint64_t *bar, unsigned parity, const char *what,
                                             int slot, long long use)
{
    if constexpr (WATCHDOG > 0) {
        const long long start = clock64();
        while (!pg_mbar_test_parity(bar, parity)) {
            if (clock64() - start > WATCHDOG) {
                printf("pipegen watchdog: %s: block %d thread %d waited %lld cycles on slot %d "
                       "for use %lld (parity %u)\n", what, (int)blockIdx.x, (int)threadIdx.x,
                       WATCHDOG, slot, use, parity);
                __trap();
            }
        }
    } else {
        (void)what; (void)slot; (void)use;
        while (!pg_mbar_test_parity(bar, parity)) {
        }
    }
}

/* A barrier of `count` threads of one role (named barrier 1; 0 is __syncthreads). */
template <int COUNT>
__device__ __forceinline__ void pg_role_barrier()
{
    asm volatile("bar.sync 1, %0;\n" ::"n"(COUNT) : "memory");
}

#endif /* __CUDACC__ */
#endif /* PIPERT_MBARRIER_CUH */
