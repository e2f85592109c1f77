/* Bounded ring-buffer pipes between the AIC and AIV kernels of one Group instance.
 * See plang/runtime/pipes.py for the contract. Built with `cc -O2 -shared -fPIC -pthread`. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PIPE_OK = 0, PIPE_TIMEOUT = 1, PIPE_ABORTED = 2, PIPE_BAD_SIZE = 3, PIPE_NOT_POPPED = 4,
       PIPE_CLOSED = 6, PIPE_WOULD_BLOCK = 7 };
/* 5 (ends disagree on the slot size) is recorded through plang_pipeset_fail. */
enum { OP_PUSH = 1, OP_POP = 2, OP_FREE = 3, OP_RESERVE = 5, OP_COMMIT = 6 };

struct pipeset;

typedef struct pipe {
    struct pipeset *set;
    int64_t id, slots, slot_bytes;
    int64_t head;    /* oldest slot still owned by the consumer side (popped or not) */
    int64_t filled;  /* slots pushed and not yet freed */
    int64_t popped;  /* of those, slots popped and not yet freed */
    int64_t reserved; /* slots after `filled` the producer holds (reserve_ref, not committed) */
    char *buf;
    pthread_cond_t cv; /* waits on this pipe (ops wake only its own waiters) */
    struct pipe *next;
} pipe_t;

typedef struct pipeset {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double timeout_s;
    int64_t slots;    /* ring depth of a pipe opened with slots <= 0 (the Group's slot count) */
    int aborted;
    int closed;       /* the run ended (plang_pipeset_close): waits return PIPE_CLOSED */
    int status;       /* first failure: PIPE_TIMEOUT / PIPE_BAD_SIZE / ... */
    int64_t fail_pipe;
    int fail_op;
    pipe_t *pipes;
} pipeset_t;

void *plang_pipeset_create(double timeout_s, int64_t slots) {
    if (slots <= 0) return NULL;
    pipeset_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->timeout_s = timeout_s;
    s->slots = slots;
    return s;
}

