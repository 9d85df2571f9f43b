/*
 * Forwarding of one rank's stdout or stderr. The rank writes into a pipe;
 * the launcher reads whatever is there and writes only whole lines to its
 * own stdout/stderr, each line with a single write(), so that lines of
 * different ranks never interleave inside a line. With --tag-output each
 * line is prefixed with "[R] " (R = rank).
 *
 * A line longer than UCFTRUN_OUTPUT_LINE_MAX is cut into pieces of that
 * size, each written as its own line. A last line without a newline is
 * written with one added when the pipe closes.
 */
#ifndef UCFTRUN_OUTPUT_H
#define UCFTRUN_OUTPUT_H

#include <stddef.h>

#define UCFTRUN_OUTPUT_LINE_MAX 16384

typedef struct ucftrun_output {
    int fd;      /* read end of the pipe; -1 once closed */
    int dest_fd; /* 1 or 2 */
    char prefix[24];
    size_t prefix_len;
    size_t len; /* bytes of an unfinished line in buf */
    char buf[UCFTRUN_OUTPUT_LINE_MAX];
} ucftrun_output_t;

/* Takes ownership of `fd` (made non-blocking). */
void ucftrun_output_init(ucftrun_output_t *out, int fd, int dest_fd, int rank,
                         int tag);

/*
 * Reads what is available (a bounded amount per call, for fairness between
 * ranks) and forwards complete lines. Returns 1 while the pipe is open, 0
 * when it reached end of file (the stream is then flushed and closed).
 */
int ucftrun_output_progress(ucftrun_output_t *out);

/* Flushes an unfinished line and closes the pipe (idempotent). */
void ucftrun_output_close(ucftrun_output_t *out);

#endif
