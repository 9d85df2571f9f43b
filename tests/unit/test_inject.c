/* UCFT_INJECT (comm/coll_inject.h): the parser accepts the documented syntax
 * and names what is wrong in everything else; the filter transport "kills"
 * (a recorder here) exactly before the chosen message of the chosen call
 * and passes everything else through. */
#include "comm/coll_inject.h"
#include "transport/sim/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_inject_parse_valid(void **state)
{
    cm_inject_t inj;
    char err[256];

    assert_int_equal(cm_inject_parse(NULL, &inj, err, sizeof(err)), UCFT_OK);
    assert_int_equal(inj.n, 0);
    assert_int_equal(cm_inject_parse("", &inj, err, sizeof(err)), UCFT_OK);
    assert_int_equal(inj.n, 0);
    assert_int_equal(cm_inject_parse("rank=3,op=allreduce,call=5,msg=2", &inj,
                                     err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(inj.n, 1);
    assert_int_equal(inj.spec[0].rank, 3);
    assert_int_equal(inj.spec[0].op, CM_COLL_ALLREDUCE);
    assert_int_equal(inj.spec[0].call, 5);
    assert_int_equal(inj.spec[0].msg, 2);
    /* Defaults, any key order, several specs, one trailing ';'. */
    assert_int_equal(cm_inject_parse("op=bcast,rank=0;rank=7,op=barrier,msg=0;"
                                     "msg=4,op=reduce,rank=2,call=9;",
                                     &inj, err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(inj.n, 3);
    assert_int_equal(inj.spec[0].rank, 0);
    assert_int_equal(inj.spec[0].op, CM_COLL_BCAST);
    assert_int_equal(inj.spec[0].call, 1);
    assert_int_equal(inj.spec[0].msg, 1);
    assert_int_equal(inj.spec[1].op, CM_COLL_BARRIER);
    assert_int_equal(inj.spec[1].msg, 0);
    assert_int_equal(inj.spec[2].rank, 2);
    assert_int_equal(inj.spec[2].op, CM_COLL_REDUCE);
    assert_int_equal(inj.spec[2].call, 9);
    assert_int_equal(inj.spec[2].msg, 4);
    /* Finalize's barriers are an operation of their own. */
    assert_int_equal(
        cm_inject_parse("rank=1,op=finalize,call=2", &inj, err, sizeof(err)),
        UCFT_OK);
    assert_int_equal(inj.spec[0].op, CM_COLL_SYNC);
    assert_string_equal(cm_inject_op_name(CM_COLL_SYNC), "finalize");
}

/* Each bad text: UCFT_ERR_INVALID_PARAM, no spec kept, and the message
 * names the problem. */
static void test_inject_parse_invalid(void **state)
{
    static const char *const cases[][2] = {
        {"rank=3", "lacks op="},
        {"op=bcast", "lacks rank="},
        {"rank=x,op=bcast", "rank 'x'"},
        {"rank=-1,op=bcast", "rank '-1'"},
        {"rank=+1,op=bcast", "rank '+1'"},
        {"rank=1 ,op=bcast", "rank '1 '"},
        {"rank=99999999999999999999,op=bcast", "rank '9999"},
        {"rank=16777216,op=bcast", "rank '16777216'"},
        {"rank=1,op=gather", "op 'gather'"},
        {"rank=1,op=", "'op' needs a value"},
        {"rank,op=bcast", "'rank' needs a value"},
        {"rank=1,op=bcast,call=0", "call '0'"},
        {"rank=1,op=bcast,msg=two", "msg 'two'"},
        {"rank=1,op=bcast,foo=2", "unknown key 'foo'"},
        {"rank=1,rank=2,op=bcast", "'rank' given twice"},
        {"rank=1,op=bcast;;rank=2,op=bcast", "empty spec"},
        {";", "empty spec"},
        {"rank=1,op=bcast,", "trailing ','"},
        {"rank=1,op=bcast;rank=2", "'rank=2' lacks op="},
        {"rank=1,op=bcast,flip=x", "flip 'x'"},
        {"rank=1,op=bcast,flip=1048576", "flip '1048576'"},
        {"rank=1,op=bcast,flip_rate=2", "flip_rate '2'"},
        {"rank=1,op=bcast,flip_rate=0.1x", "flip_rate '0.1x'"},
        {"rank=1,op=bcast,flip=3,msg=0", "a flip needs msg=1"},
        {"rank=1,op=bcast,seed=4", "seed= without flip_rate="},
    };
    cm_inject_t inj;
    char err[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        ucft_status_t st = cm_inject_parse(cases[i][0], &inj, err, sizeof(err));
        if (st != UCFT_ERR_INVALID_PARAM || strstr(err, cases[i][1]) == NULL)
            fprintf(stderr, "'%s': %s, '%s' (want '%s')\n", cases[i][0],
                    ucft_status_string(st), err, cases[i][1]);
        assert_int_equal(st, UCFT_ERR_INVALID_PARAM);
        assert_non_null(strstr(err, cases[i][1]));
        assert_int_equal(inj.n, 0);
    }
    /* More specs than the table holds. */
    char many[CM_INJECT_MAX * 24 + 32] = "";
    for (int i = 0; i <= CM_INJECT_MAX; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many),
                 "rank=%d,op=bcast;", i);
    assert_int_equal(cm_inject_parse(many, &inj, err, sizeof(err)),
                     UCFT_ERR_INVALID_PARAM);
    assert_non_null(strstr(err, "more than"));
}

/* ---- the filter on a sim transport ---- */

typedef struct recorder {
    int deaths;
    unsigned sends_before; /* sends passed through before the death */
    unsigned sends;
    const cm_inject_spec_t *spec;
} recorder_t;

static void record_death(void *arg, const cm_inject_spec_t *spec)
{
    recorder_t *r = arg;
    r->deaths++;
    r->sends_before = r->sends;
    r->spec = spec;
}

static void send_cb(tp_req_t *req)
{
    (void)req;
}

/* One send of rank 0 to rank 1 through `tp`. */
static void send_one(tp_t *tp, uint64_t tag, tp_req_t *req, recorder_t *rec)
{
    *req = (tp_req_t){.cb = send_cb};
    ucft_status_t st = tp_send(tp, 1, tag, NULL, 0, req);
    assert_true(st == UCFT_OK || st == UCFT_INPROGRESS);
    rec->sends++;
}

static uint64_t coll(unsigned ctx, uint32_t seq, unsigned kind)
{
    return ucft_tag_make(UCFT_TAG_CLASS_COLL, ctx, 0,
                         ucft_tag_coll_payload(seq, kind));
}

static void test_inject_filter_counts(void **state)
{
    sim_params_t sp;
    sim_world_t *w;
    cm_inject_t inj;
    recorder_t rec = {0};
    char err[256];
    tp_req_t reqs[32];
    unsigned nr = 0;

    sim_params_default(&sp, 2);
    assert_int_equal(sim_world_create(&sp, &w), UCFT_OK);
    tp_t *real = sim_world_tp(w, 0);
    assert_int_equal(cm_inject_parse("rank=0,op=allreduce,call=2,msg=3;"
                                     "rank=1,op=allreduce,call=1,msg=1;"
                                     "rank=0,op=bcast,call=1,msg=0",
                                     &inj, err, sizeof(err)),
                     UCFT_OK);
    /* A rank beyond the job is an error at setup. */
    cm_inject_t bad = inj;
    assert_int_equal(cm_inject_setup(&bad, 0, 1, real, NULL, record_death, &rec,
                                     err, sizeof(err)),
                     UCFT_ERR_INVALID_PARAM);
    assert_non_null(strstr(err, "rank=1: the job has 1 ranks"));
    assert_int_equal(cm_inject_setup(&inj, 0, 2, real, NULL, record_death, &rec,
                                     err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(inj.n, 2); /* rank 1's spec is not ours */
    assert_true(cm_inject_active(&inj));

    /* Call 1 of allreduce: not chosen, the real transport. */
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_ALLREDUCE, 0, 10), real);
    /* Barrier and reduce calls do not count as allreduce calls. */
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_BARRIER, 0, 11), real);
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_REDUCE, 0, 12), real);
    /* Call 2 (seq 13): the filter. */
    tp_t *f = cm_inject_call(&inj, CM_COLL_ALLREDUCE, 0, 13);
    assert_ptr_not_equal(f, real);
    assert_int_equal(f->rank, 0);
    assert_int_equal(f->size, 2);
    /* Messages that are not this instance's are not counted. */
    send_one(f, ucft_tag_make(UCFT_TAG_CLASS_P2P, 0, 0, 5), &reqs[nr++], &rec);
    send_one(f, coll(0, 12, 1), &reqs[nr++], &rec);
    send_one(f, coll(1, 13, 1), &reqs[nr++], &rec);
    send_one(f, coll(0, 13, 48), &reqs[nr++], &rec);
    send_one(f, coll(0, 13, 50), &reqs[nr++], &rec);
    assert_int_equal(rec.deaths, 0);
    send_one(f, coll(0, 13, 49), &reqs[nr++], &rec);
    assert_int_equal(rec.deaths, 1);
    assert_int_equal(rec.sends_before, 5); /* before the 3rd of seq 13 */
    assert_int_equal(rec.spec->op, CM_COLL_ALLREDUCE);
    assert_int_equal(rec.spec->msg, 3);
    /* Once only. */
    send_one(f, coll(0, 13, 49), &reqs[nr++], &rec);
    assert_int_equal(rec.deaths, 1);
    /* msg=0: at the start of the call, nothing sent. */
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_BCAST, 0, 14), real);
    assert_int_equal(rec.deaths, 2);
    assert_int_equal(rec.spec->op, CM_COLL_BCAST);
    /* Later calls: never again. */
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_ALLREDUCE, 0, 15), real);
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_BCAST, 0, 16), real);
    assert_int_equal(rec.deaths, 2);
    /* Finalize's barriers count apart: none of the specs names them. */
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_SYNC, 0, 17), real);
    assert_int_equal(rec.deaths, 2);
    /* The filter passed every send to rank 1. */
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    sim_stats_t stats;
    sim_world_stats(w, &stats);
    assert_int_equal(stats.messages, nr);
    sim_world_destroy(w);
}

