/* A fake CUDA runtime for the runtime's unit tests: see fake_cudart.h. */
#include "fake_cudart.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

fake_device fake_devices[FAKE_MAX_DEVICES];
int fake_ndevices;

enum { OP_COPY, OP_HOSTFN, OP_KERNEL, OP_RECORD, OP_WAIT };
typedef struct fstream fstream;
typedef struct op {
    int kind;
    void (*fn)(void *);
    void *arg;
    void *dst;
    const void *src;
    size_t bytes;
    fstream *wait_stream;      /* OP_WAIT: run that stream up to wait_ticket first */
    long wait_ticket;
    long ticket;
    struct op *next;
} op;

#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x45564e54u
struct fstream {
    unsigned magic;
    int device, priority;
    unsigned flags;
    op *head, *tail;
    long enqueued, done;       /* tickets */
    int stuck;                 /* a wait on it failed: its work is left for fake_run_orphans */
    fstream *next;
};

typedef struct fevent {
    unsigned magic;
    unsigned flags;
    int recorded;
    fstream *stream;
    long ticket;
    long stamp;                /* the fake's clock when its last record ran; 0: not yet */
    struct fevent *next;
} fevent;

enum { A_DEVICE, A_HOST, A_REGISTERED };
typedef struct alloc {
    int kind;
    char *p;
    size_t bytes;
    int device;
    unsigned flags;
    struct alloc *next;
} alloc;

typedef struct call {
    char name[64];
    int count, fail_at;
    cudaError_t fail_err;
} call;

typedef struct kernel {
    const void *func;
    int ptx, blocks;
    int max_dynamic_smem[FAKE_MAX_DEVICES];   /* the attribute, per device; 0: default */
} kernel;

static struct {
    int current;
    cudaError_t last;
    int in_host_func;
    int default_uses, bad_copies, calls_in_host_funcs, wrong_device_launches;
    int total_calls;
    call calls[64];
    int ncalls;
    alloc *allocs;
    fstream *streams;
    fevent *events;
    op *orphans, *orphans_tail;    /* the work of stuck streams that were destroyed */
    kernel kernels[16];
    int nkernels;
    long clock;                /* ticks once per event record that runs: 1 tick = 1 ms */
} F;

/* ------------------------------------------------------------------ bookkeeping */

static call *find_call(const char *name)
{
    for (int i = 0; i < F.ncalls; ++i)
        if (!strcmp(F.calls[i].name, name))
            return &F.calls[i];
    if (F.ncalls == (int)(sizeof F.calls / sizeof F.calls[0]))
        abort();
    call *c = &F.calls[F.ncalls++];
    memset(c, 0, sizeof *c);
    strncpy(c->name, name, sizeof c->name - 1);
    return c;
}

static cudaError_t set_err(cudaError_t e)
{
    if (e != cudaSuccess)
        F.last = e;
    return e;
}

/* Every fake function starts here: count the call, fail it when armed. */
static cudaError_t enter(const char *name)
{
    if (F.in_host_func)
        F.calls_in_host_funcs++;
    F.total_calls++;
    call *c = find_call(name);
    c->count++;
    if (c->fail_at && c->count == c->fail_at) {
        c->fail_at = 0;
        return set_err(c->fail_err);
    }
    return cudaSuccess;
}

#define ENTER()                                                                             \
    do {                                                                                    \
        cudaError_t fake_e_ = enter(__func__);                                              \
        if (fake_e_ != cudaSuccess)                                                         \
            return fake_e_;                                                                 \
    } while (0)

static fstream *live_stream(cudaStream_t s)
{
    for (fstream *f = F.streams; f; f = f->next)
        if ((void *)f == (void *)s && f->magic == STREAM_MAGIC)
            return f;
    return NULL;
}

static fevent *live_event(cudaEvent_t e)
{
    for (fevent *f = F.events; f; f = f->next)
        if ((void *)f == (void *)e && f->magic == EVENT_MAGIC)
            return f;
    return NULL;
}

static alloc *find_alloc(const void *p, size_t bytes, int kind)
{
    const char *c = p;
    for (alloc *a = F.allocs; a; a = a->next)
        if (a->kind == kind && c >= a->p && c <= a->p + a->bytes
            && bytes <= (size_t)(a->p + a->bytes - c))
            return a;
    return NULL;
}

static int count_allocs(int kind)
{
    int n = 0;
    for (alloc *a = F.allocs; a; a = a->next)
        n += a->kind == kind;
    return n;
}

