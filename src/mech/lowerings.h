/* mech/lowerings.h: the registry's rows, one per lowering, in the order of
 * docs/lowerings.md (auto, resolved per target, is the registry's own, after them):
 *   LOWERING(ID, name, the ARCH_* features its code needs, its module)
 * Included with LOWERING defined by pipegen.h (enum mech: MECH_ID), mech.h (the modules'
 * declarations) and mech/registry.c (the table): a lowering is its module
 * (mech/NAME.c), its runtime header (runtime/pipert_NAME.cuh) and its row here. */
LOWERING(SYNC, "sync", 0, mech_sync_module)
LOWERING(CG, "cg", ARCH_CP_ASYNC, mech_cg_module)
LOWERING(BARRIER, "barrier", ARCH_CP_ASYNC, mech_barrier_module)
LOWERING(PIPELINE, "pipeline", ARCH_CP_ASYNC, mech_pipeline_module)
LOWERING(PIPELINE_ROLES, "pipeline-roles", ARCH_CP_ASYNC, mech_pipeline_roles_module)
LOWERING(PIPELINE_THREAD, "pipeline-thread", ARCH_CP_ASYNC, mech_pipeline_thread_module)
LOWERING(PRIMITIVES, "primitives", ARCH_CP_ASYNC, mech_primitives_module)
LOWERING(CP_ASYNC, "cp.async", ARCH_CP_ASYNC, mech_cp_async_module)
LOWERING(CP_ASYNC_MBARRIER, "cp.async.mbarrier", ARCH_CP_ASYNC, mech_cp_async_mbarrier_module)
LOWERING(BULK, "bulk", ARCH_TMA, mech_bulk_module)
LOWERING(TENSOR, "tensor", ARCH_TMA, mech_tensor_module)
