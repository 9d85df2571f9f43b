/* CMocka needs these headers first, in this order. */
#ifndef UCFT_TEST_CMOCKA_INC_H
#define UCFT_TEST_CMOCKA_INC_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#endif