static void remove_alloc(alloc *victim)
{
    for (alloc **a = &F.allocs; *a; a = &(*a)->next)
        if (*a == victim) {
            *a = victim->next;
            if (victim->kind != A_REGISTERED)
                free(victim->p);
            free(victim);
            return;
        }
}

static void run_one(fstream *s);

static void run_op(fstream *s, op *o)
{
    switch (o->kind) {
    case OP_COPY:
        memcpy(o->dst, o->src, o->bytes);
        break;
    case OP_HOSTFN:
        F.in_host_func++;
        o->fn(o->arg);
        F.in_host_func--;
        break;
    case OP_KERNEL:
        o->fn(o->arg);
        break;
    case OP_RECORD: {
        fevent *e = live_event((cudaEvent_t)o->arg);
        if (e && e->stream == s && e->ticket == o->ticket)
            e->stamp = ++F.clock;
        break;
    }
    case OP_WAIT: {
        fstream *w = NULL;
        for (fstream *f = F.streams; f; f = f->next)
            if (f == o->wait_stream)
                w = f;
        while (w && !w->stuck && w->done < o->wait_ticket && w->head)
            run_one(w);
        break;
    }
    }
    s->done = o->ticket;
}

static void run_one(fstream *s)
{
    op *o = s->head;
    s->head = o->next;
    if (!s->head)
        s->tail = NULL;
    run_op(s, o);
    free(o);
}

static void drain(fstream *s)
{
    while (s->head && !s->stuck)
        run_one(s);
}

/* Put o on stream s (0 and the special handles: run it now, counted as a default-stream
 * use). */
static cudaError_t put(cudaStream_t s, op *o)
{
    if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread) {
        F.default_uses++;
        fstream tmp = { 0 };
        run_op(&tmp, o);
        free(o);
        return cudaSuccess;
    }
    fstream *f = live_stream(s);
    if (!f) {
        free(o);
        return set_err(cudaErrorInvalidResourceHandle);
    }
    o->ticket = ++f->enqueued;
    o->next = NULL;
    if (f->tail)
        f->tail->next = o;
    else
        f->head = o;
    f->tail = o;
    return cudaSuccess;
}

static op *new_op(int kind)
{
    op *o = calloc(1, sizeof *o);
    if (!o)
        abort();
    o->kind = kind;
    return o;
}

/* ------------------------------------------------------------------ the test's side */

void fake_reset(void)
{
    while (F.streams) {
        fstream *s = F.streams;
        F.streams = s->next;
        while (s->head) {
            op *o = s->head;
            s->head = o->next;
            free(o);
        }
        free(s);
    }
    while (F.events) {
        fevent *e = F.events;
        F.events = e->next;
        free(e);
    }
    while (F.allocs)
        remove_alloc(F.allocs);
    while (F.orphans) {
        op *o = F.orphans;
        F.orphans = o->next;
        free(o);
    }
    memset(&F, 0, sizeof F);
    memset(fake_devices, 0, sizeof fake_devices);
    fake_ndevices = 2;
    for (int d = 0; d < 2; ++d) {
        fake_device *v = &fake_devices[d];
        v->major = 9;
        v->minor = 0;
        v->sm_count = 132;
        v->smem_optin = 227 * 1024;
        v->smem_per_sm = 228 * 1024;
        v->l2_bytes = 50 << 20;
        v->threads_per_sm = 2048;
        v->async_engines = d == 0 ? 2 : 1;
        v->concurrent_kernels = d == 0;
        v->priority_least = 0;
        v->priority_greatest = -5;
        v->mem_free = (size_t)70 << 30;
        v->mem_total = (size_t)80 << 30;
    }
}

void fake_run_orphans(void)
{
    while (F.orphans) {
        op *o = F.orphans;
        F.orphans = o->next;
        fstream tmp = { 0 };
        if (o->kind == OP_HOSTFN)   /* copies and kernels of a faulted context never run */
            run_op(&tmp, o);
        free(o);
    }
    F.orphans_tail = NULL;
}

void fake_fail(const char *fn, int nth, cudaError_t err)
{
    call *c = find_call(fn);
    c->fail_at = c->count + nth;
    c->fail_err = err;
}

int fake_calls(const char *fn)
{
    if (!strcmp(fn, "*"))
        return F.total_calls;
    for (int i = 0; i < F.ncalls; ++i)
        if (!strcmp(F.calls[i].name, fn))
            return F.calls[i].count;
    return 0;
}

int fake_live_streams(void)
{
    int n = 0;
    for (fstream *s = F.streams; s; s = s->next)
        ++n;
    return n;
}

