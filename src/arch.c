/* arch: what pipegen knows of each GPU architecture it generates kernels for, in one table
 * (in the style of a compiler's target description). Every question about an architecture
 * (is it known, how much shared memory a block may take, what instructions it offers, with
 * or without its arch-specific `a` variant) is asked here. */
#include "pipegen.h"

#include <stddef.h>

/* Shared memory: the opt-in maximum per block (cudaFuncAttributeMaxDynamicSharedMemorySize);
 * threads and blocks: resident per SM (CUDA C++ Programming Guide, "Compute
 * Capabilities"). */
static const arch_info arch_table[] = {
    {80, 163 * 1024, 2048, 32, false, ARCH_CP_ASYNC, 0},
    {86, 99 * 1024, 1536, 16, false, ARCH_CP_ASYNC, 0},
    {87, 163 * 1024, 1536, 16, false, ARCH_CP_ASYNC, 0},
    {89, 99 * 1024, 1536, 24, false, ARCH_CP_ASYNC, 0},
    {90, 227 * 1024, 2048, 32, true, ARCH_CP_ASYNC | ARCH_TMA | ARCH_CLUSTERS,
     ARCH_WGMMA | ARCH_SETMAXNREG},
    {100, 227 * 1024, 2048, 32, true, ARCH_CP_ASYNC | ARCH_TMA | ARCH_CLUSTERS, ARCH_SETMAXNREG},
    {103, 227 * 1024, 2048, 32, true, ARCH_CP_ASYNC | ARCH_TMA | ARCH_CLUSTERS, ARCH_SETMAXNREG},
    {120, 99 * 1024, 1536, 32, true, ARCH_CP_ASYNC | ARCH_TMA | ARCH_CLUSTERS, ARCH_SETMAXNREG},
};
enum { NARCHS = sizeof arch_table / sizeof arch_table[0] };

/* An architecture pipegen does not know: what every CUDA GPU offers. */
static const arch_info arch_unknown = {0, 48 * 1024, 1536, 16, false, 0, 0};

const arch_info *arch_find(int sm)
{
    for (int i = 0; i < NARCHS; ++i)
        if (arch_table[i].sm == sm)
            return &arch_table[i];
    return NULL;
}

int arch_count(void) { return NARCHS; }
const arch_info *arch_at(int i) { return &arch_table[i]; }

static const arch_info *arch_or_unknown(int sm)
{
    const arch_info *a = arch_find(sm);
    return a ? a : &arch_unknown;
}

long long arch_smem_limit(int sm) { return arch_or_unknown(sm)->smem_limit; }
int arch_max_threads(int sm) { return arch_or_unknown(sm)->max_threads; }
int arch_max_blocks(int sm) { return arch_or_unknown(sm)->max_blocks; }

bool arch_has(int sm, bool specific, unsigned features)
{
    const arch_info *a = arch_or_unknown(sm);
    unsigned offered = a->features | (specific && a->has_specific ? a->specific_features : 0);
    return (offered & features) == features;
}

int arch_first_with(unsigned features)
{
    for (int i = 0; i < NARCHS; ++i)
        if ((arch_table[i].features & features) == features)
            return arch_table[i].sm;
    return 0;
}
