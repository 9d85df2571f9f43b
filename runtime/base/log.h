/*
 * Logging. A logger belongs to whoever owns it (a context, the launcher, a
 * simulated rank): there is no global logger. The level is checked before
 * any argument is evaluated. Messages start with the owner's prefix (for a
 * context: "[ucft rank R]").
 */
#ifndef UCFT_BASE_LOG_H
#define UCFT_BASE_LOG_H

#include <stdio.h>

typedef enum ucft_log_level {
    UCFT_LOG_NONE = 0,
    UCFT_LOG_ERROR,
    UCFT_LOG_WARN,
    UCFT_LOG_INFO,
    UCFT_LOG_DEBUG,
    UCFT_LOG_TRACE,
} ucft_log_level_t;

typedef struct ucft_log {
    ucft_log_level_t level;
    char prefix[48]; /* e.g. "ucft rank 3" */
    FILE *stream;    /* NULL means stderr */
} ucft_log_t;

void ucft__log_init(ucft_log_t *log, ucft_log_level_t level,
                    const char *prefix);
void ucft__log_set_prefix(ucft_log_t *log, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ucft__log_emit(const ucft_log_t *log, ucft_log_level_t level,
                    const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Parses "error", "warn", "info", "debug", "trace", "none" or a digit. */
int ucft__log_level_parse(const char *text, ucft_log_level_t *level);
const char *ucft__log_level_name(ucft_log_level_t level);

#define ucft_log_enabled(log, lvl) ((log) != NULL && (log)->level >= (lvl))

#define ucft_log_(log, lvl, ...)                                               \
    do {                                                                       \
        if (ucft_log_enabled(log, lvl))                                        \
            ucft__log_emit((log), (lvl), __FILE__, __LINE__, __VA_ARGS__);     \
    } while (0)

#define ucft_error(log, ...) ucft_log_((log), UCFT_LOG_ERROR, __VA_ARGS__)
#define ucft_warn(log, ...)  ucft_log_((log), UCFT_LOG_WARN, __VA_ARGS__)
#define ucft_info(log, ...)  ucft_log_((log), UCFT_LOG_INFO, __VA_ARGS__)
#define ucft_debug(log, ...) ucft_log_((log), UCFT_LOG_DEBUG, __VA_ARGS__)
#define ucft_trace(log, ...) ucft_log_((log), UCFT_LOG_TRACE, __VA_ARGS__)

#endif
