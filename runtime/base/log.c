#include "log.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

static const char *const level_names[] = {"none", "error", "warn",
                                          "info", "debug", "trace"};

void ucft__log_init(ucft_log_t *log, ucft_log_level_t level, const char *prefix)
{
    log->level = level;
    log->stream = NULL;
    snprintf(log->prefix, sizeof(log->prefix), "%s", prefix ? prefix : "ucft");
}

void ucft__log_set_prefix(ucft_log_t *log, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log->prefix, sizeof(log->prefix), fmt, ap);
    va_end(ap);
}

void ucft__log_emit(const ucft_log_t *log, ucft_log_level_t level,
                    const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    const char *base = strrchr(file, '/');

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* One fprintf per message so that lines of different ranks do not
     * interleave inside a line. */
    fprintf(log->stream ? log->stream : stderr, "[%s] %s: %s (%s:%d)\n",
            log->prefix, ucft__log_level_name(level), msg,
            base ? base + 1 : file, line);
}

int ucft__log_level_parse(const char *text, ucft_log_level_t *level)
{
    if (text == NULL)
        return -1;
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcasecmp(text, level_names[i]) == 0) {
            *level = (ucft_log_level_t)i;
            return 0;
        }
    }
    if (text[0] >= '0' && text[0] <= '5' && text[1] == '\0') {
        *level = (ucft_log_level_t)(text[0] - '0');
        return 0;
    }
    return -1;
}

const char *ucft__log_level_name(ucft_log_level_t level)
{
    if ((unsigned)level < sizeof(level_names) / sizeof(level_names[0]))
        return level_names[level];
    return "?";
}