/* flip=B: the chosen message of the chosen call arrives with bit B
 * inverted; the rank lives on; other calls and messages are intact. */
static void test_inject_flip(void **state)
{
    sim_params_t sp;
    sim_world_t *w;
    cm_inject_t inj;
    char err[256];
    uint64_t out[3] = {0x1111, 0x2222, 0x3333}, in[3] = {0};
    tp_req_t sreq[3], rreq[3];
    (void)state;

    sim_params_default(&sp, 2);
    assert_int_equal(sim_world_create(&sp, &w), UCFT_OK);
    tp_t *real = sim_world_tp(w, 0);
    assert_int_equal(cm_inject_parse("rank=0,op=allreduce,call=2,msg=2,"
                                     "flip=62",
                                     &inj, err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(inj.spec[0].flip, 62);
    assert_int_equal(
        cm_inject_setup(&inj, 0, 2, real, NULL, NULL, NULL, err, sizeof(err)),
        UCFT_OK);
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_ALLREDUCE, 0, 1), real);
    tp_t *f = cm_inject_call(&inj, CM_COLL_ALLREDUCE, 0, 2);
    assert_ptr_not_equal(f, real);
    for (int i = 0; i < 3; i++) {
        rreq[i] = (tp_req_t){.cb = send_cb};
        sreq[i] = (tp_req_t){.cb = send_cb, .buffered = 1};
        uint64_t tag = ucft_tag_make(UCFT_TAG_CLASS_COLL, 0, 0,
                                     ucft_tag_coll_payload(2, 102));
        (void)tp_recv(sim_world_tp(w, 1), tag, UCFT_TAG_FULL_MASK, &in[i],
                      sizeof(in[i]), &rreq[i]);
        (void)tp_send(f, 1, tag, &out[i], sizeof(out[i]), &sreq[i]);
    }
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    assert_true(in[0] == 0x1111);
    assert_true(in[1] == (0x2222 ^ (1ull << 62)));
    assert_true(in[2] == 0x3333);
    assert_true(out[1] == 0x2222); /* the caller's buffer is untouched */
    assert_int_equal(inj.flipst[0].flipped, 1);
    sim_world_destroy(w);
    cm_inject_cleanup(&inj);
}

