/* Bounded ring-buffer pipes between the AIC and AIV kernels of one Group instance.
 * See plang/runtime/pipes.py for the contract. Built with `cc -O2 -shared -fPIC -pthread`. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PIPE_OK = 0, PIPE_TIMEOUT = 1, PIPE_ABORTED = 2, PIPE_BAD_SIZE = 3, PIPE_NOT_POPPED = 4 };
/* 5 (ends disagree on the slot size) is recorded through plang_pipeset_fail. */
enum { OP_PUSH = 1, OP_POP = 2, OP_FREE = 3 };

struct pipeset;

typedef struct pipe {
    struct pipeset *set;
    int64_t id, slots, slot_bytes;
    int64_t head;    /* oldest slot still owned by the consumer side (popped or not) */
    int64_t filled;  /* slots pushed and not yet freed */
    int64_t popped;  /* of those, slots popped and not yet freed */
    char *buf;
    struct pipe *next;
} pipe_t;

typedef struct pipeset {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double timeout_s;
    int64_t slots;    /* ring depth of a pipe opened with slots <= 0 (the Group's slot count) */
    int aborted;
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
    while (p) { pipe_t *n = p->next; free(p->buf); free(p); p = n; }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* Abort from outside (a member failed with its own error): recorded as the set's first
 * failure, so a pipe error it provokes in the other members never hides it. */
void plang_pipeset_abort(void *h) {
    pipeset_t *s = h;
    pthread_mutex_lock(&s->mu);
    if (!s->status) { s->status = PIPE_ABORTED; s->fail_pipe = -1; s->fail_op = 0; }
    s->aborted = 1;
    pthread_cond_broadcast(&s->cv);
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
            p->next = s->pipes; s->pipes = p;
        } else if (p) { free(p); p = NULL; }
    }
    pthread_mutex_unlock(&s->mu);
    return p;
}

static void fail(pipeset_t *s, int status, int64_t id, int op) {
    if (!s->status) { s->status = status; s->fail_pipe = id; s->fail_op = op; }
    s->aborted = 1;
    pthread_cond_broadcast(&s->cv);
}

/* Record a failure seen outside the rings (e.g. by a kernel adapter) and abort the set. */
void plang_pipeset_fail(void *h, int status, int64_t pipe_id, int op) {
    pipeset_t *s = h;
    pthread_mutex_lock(&s->mu);
    fail(s, status, pipe_id, op);
    pthread_mutex_unlock(&s->mu);
}

/* Wait (mutex held) until ready(p) holds; returns PIPE_OK, PIPE_TIMEOUT or PIPE_ABORTED. */
static int wait_until(pipe_t *p, int (*ready)(pipe_t *), int op) {
    pipeset_t *s = p->set;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    double whole = (double)(int64_t)s->timeout_s;
    deadline.tv_sec += (time_t)whole;
    deadline.tv_nsec += (long)((s->timeout_s - whole) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec += 1; deadline.tv_nsec -= 1000000000L; }
    while (!ready(p)) {
        if (s->aborted) return PIPE_ABORTED;
        if (pthread_cond_timedwait(&s->cv, &s->mu, &deadline) == ETIMEDOUT && !ready(p)) {
            fail(s, PIPE_TIMEOUT, p->id, op);
            return PIPE_TIMEOUT;
        }
    }
    return s->aborted ? PIPE_ABORTED : PIPE_OK;
}

static int has_room(pipe_t *p) { return p->filled < p->slots; }
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
        pthread_cond_broadcast(&s->cv);
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
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}