int fake_live_events(void)
{
    int n = 0;
    for (fevent *e = F.events; e; e = e->next)
        ++n;
    return n;
}

int fake_live_device_allocs(void) { return count_allocs(A_DEVICE); }
int fake_live_host_allocs(void) { return count_allocs(A_HOST); }
int fake_live_registrations(void) { return count_allocs(A_REGISTERED); }
int fake_current_device(void) { return F.current; }
cudaError_t fake_last_error(void) { return F.last; }
int fake_default_stream_uses(void) { return F.default_uses; }
int fake_bad_copies(void) { return F.bad_copies; }
int fake_calls_in_host_funcs(void) { return F.calls_in_host_funcs; }
int fake_wrong_device_launches(void) { return F.wrong_device_launches; }

int fake_stream_device(cudaStream_t s)
{
    fstream *f = live_stream(s);
    return f ? f->device : -1;
}

int fake_stream_priority(cudaStream_t s)
{
    fstream *f = live_stream(s);
    return f ? f->priority : -1;
}

int fake_stream_flags(cudaStream_t s)
{
    fstream *f = live_stream(s);
    return f ? (int)f->flags : -1;
}

int fake_device_range(const void *p, size_t bytes, int *device)
{
    alloc *a = find_alloc(p, bytes, A_DEVICE);
    if (a && device)
        *device = a->device;
    return a != NULL;
}

const void *fake_registration_at(const void *p)
{
    const char *c = p;
    for (alloc *a = F.allocs; a; a = a->next)
        if (a->kind == A_REGISTERED && c >= a->p && c < a->p + a->bytes)
            return a->p;
    return NULL;
}

int fake_host_flags(const void *p)
{
    for (alloc *a = F.allocs; a; a = a->next)
        if (a->kind != A_DEVICE && a->p == p)
            return (int)a->flags;
    return -1;
}

void fake_enqueue(cudaStream_t s, void (*fn)(void *), void *arg)
{
    fstream *f = live_stream(s);
    if (f && f->device != F.current)
        F.wrong_device_launches++;
    op *o = new_op(OP_KERNEL);
    o->fn = fn;
    o->arg = arg;
    (void)put(s, o);
}

void fake_kernel(const void *func, int ptx_version, int blocks_per_sm)
{
    kernel *k = &F.kernels[F.nkernels++];
    k->func = func;
    k->ptx = ptx_version;
    k->blocks = blocks_per_sm;
}

/* ------------------------------------------------------------------ the fake CUDA runtime */

cudaError_t cudaGetLastError(void)
{
    enter(__func__);
    cudaError_t e = F.last;
    F.last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    enter(__func__);
    return F.last;
}

const char *cudaGetErrorString(cudaError_t error)
{
    return error == cudaSuccess ? "no error" : "fake CUDA error";
}

