/* Malformed messages on the wire, from a process the job does not know.
 * Three ranks run ucft; the last one also opens a worker of its own (raw
 * UCP, outside the library), connects it to rank 0 with the address rank 0
 * published in PMIx, and sends in order:
 *   1. a collective message naming communicator 4096, which does not
 *      exist and none can become (a context whose low 8 bits are 0 is
 *      the world's alone);
 *   2. a point-to-point message whose source field names rank 999;
 *   3. a point-to-point message from rank 1's name, tag 6 (a forgery the
 *      library cannot tell from the real thing: tag.h, "Trust").
 * Rank 0 must report the second as UCFT_ERR_TRANSPORT on a receive from
 * any source (not as a message of a rank, and without a crash), take the
 * third as a plain message, and drop the first when its late-message
 * sweeper meets it (after a collective); then all three ranks run 20
 * allreduces and check every result. The shell wrapper greps the two log
 * lines. Each rank prints "rank R: ..." lines; exit 0 when all is well. */
#include "transport/tag.h"

#include <pmix.h>
#include <ucp/api/ucp.h>
#include <ucft.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FORGED_CTX  4096
#define FORGED_SRC  999
#define FORGED_TAG  5
#define SPOOFED_TAG 6

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits for a UCP request (or an immediate status) to end. */
static int ucp_done(ucp_worker_h w, ucs_status_ptr_t r, const char *what)
{
    ucs_status_t st = UCS_OK;
    if (UCS_PTR_IS_ERR(r)) {
        st = UCS_PTR_STATUS(r);
    } else if (r != NULL) {
        double t0 = now_s();
        while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS &&
               now_s() - t0 < 20)
            ucp_worker_progress(w);
        ucp_request_free(r);
    }
    if (st != UCS_OK)
        fprintf(stderr, "forger: %s: %s\n", what, ucs_status_string(st));
    return st == UCS_OK ? 0 : -1;
}

static int send_raw(ucp_worker_h w, ucp_ep_h ep, uint64_t tag, int64_t v,
                    const char *what)
{
    ucp_request_param_t prm = {0};
    return ucp_done(w, ucp_tag_send_nbx(ep, &v, sizeof(v), tag, &prm), what);
}

/* Rank 0's worker address, as ucft published it (bootstrap/bootstrap.c). */
static int get_addr(pmix_value_t **val)
{
    pmix_proc_t me, peer;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return -1;
    PMIX_PROC_LOAD(&peer, me.nspace, 0);
    if (PMIx_Get(&peer, "ucft.ucp.addr", NULL, 0, val) != PMIX_SUCCESS ||
        (*val)->type != PMIX_BYTE_OBJECT) {
        fprintf(stderr, "forger: no address of rank 0 in PMIx\n");
        return -1;
    }
    return 0;
}

static int forge(void)
{
    pmix_value_t *val = NULL;
    ucp_context_h uc = NULL;
    ucp_worker_h w = NULL;
    ucp_ep_h ep = NULL;
    int rc = -1;

    if (get_addr(&val) != 0)
        goto out;
    ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_TAG};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if (ucp_init(&up, NULL, &uc) != UCS_OK ||
        ucp_worker_create(uc, &wp, &w) != UCS_OK)
        goto out;
    ucp_ep_params_t ep_p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                            .address =
                                (const ucp_address_t *)val->data.bo.bytes};
    if (ucp_ep_create(w, &ep_p, &ep) != UCS_OK)
        goto out;
    /* One endpoint: UCP delivers these in order. */
    rc = send_raw(w, ep,
                  ucft_tag_make(UCFT_TAG_CLASS_COLL, FORGED_CTX, 2,
                                ucft_tag_coll_payload(1, 16)),
                  1, "collective of no communicator");
    rc |= send_raw(w, ep,
                   ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, FORGED_SRC, FORGED_TAG),
                   2, "sender 999");
    rc |= send_raw(w, ep, ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, 1, SPOOFED_TAG),
                   3, "in rank 1's name");
    ucp_request_param_t cp = {0}; /* flushes, then closes */
    rc |= ucp_done(w, ucp_ep_close_nbx(ep, &cp), "close");
out:
    if (w != NULL)
        ucp_worker_destroy(w);
    if (uc != NULL)
        ucp_cleanup(uc);
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    if (PMIx_Initialized())
        PMIx_Finalize(NULL, 0);
    printf("rank 2: forged 3 messages: %s\n", rc == 0 ? "sent" : "FAILED");
    return rc;
}

/* Rank 0: what the library makes of the forged point-to-point messages. */
static int judge(ucft_comm_h w)
{
    int64_t v = 0;
    ucft_info_t info;
    int bad = 0;

    ucft_status_t st =
        ucft_recv(w, &v, sizeof(v), UCFT_ANY_SOURCE, FORGED_TAG, &info);
    printf("rank 0: message naming sender %d: %s\n", FORGED_SRC,
           ucft_status_name(st));
    bad |= st != UCFT_ERR_TRANSPORT;
    v = 0;
    st = ucft_recv(w, &v, sizeof(v), 1, SPOOFED_TAG, &info);
    printf("rank 0: message in rank 1's name: %s, value %lld\n",
           ucft_status_name(st), (long long)v);
    bad |= st != UCFT_OK || v != 3;
    return bad;
}

int main(void)
{
    ucft_context_h ctx;
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 2;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    int rank = ucft_comm_rank(w), size = ucft_comm_size(w), bad = 0;

    if (size != 3) {
        fprintf(stderr, "it_forged: run with 3 ranks, not %d\n", size);
        ucft_finalize(ctx);
        return 2;
    }
    if (rank == 2)
        bad |= forge() != 0;
    else if (rank == 0)
        bad |= judge(w);
    for (int i = 0; i < 20; i++) {
        int64_t in = rank + 1 + i, out = 0;
        st = ucft_allreduce(w, &in, &out, 1, UCFT_INT64, UCFT_SUM);
        if (st != UCFT_OK || out != 6 + 3 * i) {
            printf("rank %d: allreduce %d: %s, %lld\n", rank, i,
                   ucft_status_name(st), (long long)out);
            bad = 1;
        }
    }
    printf("rank %d: 20 allreduces %s\n", rank, bad ? "FAILED" : "ok");
    ucft_finalize(ctx);
    return bad ? 3 : 0;
}
