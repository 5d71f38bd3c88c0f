/* ---- pipegen CUDA API support (templates/pg_cuda_api.cuh, embedded after pg_device.cuh
 * in the .cu of a lowering through CUDA's own interfaces) ----
 * The lowerings cg, barrier, pipeline, pipeline-roles, pipeline-thread and primitives copy
 * with the APIs of cooperative groups, libcu++ and the pipeline primitives instead of
 * inline PTX. Each section below compiles where its lowering's #include lines (the
 * module's `includes`) define its PG_API_* macro, so that a kernel includes only the
 * headers its own API needs. */
#ifndef PIPEGEN_CUDA_API_SUPPORT
#define PIPEGEN_CUDA_API_SUPPORT 1
#ifdef __CUDACC__

#ifdef PG_API_PRIMITIVES
/* ---- primitives: one chunk through __pipeline_memcpy_async, `valid` bytes read and the
 * rest zero-filled (its zfill argument). The common whole chunk passes constants, so that
 * the primitive's switch over zfill folds to one cp.async. Below 4 bytes (the primitive's
 * smallest copy) the chunk is copied synchronously, as pg_copy_chunk_async does. ---- */
template <int VEC>
__device__ __forceinline__ void pg_prim_chunk(unsigned char *dst, const unsigned char *src,
                                              int valid)
{
    if constexpr (VEC >= 4) {
        if (valid == VEC)
            __pipeline_memcpy_async(dst, src, VEC);
        else
            __pipeline_memcpy_async(dst, src, VEC, (size_t)(VEC - valid));
    } else {
        pg_copy_chunk_sync<VEC>(dst, src, valid);
    }
}
#endif /* PG_API_PRIMITIVES */

#ifdef PG_API_MEMCPY_ASYNC
/* ---- barrier, pipeline, pipeline-roles, pipeline-thread: one chunk through
 * cuda::memcpy_async(dst, src, aligned_size_t<VEC>, SYNC), SYNC a cuda::pipeline or a
 * cuda::barrier. The API copies whole objects and has no zero-fill: a chunk that is partly
 * or wholly outside the array, and every chunk below 4 bytes (no cp.async), is stored
 * synchronously with its tail zero-filled. Such stores are complete in the thread before
 * its arrival (barrier, block pipelines) or the block barrier (pipeline-thread) that
 * publishes the step to the other threads. */
template <int VEC, class Sync>
__device__ __forceinline__ void pg_cuda_chunk(unsigned char *dst, const unsigned char *src,
                                              int valid, Sync &sync)
{
    if constexpr (VEC >= 4) {
        if (valid == VEC) {
            (void)cuda::memcpy_async(dst, src, cuda::aligned_size_t<VEC>(VEC), sync);
            return;
        }
    }
    pg_copy_chunk_sync<VEC>(dst, src, valid);
}
#endif /* PG_API_MEMCPY_ASYNC */

#ifdef PG_API_CG
/* ---- cg: cooperative_groups::memcpy_async copies one contiguous range per call and
 * commits one cp.async group in every thread of the group after it (__pipeline_commit),
 * also when it copies nothing; cg::wait_prior<N> counts those calls (and waits as for 8
 * when N is larger: __pipeline_wait_prior's limit). A region is therefore copied row by
 * row, one block-wide call per row whether or not the row is inside the array, so that a
 * step commits the same number of groups in every thread and every step. The block-wide
 * call deals a row's chunks to the threads one each (cg's thread_block path); a call on
 * a tile of the block would not do: cg's tile path lets the last lanes of a tile copy the
 * row's last chunk again, and those duplicate writes are races (racecheck). ---- */

/* The whole chunks of a row inside the array: bytes [lo, hi) of the region's rows. The
 * chunks before lo (a halo left of the array) and from hi (the end of a row) are the
 * edges, which the API cannot zero-fill. */
template <int VEC, long long ROWBYTES>
__device__ __forceinline__ void pg_cg_whole(int64_t o2b, int64_t n2b, int *lo, int *hi)
{
    const int64_t l = o2b < 0 ? (-o2b < ROWBYTES ? -o2b : ROWBYTES) : 0;
    const int64_t h = n2b - o2b >= ROWBYTES ? ROWBYTES : (n2b - o2b) / VEC * VEC;
    *lo = (int)l;
    *hi = (int)(h > l ? h : l);
}

/* A staged region (pg_region's shape and place) through cooperative_groups::memcpy_async:
 * P * R calls of the block, one per row, each the row's whole chunks or nothing (a row
 * outside the array; every chunk when VEC is below cp.async's 4 bytes); the edges and
 * those rows are stored synchronously and zero-filled, dealt to the threads as pg_region
 * deals chunks. Every thread of the block calls it. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_cg_region(unsigned char *dst, const unsigned char *base,
                                             int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                             int64_t n1, int64_t n2b, int tid,
                                             const cooperative_groups::thread_block &block)
{
    int lo, hi;
    pg_cg_whole<VEC, ROWBYTES>(o2b, n2b, &lo, &hi);
    for (int row = 0; row < P * R; ++row) {
        int64_t g0, g1;
        if (VEC >= 4 && pg_row_in<R>(row, o0, o1, n0, n1, &g0, &g1))
            cooperative_groups::memcpy_async(block, dst + (int64_t)row * PITCH + lo,
                                             base + (g0 * n1 + g1) * n2b + o2b + lo,
                                             cuda::aligned_size_t<VEC>((size_t)(hi - lo)));
        else
            cooperative_groups::memcpy_async(block, dst, base, cuda::aligned_size_t<VEC>(0));
    }
    pg_region<VEC, P, R, ROWBYTES, PITCH, NT>(
        dst, base, o0, o1, o2b, n0, n1, n2b, tid,
        [](unsigned char *d, const unsigned char *s, int v) {
            if (VEC < 4 || v < VEC)
                pg_copy_chunk_sync<VEC>(d, s, v);
        });
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
#endif /* PG_API_CG */

#endif /* __CUDACC__ */
#endif /* PIPEGEN_CUDA_API_SUPPORT */
