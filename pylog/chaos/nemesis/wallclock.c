/* Fake only the wall clock of one process (LD_PRELOAD), for pylog's clock nemesis.
 *
 * The file named by PYLOG_WALLCLOCK_FILE holds "OFFSET RATE" (seconds, factor). When it changes,
 * the wall clock jumps by OFFSET from true time and from then on runs RATE times as fast:
 *     fake = real + OFFSET + (RATE - 1) * (real - real_when_read)
 * "0 1" is the true time. The file is re-read at most every 100 ms of CLOCK_MONOTONIC, which is
 * never faked, nor is any sleep or timed wait: only clock_gettime(CLOCK_REALTIME*), gettimeofday
 * and time() are intercepted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int (*real_gettime)(clockid_t, struct timespec *);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double offset = 0.0, rate = 1.0, since = 0.0, next_read = 0.0;
static char last[64] = "";

static double seconds(const struct timespec *t) { return (double)t->tv_sec + t->tv_nsec / 1e9; }

static void reread(double mono, double real) {
    const char *path = getenv("PYLOG_WALLCLOCK_FILE");
    char buf[64] = "";
    if (path == NULL || mono < next_read) return;
    next_read = mono + 0.1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    for (int i = 0; i < (int)sizeof buf; i++) {
        if (buf[i] != last[i]) break;
        if (buf[i] == 0) return; /* unchanged */
    }
    char *end;
    double o = strtod(buf, &end), r = strtod(end, NULL);
    offset = o;
    rate = r > 0 ? r : 1.0;
    since = real;
    for (int i = 0; i < (int)sizeof buf; i++) last[i] = buf[i];
}

static void fake(struct timespec *t) {
    struct timespec m;
    real_gettime(CLOCK_MONOTONIC, &m);
    pthread_mutex_lock(&lock);
    double real = seconds(t);
    reread(seconds(&m), real);
    double f = real + offset + (rate - 1.0) * (real - since);
    pthread_mutex_unlock(&lock);
    t->tv_sec = (time_t)f;
    t->tv_nsec = (long)((f - (double)t->tv_sec) * 1e9);
    if (t->tv_nsec < 0) { t->tv_sec -= 1; t->tv_nsec += 1000000000L; }
}

int clock_gettime(clockid_t clk, struct timespec *t) {
    if (real_gettime == NULL) real_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real_gettime(clk, t);
    if (rc == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)) fake(t);
    return rc;
}

int gettimeofday(struct timeval *tv, void *tz) {
    struct timespec t;
    (void)tz;
    clock_gettime(CLOCK_REALTIME, &t);
    tv->tv_sec = t.tv_sec;
    tv->tv_usec = t.tv_nsec / 1000;
    return 0;
}

time_t time(time_t *out) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    if (out != NULL) *out = t.tv_sec;
    return t.tv_sec;
}
