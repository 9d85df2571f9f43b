/*
 * Fuzz target: the UCFT_* variables as ucft_init reads them
 * (runtime/base/config.h) into the runtime's and the communicator layer's
 * tables. Input: lines "NAME=VALUE" (a line without '=' is skipped); a
 * name may be given without its UCFT_ prefix. Every value parses or the
 * read fails with a message naming the variable.
 */
#include "fuzz.h"
#include "comm/variables.h"
#include "runtime/variables.h"

#define MAX_VARS 32

typedef struct env {
    const char *name[MAX_VARS];
    const char *value[MAX_VARS];
    int n;
} env_t;

static const char *env_get(const char *name, void *arg)
{
    const env_t *e = arg;
    for (int i = e->n - 1; i >= 0; i--)
        if (strcmp(e->name[i], name) == 0 ||
            (strncmp(name, "UCFT_", 5) == 0 &&
             strcmp(e->name[i], name + 5) == 0))
            return e->value[i];
    return NULL;
}

static void read_table(const ucft_config_table_t *t, void *dst, env_t *e)
{
    char err[512];
    err[0] = '\0';
    ucft_status_t st = ucft__config_read(t, dst, env_get, e, err, sizeof(err));
    if (st != UCFT_OK)
        FUZZ_ASSERT(strncmp(err, "UCFT_", 5) == 0 &&
                    memchr(err, '\0', sizeof(err)) != NULL);
    else
        FUZZ_ASSERT(st == UCFT_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t in = {data, size};
    size_t len;
    char *text = fuzz_rest(&in, 1, &len);
    env_t e = {.n = 0};

    for (char *line = text, *next; line != NULL && e.n < MAX_VARS;
         line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        char *eq = strchr(line, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        e.name[e.n] = line;
        e.value[e.n++] = eq + 1;
    }
    rt_config_t rt;
    cm_config_t cm;
    read_table(&rt_config_table, &rt, &e);
    read_table(&cm_config_table, &cm, &e);
    free(text);
    return 0;
}
