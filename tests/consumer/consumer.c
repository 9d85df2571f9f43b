/* Uses the installed ucft: a singleton context, a message to itself, the
 * context fd, and a status string. Exits 0 when everything works. */
#include <stdio.h>
#include <string.h>
#include <ucft.h>

int main(void)
{
    ucft_context_h ctx;
    int fd = -1;
    char in[6] = "", out[6] = "hello";
    ucft_status_t st = ucft_init(NULL, &ctx);
    if (st != UCFT_OK) {
        fprintf(stderr, "ucft_init: %s\n", ucft_status_string(st));
        return 1;
    }
    ucft_comm_h w = ucft_comm_world(ctx);
    ucft_request_h r;
    st = ucft_isend(w, out, sizeof(out), 0, 1, &r);
    if (st == UCFT_OK)
        st = ucft_recv(w, in, sizeof(in), 0, 1, NULL);
    if (st == UCFT_OK)
        st = ucft_wait(&r, NULL);
    if (st == UCFT_OK)
        st = ucft_context_get_fd(ctx, &fd);
    int ok = st == UCFT_OK && strcmp(in, out) == 0 && fd >= 0;
    printf("consumer: %s (%s, fd %d)\n", ok ? "ok" : "FAILED",
           ucft_status_string(st), fd);
    st = ucft_finalize(ctx);
    return ok && st == UCFT_OK ? 0 : 1;
}
