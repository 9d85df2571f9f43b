/*
 * evloop: ucft inside a libuv event loop. One thread, one uv loop serving
 *
 *   - a TCP server on 127.0.0.1 that answers every request line with the
 *     latest sum, and a client of it that asks every 10 ms (it counts the
 *     answers and the slowest one, which would show a blocked loop);
 *   - a 5 ms timer tick;
 *   - ITERS fault-tolerant allreduces, one after another, 40 ms apart,
 *     driven by the context fd (a uv_poll_t on ucft_context_get_fd) and
 *     ucft_context_arm, never by a blocking ucft call:
 *
 *       on the fd readable, or when arm's bound expires:
 *           while (ucft_context_progress(ctx) > 0) {}
 *           ucft_test(&req, ...)            -> done: check, pace the next
 *           ucft_context_arm(ctx, &ms):
 *               UCFT_INPROGRESS -> drive again at once (a 0 ms timer)
 *               UCFT_OK         -> sleep in uv_run; wake on the fd, or
 *                                  after ms (a timer)
 *
 * Kill ranks while it runs; the survivors keep summing and serving:
 *
 *   ucftrun -n 4 --kill 2@1.5 build/examples/evloop
 *
 * Each rank adds rank+1 and 1<<rank, as examples/allreduce does, and
 * checks that every sum counts exactly the live ranks. Exit status 0 when
 * every sum was right and requests were answered while it reduced.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucft.h>
#include <uv.h>

#define ITERS 60

typedef struct app {
    uv_loop_t loop;
    ucft_context_h ctx;
    ucft_comm_h world;
    int rank, size;
    /* the allreduce in flight */
    ucft_request_h req;
    int64_t in[2], out[2];
    int iter, checking, wrong;
    uint64_t check_deadline_ms;
    char latest[64];
    /* handles */
    uv_poll_t ucft_poll;   /* the context fd */
    uv_timer_t ucft_timer; /* arm's bound, or 0 ms: drive again */
    uv_timer_t pace;       /* 40 ms between allreduces */
    uv_timer_t tick;       /* the application's own timer */
    uv_tcp_t server, peer, client;
    uv_timer_t ask; /* the client's 10 ms request timer */
    uv_connect_t connect;
    uint64_t asked_at_ms;
    unsigned long ticks, answered;
    double worst_ms;
    char slab[2][256]; /* read buffers: server side, client side */
    int peer_open, finished;
} app_t;

static void drive(app_t *a);

/* ---- the application's side: a server, its client, a timer ---------- */

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    app_t *a = h->data;
    *buf =
        uv_buf_init(a->slab[(uv_tcp_t *)h == &a->client], sizeof(a->slab[0]));
}

static void write_done(uv_write_t *w, int status)
{
    free(w);
}

static void send_line(uv_stream_t *s, const char *line)
{
    size_t n = strlen(line);
    uv_write_t *w = malloc(sizeof(*w) + n);
    if (w == NULL)
        return;
    memcpy(w + 1, line, n);
    uv_buf_t b = uv_buf_init((char *)(w + 1), (unsigned)n);
    if (uv_write(w, s, &b, 1, write_done) != 0)
        free(w);
}

static void server_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    app_t *a = s->data;
    if (n > 0)
        send_line(s, a->latest); /* one answer per request line */
}

static void on_connection(uv_stream_t *server, int status)
{
    app_t *a = server->data;
    if (status != 0)
        return;
    if (a->peer_open)
        return; /* one client: our own */
    uv_tcp_init(&a->loop, &a->peer);
    a->peer_open = 1;
    a->peer.data = a;
    if (uv_accept(server, (uv_stream_t *)&a->peer) == 0)
        uv_read_start((uv_stream_t *)&a->peer, alloc_cb, server_read);
}

static void client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    app_t *a = s->data;
    if (n <= 0)
        return;
    double ms = (double)(uv_now(&a->loop) - a->asked_at_ms);
    if (ms > a->worst_ms)
        a->worst_ms = ms;
    a->answered++;
}

