/* /proc stat lines (see procstat.h). */
#include "runtime/base/procstat.h"

#include <stdio.h>
#include <string.h>

const char *ucft__procstat_read(const char *path, char *buf, size_t len)
{
    FILE *f = len > 0 ? fopen(path, "r") : NULL;
    if (f == NULL)
        return NULL;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The name is in parentheses: the fields follow its last ')'. */
    const char *p = strrchr(buf, ')');
    return p == NULL ? NULL : p + 1;
}
