/* pipert_cp_async.cuh: cp.async copies, commit groups and waits, and L2 cache policies (lowerings cp.async
 * and cp.async.mbarrier).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 */
#ifndef PIPERT_CP_ASYNC_CUH
#define PIPERT_CP_ASYNC_CUH
#include "pipert_device.cuh"

#ifdef __CUDACC__

/* ptxas before CUDA 13.4 can drop the createpolicy whose descriptor a cp.async's
 * .L2::cache_hint reads: the LDGSTS then reads a uniform register nothing wrote, and the
 * kernel stops with an illegal instruction (seen here with 13.0 on sm_90: transpose with
 * `evict last` under cp.async.mbarrier, persistent and per tile, and cp.async persistent;
 * Triton and Marlin saw it with 13.1 and 13.3; Triton re-enabled the hints with 13.4).
 * Those compilers copy without the hint: a policy is a hint, the copy is the same. */
#if defined(__CUDACC_VER_MAJOR__) \
    && (__CUDACC_VER_MAJOR__ > 13 || (__CUDACC_VER_MAJOR__ == 13 && __CUDACC_VER_MINOR__ >= 4))
#define PG_CP_ASYNC_L2_HINTS 1
#else
#define PG_CP_ASYNC_L2_HINTS 0
#endif

/* One cp.async of VEC bytes, `valid` of them read (src-size), the rest zero-filled.
 * CG selects .cg (16-byte copies only), PF the L2 prefetch size (0, 64, 128, 256), and
 * POLICY an L2 cache policy made by createpolicy (used when HINT, where
 * PG_CP_ASYNC_L2_HINTS). */
template <int VEC, bool CG, int PF, bool HINT>
__device__ __forceinline__ void pg_cp_async(unsigned char *dst, const unsigned char *src,
                                            int valid, uint64_t policy)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(VEC == 4 || VEC == 8 || VEC == 16, "cp.async copies 4, 8 or 16 bytes");
    static_assert(!CG || VEC == 16, "cp.async.cg copies 16 bytes only");
    const unsigned s = pg_smem_addr(dst);
#define PG_CP(LVL, PFX, HINTX, HARG)                                                        \
    asm volatile("cp.async." LVL ".shared.global" HINTX PFX " [%0], [%1], %2, %3" HARG ";\n" \
                 ::"r"(s), "l"(src), "n"(VEC), "r"(valid) HINT_OPERAND : "memory")
#define HINT_OPERAND , "l"(policy)
#define PG_CP_LVL(LVL)                                                                      \
    if (HINT && PG_CP_ASYNC_L2_HINTS) {                                                     \
        if (PF == 64) PG_CP(LVL, ".L2::64B", ".L2::cache_hint", ", %4");                     \
        else if (PF == 128) PG_CP(LVL, ".L2::128B", ".L2::cache_hint", ", %4");              \
        else if (PF == 256) PG_CP(LVL, ".L2::256B", ".L2::cache_hint", ", %4");              \
        else PG_CP(LVL, "", ".L2::cache_hint", ", %4");                                      \
    } else {                                                                                \
        if (PF == 64) PG_CP(LVL, ".L2::64B", "", "");                                        \
        else if (PF == 128) PG_CP(LVL, ".L2::128B", "", "");                                 \
        else if (PF == 256) PG_CP(LVL, ".L2::256B", "", "");                                 \
        else PG_CP(LVL, "", "", "");                                                         \
    }
    if (CG) { PG_CP_LVL("cg") } else { PG_CP_LVL("ca") }
#undef PG_CP_LVL
#undef HINT_OPERAND
#undef PG_CP
#else
    (void)dst; (void)src; (void)valid; (void)policy;
#endif
}

__device__ __forceinline__ void pg_cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void pg_cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

/* One chunk through cp.async, or synchronously where the width is below cp.async's
 * smallest (4 bytes: pointers aligned to less, the documented fallback) and where the
 * chunk is not whole: cp.async reads only its src-size bytes, but compute-sanitizer's
 * memcheck counts the whole chunk, and a chunk past the end of an allocation of exactly
 * the array's size was an out-of-bounds read to it (and a launch failure under it).
 * ZERO_WHOLE as pg_copy_chunk_sync's. */
template <int VEC, bool CG, int PF, bool HINT, bool ZERO_WHOLE>
__device__ __forceinline__ void pg_copy_chunk_async(unsigned char *dst, const unsigned char *src,
                                                    int valid, uint64_t policy)
{
    if constexpr (VEC >= 4) {
        if (valid == VEC) {
            pg_cp_async<VEC, CG && VEC == 16, PF, HINT>(dst, src, VEC, policy);
            return;
        }
    }
    pg_copy_chunk_sync<VEC, ZERO_WHOLE>(dst, src, valid);
}

/* An L2 cache policy for cp.async's cache_hint (EVICT: 1 normal, 2 first, 3 last,
 * 4 unchanged). */
template <int EVICT>
__device__ __forceinline__ uint64_t pg_l2_policy()
{
    uint64_t p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (EVICT == 1) asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
    if (EVICT == 2) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    if (EVICT == 3) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    if (EVICT == 4) asm volatile("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
}

#endif /* __CUDACC__ */
#endif /* PIPERT_CP_ASYNC_CUH */
