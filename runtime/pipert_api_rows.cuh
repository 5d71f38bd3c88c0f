/* pipert_api_rows.cuh: what the row-copying APIs leave to synchronous stores (lowerings barrier, cg and bulk).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 */
#ifndef PIPERT_API_ROWS_CUH
#define PIPERT_API_ROWS_CUH
#include "pipert_device.cuh"

#ifdef __CUDACC__
/* ---- Row copies (barrier on sm_90, cg, bulk): the APIs copy one contiguous range per call and
 * have no zero-fill, so a region is copied as its rows' whole chunks inside the array by
 * the API, and everything else (a halo left of the array, the end of a row, rows outside
 * the array) by pg_api_edges, synchronously and zero-filled. ---- */

/* The whole chunks of a row inside the array: bytes [lo, hi) of the region's rows, hi - lo
 * a multiple of MULT chunks (the rest of the row goes to the edges). */
template <int VEC, long long ROWBYTES, int MULT>
__device__ __forceinline__ void pg_api_whole(int64_t o2b, int64_t n2b, int *lo, int *hi)
{
    const int64_t l = o2b < 0 ? (-o2b < ROWBYTES ? -o2b : ROWBYTES) : 0;
    const int64_t h = n2b - o2b >= ROWBYTES ? ROWBYTES : (n2b - o2b) / VEC * VEC;
    *lo = (int)l;
    *hi = (int)(h > l ? l + (h - l) / (VEC * MULT) * (VEC * MULT) : l);
}

/* The rows of a region inside the array, from row `first` on by `stride`: ROW(d, s) for
 * each, d and s the addresses of its byte lo in shared and in global memory (a call that
 * copies the row's whole chunks [lo, hi) by one contiguous range). */
template <int P, int R, long long PITCH, class Row>
__device__ __forceinline__ void pg_api_rows(unsigned char *dst, const unsigned char *base,
                                            int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                            int64_t n1, int64_t n2b, int first, int stride,
                                            int lo, Row row)
{
    for (int r = first; r < P * R; r += stride) {
        int64_t g0, g1;
        if (pg_row_in<R>(r, o0, o1, n0, n1, &g0, &g1))
            row(dst + (int64_t)r * PITCH + lo, base + (g0 * n1 + g1) * n2b + o2b + lo);
    }
}

/* The chunks of a region that the API does not copy: those outside bytes [lo, hi) of a
 * row, partial ones, rows outside the array, and all of them below cp.async's 4 bytes;
 * stored synchronously, dealt to the threads as pg_region deals chunks. */
template <int VEC, int P, int R, long long ROWBYTES, long long PITCH, int NT>
__device__ __forceinline__ void pg_api_edges(unsigned char *dst, const unsigned char *base,
                                             int64_t o0, int64_t o1, int64_t o2b, int64_t n0,
                                             int64_t n1, int64_t n2b, int tid, int lo, int hi)
{
    /* Where the API copied every row whole (every tile but those at an edge), nothing is
     * left: the walk over the region's chunks below, a division per chunk, took jacobi2d
     * under bulk per tile from 0.65 to 0.58 of cudaMemcpy (H200, same process). */
    if (VEC >= 4 && lo == 0 && hi == ROWBYTES && pg_rows_inside<P, R>(o0, o1, n0, n1))
        return;
    pg_region<VEC, P, R, ROWBYTES, PITCH, NT>(
        dst, base, o0, o1, o2b, n0, n1, n2b, tid,
        [=](unsigned char *d, const unsigned char *s, int v) {
            const int col = (int)((d - dst) % PITCH);
            if (VEC < 4 || v < VEC || col < lo || col >= hi)
                pg_copy_chunk_sync<VEC, true>(d, s, v);
        });
}
#endif /* __CUDACC__ */
#endif /* PIPERT_API_ROWS_CUH */
