/*
 * The job's rendezvous directory (PMIX_SERVER_TMPDIR, PMIX_SYSTEM_TMPDIR):
 * private (mode 0700), unique per job, removed with everything in it when
 * the launcher ends.
 */
#ifndef UCFTRUN_TMPDIR_H
#define UCFTRUN_TMPDIR_H

#include <stddef.h>

/*
 * Creates "$TMPDIR/ucftrun.XXXXXX" (or under /tmp when TMPDIR is unset,
 * relative or long: PMIx puts unix sockets in there and their paths are
 * limited to 108 bytes). Returns 0 and the path in `out`, or -1 with a
 * message in `err`.
 */
int ucftrun_tmpdir_create(char *out, size_t outlen, char *err, size_t errlen);

/* Removes the directory and its contents (does not follow links). */
void ucftrun_tmpdir_remove(const char *dir);

#endif