cudaError_t cudaGetDevice(int *device)
{
    ENTER();
    if (!device)
        return set_err(cudaErrorInvalidValue);
    *device = F.current;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    ENTER();
    if (device < 0 || device >= fake_ndevices)
        return set_err(cudaErrorInvalidDevice);
    F.current = device;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    ENTER();
    if (device < 0 || device >= fake_ndevices)
        return set_err(cudaErrorInvalidDevice);
    const fake_device *d = &fake_devices[device];
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = d->major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = d->minor; break;
    case cudaDevAttrMultiProcessorCount: *value = d->sm_count; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = d->smem_optin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = d->smem_per_sm; break;
    case cudaDevAttrL2CacheSize: *value = d->l2_bytes; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = d->threads_per_sm; break;
    case cudaDevAttrAsyncEngineCount: *value = d->async_engines; break;
    case cudaDevAttrConcurrentKernels: *value = d->concurrent_kernels; break;
    default: return set_err(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    ENTER();
    if (least)
        *least = fake_devices[F.current].priority_least;
    if (greatest)
        *greatest = fake_devices[F.current].priority_greatest;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    ENTER();
    *free_bytes = fake_devices[F.current].mem_free;
    *total = fake_devices[F.current].mem_total;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority)
{
    ENTER();
    if (!s || (flags != cudaStreamDefault && flags != cudaStreamNonBlocking))
        return set_err(cudaErrorInvalidValue);
    fstream *f = calloc(1, sizeof *f);
    if (!f)
        abort();
    f->magic = STREAM_MAGIC;
    f->device = F.current;
    f->priority = priority;
    f->flags = flags;
    f->next = F.streams;
    F.streams = f;
    *s = (cudaStream_t)(void *)f;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    ENTER();
    fstream *f = live_stream(s);
    if (!f)
        return set_err(cudaErrorInvalidResourceHandle);
    drain(f);                  /* enqueued work completes, unless the stream is stuck */
    if (f->head) {
        if (F.orphans_tail)
            F.orphans_tail->next = f->head;
        else
            F.orphans = f->head;
        F.orphans_tail = f->tail;
        f->head = f->tail = NULL;
    }
    for (fstream **p = &F.streams; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    f->magic = 0;
    free(f);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    cudaError_t err = enter(__func__);
    if (err != cudaSuccess) {
        fstream *f = live_stream(s);
        if (f)
            f->stuck = 1;      /* as after a fault: its work does not run (yet) */
        return err;
    }
    if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread) {
        F.default_uses++;
        return cudaSuccess;
    }
    fstream *f = live_stream(s);
    if (!f)
        return set_err(cudaErrorInvalidResourceHandle);
    drain(f);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    ENTER();
    fstream *f = live_stream(stream);
    int device = -1;
    const void *dev = kind == cudaMemcpyHostToDevice ? dst : src;
    if ((kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost)
        || !fake_device_range(dev, count, &device) || (f && f->device != device)) {
        F.bad_copies++;
        return set_err(cudaErrorInvalidValue);
    }
    op *o = new_op(OP_COPY);
    o->dst = dst;
    o->src = src;
    o->bytes = count;
    return put(stream, o);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *user)
{
    ENTER();
    if (!fn)
        return set_err(cudaErrorInvalidValue);
    op *o = new_op(OP_HOSTFN);
    o->fn = fn;
    o->arg = user;
    return put(stream, o);
}

static cudaError_t new_alloc(int kind, void *p, size_t bytes, unsigned flags)
{
    alloc *a = calloc(1, sizeof *a);
    if (!a)
        abort();
    a->kind = kind;
    a->p = p;
    a->bytes = bytes;
    a->device = F.current;
    a->flags = flags;
    a->next = F.allocs;
    F.allocs = a;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    ENTER();
    if (!p)
        return set_err(cudaErrorInvalidValue);
    *p = NULL;
    if (bytes == 0)
        return cudaSuccess;
    *p = malloc(bytes);
    if (!*p)
        return set_err(cudaErrorMemoryAllocation);
    memset(*p, 0xA5, bytes);   /* not zero: unwritten rows show */
    return new_alloc(A_DEVICE, *p, bytes, 0);
}

cudaError_t cudaFree(void *p)
{
    ENTER();
    if (!p)
        return cudaSuccess;
    alloc *a = NULL;
    for (alloc *x = F.allocs; x; x = x->next)
        if (x->kind == A_DEVICE && x->p == p)
            a = x;
    if (!a)
        return set_err(cudaErrorInvalidValue);
    for (fstream *s = F.streams; s; s = s->next)   /* cudaFree synchronizes the device */
        if (s->device == a->device)
            drain(s);
    remove_alloc(a);
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    ENTER();
    if (!p || bytes == 0)
        return set_err(cudaErrorInvalidValue);
    *p = malloc(bytes);
    if (!*p)
        return set_err(cudaErrorMemoryAllocation);
    return new_alloc(A_HOST, *p, bytes, flags);
}

cudaError_t cudaFreeHost(void *p)
{
    ENTER();
    for (alloc *a = F.allocs; a; a = a->next)
        if (a->kind == A_HOST && a->p == p) {
            remove_alloc(a);
            return cudaSuccess;
        }
    return set_err(cudaErrorInvalidValue);
}

cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned int flags)
{
    ENTER();
    if (!p || bytes == 0)
        return set_err(cudaErrorInvalidValue);
    const char *c = p;
    for (alloc *a = F.allocs; a; a = a->next)
        if (a->kind != A_DEVICE && c < a->p + a->bytes && a->p < c + bytes)
            return set_err(cudaErrorHostMemoryAlreadyRegistered);
    return new_alloc(A_REGISTERED, p, bytes, flags);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *at, const void *p)
{
    ENTER();
    memset(at, 0, sizeof *at);
    at->type = cudaMemoryTypeUnregistered;
    const char *c = p;
    for (alloc *a = F.allocs; a; a = a->next)
        if (c >= a->p && c < a->p + a->bytes)
            at->type = a->kind == A_DEVICE ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
    return cudaSuccess;
}

