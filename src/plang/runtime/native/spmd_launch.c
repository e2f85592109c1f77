/* Native SPMD launches (plang.runtime.native_spmd): the blocks of one kernel launch run on
 * a pool of native threads and the calling thread at once, with no Python between them.
 *
 * `plang_spmd_run(pool, entry, arrays, contexts, n, lanes)` calls `entry(arrays[i])` for
 * every block i < n, at most `lanes` at a time (the caller is one lane, pool threads the
 * others), and returns once all have returned. The caller is expected to have released the
 * GIL (a ctypes call does). Blocks are handed out from an atomic counter, so a block never
 * runs twice. A block whose launch context reports a failed check (`status` != 0) sets its
 * cancel word to 1, so its siblings stop before they write again, as the scheduler's
 * `CancelToken` would.
 *
 * Waiting: a pool thread that finished spins (yielding the CPU) for up to SPIN_NS for the
 * next launch, then sleeps on a condition variable; the caller spins likewise for the last
 * block, then sleeps. Built with `cc -O2 -shared -fPIC -pthread`. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define SPIN_NS 200000

typedef void (*entry_fn)(void *);

/* The leading fields of the kernel ABI's LaunchContext (plang.codegen.kernel.abi). */
typedef struct {
    int64_t block_idx, block_num, subblock_idx, subblock_num;
    void *pipes, *pipe_api;
    int64_t *cancel;
    int64_t status;
} launch_context;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    int64_t threads;           /* pool threads started */
    int closing;
    /* the current launch */
    uint64_t generation;       /* bumped per launch; pool threads wait for a new one */
    entry_fn entry;
    void **arrays;
    launch_context **contexts;
    int64_t n, lanes;
    int64_t next;              /* next block to hand out (atomic) */
    int64_t left;              /* blocks not yet finished (atomic) */
    int64_t joined;            /* pool threads that joined this launch */
    int64_t active;            /* pool threads inside run_blocks (atomic) */
    pthread_t *handles;
} pool_t;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void signal_done(pool_t *p) {
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->lock);
}

static void run_blocks(pool_t *p) {
    for (;;) {
        int64_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_ACQ_REL);
        if (i >= p->n) return;
        p->entry(p->arrays[i]);
        launch_context *ctx = p->contexts[i];
        if (ctx->status != 0) __atomic_store_n(ctx->cancel, 1, __ATOMIC_RELEASE);
        if (__atomic_sub_fetch(&p->left, 1, __ATOMIC_ACQ_REL) == 0) signal_done(p);
    }
}

static void *pool_thread(void *arg) {
    pool_t *p = arg;
    uint64_t seen = 0;
    for (;;) {
        int64_t until = now_ns() + SPIN_NS;
        while (__atomic_load_n(&p->generation, __ATOMIC_ACQUIRE) == seen && !p->closing && now_ns() < until)
            sched_yield();
        pthread_mutex_lock(&p->lock);
        while (p->generation == seen && !p->closing) pthread_cond_wait(&p->wake, &p->lock);
        if (p->closing) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        seen = p->generation;
        /* join only while the launch wants more lanes than have joined (the caller is one) */
        int take = ++p->joined < p->lanes;
        if (take) __atomic_add_fetch(&p->active, 1, __ATOMIC_ACQ_REL);
        pthread_mutex_unlock(&p->lock);
        if (take) {
            run_blocks(p);
            if (__atomic_sub_fetch(&p->active, 1, __ATOMIC_ACQ_REL) == 0) signal_done(p);
        }
    }
}

void *plang_spmd_pool_new(int64_t threads) {
    pool_t *p = calloc(1, sizeof(pool_t));
    if (!p) return NULL;
    p->handles = calloc(threads > 0 ? threads : 1, sizeof(pthread_t));
    if (!p->handles) { free(p); return NULL; }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int64_t i = 0; i < threads; i++) {
        if (pthread_create(&p->handles[i], NULL, pool_thread, p) != 0) break;
        p->threads++;
    }
    return p;
}

int64_t plang_spmd_pool_threads(void *h) { return ((pool_t *)h)->threads; }

void plang_spmd_run(void *h, void *entry, void **arrays, void **contexts, int64_t n, int64_t lanes) {
    pool_t *p = h;
    pthread_mutex_lock(&p->lock);
    /* a thread that joined the last launch late may still be leaving run_blocks */
    while (__atomic_load_n(&p->active, __ATOMIC_ACQUIRE) != 0) pthread_cond_wait(&p->done, &p->lock);
    p->entry = (entry_fn)entry;
    p->arrays = arrays;
    p->contexts = (launch_context **)contexts;
    p->n = n;
    p->lanes = lanes;
    p->next = 0;
    p->left = n;
    p->joined = 0;
    __atomic_add_fetch(&p->generation, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_blocks(p);
    int64_t until = now_ns() + SPIN_NS;
    while (__atomic_load_n(&p->left, __ATOMIC_ACQUIRE) != 0 && now_ns() < until) sched_yield();
    pthread_mutex_lock(&p->lock);
    while (__atomic_load_n(&p->left, __ATOMIC_ACQUIRE) != 0 || __atomic_load_n(&p->active, __ATOMIC_ACQUIRE) != 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

void plang_spmd_pool_delete(void *h) {
    pool_t *p = h;
    pthread_mutex_lock(&p->lock);
    p->closing = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int64_t i = 0; i < p->threads; i++) pthread_join(p->handles[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->handles);
    free(p);
}
