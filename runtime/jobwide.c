/* Variables that must be the same at every rank (jobwide.h). */
#include "runtime/jobwide.h"

#include <stdlib.h>
#include <string.h>

#define JW_KEY "ucft.jobwide"

ucft_status_t rt_jobwide_publish(boot_t *b, const char *mine)
{
    if (mine == NULL || b->singleton)
        return UCFT_OK;
    return boot_put(b, JW_KEY, mine, strlen(mine) + 1);
}

/* The value of `name` (nlen bytes) in `text` (tlen bytes of NAME=value
 * lines, possibly forged: nothing past tlen is read), or NULL. */
static const char *value_of(const char *text, size_t tlen, const char *name,
                            size_t nlen, size_t *vlen)
{
    const char *p = text, *end = text + tlen;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        if ((size_t)(le - p) > nlen && memcmp(p, name, nlen) == 0 &&
            p[nlen] == '=') {
            *vlen = (size_t)(le - p) - nlen - 1;
            return p + nlen + 1;
        }
        p = le + 1;
    }
    return NULL;
}

/* Logs the first of this rank's variables that `rank` has otherwise. */
static void report(const ucft_log_t *log, const char *mine, const char *theirs,
                   size_t tlen, int rank)
{
    for (const char *p = mine; *p != '\0';) {
        const char *eq = strchr(p, '=');
        const char *le = strchr(p, '\n');
        if (eq == NULL)
            break;
        if (le == NULL)
            le = p + strlen(p);
        size_t vlen = 0, mlen = (size_t)(le - eq - 1);
        const char *v = value_of(theirs, tlen, p, (size_t)(eq - p), &vlen);
        if (v == NULL || vlen != mlen || memcmp(v, eq + 1, mlen) != 0) {
            ucft_error(log,
                       "UCFT_%.*s is '%.*s' here but %s%.*s%s at rank %d: "
                       "it must be the same at every rank (docs/api.md, "
                       "R12)",
                       (int)(eq - p), p, (int)mlen, eq + 1,
                       v != NULL ? "'" : "", v != NULL ? (int)vlen : 7,
                       v != NULL ? v : "missing", v != NULL ? "'" : "", rank);
            return;
        }
        p = *le != '\0' ? le + 1 : le;
    }
    ucft_error(log,
               "rank %d checks other variables across the job than this "
               "rank (another ucft build?)",
               rank);
}

ucft_status_t rt_jobwide_check(boot_t *b, const ucft_log_t *log,
                               const char *mine)
{
    if (mine == NULL || b->singleton)
        return UCFT_OK;
    size_t mlen = strlen(mine) + 1;
    for (int r = 0; r < b->size; r++) {
        if (r == b->rank)
            continue;
        void *t = NULL;
        size_t len = 0;
        ucft_status_t st = boot_get_opt(b, JW_KEY, r, &t, &len);
        if (st == UCFT_ERR_PROC_FAILED)
            continue; /* died during start-up: the collectives leave it out */
        if (st != UCFT_OK)
            return st;
        int same = len == mlen && memcmp(t, mine, len) == 0;
        if (!same)
            report(log, mine, t, len, r);
        free(t);
        if (!same)
            return UCFT_ERR_INVALID_PARAM;
    }
    return UCFT_OK;
}
