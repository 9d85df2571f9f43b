/*
 * A plain PMIx client for the ucftrun integration tests (PMIx only, no ucft
 * runtime). Every mode first checks the job info it is given and does a
 * full modex (Put, Commit, Fence with PMIX_COLLECT_DATA, Get of every
 * peer's value); then:
 *
 *   fence            print "rank R ok" and finalize
 *   death HOW        the highest rank dies (HOW = kill: SIGKILL itself;
 *                    exit3: exit(3); nofin: exit(0) without PMIx_Finalize;
 *                    fin: finalize and exit 0); the others must receive the
 *                    matching event naming it within 5 s
 *   survive K        rank K sleeps (the launcher kills it); the others must
 *                    be told that K was killed by a signal within 10 s
 *   exit C K [sleep] rank K exits with status C, the others finalize (or
 *                    sleep 60 s first, to be killed by --abort-on-failure)
 *   abort S          rank 0 calls PMIx_Abort(S), the others sleep
 *   sleep            print "rank R pid P tmpdir D" and sleep 60 s
 *   print L          print L numbered lines of 100 characters, in bursts
 *
 * Set UCFT_TEST_EXPECT_BIND=1 to require PMIX_CPUSET/PMIX_LOCALITY_STRING
 * and a CPU affinity equal to PMIX_CPUSET. Exit status 0 means all checks
 * passed; a failed check prints "rank R FAIL: why" on stderr, exits 1.
 */
#include <pmix.h>

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct client {
    pmix_proc_t me;
    uint32_t size;
    int evpipe[2]; /* the event handlers write the event here */
} client_t;

typedef struct event_msg {
    pmix_status_t status;
    int affected; /* rank, -1 if none */
    int exit_code;
    int is_default; /* delivered to the catch-all handler */
} event_msg_t;

static void fail(const client_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void fail(const client_t *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "rank %d FAIL: %s\n", (int)c->me.rank, msg);
    _exit(1);
}

static pmix_value_t *get(const client_t *c, pmix_rank_t rank, const char *key,
                         int optional)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_info_t info;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&p, c->me.nspace, rank);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, NULL, PMIX_BOOL);
    rc = PMIx_Get(&p, key, optional ? &info : NULL, optional ? 1 : 0, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        if (optional)
            return NULL;
        fail(c, "PMIx_Get(%s, rank %u): %s", key, rank, PMIx_Error_string(rc));
    }
    return v;
}

static uint64_t get_uint(const client_t *c, pmix_rank_t rank, const char *key)
{
    pmix_value_t *v = get(c, rank, key, 0);
    uint64_t x;

    switch (v->type) {
    case PMIX_UINT32:
        x = v->data.uint32;
        break;
    case PMIX_UINT16:
        x = v->data.uint16;
        break;
    case PMIX_UINT64:
        x = v->data.uint64;
        break;
    default:
        fail(c, "%s has type %d", key, (int)v->type);
    }
    PMIX_VALUE_RELEASE(v);
    return x;
}

/* Parses "0-2,5" (an optional "hwloc:" prefix allowed) into a cpu set. */
static int parse_cpulist(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    if (strncmp(s, "hwloc:", 6) == 0)
        s += 6;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b;

        if (end == s)
            return -1;
        b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long i = a; i <= b && i < CPU_SETSIZE; i++)
            CPU_SET((int)i, set);
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return 0;
}

