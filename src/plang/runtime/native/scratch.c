/* Kernel scratch (plang.runtime.scratch): the large buffers a kernel takes at entry and gives
 * back at exit (a matmul's packed B panels, codegen/kernel/pack_cache.py), kept per thread
 * between calls. Taken from malloc and freed each call, a buffer of a MiB or more goes back
 * to the OS at every free, and the next call faults each of its pages in again and the OS
 * zeroes them: 5.6% of an 8x512x512x64 FP32 attention's time on one core of the 2-vCPU VM.
 *
 * `plang_scratch_acquire(bytes)` returns a 64-byte aligned buffer (NULL when there is no
 * memory): the smallest the calling thread keeps that is large enough, else a new one.
 * `plang_scratch_release(p)` keeps `p` for the calling thread while its kept buffers stay
 * within SLOTS buffers and RETAIN_BYTES (dropping smaller ones to make room), else frees it.
 * A thread's buffers are freed when it exits. A buffer may be released on another thread
 * than the one that acquired it. `plang_scratch_kept()` is the calling thread's kept bytes. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define SLOTS 8
#define RETAIN_BYTES ((int64_t)32 << 20)
#define HEADER 64 /* holds the buffer's capacity; keeps the data 64-byte aligned */

typedef struct {
    void *buf[SLOTS];
    int64_t cap[SLOTS];
    int n;
    int64_t kept;
} cache_t;

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void free_cache(void *arg) {
    cache_t *c = arg;
    for (int i = 0; i < c->n; i++) free((char *)c->buf[i] - HEADER);
    free(c);
}

static void make_key(void) { pthread_key_create(&key, free_cache); }

static cache_t *cache(void) {
    pthread_once(&once, make_key);
    cache_t *c = pthread_getspecific(key);
    if (!c && (c = calloc(1, sizeof(cache_t))) && pthread_setspecific(key, c) != 0) {
        free(c);
        c = NULL;
    }
    return c;
}

static void drop(cache_t *c, int i) {
    c->kept -= c->cap[i];
    c->n--;
    c->buf[i] = c->buf[c->n];
    c->cap[i] = c->cap[c->n];
}

void *plang_scratch_acquire(int64_t bytes) {
    if (bytes < 0 || bytes > INT64_MAX - 2 * HEADER) return NULL;
    int64_t need = (bytes + HEADER - 1) / HEADER * HEADER;
    cache_t *c = cache();
    int best = -1;
    for (int i = 0; c && i < c->n; i++)
        if (c->cap[i] >= need && (best < 0 || c->cap[i] < c->cap[best])) best = i;
    if (best >= 0) {
        void *p = c->buf[best];
        drop(c, best);
        return p;
    }
    char *raw = aligned_alloc(HEADER, (size_t)(need + HEADER));
    if (!raw) return NULL;
    *(int64_t *)raw = need;
    return raw + HEADER;
}

void plang_scratch_release(void *p) {
    if (!p) return;
    int64_t cap = *(int64_t *)((char *)p - HEADER);
    cache_t *c = cache();
    while (c && cap <= RETAIN_BYTES && (c->n == SLOTS || c->kept + cap > RETAIN_BYTES)) {
        int smallest = 0;
        for (int i = 1; i < c->n; i++)
            if (c->cap[i] < c->cap[smallest]) smallest = i;
        if (c->cap[smallest] >= cap) break;
        free((char *)c->buf[smallest] - HEADER);
        drop(c, smallest);
    }
    if (c && cap <= RETAIN_BYTES && c->n < SLOTS && c->kept + cap <= RETAIN_BYTES) {
        c->buf[c->n] = p;
        c->cap[c->n++] = cap;
        c->kept += cap;
    } else {
        free((char *)p - HEADER);
    }
}

int64_t plang_scratch_kept(void) {
    cache_t *c = cache();
    return c ? c->kept : 0;
}
