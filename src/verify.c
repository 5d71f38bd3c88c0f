/* verify: placeholder until the schedule verifier lands (issue 4). */
#include "pipegen.h"

#include <string.h>

static const char *const fault_names[FAULT__COUNT] = {
    [FAULT_NONE] = "none", [FAULT_DROP_WAIT] = "drop-wait", [FAULT_WAIT_PLUS_ONE] = "wait-plus-one",
    [FAULT_DROP_COMMIT] = "drop-commit", [FAULT_FLIP_PARITY] = "flip-parity",
    [FAULT_EXPECT_TX_SHORT] = "expect-tx-short", [FAULT_EXPECT_TX_LONG] = "expect-tx-long",
    [FAULT_DROP_FENCE] = "drop-fence", [FAULT_ONE_SLOT_SHORT] = "one-slot-short",
    [FAULT_DROP_RELEASE] = "drop-release", [FAULT_DROP_ARRIVE] = "drop-arrive",
    [FAULT_EARLY_RELEASE] = "early-release",
};

fault_kind verify_fault_from_name(const char *name)
{
    for (int k = 0; k < FAULT__COUNT; ++k)
        if (strcmp(fault_names[k], name) == 0)
            return (fault_kind)k;
    return FAULT__COUNT;
}

const char *verify_fault_name(fault_kind k) { return fault_names[k]; }

bool verify_inject(sched *sc, fault_kind k)
{
    (void)sc;
    (void)k;
    return false;
}

bool verify_schedule(diag_ctx *d, const sched *sc)
{
    (void)d;
    (void)sc;
    return true;
}
