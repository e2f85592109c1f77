/* The kernel ABI's PipeApi (plang.codegen.kernel.abi: get / push / pop / free) served by
 * the runtime's ring buffers (pipes.c), for kernels launched through
 * plang.runtime.kernel_launch. A kernel's `pipes` pointer is the calling thread's
 * `launch_state`: the Group instance's pipe set (NULL outside a Group) and the first
 * pipe the launch opened without one.
 *
 * Ring depth: a pipe gets the Group's slot count (`pl.cross_core_slot`, carried by the
 * pipe set); the kernel's own `slots` request is ignored, so both ends always agree.
 *
 * Kernels do not check return codes, so a pipe that can not be opened must not become a
 * NULL handle: `get` returns a dead pipe whose every operation fails at once, after
 * recording why: in the set (the two ends ask for different slot sizes; this also aborts
 * the set so the other members stop waiting) or, without a set, in the launch state. Ring
 * failures (timeouts, ...) are recorded by pipes.c in the set itself.
 * Built with `cc -O2 -shared -fPIC -pthread`. */
#include <stdint.h>
#include <stdlib.h>

enum { ABORTED = 2, DISAGREE = 5 };  /* pipes.c's status codes */
enum { OP_OPEN = 4 };

static struct {
    void *(*get)(void *, int64_t, int64_t, int64_t);
    int (*push)(void *, const void *, int64_t);
    int (*pop)(void *, void *, int64_t);
    int (*free)(void *);
    void (*fail)(void *, int, int64_t, int);
} rt;

typedef struct {
    void *set;
    int64_t orphan_pipe;  /* first pipe opened without a set, or -1 */
} launch_state;

static char dead_pipe;

void plang_adapter_bind(void *get, void *push, void *pop, void *free_, void *fail) {
    rt.get = get; rt.push = push; rt.pop = pop; rt.free = free_; rt.fail = fail;
}

void *plang_adapter_new(void) { return calloc(1, sizeof(launch_state)); }

void plang_adapter_delete(void *h) { free(h); }

void plang_adapter_begin(void *h, void *set) {
    launch_state *st = h;
    st->set = set; st->orphan_pipe = -1;
}

/* The first pipe the launch opened without a pipe set, or -1. */
int64_t plang_adapter_end(void *h) {
    launch_state *st = h;
    st->set = NULL;
    return st->orphan_pipe;
}

static void *get(void *h, int64_t pipe_id, int64_t slot_bytes, int64_t slots) {
    launch_state *st = h;
    (void)slots;
    void *p = st->set ? rt.get(st->set, pipe_id, slot_bytes, 0) : NULL;
    if (p) return p;
    if (st->set) rt.fail(st->set, DISAGREE, pipe_id, OP_OPEN);
    else if (st->orphan_pipe < 0) st->orphan_pipe = pipe_id;
    return &dead_pipe;
}

static int push(void *p, const void *src, int64_t nbytes) {
    return p == &dead_pipe ? ABORTED : rt.push(p, src, nbytes);
}

static int pop(void *p, void *dst, int64_t nbytes) {
    return p == &dead_pipe ? ABORTED : rt.pop(p, dst, nbytes);
}

static int release(void *p) { return p == &dead_pipe ? ABORTED : rt.free(p); }

const struct {
    void *(*get)(void *, int64_t, int64_t, int64_t);
    int (*push)(void *, const void *, int64_t);
    int (*pop)(void *, void *, int64_t);
    int (*free)(void *);
} plang_adapter_api = {get, push, pop, release};