static void check_job_info(client_t *c)
{
    pmix_rank_t r = c->me.rank;
    char host[256] = "";
    pmix_value_t *v;
    const char *bind = getenv("UCFT_TEST_EXPECT_BIND");

    c->size = (uint32_t)get_uint(c, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    if (c->size == 0 || r >= c->size)
        fail(c, "rank %u but job size %u", r, c->size);
    if (get_uint(c, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE) != c->size ||
        get_uint(c, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE) != c->size)
        fail(c, "universe or local size differs from the job size");
    if (get_uint(c, PMIX_RANK_WILDCARD, PMIX_NUM_NODES) != 1)
        fail(c, "PMIX_NUM_NODES is not 1");
    if (get_uint(c, r, PMIX_LOCAL_RANK) != r ||
        get_uint(c, r, PMIX_NODE_RANK) != r)
        fail(c, "local or node rank is not %u", r);
    if (get_uint(c, r, PMIX_NODEID) != 0)
        fail(c, "node id is not 0");
    gethostname(host, sizeof(host) - 1);
    v = get(c, r, PMIX_HOSTNAME, 0);
    if (v->type != PMIX_STRING || strcmp(v->data.string, host) != 0)
        fail(c, "hostname is not %s", host);
    PMIX_VALUE_RELEASE(v);
    v = get(c, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, 0);
    if (v->type != PMIX_STRING || strncmp(v->data.string, "0", 1) != 0)
        fail(c, "bad PMIX_LOCAL_PEERS");
    PMIX_VALUE_RELEASE(v);

    v = get(c, r, PMIX_CPUSET, 1);
    if (bind != NULL && strcmp(bind, "1") == 0) {
        cpu_set_t want, have;
        pmix_value_t *loc = get(c, r, PMIX_LOCALITY_STRING, 1);

        if (v == NULL || v->type != PMIX_STRING || v->data.string == NULL)
            fail(c, "no PMIX_CPUSET although bound");
        if (loc == NULL || loc->type != PMIX_STRING ||
            loc->data.string == NULL || strstr(loc->data.string, "CR") == NULL)
            fail(c, "no PMIX_LOCALITY_STRING although bound");
        if (parse_cpulist(v->data.string, &want) != 0 ||
            sched_getaffinity(0, sizeof(have), &have) != 0 ||
            !CPU_EQUAL(&want, &have))
            fail(c, "affinity differs from PMIX_CPUSET %s", v->data.string);
        printf("rank %u cpuset %s locality %s\n", r, v->data.string,
               loc->data.string);
        PMIX_VALUE_RELEASE(loc);
    } else if (v != NULL && v->type == PMIX_STRING && v->data.string != NULL) {
        fail(c, "PMIX_CPUSET %s although not bound", v->data.string);
    }
    if (v != NULL)
        PMIX_VALUE_RELEASE(v);
}

static void modex(client_t *c)
{
    pmix_value_t val;
    pmix_proc_t all;
    pmix_info_t info;
    bool yes = true;
    pmix_status_t rc;

    val.type = PMIX_UINT64;
    val.data.uint64 = 1000u * c->me.rank + 7;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "ucft.test", &val)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS)
        fail(c, "Put/Commit: %s", PMIx_Error_string(rc));
    PMIX_LOAD_PROCID(&all, c->me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(&all, 1, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        fail(c, "Fence: %s", PMIx_Error_string(rc));
    for (uint32_t r = 0; r < c->size; r++) {
        uint64_t x = get_uint(c, r, "ucft.test");
        if (x != 1000u * r + 7)
            fail(c, "rank %u's value is %llu", r, (unsigned long long)x);
    }
}

static void on_event(client_t *c, pmix_status_t st, pmix_info_t info[],
                     size_t ninfo, int is_default)
{
    event_msg_t m = {.status = st, .affected = -1, .is_default = is_default};

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
            info[i].value.type == PMIX_PROC)
            m.affected = (int)info[i].value.data.proc->rank;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE))
            m.exit_code = info[i].value.data.integer;
    }
    (void)!write(c->evpipe[1], &m, sizeof(m));
}

/* The handlers get `c` through the registration's PMIX_EVENT_RETURN_OBJECT. */
static void specific_handler(size_t id, pmix_status_t st,
                             const pmix_proc_t *src, pmix_info_t info[],
                             size_t ninfo, pmix_info_t *res, size_t nres,
                             pmix_event_notification_cbfunc_fn_t cbfunc,
                             void *cbdata)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT))
            on_event(info[i].value.data.ptr, st, info, ninfo, 0);
    }
    if (cbfunc != NULL) /* let the default handler see it too */
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void default_handler(size_t id, pmix_status_t st, const pmix_proc_t *src,
                            pmix_info_t info[], size_t ninfo, pmix_info_t *res,
                            size_t nres,
                            pmix_event_notification_cbfunc_fn_t cbfunc,
                            void *cbdata)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_RETURN_OBJECT))
            on_event(info[i].value.data.ptr, st, info, ninfo, 1);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void register_handlers(client_t *c)
{
    pmix_status_t codes[] = {
        PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_ERR_EXIT_NONZERO_TERM,
        PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_EVENT_PROC_TERMINATED};
    pmix_info_t info;
    pmix_status_t rc;

    if (pipe(c->evpipe) != 0)
        fail(c, "pipe: %s", strerror(errno));
    PMIX_INFO_LOAD(&info, PMIX_EVENT_RETURN_OBJECT, c, PMIX_POINTER);
    rc = PMIx_Register_event_handler(codes, 4, &info, 1, specific_handler, NULL,
                                     NULL);
    if (rc < 0)
        fail(c, "register handler: %s", PMIx_Error_string(rc));
    rc = PMIx_Register_event_handler(NULL, 0, &info, 1, default_handler, NULL,
                                     NULL);
    if (rc < 0)
        fail(c, "register default handler: %s", PMIx_Error_string(rc));
}

