/*
 * Line forwarding of a rank's output (see output.h).
 */
#include "launcher/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define OUTPUT_READS_PER_CALL 8

void ucftrun_output_init(ucftrun_output_t *out, int fd, int dest_fd, int rank,
                         int tag)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    out->fd = fd;
    out->dest_fd = dest_fd;
    out->len = 0;
    out->prefix_len = 0;
    out->prefix[0] = '\0';
    if (tag) {
        int n = snprintf(out->prefix, sizeof(out->prefix), "[%d] ", rank);
        out->prefix_len = n > 0 ? (size_t)n : 0;
    }
}

/* Writes prefix + line + "\n" with one writev when possible; retries the
 * rest after a short write. Errors (a closed stdout) drop the line. */
static void write_line(const ucftrun_output_t *out, const char *line,
                       size_t len)
{
    struct iovec iov[3] = {
        {.iov_base = (void *)out->prefix, .iov_len = out->prefix_len},
        {.iov_base = (void *)line, .iov_len = len},
        {.iov_base = (void *)"\n", .iov_len = 1},
    };
    int i = 0;

    while (i < 3) {
        ssize_t n = writev(out->dest_fd, &iov[i], 3 - i);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        while (i < 3 && (size_t)n >= iov[i].iov_len) {
            n -= (ssize_t)iov[i].iov_len;
            i++;
        }
        if (i < 3) {
            iov[i].iov_base = (char *)iov[i].iov_base + n;
            iov[i].iov_len -= (size_t)n;
        }
    }
}

/* Forwards every complete line in buf and keeps the rest. */
static void emit_lines(ucftrun_output_t *out)
{
    size_t start = 0;

    for (;;) {
        char *nl = memchr(out->buf + start, '\n', out->len - start);

        if (nl == NULL)
            break;
        write_line(out, out->buf + start, (size_t)(nl - (out->buf + start)));
        start = (size_t)(nl - out->buf) + 1;
    }
    if (start == 0 && out->len == sizeof(out->buf)) {
        /* A line longer than the buffer: forward it in pieces. */
        write_line(out, out->buf, out->len);
        start = out->len;
    }
    memmove(out->buf, out->buf + start, out->len - start);
    out->len -= start;
}

int ucftrun_output_progress(ucftrun_output_t *out)
{
    if (out->fd < 0)
        return 0;
    /* A bounded number of reads, so that one chatty rank cannot starve
     * the others (or the main loop). */
    for (int i = 0; i < OUTPUT_READS_PER_CALL; i++) {
        ssize_t n =
            read(out->fd, out->buf + out->len, sizeof(out->buf) - out->len);

        if (n > 0) {
            out->len += (size_t)n;
            emit_lines(out);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 1;
        /* End of file, or an error that will not go away. */
        ucftrun_output_close(out);
        return 0;
    }
    return 1;
}

void ucftrun_output_close(ucftrun_output_t *out)
{
    if (out->len > 0) {
        write_line(out, out->buf, out->len);
        out->len = 0;
    }
    if (out->fd >= 0) {
        close(out->fd);
        out->fd = -1;
    }
}