static void ask_cb(uv_timer_t *t)
{
    app_t *a = t->data;
    a->asked_at_ms = uv_now(&a->loop);
    send_line((uv_stream_t *)&a->client, "sum?\n");
}

static void on_connected(uv_connect_t *c, int status)
{
    app_t *a = c->data;
    if (status != 0) {
        fprintf(stderr, "connect: %s\n", uv_strerror(status));
        return;
    }
    uv_read_start((uv_stream_t *)&a->client, alloc_cb, client_read);
    uv_timer_start(&a->ask, ask_cb, 10, 10);
}

static void tick_cb(uv_timer_t *t)
{
    ((app_t *)t->data)->ticks++;
}

/* ---- the allreduce, driven by the context fd ------------------------- */

static void start_allreduce(app_t *a)
{
    a->in[0] = a->rank + 1;
    a->in[1] = (int64_t)1 << a->rank;
    ucft_status_t st = ucft_iallreduce(a->world, a->in, a->out, 2, UCFT_INT64,
                                       UCFT_SUM, &a->req);
    if (st != UCFT_OK) {
        printf("iteration %d: allreduce failed to start: %s\n", a->iter,
               ucft_status_name(st));
        a->wrong++;
        a->req = NULL;
    }
    drive(a);
}

static void pace_cb(uv_timer_t *t)
{
    start_allreduce(t->data);
}

static void finish(app_t *a)
{
    a->finished = 1;
    uv_poll_stop(&a->ucft_poll);
    uv_close((uv_handle_t *)&a->ucft_poll, NULL);
    uv_close((uv_handle_t *)&a->ucft_timer, NULL);
    uv_close((uv_handle_t *)&a->pace, NULL);
    uv_close((uv_handle_t *)&a->tick, NULL);
    uv_close((uv_handle_t *)&a->ask, NULL);
    uv_close((uv_handle_t *)&a->client, NULL);
    uv_close((uv_handle_t *)&a->server, NULL);
    if (a->peer_open)
        uv_close((uv_handle_t *)&a->peer, NULL);
}

/* Which ranks are in the sum, and is it theirs exactly? A rank left out
 * must have failed; this rank may learn that a moment after the others,
 * so the news gets up to 2 s, during which the loop keeps serving.
 * Returns 1 while the check waits for news. */
static int check_result(app_t *a)
{
    uint64_t all = ((uint64_t)1 << a->size) - 1, mask = (uint64_t)a->out[1];
    uint64_t dead = 0;
    int failed[64];
    size_t nfailed = 0;
    ucft_context_get_failed_ranks(a->ctx, failed, 64, &nfailed);
    for (size_t i = 0; i < nfailed && i < 64; i++)
        dead |= (uint64_t)1 << failed[i];
    if ((mask | dead) != all && uv_now(&a->loop) < a->check_deadline_ms)
        return 1;
    int64_t expect = 0;
    for (int r = 0; r < a->size; r++)
        if (mask >> r & 1)
            expect += r + 1;
    int ok = (mask & ~all) == 0 && (mask | dead) == all && a->out[0] == expect;
    a->wrong += !ok;
    snprintf(a->latest, sizeof(a->latest), "%d %lld\n", a->iter,
             (long long)a->out[0]);
    if (a->iter % 10 == 0 || !ok || a->iter == ITERS - 1)
        printf("iteration %2d: sum %3lld of %d live ranks %s\n", a->iter,
               (long long)a->out[0], __builtin_popcountll(mask),
               ok ? "(correct)" : "(WRONG)");
    fflush(stdout);
    return 0;
}

static void next_iteration(app_t *a)
{
    a->checking = 0;
    if (++a->iter == ITERS)
        finish(a);
    else
        uv_timer_start(&a->pace, pace_cb, 40, 0);
}

static void ucft_timer_cb(uv_timer_t *t)
{
    drive(t->data);
}

static void ucft_readable(uv_poll_t *p, int status, int events)
{
    drive(p->data);
}

