/* pipert_primitives.cuh: chunk copies through the pipeline primitives (lowering primitives).
 * Part of libpipert's device support, installed beside pipert.h and versioned with it
 * (PIPERT_ABI_VERSION): generated code includes the pipert_*.cuh files its kernels use.
 */
#ifndef PIPERT_PRIMITIVES_CUH
#define PIPERT_PRIMITIVES_CUH
#include <cuda_pipeline_primitives.h>
#include "pipert_device.cuh"

#ifdef __CUDACC__
/* ---- primitives: one whole chunk through __pipeline_memcpy_async. A part of a chunk
 * (an array's end) and chunks below 4 bytes (the primitive's smallest copy) are copied
 * synchronously, as pg_copy_chunk_async does: its zfill form reads only the chunk's
 * bytes, but memcheck counts the whole chunk past an allocation's end. ZERO_WHOLE as
 * pg_copy_chunk_sync's. ---- */
template <int VEC, bool ZERO_WHOLE>
__device__ __forceinline__ void pg_prim_chunk(unsigned char *dst, const unsigned char *src,
                                              int valid)
{
    if constexpr (VEC >= 4) {
        if (valid == VEC) {
            __pipeline_memcpy_async(dst, src, VEC);
            return;
        }
    }
    pg_copy_chunk_sync<VEC, ZERO_WHOLE>(dst, src, valid);
}
#endif /* __CUDACC__ */
#endif /* PIPERT_PRIMITIVES_CUH */
