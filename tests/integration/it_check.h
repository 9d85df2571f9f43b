/* Checks for the integration programs: a failed check prints the rank,
 * the place and a message, and exits 1 (the launcher's exit status is the
 * test's verdict). Each program defines g_rank. */
#ifndef UCFT_IT_CHECK_H
#define UCFT_IT_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <ucft.h>

extern int g_rank;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "rank %d: CHECK FAILED %s:%d: %s: ", g_rank,       \
                    __FILE__, __LINE__, #cond);                                \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* st is evaluated once (it is often the call under test). */
#define CHECK_ST(st, want)                                                     \
    do {                                                                       \
        ucft_status_t check_st_ = (st);                                        \
        CHECK(check_st_ == (want), "got %s, expected %s",                      \
              ucft_status_name(check_st_), ucft_status_name(want));            \
    } while (0)

#endif
