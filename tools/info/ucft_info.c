/*
 * ucft-info: what this ucft is and what it runs on.
 *   ucft-info        version, platform library versions, UCX resources
 *   ucft-info -c     every UCFT_* variable: default, current value, meaning
 *   ucft-info -h     usage
 */
#include "ucft.h"
#include "runtime/base/config.h"
#include "comm/variables.h"
#include "runtime/variables.h"

#include <hwloc.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

/* Every module's configuration table; a new module adds its table here. */
static const ucft_config_table_t *const tables[] = {&rt_config_table,
                                                    &cm_config_table};

static void print_config(void)
{
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
        printf("# %s\n", tables[t]->module);
        for (const ucft_config_field_t *f = tables[t]->fields; f->name; f++) {
            char name[128];
            snprintf(name, sizeof(name), UCFT_CONFIG_PREFIX "%s", f->name);
            const char *cur = getenv(name);
            printf("#\n# %s\n", f->doc);
            if (f->choices != NULL) {
                printf("# one of:");
                for (int i = 0; f->choices[i]; i++)
                    printf(" %s", f->choices[i]);
                printf("\n");
            }
            printf("%s=%s", name, cur ? cur : f->dflt);
            if (cur != NULL)
                printf("    (default %s)", f->dflt);
            printf("\n");
        }
        printf("\n");
    }
}

static void print_ucx_resources(void)
{
    ucp_config_t *cfg;
    ucp_context_h ctx;
    ucp_params_t p = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                      .features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP};
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK)
        return;
    if (ucp_init(&p, cfg, &ctx) != UCS_OK) {
        ucp_config_release(cfg);
        printf("UCX: cannot initialise a context\n");
        return;
    }
    ucp_config_release(cfg);
    f = open_memstream(&text, &len);
    if (f != NULL) {
        ucp_context_print_info(ctx, f);
        fclose(f);
        printf("UCX resources (UCX_TLS=%s):\n",
               getenv("UCX_TLS") ? getenv("UCX_TLS") : "<all>");
        for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
            if (strstr(l, "resource") != NULL)
                printf("  %s\n", l);
        }
        free(text);
    }
    ucp_cleanup(ctx);
}

static int usage(FILE *out, int code)
{
    fprintf(out, "usage: ucft-info [-c] [-h]\n"
                 "  -c  print every UCFT_* variable with its default, "
                 "current value and meaning\n"
                 "  -h  this help\n");
    return code;
}

int main(int argc, char **argv)
{
    unsigned major, minor, release;
    int config = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0)
            config = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage(stdout, 0);
        else {
            fprintf(stderr, "ucft-info: unknown option '%s'\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    if (config) {
        print_config();
        return 0;
    }
    ucp_get_version(&major, &minor, &release);
    printf("ucft %d.%d.%d\n", UCFT_VERSION_MAJOR, UCFT_VERSION_MINOR,
           UCFT_VERSION_PATCH);
    printf("UCX %u.%u.%u (built against %d.%d)\n", major, minor, release,
           UCP_API_MAJOR, UCP_API_MINOR);
    printf("PMIx %s\n", PMIx_Get_version());
    unsigned hv = hwloc_get_api_version();
    printf("hwloc API %u.%u.%u\n", hv >> 16, (hv >> 8) & 0xff, hv & 0xff);
    print_ucx_resources();
    printf("run 'ucft-info -c' for the configuration variables\n");
    return 0;
}
