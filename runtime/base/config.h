/*
 * Declarative configuration. Each module describes its variables in one
 * table of {name, default, doc, parser, offset}; ucft__config_read() fills a
 * module's struct from the environment (or defaults), and `ucft-info -c`
 * prints every table. A bad value is an error naming the variable, never
 * silently replaced by the default.
 */
#ifndef UCFT_BASE_CONFIG_H
#define UCFT_BASE_CONFIG_H

#include "ucft.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ucft_config_field ucft_config_field_t;

/* Parses `text` into the field at `dst`. Returns 0 or -1 (bad value). */
typedef int (*ucft_config_parse_fn)(const ucft_config_field_t *field,
                                    const char *text, void *dst);

struct ucft_config_field {
    const char *name; /* without the UCFT_ prefix, e.g. "LOG_LEVEL" */
    const char *dflt; /* default, in the same syntax as the variable */
    const char *doc;  /* one sentence */
    ucft_config_parse_fn parse;
    size_t offset; /* of the destination inside the module struct */
    const char *const *choices; /* for ucft__config_parse_enum: NULL-ended */
};

typedef struct ucft_config_table {
    const char *module;
    const ucft_config_field_t *fields; /* ended by a field with name NULL */
} ucft_config_table_t;

/* Parsers. int: signed decimal; uint: unsigned decimal; bool: y/n, yes/no,
 * 1/0, on/off, true/false; time: number with unit ns|us|ms|s (default ms)
 * into uint64_t nanoseconds; size: number with optional k|m|g (binary) into
 * size_t; enum: index in `choices` into int; string: pointer into the
 * environment or table (not copied). */
int ucft__config_parse_int(const ucft_config_field_t *f, const char *t,
                           void *d);
int ucft__config_parse_uint(const ucft_config_field_t *f, const char *t,
                            void *d);
int ucft__config_parse_bool(const ucft_config_field_t *f, const char *t,
                            void *d);
/* The longest duration parse_time accepts: 10^6 s (11.6 days). */
#define UCFT_CONFIG_TIME_MAX_NS (1000000ull * 1000000000ull)
int ucft__config_parse_time(const ucft_config_field_t *f, const char *t,
                            void *d);
int ucft__config_parse_size(const ucft_config_field_t *f, const char *t,
                            void *d);
int ucft__config_parse_enum(const ucft_config_field_t *f, const char *t,
                            void *d);
int ucft__config_parse_string(const ucft_config_field_t *f, const char *t,
                              void *d);

/* Comma-separated lists: ends the element at `elem` at its comma (writes
 * a NUL there) and returns the next element, NULL after the last. Unlike
 * strtok it keeps empty elements ("1,,2": "1", "", "2"), so that the
 * element's parser refuses them. */
char *ucft__config_list_next(char *elem);

/* Looks up a variable for a table: `getenv_fn(name_with_prefix, arg)`
 * returns the value or NULL. Used so that tests can supply values without
 * touching the process environment. */
typedef const char *(*ucft_config_getenv_fn)(const char *name, void *arg);

/* Fills `dst` from the table. On a bad value: returns
 * UCFT_ERR_INVALID_PARAM and writes "UCFT_NAME='value': why" into `err`. */
ucft_status_t ucft__config_read(const ucft_config_table_t *table, void *dst,
                                ucft_config_getenv_fn getenv_fn, void *arg,
                                char *err, size_t errlen);

/* The process environment as a ucft_config_getenv_fn. */
const char *ucft__config_getenv(const char *name, void *arg);

#define UCFT_CONFIG_PREFIX "UCFT_"

#endif
