/*
 * Reading a process's or a thread's /proc stat line, for the fields after
 * the command name.
 */
#ifndef UCFT_BASE_PROCSTAT_H
#define UCFT_BASE_PROCSTAT_H

#include <stddef.h>

/* Reads the stat file at `path` (/proc/PID/stat, /proc/self/task/TID/stat)
 * into buf (len bytes) and returns the text after the command name, which
 * may itself hold spaces and parentheses: it starts with " S", the space
 * before field 3. NULL when the file cannot be read or has no name. */
const char *ucft__procstat_read(const char *path, char *buf, size_t len);

/* The same for a stat line already in memory (NUL-terminated): the text
 * after the last ')', or NULL when there is none. Pure: the line comes
 * from another process (its command name is its own to choose), so this
 * and the field parser below are fuzzed (tests/fuzz/). */
const char *ucft__procstat_parse(const char *line);

/* Field 3 (state, one character) and field 5 (process group) from the
 * text after the name (" S PPID PGRP ..."). 0, or -1 (and nothing
 * written) when they are missing or out of range. */
int ucft__procstat_state_pgrp(const char *after, char *state, int *pgrp);

#endif
