/* Status strings, generated from the one table in ucft.h. */
#include "ucft.h"

const char *ucft_status_string(ucft_status_t status)
{
    switch (status) {
#define UCFT_STATUS_STR_(name, value, text)                                    \
    case UCFT_##name:                                                          \
        return text;
        UCFT_FOREACH_STATUS(UCFT_STATUS_STR_)
#undef UCFT_STATUS_STR_
    }
    return "unknown status";
}

const char *ucft_status_name(ucft_status_t status)
{
    switch (status) {
#define UCFT_STATUS_NAME_(name, value, text)                                   \
    case UCFT_##name:                                                          \
        return #name;
        UCFT_FOREACH_STATUS(UCFT_STATUS_NAME_)
#undef UCFT_STATUS_NAME_
    }
    return "UNKNOWN";
}
