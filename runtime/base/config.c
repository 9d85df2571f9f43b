#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *ucft__config_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

static int parse_u64(const char *t, uint64_t *v, char **end)
{
    if (t == NULL || !isdigit((unsigned char)*t))
        return -1; /* strtoull would take white space and a sign */
    errno = 0;
    unsigned long long x = strtoull(t, end, 10);
    if (errno != 0 || *end == t)
        return -1;
    *v = x;
    return 0;
}

int ucft__config_parse_int(const ucft_config_field_t *f, const char *t, void *d)
{
    (void)f;
    char *end;
    if (t == NULL || *t == '\0' || isspace((unsigned char)*t))
        return -1;
    errno = 0;
    long v = strtol(t, &end, 10);
    if (errno != 0 || *end != '\0' || v < INT32_MIN || v > INT32_MAX)
        return -1;
    *(int *)d = (int)v;
    return 0;
}

int ucft__config_parse_uint(const ucft_config_field_t *f, const char *t,
                            void *d)
{
    (void)f;
    uint64_t v;
    char *end;
    if (parse_u64(t, &v, &end) != 0 || *end != '\0' || v > UINT32_MAX)
        return -1;
    *(unsigned *)d = (unsigned)v;
    return 0;
}

int ucft__config_parse_bool(const ucft_config_field_t *f, const char *t,
                            void *d)
{
    static const char *const yes[] = {"y", "yes", "1", "on", "true"};
    static const char *const no[] = {"n", "no", "0", "off", "false"};
    (void)f;
    if (t == NULL)
        return -1;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(t, yes[i]) == 0) {
            *(int *)d = 1;
            return 0;
        }
        if (strcasecmp(t, no[i]) == 0) {
            *(int *)d = 0;
            return 0;
        }
    }
    return -1;
}

int ucft__config_parse_time(const ucft_config_field_t *f, const char *t,
                            void *d)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"ms", 1000000},
                 {"s", 1000000000},
                 {"", 1000000}};
    uint64_t v;
    char *end;
    (void)f;
    if (parse_u64(t, &v, &end) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0) {
            /* Longer makes no sense, and "now + duration" must not wrap
             * (nor UCX's keepalive in its own time units). */
            if (v > UCFT_CONFIG_TIME_MAX_NS / units[i].ns)
                return -1;
            *(uint64_t *)d = v * units[i].ns;
            return 0;
        }
    }
    return -1;
}

int ucft__config_parse_size(const ucft_config_field_t *f, const char *t,
                            void *d)
{
    uint64_t v, mul = 1;
    char *end;
    (void)f;
    if (parse_u64(t, &v, &end) != 0)
        return -1;
    if (strcasecmp(end, "k") == 0)
        mul = 1ull << 10;
    else if (strcasecmp(end, "m") == 0)
        mul = 1ull << 20;
    else if (strcasecmp(end, "g") == 0)
        mul = 1ull << 30;
    else if (*end != '\0')
        return -1;
    if (v > SIZE_MAX / mul)
        return -1;
    *(size_t *)d = (size_t)(v * mul);
    return 0;
}

int ucft__config_parse_enum(const ucft_config_field_t *f, const char *t,
                            void *d)
{
    if (t == NULL || f->choices == NULL)
        return -1;
    for (int i = 0; f->choices[i] != NULL; i++) {
        if (strcasecmp(t, f->choices[i]) == 0) {
            *(int *)d = i;
            return 0;
        }
    }
    return -1;
}

int ucft__config_parse_string(const ucft_config_field_t *f, const char *t,
                              void *d)
{
    (void)f;
    *(const char **)d = t;
    return 0;
}

/* What a field's parser accepts, short enough for one error line (the
 * field's doc can be long: `ucft-info -c` prints it). */
static const char *expects(const ucft_config_field_t *f)
{
    if (f->parse == ucft__config_parse_int)
        return "a decimal integer";
    if (f->parse == ucft__config_parse_uint)
        return "an unsigned decimal integer below 2^32";
    if (f->parse == ucft__config_parse_bool)
        return "y|n, yes|no, 1|0, on|off or true|false";
    if (f->parse == ucft__config_parse_time)
        return "a duration up to 1000000s: a number with unit "
               "ns|us|ms|s (ms if none)";
    if (f->parse == ucft__config_parse_size)
        return "a size: a number with optional k|m|g";
    return "a valid value (see ucft-info -c)";
}

ucft_status_t ucft__config_read(const ucft_config_table_t *table, void *dst,
                                ucft_config_getenv_fn getenv_fn, void *arg,
                                char *err, size_t errlen)
{
    char name[128];
    if (getenv_fn == NULL)
        getenv_fn = ucft__config_getenv;
    for (const ucft_config_field_t *f = table->fields; f->name != NULL; f++) {
        snprintf(name, sizeof(name), UCFT_CONFIG_PREFIX "%s", f->name);
        const char *v = getenv_fn(name, arg);
        const char *text = v != NULL ? v : f->dflt;
        if (f->parse(f, text, (char *)dst + f->offset) != 0) {
            if (err != NULL && errlen > 0) {
                if (f->choices != NULL) {
                    char list[256] = "";
                    for (int i = 0; f->choices[i] != NULL; i++) {
                        strncat(list, i ? "|" : "",
                                sizeof(list) - strlen(list) - 1);
                        strncat(list, f->choices[i],
                                sizeof(list) - strlen(list) - 1);
                    }
                    snprintf(err, errlen, "%s='%s': expected one of %s", name,
                             text, list);
                } else {
                    snprintf(err, errlen, "%s='%s': expected %s (default %s)",
                             name, text, expects(f), f->dflt);
                }
            }
            return UCFT_ERR_INVALID_PARAM;
        }
    }
    return UCFT_OK;
}

char *ucft__config_list_next(char *elem)
{
    char *comma = strchr(elem, ',');
    if (comma != NULL)
        *comma++ = '\0';
    return comma;
}
