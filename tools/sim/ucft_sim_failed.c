/* ucft-sim --failed and --tree-repair (ucft_sim_failed.h). */
#include "ucft_sim_failed.h"
#include "transport/sim/sim.h"

#include <stdlib.h>
#include <string.h>

static const char *const designs[] = {"keep", "reroute", "lookup", "rebalance",
                                      "fresh"};

static int parse_count(const char *t, int *out)
{
    char *end;
    long v = strtol(t, &end, 10);
    if (end == t || *end || v < 0 || v > (1l << 24))
        return -1;
    *out = (int)v;
    return 0;
}

int sim_failed_parse(sim_failed_t *f, const char *spec)
{
    free(f->list);
    f->list = NULL;
    f->nlist = 0;
    if (strncmp(spec, "RANDOM:", 7) == 0 || strncmp(spec, "random:", 7) == 0) {
        f->kind = SIM_FAILED_RANDOM;
        return parse_count(spec + 7, &f->k);
    }
    if (strncmp(spec, "FIRST:", 6) == 0 || strncmp(spec, "first:", 6) == 0) {
        f->kind = SIM_FAILED_FIRST;
        return parse_count(spec + 6, &f->k);
    }
    f->kind = SIM_FAILED_LIST;
    if (*spec == 0)
        return 0; /* none */
    for (const char *p = spec; p != NULL;
         p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        char buf[16];
        size_t l = strcspn(p, ",");
        int r;
        if (l == 0 || l >= sizeof(buf))
            return -1;
        memcpy(buf, p, l);
        buf[l] = 0;
        if (parse_count(buf, &r) != 0)
            return -1;
        int *nl = realloc(f->list, (f->nlist + 1) * sizeof(int));
        if (nl == NULL)
            return -1;
        f->list = nl;
        f->list[f->nlist++] = r;
    }
    return 0;
}

int sim_failed_design_parse(sim_failed_t *f, const char *name)
{
    for (int i = 0; i < (int)(sizeof(designs) / sizeof(designs[0])); i++)
        if (strcmp(name, designs[i]) == 0) {
            f->design = i;
            return 0;
        }
    return -1;
}

const char *sim_failed_design_name(int design)
{
    return design >= 0 && design < (int)(sizeof(designs) / sizeof(designs[0]))
               ? designs[design]
               : "?";
}

int sim_failed_set(const sim_failed_t *f, int n, int root, uint64_t seed,
                   uint8_t *dead)
{
    int k = 0;
    memset(dead, 0, (size_t)n);
    switch (f->kind) {
    case SIM_FAILED_LIST:
        for (size_t i = 0; i < f->nlist; i++) {
            int r = f->list[i];
            if (r >= n || r == root)
                return -1;
            k += !dead[r];
            dead[r] = 1;
        }
        return k;
    case SIM_FAILED_FIRST: /* the paper's choice: ranks after the root */
        if (f->k >= n)
            return -1;
        for (int i = 1; i <= f->k; i++)
            dead[(root + i) % n] = 1;
        return f->k;
    case SIM_FAILED_RANDOM: {
        if (f->k >= n)
            return -1;
        uint64_t s = seed ^ 0x5eedf00dull;
        while (k < f->k) {
            int r = (int)(sim_splitmix64(&s) % (uint64_t)n);
            if (r == root || dead[r])
                continue;
            dead[r] = 1;
            k++;
        }
        return k;
    }
    default:
        return 0;
    }
}
