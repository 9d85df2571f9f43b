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

#endif
