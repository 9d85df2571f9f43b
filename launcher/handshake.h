/*
 * Whether a rank is inside its PMIx connection handshake, for --kill.
 *
 * PMIx 4.2.2's server does not survive a client that dies between opening
 * its connection and the end of the handshake: its connection handler's
 * error path leaves freed memory behind, and the launcher later crashes
 * (SIGSEGV in the PMIx thread; seen once in about 1,500 start-up kills).
 * The start-up hangs of the same runs turned out to have another cause, a
 * store lock held by the killed rank (docs/launcher.md, Known
 * limitations), which this guard does not cover (server.c avoids it by
 * choosing PMIx's hash store). A kill
 * on purpose must not land in that window: the launcher stops the rank's
 * process group, and if a member holds a socket while the server has not
 * yet reported the rank connected, it lets the group go on and kills the
 * rank once the connection is up (or after a bound). A rank that holds no
 * socket yet has not begun to connect and is killed at once: the deaths
 * before connecting stay testable.
 */
#ifndef UCFTRUN_HANDSHAKE_H
#define UCFTRUN_HANDSHAKE_H

#include "launcher/spawn.h"

/* How long a kill waits for the rank's handshake to end. */
#define UCFTRUN_HANDSHAKE_BOUND_NS (2000ull * 1000 * 1000)

/* 1 if the rank may be inside its PMIx handshake (the kill must wait),
 * 0 if it can be killed now. Leaves the process group running in the first
 * case and stopped in the second (a SIGKILL ends stopped processes too).
 * Not for a rank stopped on purpose (--stop): it cannot be connecting. */
int ucftrun_handshake_open(ucftrun_proc_t *p);

#endif
