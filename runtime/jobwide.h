/*
 * Variables that must be the same at every rank (runtime/jobwide.c): the
 * communicator layer's UCFT_F, UCFT_<OP>_ALG, UCFT_PLACEMENT, ... (the
 * list is comm/variables.c's). Ranks that disagree would run collectives
 * that cannot match (a hang, or results from different trees), so
 * ucft_init checks them across the job.
 */
#ifndef UCFT_RT_JOBWIDE_H
#define UCFT_RT_JOBWIDE_H

#include "bootstrap/bootstrap.h"
#include "runtime/base/log.h"

/* Publishes `mine` (NAME=value lines, NUL-ended; NULL: nothing to check)
 * with the start-up publications, before the fence. */
ucft_status_t rt_jobwide_publish(boot_t *b, const char *mine);

/* After the start-up fence: compares `mine` with every other rank's.
 * Every rank reads the same collected data, so every rank fails alike:
 * UCFT_ERR_INVALID_PARAM and an error line naming the first variable that
 * differs and a rank that has it otherwise. A rank that died during
 * start-up (published nothing) is skipped. */
ucft_status_t rt_jobwide_check(boot_t *b, const ucft_log_t *log,
                               const char *mine);

#endif