/* Waits up to `ms` for an event about rank `dead`; checks code and exit. */
static void await_event(client_t *c, int dead, pmix_status_t code,
                        int exit_code, int ms)
{
    struct pollfd p = {.fd = c->evpipe[0], .events = POLLIN};
    event_msg_t m;

    for (;;) {
        if (poll(&p, 1, ms) <= 0)
            fail(c, "no event about rank %d within %d ms", dead, ms);
        if (read(c->evpipe[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
            fail(c, "short read on the event pipe");
        if (m.affected == dead)
            break;
    }
    if (m.status != code || m.exit_code != exit_code)
        fail(c, "event %s exit code %d, expected %s exit code %d",
             PMIx_Error_string(m.status), m.exit_code, PMIx_Error_string(code),
             exit_code);
    printf("rank %u got %s for rank %d (exit code %d, %s handler)\n",
           c->me.rank, PMIx_Error_string(m.status), dead, m.exit_code,
           m.is_default ? "default" : "specific");
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void finalize(client_t *c)
{
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        fail(c, "Finalize: %s", PMIx_Error_string(rc));
}

static void mode_death(client_t *c, const char *how)
{
    int last = (int)c->size - 1;
    pmix_status_t code;
    int exit_code = 0;

    if (c->size < 2)
        fail(c, "death mode needs at least 2 ranks");
    if (strcmp(how, "kill") == 0) {
        code = PMIX_ERR_PROC_ABORTED_BY_SIG;
        exit_code = 128 + SIGKILL;
    } else if (strcmp(how, "exit3") == 0) {
        code = PMIX_ERR_EXIT_NONZERO_TERM;
        exit_code = 3;
    } else if (strcmp(how, "nofin") == 0) {
        code = PMIX_ERR_PROC_TERM_WO_SYNC;
    } else if (strcmp(how, "fin") == 0) {
        code = PMIX_EVENT_PROC_TERMINATED;
    } else {
        fail(c, "unknown death mode %s", how);
    }
    register_handlers(c);
    modex(c); /* every handler is in place before anyone dies */
    if ((int)c->me.rank == last) {
        fflush(stdout);
        if (code == PMIX_ERR_PROC_ABORTED_BY_SIG)
            raise(SIGKILL);
        if (code == PMIX_EVENT_PROC_TERMINATED)
            finalize(c);
        _exit(exit_code);
    }
    await_event(c, last, code, exit_code, 5000);
    finalize(c);
}

int main(int argc, char **argv)
{
    client_t c;
    const char *mode = argc > 1 ? argv[1] : "fence";
    pmix_status_t rc;

    memset(&c, 0, sizeof(c));
    setvbuf(stdout, NULL, _IOLBF, 0);
    rc = PMIx_Init(&c.me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "FAIL: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    check_job_info(&c);

    if (strcmp(mode, "death") == 0 && argc > 2) {
        mode_death(&c, argv[2]);
        return 0;
    }
    if (strcmp(mode, "survive") == 0 && argc > 2) {
        int k = atoi(argv[2]);

        register_handlers(&c);
        modex(&c);
        if ((int)c.me.rank == k)
            sleep_s(60);
        await_event(&c, k, PMIX_ERR_PROC_ABORTED_BY_SIG, 128 + SIGKILL, 10000);
        finalize(&c);
        return 0;
    }
    modex(&c);
    if (strcmp(mode, "fence") == 0) {
        printf("rank %u ok\n", c.me.rank);
    } else if (strcmp(mode, "exit") == 0 && argc > 3) {
        if ((int)c.me.rank == atoi(argv[3]))
            _exit(atoi(argv[2]));
        if (argc > 4 && strcmp(argv[4], "sleep") == 0)
            sleep_s(60);
    } else if (strcmp(mode, "abort") == 0 && argc > 2) {
        if (c.me.rank == 0)
            PMIx_Abort(atoi(argv[2]), "test abort", NULL, 0);
        sleep_s(60);
    } else if (strcmp(mode, "sleep") == 0) {
        const char *d = getenv("PMIX_SERVER_TMPDIR");
        printf("rank %u pid %d tmpdir %s\n", c.me.rank, (int)getpid(),
               d ? d : "?");
        sleep_s(60);
    } else if (strcmp(mode, "print") == 0 && argc > 2) {
        int lines = atoi(argv[2]);
        char buf[128];

        /* Unbuffered bursts of partial lines: the launcher must still
         * forward whole lines only. */
        setvbuf(stdout, NULL, _IONBF, 0);
        for (int i = 0; i < lines; i++) {
            int n =
                snprintf(buf, sizeof(buf), "rank %u line %d ", c.me.rank, i);
            memset(buf + n, 'a' + (char)(c.me.rank % 26), 99 - (size_t)n);
            buf[99] = '\n';
            (void)!write(1, buf, 50);
            (void)!write(1, buf + 50, 50);
        }
    } else {
        fail(&c, "unknown mode %s", mode);
    }
    finalize(&c);
    return 0;
}
