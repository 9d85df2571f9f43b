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
 *   survive-node K   every rank on node K (PMIX_NODEID) sleeps (the
 *                    launcher kills them: --kill-node); the others must be
 *                    told of each of them within 10 s
 *   exit C K [sleep] rank K exits with status C, the others finalize (or
 *                    sleep 60 s first, to be killed by --abort-on-failure)
 *   abort S          rank 0 calls PMIx_Abort(S), the others sleep
 *   sleep            print "rank R pid P tmpdir D" and sleep 60 s
 *   print L          print L numbered lines of 100 characters, in bursts
 *
 * Set UCFT_TEST_EXPECT_BIND=1 to require PMIX_CPUSET/PMIX_LOCALITY_STRING
 * and a CPU affinity equal to PMIX_CPUSET. Set UCFT_TEST_EXPECT_NODES=K
 * (and UCFT_TEST_EXPECT_MAP=slot|node, default slot) to check the pretend
 * nodes of `ucftrun --nodes K`: every rank computes the expected map
 * itself and compares it with what PMIx says about itself and every peer
 * (see check_nodes). Without it the job must be one node named after
 * this machine. Exit status 0 means all checks passed; a failed check
 * prints "rank R FAIL: why" on stderr, exits 1.
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
    int nnodes;    /* expected pretend nodes; 0 = one real node */
    int by_node;   /* expected --map-by node */
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

/* PMIx_Get; `optional`: PMIX_OPTIONAL, NULL when not found; `job_realm`:
 * with the PMIX_JOB_INFO qualifier (see check_nodes). */
static pmix_value_t *get_q(const client_t *c, pmix_rank_t rank, const char *key,
                           int optional, int job_realm)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_info_t info[2];
    size_t n = 0;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&p, c->me.nspace, rank);
    if (optional)
        PMIX_INFO_LOAD(&info[n++], PMIX_OPTIONAL, NULL, PMIX_BOOL);
    if (job_realm)
        PMIX_INFO_LOAD(&info[n++], PMIX_JOB_INFO, NULL, PMIX_BOOL);
    rc = PMIx_Get(&p, key, n > 0 ? info : NULL, n, &v);
    for (size_t i = 0; i < n; i++)
        PMIX_INFO_DESTRUCT(&info[i]);
    if (rc != PMIX_SUCCESS) {
        if (optional)
            return NULL;
        fail(c, "PMIx_Get(%s, rank %u%s): %s", key, rank,
             job_realm ? ", PMIX_JOB_INFO" : "", PMIx_Error_string(rc));
    }
    return v;
}

static pmix_value_t *get(const client_t *c, pmix_rank_t rank, const char *key,
                         int optional)
{
    return get_q(c, rank, key, optional, 0);
}