/* One turn of the loop of include/ucft.h (ucft_context_get_fd). */
static void drive(app_t *a)
{
    if (a->finished)
        return;
    while (ucft_context_progress(a->ctx) > 0) {
    }
    if (a->req != NULL) {
        int done = 0;
        ucft_status_t st = ucft_test(&a->req, &done, NULL);
        if (done && st != UCFT_OK) {
            printf("iteration %d: allreduce failed: %s\n", a->iter,
                   ucft_status_name(st));
            a->wrong++;
            next_iteration(a);
        } else if (done) {
            a->checking = 1;
            a->check_deadline_ms = uv_now(&a->loop) + 2000;
        }
    }
    if (a->checking && !check_result(a))
        next_iteration(a);
    if (a->finished)
        return;
    int ms = 0;
    if (ucft_context_arm(a->ctx, &ms) != UCFT_OK)
        ms = 0; /* work pending: drive again at once */
    if (a->checking && ms > 1)
        ms = 1; /* poll for the failure news at 1 ms */
    uv_timer_start(&a->ucft_timer, ucft_timer_cb, (uint64_t)ms, 0);
}

int main(void)
{
    static app_t app; /* zeroed; one per process */
    app_t *a = &app;
    ucft_status_t st = ucft_init(NULL, &a->ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    a->world = ucft_comm_world(a->ctx);
    a->rank = ucft_comm_rank(a->world);
    a->size = ucft_comm_size(a->world);
    ucft_comm_set_f(a->world, 2);
    strcpy(a->latest, "none\n");
    if (a->size > 63) {
        fprintf(stderr, "this example checks its results for <= 63 ranks\n");
        ucft_finalize(a->ctx);
        return 2;
    }
    int fd = -1;
    if (uv_loop_init(&a->loop) != 0 ||
        ucft_context_get_fd(a->ctx, &fd) != UCFT_OK) {
        fprintf(stderr, "cannot set up the event loop\n");
        ucft_finalize(a->ctx);
        return 1;
    }
    uv_handle_t *handles[] = {
        (uv_handle_t *)&a->ucft_poll, (uv_handle_t *)&a->ucft_timer,
        (uv_handle_t *)&a->pace,      (uv_handle_t *)&a->tick,
        (uv_handle_t *)&a->server,    (uv_handle_t *)&a->peer,
        (uv_handle_t *)&a->client,    (uv_handle_t *)&a->ask};
    uv_poll_init(&a->loop, &a->ucft_poll, fd);
    uv_timer_init(&a->loop, &a->ucft_timer);
    uv_timer_init(&a->loop, &a->pace);
    uv_timer_init(&a->loop, &a->tick);
    uv_timer_init(&a->loop, &a->ask);
    uv_tcp_init(&a->loop, &a->server);
    uv_tcp_init(&a->loop, &a->client);
    for (size_t i = 0; i < sizeof(handles) / sizeof(handles[0]); i++)
        handles[i]->data = a;
    a->connect.data = a;

    struct sockaddr_in addr;
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    uv_ip4_addr("127.0.0.1", 0, &addr);
    if (uv_tcp_bind(&a->server, (const struct sockaddr *)&addr, 0) != 0 ||
        uv_listen((uv_stream_t *)&a->server, 4, on_connection) != 0 ||
        uv_tcp_getsockname(&a->server, (struct sockaddr *)&bound, &len) != 0) {
        fprintf(stderr, "cannot listen on 127.0.0.1\n");
        ucft_finalize(a->ctx);
        return 1;
    }
    uv_tcp_connect(&a->connect, &a->client, (const struct sockaddr *)&bound,
                   on_connected);
    uv_poll_start(&a->ucft_poll, UV_READABLE, ucft_readable);
    uv_timer_start(&a->tick, tick_cb, 5, 5);
    start_allreduce(a);

    uv_run(&a->loop, UV_RUN_DEFAULT);
    uv_loop_close(&a->loop);
    printf("served %lu requests while reducing (slowest answer %.1f ms), "
           "%lu timer ticks\n",
           a->answered, a->worst_ms, a->ticks);
    st = ucft_finalize(a->ctx);
    return a->wrong == 0 && a->answered > 0 && st == UCFT_OK ? 0 : 1;
}