cudaError_t cudaHostUnregister(void *p)
{
    ENTER();
    for (alloc *a = F.allocs; a; a = a->next)
        if (a->kind == A_REGISTERED && a->p == p) {
            remove_alloc(a);
            return cudaSuccess;
        }
    return set_err(cudaErrorHostMemoryNotRegistered);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    ENTER();
    if (!e)
        return set_err(cudaErrorInvalidValue);
    fevent *f = calloc(1, sizeof *f);
    if (!f)
        abort();
    f->magic = EVENT_MAGIC;
    f->flags = flags;
    f->next = F.events;
    F.events = f;
    *e = (cudaEvent_t)(void *)f;
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    ENTER();
    fevent *f = live_event(e);
    if (!f)
        return set_err(cudaErrorInvalidResourceHandle);
    for (fevent **p = &F.events; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    f->magic = 0;
    free(f);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    ENTER();
    fevent *f = live_event(e);
    if (!f)
        return set_err(cudaErrorInvalidResourceHandle);
    fstream *fs = live_stream(s);
    op *o = new_op(OP_RECORD);
    o->arg = f;
    cudaError_t err = put(s, o);
    if (err != cudaSuccess)
        return err;
    f->recorded = 1;
    f->stream = fs;
    f->ticket = fs ? fs->enqueued : 0;
    f->stamp = fs ? 0 : ++F.clock;
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    ENTER();
    fevent *f = live_event(e);
    if (!f || flags)
        return set_err(f ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
    op *o = new_op(OP_WAIT);
    o->wait_stream = f->recorded ? f->stream : NULL;
    o->wait_ticket = f->ticket;
    return put(s, o);
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    ENTER();
    fevent *f = live_event(e);
    if (!f)
        return set_err(cudaErrorInvalidResourceHandle);
    if (f->recorded && f->stream && live_stream((cudaStream_t)(void *)f->stream))
        while (f->stream->done < f->ticket && f->stream->head)
            run_one(f->stream);
    return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    ENTER();
    fevent *a = live_event(start), *b = live_event(end);
    if (!ms)
        return set_err(cudaErrorInvalidValue);
    if (!a || !b || (a->flags & cudaEventDisableTiming) || (b->flags & cudaEventDisableTiming)
        || !a->recorded || !b->recorded)
        return set_err(cudaErrorInvalidResourceHandle);
    if (!a->stamp || !b->stamp)
        return set_err(cudaErrorNotReady);
    *ms = (float)(b->stamp - a->stamp);
    return cudaSuccess;
}

static kernel *find_kernel(const void *func)
{
    for (int i = 0; i < F.nkernels; ++i)
        if (F.kernels[i].func == func)
            return &F.kernels[i];
    return NULL;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    ENTER();
    kernel *k = find_kernel(func);
    if (!k)
        return set_err(cudaErrorInvalidDeviceFunction);
    memset(attr, 0, sizeof *attr);
    attr->ptxVersion = k->ptx;
    attr->maxDynamicSharedSizeBytes = k->max_dynamic_smem[F.current]
                                      ? k->max_dynamic_smem[F.current] : 48 * 1024;
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    ENTER();
    kernel *k = find_kernel(func);
    if (!k)
        return set_err(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize)
        k->max_dynamic_smem[F.current] = value;
    return cudaSuccess;
}

/* A new context on the current device: the kernels' attributes are back to their
 * defaults there (what a real reset does to the >48 KiB opt-in). */
cudaError_t cudaDeviceReset(void)
{
    ENTER();
    for (int i = 0; i < F.nkernels; ++i)
        F.kernels[i].max_dynamic_smem[F.current] = 0;
    return cudaSuccess;
}

int fake_kernel_max_dynamic_smem(const void *func)
{
    kernel *k = find_kernel(func);
    return !k ? -1 : k->max_dynamic_smem[F.current] ? k->max_dynamic_smem[F.current] : 48 * 1024;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int threads,
                                                          size_t smem)
{
    ENTER();
    (void)threads;
    (void)smem;
    kernel *k = find_kernel(func);
    if (!k)
        return set_err(cudaErrorInvalidDeviceFunction);
    *n = k->blocks;
    return cudaSuccess;
}

/* Clusters of cfg->gridDim.x blocks: the kernel's blocks per SM over the device's SMs. */
cudaError_t cudaOccupancyMaxActiveClusters(int *n, const void *func,
                                           const cudaLaunchConfig_t *cfg)
{
    ENTER();
    kernel *k = find_kernel(func);
    if (!k)
        return set_err(cudaErrorInvalidDeviceFunction);
    *n = k->blocks * fake_devices[F.current].sm_count / (int)cfg->gridDim.x;
    return cudaSuccess;
}