static uint64_t get_uint_q(const client_t *c, pmix_rank_t rank, const char *key,
                           int job_realm)
{
    pmix_value_t *v = get_q(c, rank, key, 0, job_realm);
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

static uint64_t get_uint(const client_t *c, pmix_rank_t rank, const char *key)
{
    return get_uint_q(c, rank, key, 0);
}

static int expect_node_of(const client_t *c, uint32_t r)
{
    int k = c->nnodes > 0 ? c->nnodes : 1;
    int per_node = ((int)c->size + k - 1) / k;

    return c->by_node ? (int)r % k : (int)r / per_node;
}

/* The rank's index among the ranks of its node, and the node's ranks. */
static int expect_local_rank(const client_t *c, uint32_t r)
{
    int lr = 0;

    for (uint32_t q = 0; q < r; q++)
        lr += expect_node_of(c, q) == expect_node_of(c, r);
    return lr;
}

static void expect_host(const client_t *c, int node, char *buf, size_t len)
{
    char host[256] = "";

    gethostname(host, sizeof(host) - 1);
    if (c->nnodes > 0)
        snprintf(buf, len, "%s-n%d", host, node);
    else
        snprintf(buf, len, "%s", host);
}

static void check_string(const client_t *c, pmix_rank_t r, const char *key,
                         const char *want)
{
    pmix_value_t *v = get(c, r, key, 0);

    if (v->type != PMIX_STRING || v->data.string == NULL ||
        strcmp(v->data.string, want) != 0)
        fail(c, "%s of rank %d is '%s', expected '%s'", key,
             r == PMIX_RANK_WILDCARD ? -1 : (int)r,
             v->type == PMIX_STRING && v->data.string ? v->data.string : "?",
             want);
    PMIX_VALUE_RELEASE(v);
}

/*
 * The pretend nodes as PMIx shows them, against the map this rank computes
 * from UCFT_TEST_EXPECT_NODES/MAP: its own node id, hostname, local and
 * node rank; the number of nodes, its node's local peers and size; every
 * peer's hostname and local rank; every peer's node id through the job
 * realm (PMIX_JOB_INFO), and through a plain get for the peers of its own
 * node. (PMIx 4.2.2 resolves a plain PMIX_NODEID of a peer on another node
 * through that node's info and does not find it there: see
 * docs/launcher.md.)
 */
static void check_nodes(const client_t *c)
{
    pmix_rank_t me = c->me.rank;
    int my_node = expect_node_of(c, me), local_size = 0;
    int k = c->nnodes > 0 ? c->nnodes : 1;
    char want[320], peers[4096] = "";
    size_t plen = 0;

    if (get_uint(c, PMIX_RANK_WILDCARD, PMIX_NUM_NODES) != (uint64_t)k)
        fail(c, "PMIX_NUM_NODES is not %d", k);
    for (uint32_t r = 0; r < c->size; r++) {
        int node = expect_node_of(c, r), lr = expect_local_rank(c, r);

        if (node == my_node) {
            plen += (size_t)snprintf(peers + plen, sizeof(peers) - plen,
                                     local_size ? ",%u" : "%u", r);
            local_size++;
            if (get_uint(c, r, PMIX_NODEID) != (uint64_t)node)
                fail(c, "plain PMIX_NODEID of rank %u is not %d", r, node);
        }
        if (get_uint_q(c, r, PMIX_NODEID, 1) != (uint64_t)node)
            fail(c, "PMIX_NODEID of rank %u is not %d", r, node);
        expect_host(c, node, want, sizeof(want));
        check_string(c, r, PMIX_HOSTNAME, want);
        if (get_uint(c, r, PMIX_LOCAL_RANK) != (uint64_t)lr ||
            get_uint(c, r, PMIX_NODE_RANK) != (uint64_t)lr)
            fail(c, "local or node rank of rank %u is not %d", r, lr);
    }
    if (get_uint(c, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE) !=
        (uint64_t)local_size)
        fail(c, "PMIX_LOCAL_SIZE is not %d", local_size);
    check_string(c, PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, peers);
    if (c->nnodes > 0) {
        expect_host(c, my_node, want, sizeof(want));
        printf("rank %u node %d host %s local rank %d peers %s\n", me, my_node,
               want, expect_local_rank(c, me), peers);
    }
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
    pmix_value_t *v;
    const char *bind = getenv("UCFT_TEST_EXPECT_BIND");
    const char *nodes = getenv("UCFT_TEST_EXPECT_NODES");
    const char *map = getenv("UCFT_TEST_EXPECT_MAP");

    c->nnodes = nodes != NULL ? atoi(nodes) : 0;
    c->by_node = map != NULL && strcmp(map, "node") == 0;
    c->size = (uint32_t)get_uint(c, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    if (c->size == 0 || r >= c->size)
        fail(c, "rank %u but job size %u", r, c->size);
    if (get_uint(c, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE) != c->size)
        fail(c, "universe size differs from the job size");
    check_nodes(c);

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

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to `ms` for one event about each of the n ranks in dead[] (any
 * order), each with `code` and `exit_code`. An abnormal event about any
 * other rank is a failure (only those ranks were to die); a rank that
 * finished normally is not. */
static void await_events(client_t *c, const int *dead, int n,
                         pmix_status_t code, int exit_code, int ms)
{
    struct pollfd p = {.fd = c->evpipe[0], .events = POLLIN};
    int64_t until = now_ms() + ms;
    int got = 0, seen[4096] = {0};
    event_msg_t m;

    while (got < n) {
        int left = (int)(until - now_ms()), k;

        if (left <= 0 || poll(&p, 1, left) <= 0)
            fail(c, "events about %d of the %d killed ranks within %d ms", got,
                 n, ms);
        if (read(c->evpipe[0], &m, sizeof(m)) != (ssize_t)sizeof(m))
            fail(c, "short read on the event pipe");
        for (k = 0; k < n && dead[k] != m.affected; k++)
            ;
        if (k == n) {
            if (m.status != PMIX_EVENT_PROC_TERMINATED)
                fail(c, "unexpected event %s about rank %d",
                     PMIx_Error_string(m.status), m.affected);
            continue;
        }
        if (m.status != code || m.exit_code != exit_code)
            fail(c,
                 "event %s exit code %d about rank %d, expected %s exit "
                 "code %d",
                 PMIx_Error_string(m.status), m.exit_code, m.affected,
                 PMIx_Error_string(code), exit_code);
        if (seen[k]++ == 0 && m.is_default == 0) {
            got++;
            printf("rank %u got %s for rank %d (exit code %d)\n", c->me.rank,
                   PMIx_Error_string(m.status), m.affected, m.exit_code);
        }
    }
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

/* The ranks of pretend node `node` by PMIX_NODEID (job realm): survivors
 * wait for each of them, the victims sleep until they are killed. */
static void mode_survive_node(client_t *c, int node)
{
    int dead[4096], n = 0; /* ucftrun runs at most 4096 ranks */

    for (uint32_t r = 0; r < c->size && r < 4096; r++) {
        if (get_uint_q(c, r, PMIX_NODEID, 1) == (uint64_t)node)
            dead[n++] = (int)r;
    }
    if (n == 0 || n == (int)c->size)
        fail(c, "node %d holds %d of %u ranks", node, n, c->size);
    register_handlers(c);
    modex(c);
    if ((int)get_uint(c, c->me.rank, PMIX_NODEID) == node)
        sleep_s(60);
    await_events(c, dead, n, PMIX_ERR_PROC_ABORTED_BY_SIG, 128 + SIGKILL,
                 10000);
    finalize(c);
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
    if (strcmp(mode, "survive-node") == 0 && argc > 2) {
        mode_survive_node(&c, atoi(argv[2]));
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
