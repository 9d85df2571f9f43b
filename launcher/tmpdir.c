/*
 * The job's rendezvous directory (see tmpdir.h).
 */
#include "launcher/tmpdir.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TMPDIR_BASE_MAX 64

int ucftrun_tmpdir_create(char *out, size_t outlen, char *err, size_t errlen)
{
    const char *base = getenv("TMPDIR");

    if (base == NULL || base[0] != '/' || strlen(base) > TMPDIR_BASE_MAX)
        base = "/tmp";
    if ((size_t)snprintf(out, outlen, "%s/ucftrun.XXXXXX", base) >= outlen) {
        snprintf(err, errlen, "temporary directory path too long");
        return -1;
    }
    if (mkdtemp(out) == NULL) {
        snprintf(err, errlen, "cannot create a directory in %s: %s", base,
                 strerror(errno));
        out[0] = '\0';
        return -1;
    }
    /* mkdtemp already uses 0700; make sure whatever the umask. */
    (void)chmod(out, 0700);
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)remove(path);
    return 0;
}

void ucftrun_tmpdir_remove(const char *dir)
{
    if (dir != NULL && dir[0] != '\0')
        (void)nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