/* op=finalize counts finalize's barriers only, and barrier calls do not
 * count as finalize calls. */
static void test_inject_finalize_calls(void **state)
{
    sim_params_t sp;
    sim_world_t *w;
    cm_inject_t inj;
    recorder_t rec = {0};
    char err[256];
    tp_req_t req;

    sim_params_default(&sp, 2);
    assert_int_equal(sim_world_create(&sp, &w), UCFT_OK);
    tp_t *real = sim_world_tp(w, 0);
    assert_int_equal(cm_inject_parse("rank=0,op=finalize,call=2,msg=1", &inj,
                                     err, sizeof(err)),
                     UCFT_OK);
    assert_int_equal(cm_inject_setup(&inj, 0, 2, real, NULL, record_death, &rec,
                                     err, sizeof(err)),
                     UCFT_OK);
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_BARRIER, 0, 1), real);
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_BARRIER, 0, 2), real);
    assert_ptr_equal(cm_inject_call(&inj, CM_COLL_SYNC, 0, 3), real);
    tp_t *f = cm_inject_call(&inj, CM_COLL_SYNC, 0, 4);
    assert_ptr_not_equal(f, real);
    send_one(f, coll(0, 4, 48), &req, &rec);
    assert_int_equal(rec.deaths, 1);
    assert_int_equal(rec.spec->op, CM_COLL_SYNC);
    sim_world_run(w, UINT64_MAX, UINT64_MAX);
    sim_world_destroy(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inject_parse_valid),
        cmocka_unit_test(test_inject_parse_invalid),
        cmocka_unit_test(test_inject_filter_counts),
        cmocka_unit_test(test_inject_flip),
        cmocka_unit_test(test_inject_finalize_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
