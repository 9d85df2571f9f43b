/*
 * Fuzz target: a /proc/PID/stat line as the launcher's kill guard
 * (launcher/handshake.c) and the runtime read it. The command name in it
 * is chosen by the process itself (prctl PR_SET_NAME), so it may hold
 * spaces, parentheses and digits. Input: the line.
 */
#include "fuzz.h"
#include "runtime/base/procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    size_t len;
    char *line = fuzz_rest(&in, 1, &len);
    const char *after = ucft__procstat_parse(line);
    char state = 0;
    int pgrp = -1;

    if (after != NULL) {
        FUZZ_ASSERT(after > line && after[-1] == ')');
        FUZZ_ASSERT(strchr(after, ')') == NULL);
        if (ucft__procstat_state_pgrp(after, &state, &pgrp) == 0)
            FUZZ_ASSERT(pgrp >= 0 && state != ' ' && state != '\0');
    }
    free(line);
    return 0;
}
