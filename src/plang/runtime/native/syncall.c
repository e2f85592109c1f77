/* `pl.system.syncall`: the barrier across every participant of one launch (see
 * plang/runtime/barriers.py for the contract). Built with `cc -O2 -shared -fPIC -pthread`.
 *
 * Both forms count arrivals in a monotonic counter: an arrival takes ticket `t` (the
 * counter's value before its increment) and is released once the counter reaches
 * (t / n + 1) * n, so the same counter serves any number of barriers in a row. The hard
 * form's counters (one per core_type) live in the launch's barrier state and n comes from
 * the launch's geometry; the soft form's counter is element 0 of the user's INT32
 * gm_workspace and n is its used_cores (0: the launch's geometry). Waiters sleep on the
 * launch's condition variable in short slices, so arrivals from elsewhere, a cancel word
 * set by the watchdog and the deadline are all noticed. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

enum { OK = 0, TIMEOUT = 1, ABORTED = 2, NO_BARRIER = 3, NO_PARTICIPANTS = 4, BAD_COUNT = 5 };
enum { STATUS_SYNCALL = 2 };        /* LaunchContext.status of a failed barrier */
enum { AIV_ONLY = 0, AIC_ONLY = 1, MIX = 2 };
#define SOFT 4
#define CALLER_AIC 8
#define SLICE_NS 2000000L           /* re-check the counter, cancel word and deadline this often */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double timeout_s;
    int64_t aic, aiv;               /* the launch's participants of each core type */
    int64_t hard[3];                /* hard-form arrival counters, by core_type */
    int aborted;
} barrier_t;

void *plang_barrier_create(double timeout_s, int64_t aic, int64_t aiv) {
    barrier_t *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    b->timeout_s = timeout_s; b->aic = aic; b->aiv = aiv;
    return b;
}

void plang_barrier_destroy(void *h) {
    barrier_t *b = h;
    if (!b) return;
    pthread_cond_destroy(&b->cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

/* Wake every waiter with ABORTED (a participant failed or the launch was cancelled). */
void plang_barrier_abort(void *h) {
    barrier_t *b = h;
    pthread_mutex_lock(&b->mu);
    b->aborted = 1;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

static int64_t participants(const barrier_t *b, int64_t core_type) {
    return core_type == AIV_ONLY ? b->aiv : core_type == AIC_ONLY ? b->aic : b->aic + b->aiv;
}

static int64_t load(const volatile int32_t *ws, const int64_t *hard) {
    return ws ? (int64_t)__atomic_load_n(ws, __ATOMIC_ACQUIRE) : __atomic_load_n(hard, __ATOMIC_ACQUIRE);
}

static int after(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

static void add_ns(struct timespec *t, long ns) {
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) { t->tv_sec += 1; t->tv_nsec -= 1000000000L; }
}

/* record: the launch context's {status, check_site, check_axis, check_offset, check_extent}:
 * a failure of this barrier stores STATUS_SYNCALL, the site, the reason, the arrivals and the
 * participant count there (unless a failure is recorded already). Either way a nonzero
 * result sets *cancel, so the kernel stops before it writes again. */
static int finish(int rc, volatile int64_t *cancel, int64_t *record, int64_t site, int64_t arrived,
                  int64_t n) {
    if (rc == OK) return OK;
    if (rc != ABORTED && record[0] == 0) {
        record[0] = STATUS_SYNCALL; record[1] = site; record[2] = rc; record[3] = arrived; record[4] = n;
    }
    *cancel = 1;
    return rc;
}

int plang_syncall(void *h, volatile int64_t *cancel, int64_t *record, int64_t site, int64_t kind,
                  volatile int32_t *ws, int64_t used) {
    barrier_t *b = h;
    int64_t core_type = kind & 3, soft = kind & SOFT, caller_aic = kind & CALLER_AIC;
    if (*cancel) return finish(ABORTED, cancel, record, site, 0, 0);
    if (!b) return finish(NO_BARRIER, cancel, record, site, 0, 0);
    int64_t n = soft && used ? used : participants(b, core_type);
    if (soft && used < 0) return finish(BAD_COUNT, cancel, record, site, 0, used);
    if (n <= 0 || (core_type != MIX && (core_type == AIC_ONLY) != (caller_aic != 0)))
        return finish(NO_PARTICIPANTS, cancel, record, site, 0, n);
    int64_t *hard = &b->hard[core_type];
    int64_t ticket = soft ? (int64_t)__atomic_fetch_add(ws, 1, __ATOMIC_ACQ_REL)
                          : __atomic_fetch_add(hard, 1, __ATOMIC_ACQ_REL);
    int64_t target = (ticket / n + 1) * n;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    add_ns(&deadline, (long)(b->timeout_s * 1e9));
    int rc = OK;
    pthread_mutex_lock(&b->mu);
    pthread_cond_broadcast(&b->cv);
    while (load(soft ? ws : NULL, hard) < target) {
        if (b->aborted || *cancel) { rc = ABORTED; break; }
        struct timespec now, until;
        clock_gettime(CLOCK_REALTIME, &now);
        if (after(&now, &deadline)) {
            rc = TIMEOUT;
            b->aborted = 1;  /* the other waiters stop too: this one reports the deadlock */
            pthread_cond_broadcast(&b->cv);
            break;
        }
        until = now;
        add_ns(&until, SLICE_NS);
        if (after(&until, &deadline)) until = deadline;
        pthread_cond_timedwait(&b->cv, &b->mu, &until);
    }
    pthread_mutex_unlock(&b->mu);
    return finish(rc, cancel, record, site, load(soft ? ws : NULL, hard) - (target - n), n);
}