void plang_pipeset_destroy(void *h) {
    pipeset_t *s = h;
    if (!s) return;
    pipe_t *p = s->pipes;
    while (p) { pipe_t *n = p->next; pthread_cond_destroy(&p->cv); free(p->buf); free(p); p = n; }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Wake every waiter of the set (mutex held): abort, failure and close concern all pipes. */
static void wake_all(pipeset_t *s) {
    pthread_cond_broadcast(&s->cv);
    for (pipe_t *p = s->pipes; p; p = p->next) pthread_cond_broadcast(&p->cv);
}

/* Abort from outside (a member failed with its own error): recorded as the set's first
 * failure, so a pipe error it provokes in the other members never hides it. */
void plang_pipeset_abort(void *h) {
    pipeset_t *s = h;
    pthread_mutex_lock(&s->mu);
    if (!s->status) { s->status = PIPE_ABORTED; s->fail_pipe = -1; s->fail_op = 0; }
    s->aborted = 1;
    wake_all(s);
    pthread_mutex_unlock(&s->mu);
}

int plang_pipeset_status(void *h, int64_t *pipe_id, int *op) {
    pipeset_t *s = h;
    pthread_mutex_lock(&s->mu);
    int st = s->status;
    if (pipe_id) *pipe_id = s->fail_pipe;
    if (op) *op = s->fail_op;
    pthread_mutex_unlock(&s->mu);
    return st;
}

void *plang_pipeset_get(void *h, int64_t pipe_id, int64_t slot_bytes, int64_t slots) {
    pipeset_t *s = h;
    if (slots <= 0) slots = s->slots;
    if (slot_bytes <= 0) return NULL;
    pthread_mutex_lock(&s->mu);
    pipe_t *p = s->pipes;
    while (p && p->id != pipe_id) p = p->next;
    if (p) {
        if (p->slot_bytes != slot_bytes || p->slots != slots) p = NULL;
    } else {
        p = calloc(1, sizeof *p);
        if (p) p->buf = malloc((size_t)(slot_bytes * slots));
        if (p && p->buf) {
            p->set = s; p->id = pipe_id; p->slots = slots; p->slot_bytes = slot_bytes;
            pthread_cond_init(&p->cv, NULL);
            p->next = s->pipes; s->pipes = p;
        } else if (p) { free(p); p = NULL; }
    }
    pthread_mutex_unlock(&s->mu);
    return p;
}

static void fail(pipeset_t *s, int status, int64_t id, int op) {
    if (!s->status) { s->status = status; s->fail_pipe = id; s->fail_op = op; }
    s->aborted = 1;
    wake_all(s);
}

/* Record a failure seen outside the rings (e.g. by a kernel adapter) and abort the set. */
void plang_pipeset_fail(void *h, int status, int64_t pipe_id, int op) {
    pipeset_t *s = h;
    pthread_mutex_lock(&s->mu);
    fail(s, status, pipe_id, op);
    pthread_mutex_unlock(&s->mu);
}

/* Wait (mutex held) until ready(p) holds; returns PIPE_OK, PIPE_TIMEOUT or PIPE_ABORTED. */
/* How long a wait polls (yielding the CPU) before it sleeps: $PLANG_PIPE_SPIN_US, default
   200 us. The two sides of a pipe hand tiles back and forth; a short poll sees the other
   side's push far sooner than a sleeping thread is woken. */
static long spin_ns(void) {
    static long v = -1;
    if (v < 0) {
        const char *e = getenv("PLANG_PIPE_SPIN_US");
        v = (e && *e ? atol(e) : 200) * 1000L;
        if (v < 0) v = 0;
    }
    return v;
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int wait_until(pipe_t *p, int (*ready)(pipe_t *), int op) {
    pipeset_t *s = p->set;
    if (!ready(p) && spin_ns() > 0) {
        int64_t end = now_ns() + spin_ns();
        while (!ready(p) && !s->aborted && !s->closed && now_ns() < end) {
            pthread_mutex_unlock(&s->mu);
            sched_yield();
            pthread_mutex_lock(&s->mu);
        }
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    double whole = (double)(int64_t)s->timeout_s;
    deadline.tv_sec += (time_t)whole;
    deadline.tv_nsec += (long)((s->timeout_s - whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec += 1; deadline.tv_nsec -= 1000000000L; }
    while (!ready(p)) {
        if (s->aborted) return PIPE_ABORTED;
        if (s->closed) return PIPE_CLOSED;
        if (pthread_cond_timedwait(&p->cv, &s->mu, &deadline) == ETIMEDOUT && !ready(p)) {
            fail(s, PIPE_TIMEOUT, p->id, op);
            return PIPE_TIMEOUT;
        }
    }
    return s->aborted ? PIPE_ABORTED : PIPE_OK;
}

static int has_room(pipe_t *p) { return p->filled + p->reserved < p->slots; }
static int has_unpopped(pipe_t *p) { return p->filled > p->popped; }

int plang_pipe_push(void *h, const void *src, int64_t nbytes) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    pthread_mutex_lock(&s->mu);
    int rc = nbytes > p->slot_bytes ? PIPE_BAD_SIZE : wait_until(p, has_room, OP_PUSH);
    if (rc == PIPE_BAD_SIZE) fail(s, rc, p->id, OP_PUSH);
    if (rc == PIPE_OK) {
        int64_t tail = (p->head + p->filled) % p->slots;
        pthread_mutex_unlock(&s->mu);  /* the slot is ours until `filled` grows */
        memcpy(p->buf + tail * p->slot_bytes, src, (size_t)nbytes);
        pthread_mutex_lock(&s->mu);
        p->filled += 1;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int plang_pipe_pop_ref(void *h, void **slot) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    pthread_mutex_lock(&s->mu);
    int rc = wait_until(p, has_unpopped, OP_POP);
    if (rc == PIPE_OK) {
        *slot = p->buf + ((p->head + p->popped) % p->slots) * p->slot_bytes;
        p->popped += 1;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int plang_pipe_pop(void *h, void *dst, int64_t nbytes) {
    pipe_t *p = h;
    if (nbytes > p->slot_bytes) {
        pthread_mutex_lock(&p->set->mu);
        fail(p->set, PIPE_BAD_SIZE, p->id, OP_POP);
        pthread_mutex_unlock(&p->set->mu);
        return PIPE_BAD_SIZE;
    }
    void *slot = NULL;
    int rc = plang_pipe_pop_ref(h, &slot);
    if (rc == PIPE_OK) memcpy(dst, slot, (size_t)nbytes);
    return rc;
}

int plang_pipe_free(void *h) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    pthread_mutex_lock(&s->mu);
    int rc = PIPE_OK;
    if (p->popped == 0 && s->aborted) {
        rc = PIPE_ABORTED;  /* the matching pop was aborted: not a misuse of its own */
    } else if (p->popped == 0) {
        rc = PIPE_NOT_POPPED;
        fail(s, rc, p->id, OP_FREE);
    } else {
        p->head = (p->head + 1) % p->slots;
        p->popped -= 1;
        p->filled -= 1;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* End of run: every wait that is not satisfied returns PIPE_CLOSED (not a failure). */
void plang_pipeset_close(void *h) {
    pipeset_t *s = h;
    pthread_mutex_lock(&s->mu);
    s->closed = 1;
    wake_all(s);
    pthread_mutex_unlock(&s->mu);
}

/* Zero-copy push: *slot is the next free slot (blocks while none is free), the producer's
 * until plang_pipe_commit publishes it; several may be reserved, committed in order. */
int plang_pipe_reserve_ref(void *h, void **slot) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    pthread_mutex_lock(&s->mu);
    int rc = wait_until(p, has_room, OP_RESERVE);
    if (rc == PIPE_OK) {
        *slot = p->buf + ((p->head + p->filled + p->reserved) % p->slots) * p->slot_bytes;
        p->reserved += 1;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int plang_pipe_commit(void *h) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    pthread_mutex_lock(&s->mu);
    int rc = PIPE_OK;
    if (p->reserved == 0) {
        rc = s->aborted ? PIPE_ABORTED : PIPE_NOT_POPPED;
        if (rc == PIPE_NOT_POPPED) fail(s, rc, p->id, OP_COMMIT);
    } else {
        p->reserved -= 1;
        p->filled += 1;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static int bad_size(pipe_t *p, int64_t nbytes, int op) {
    if (nbytes <= p->slot_bytes) return 0;
    pthread_mutex_lock(&p->set->mu);
    fail(p->set, PIPE_BAD_SIZE, p->id, op);
    pthread_mutex_unlock(&p->set->mu);
    return 1;
}

/* Push `count` objects of `nbytes` laid out back to back at src (one call, GIL released):
 * each wait takes every free slot at once and copies into them outside the lock. */
int plang_pipe_push_many(void *h, const void *src, int64_t count, int64_t nbytes) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    const char *at = src;
    if (bad_size(p, nbytes, OP_PUSH)) return PIPE_BAD_SIZE;
    pthread_mutex_lock(&s->mu);
    while (count > 0) {
        int rc = wait_until(p, has_room, OP_PUSH);
        if (rc) { pthread_mutex_unlock(&s->mu); return rc; }
        int64_t n = p->slots - p->filled - p->reserved, first = p->head + p->filled + p->reserved;
        if (n > count) n = count;
        p->reserved += n;  /* ours until committed below */
        pthread_mutex_unlock(&s->mu);
        for (int64_t k = 0; k < n; ++k)
            memcpy(p->buf + ((first + k) % p->slots) * p->slot_bytes, at + k * nbytes, (size_t)nbytes);
        pthread_mutex_lock(&s->mu);
        p->reserved -= n;
        p->filled += n;
        pthread_cond_broadcast(&p->cv);
        at += n * nbytes;
        count -= n;
    }
    pthread_mutex_unlock(&s->mu);
    return PIPE_OK;
}

/* Pop and free `count` objects of `nbytes` into dst, back to back (every published slot per
 * wait, copied outside the lock). */
int plang_pipe_pop_many(void *h, void *dst, int64_t count, int64_t nbytes) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    char *at = dst;
    if (bad_size(p, nbytes, OP_POP)) return PIPE_BAD_SIZE;
    pthread_mutex_lock(&s->mu);
    while (count > 0) {
        int rc = wait_until(p, has_unpopped, OP_POP);
        if (rc) { pthread_mutex_unlock(&s->mu); return rc; }
        int64_t n = p->filled - p->popped, first = p->head + p->popped;
        if (n > count) n = count;
        p->popped += n;
        pthread_mutex_unlock(&s->mu);
        for (int64_t k = 0; k < n; ++k)
            memcpy(at + k * nbytes, p->buf + ((first + k) % p->slots) * p->slot_bytes, (size_t)nbytes);
        pthread_mutex_lock(&s->mu);
        p->head = (p->head + n) % p->slots;
        p->popped -= n;
        p->filled -= n;
        pthread_cond_broadcast(&p->cv);
        at += n * nbytes;
        count -= n;
    }
    pthread_mutex_unlock(&s->mu);
    return PIPE_OK;
}

/* Non-blocking reserve_ref / pop_ref: PIPE_WOULD_BLOCK (7) instead of waiting, so a caller
 * that holds a language lock (the GIL) can try first and release it only to wait. */
int plang_pipe_try_reserve_ref(void *h, void **slot) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    pthread_mutex_lock(&s->mu);
    int rc = s->aborted ? PIPE_ABORTED : has_room(p) ? PIPE_OK : PIPE_WOULD_BLOCK;
    if (rc == PIPE_OK) {
        *slot = p->buf + ((p->head + p->filled + p->reserved) % p->slots) * p->slot_bytes;
        p->reserved += 1;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int plang_pipe_try_pop_ref(void *h, void **slot) {
    pipe_t *p = h;
    pipeset_t *s = p->set;
    pthread_mutex_lock(&s->mu);
    int rc = s->aborted ? PIPE_ABORTED : has_unpopped(p) ? PIPE_OK : PIPE_WOULD_BLOCK;
    if (rc == PIPE_OK) {
        *slot = p->buf + ((p->head + p->popped) % p->slots) * p->slot_bytes;
        p->popped += 1;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}
