/* /proc stat lines (see procstat.h). */
#include "runtime/base/procstat.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ucft__procstat_read(const char *path, char *buf, size_t len)
{
    FILE *f = len > 0 ? fopen(path, "r") : NULL;
    if (f == NULL)
        return NULL;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return ucft__procstat_parse(buf);
}

const char *ucft__procstat_parse(const char *line)
{
    /* The name is in parentheses: the fields follow its last ')'. */
    const char *p = strrchr(line, ')');
    return p == NULL ? NULL : p + 1;
}

/* A decimal field after one space at *p: moves *p past it. */
static int field_long(const char **p, long min, long max, long *out)
{
    char *end;
    if (**p != ' ')
        return -1;
    errno = 0;
    long v = strtol(*p + 1, &end, 10);
    if (end == *p + 1 || errno != 0 || v < min || v > max ||
        (*end != ' ' && *end != '\0' && *end != '\n'))
        return -1;
    *p = end;
    *out = v;
    return 0;
}

int ucft__procstat_state_pgrp(const char *after, char *state, int *pgrp)
{
    long ppid, pg;
    const char *p = after;

    if (p == NULL || p[0] != ' ' || p[1] == '\0' || p[1] == ' ')
        return -1;
    char st = p[1];
    p += 2;
    if (field_long(&p, 0, INT_MAX, &ppid) != 0 ||
        field_long(&p, 0, INT_MAX, &pg) != 0)
        return -1;
    *state = st;
    *pgrp = (int)pg;
    return 0;
}
