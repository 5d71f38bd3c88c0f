/* pipert_cg.cuh: region copies through cooperative_groups::memcpy_async (lowering cg).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 */
#ifndef PIPERT_CG_CUH
#define PIPERT_CG_CUH
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include "pipert_api_rows.cuh"

#ifdef __CUDACC__
/* ---- cg: cooperative_groups::memcpy_async commits one cp.async group in every thread of
 * the group after each call (__pipeline_commit), also when it copies nothing;
 * cg::wait_prior<N> counts those calls (and waits as for 8 when N is larger:
 * __pipeline_wait_prior's limit). The rows of a region are dealt to tiles of G threads
 * (G a power of two up to a warp, at most the row's chunks): tile g copies rows g, g +
 * NT/G, ..., one call per row, and every tile makes the same number of calls
 * (pg_cg_calls), an empty call where it has no row or the row is outside the array, so
 * that a step commits the same number of groups in every thread and every step. A call
 * copies a multiple of G chunks: cg's tile path lets the last lanes of a tile copy a
 * row's last chunk again when the count is not one, and those duplicate writes are races
 * (racecheck); the chunks left over go to pg_api_edges. ---- */
template <int VEC, long long ROWBYTES, int NT>
__host__ __device__ constexpr int pg_cg_tile()
{
    int g = 1;
    while (g < 32 && 2 * g * VEC <= ROWBYTES && NT % (2 * g) == 0)
        g *= 2;
    return g;
}

/* The memcpy_async calls of one region per step, in every thread. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__host__ __device__ constexpr int pg_cg_calls()
{
    constexpr int tiles = NT / pg_cg_tile<VEC, ROWBYTES, NT>();
    return (P * R + tiles - 1) / tiles;
}

/* A staged region (pg_region's shape and place) through cooperative_groups::memcpy_async.
 * Every thread of the block calls it. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_cg_region(unsigned char *dst, const unsigned char *base,
                                             int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                             int64_t n1, int64_t n2b, int tid,
                                             const cooperative_groups::thread_block &block)
{
    constexpr int G = pg_cg_tile<VEC, ROWBYTES, NT>(), TILES = NT / G;
    const auto tile = cooperative_groups::tiled_partition<G>(block);
    int lo, hi;
    pg_api_whole<VEC, ROWBYTES, G>(o2b, n2b, &lo, &hi);
#pragma unroll 1
    for (int c = 0; c < pg_cg_calls<VEC, P, R, ROWBYTES, PITCH, NT>(); ++c) {
        const int row = tid / G + c * TILES;
        int64_t g0, g1;
        if (VEC >= 4 && row < P * R && hi > lo && pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1))
            cooperative_groups::memcpy_async(tile, dst + (int64_t)row * PITCH + lo,
                                             base + (g0 * n1 + g1) * n2b + o2b + lo,
                                             cuda::aligned_size_t<VEC>((size_t)(hi - lo)));
        else
            cooperative_groups::memcpy_async(tile, dst, base, cuda::aligned_size_t<VEC>(0));
    }
    pg_api_edges<VEC, P, R, ROWBYTES, PITCH, NT>(dst, base, o0, o1, o2b, n0, n1, n2b, tid, lo,
                                                 hi);
}

/* N empty memcpy_async calls: the batches of a step past the block's last, so that every
 * step commits as many groups as a copied one and the wait counts stay right. */
template <int N>
__device__ __forceinline__ void pg_cg_empty_batches(const cooperative_groups::thread_block &block,
                                                    unsigned char *dst, const unsigned char *src)
{
#pragma unroll 1
    for (int i = 0; i < N; ++i)
        cooperative_groups::memcpy_async(block, dst, src, cuda::aligned_size_t<16>(0));
}
#endif /* __CUDACC__ */
#endif /* PIPERT_CG_CUH */
