/* The log lines of a malformed or mismatched collective message
 * (collectives/coll_op.h), shared by every algorithm. */
#include "coll_op.h"

void coll_log_bad(tp_t *tp, const coll_args_t *a, const tp_req_t *req,
                  const char *why)
{
    ucft_warn(tp->log,
              "collective #%u: message (kind %u, %zu bytes, %s) from rank %u: "
              "%s",
              (unsigned)a->seq, ucft_tag_coll_kind(req->tag), req->length,
              ucft_status_string(req->status), (unsigned)ucft_tag_src(req->tag),
              why);
}

void coll_log_mismatch(tp_t *tp, const coll_args_t *a, const tp_req_t *req)
{
    coll_log_bad(tp, a, req,
                 "its size does not fit this rank's: the ranks called the "
                 "operation with different counts or datatypes; this rank's "
                 "part ends with an error");
}
