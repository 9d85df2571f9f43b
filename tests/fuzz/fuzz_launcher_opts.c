/*
 * Fuzz target: ucftrun's command line (launcher/opts.h): the input split
 * at NUL bytes into at most 64 words after argv[0]. A command line that
 * parses must satisfy what the parser promises (opts.h), and its pretend
 * nodes must map.
 */
#include "fuzz.h"
#include "launcher/nodes.h"
#include "launcher/opts.h"

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    size_t len;
    char *text = fuzz_rest(&in, 1, &len);
    char *argv[MAX_WORDS + 2] = {"ucftrun"};
    int argc = 1;
    char err[256];

    for (size_t i = 0; i < len && argc <= MAX_WORDS;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;

    ucftrun_opts_t o;
    ucftrun_action_t a = ucftrun_opts_parse(argc, argv, &o, err, sizeof(err));
    if (a == UCFTRUN_ACTION_ERROR)
        FUZZ_ASSERT(memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0');
    if (a == UCFTRUN_ACTION_RUN) {
        FUZZ_ASSERT(o.nprocs >= 1 && o.prog_argc >= 1);
        FUZZ_ASSERT(o.prog_argv[o.prog_argc] == NULL);
        FUZZ_ASSERT(o.nnodes >= 0 && o.nnodes <= o.nprocs);
        for (size_t i = 0; i < o.ninjects; i++) {
            const ucftrun_inject_t *j = &o.injects[i];
            FUZZ_ASSERT(j->target >= 0);
            if (j->target_kind == UCFTRUN_TARGET_RANK)
                FUZZ_ASSERT(j->target < o.nprocs);
            else
                FUZZ_ASSERT(o.nnodes > 0 && j->target < o.nnodes);
        }
        /* Large jobs are fine for the parser; map only the small ones. */
        if (o.nnodes > 0 && o.nprocs <= 4096) {
            ucftrun_nodes_t m;
            if (ucftrun_nodes_init(&m, o.nprocs, o.nnodes, o.map_by,
                                   "fuzzhost") == 0) {
                char host[64];
                for (int k = 0; k < o.nnodes; k++) {
                    FUZZ_ASSERT(
                        ucftrun_nodes_hostname(&m, k, host, sizeof(host)) == 0);
                    free(ucftrun_nodes_ranks(&m, k));
                }
                free(ucftrun_nodes_host_list(&m));
                free(ucftrun_nodes_ppn_list(&m));
                ucftrun_nodes_free(&m);
            }
        }
    }
    ucftrun_opts_free(&o);
    free(text);
    return 0;
}
