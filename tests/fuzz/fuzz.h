/*
 * Shared by the fuzz targets: each defines LLVMFuzzerTestOneInput (the
 * entry point of libFuzzer, and of replay.c, which runs a corpus without
 * it). A broken invariant is a crash on purpose (FUZZ_ASSERT), so that the
 * fuzzer reports it with the input.
 */
#ifndef UCFT_FUZZ_H
#define UCFT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__,         \
                    __LINE__, #cond);                                          \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* A little-endian reader over the input: what the harness takes to set
 * the scene (job size, this rank, a tag) comes first; 0 past the end. */
typedef struct fuzz_in {
    const uint8_t *p;
    size_t left;
} fuzz_in_t;

static inline uint64_t fuzz_take(fuzz_in_t *in, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && in->left > 0; i++, in->p++, in->left--)
        v |= (uint64_t)*in->p << (8 * i);
    return v;
}

/* The rest of the input as a fresh heap copy of exactly its length (so
 * that ASan sees every byte read past it), NUL-terminated one byte
 * further when `nul`. */
static inline char *fuzz_rest(fuzz_in_t *in, int nul, size_t *len)
{
    char *b = malloc(in->left + (nul ? 1 : 0) + (in->left == 0 && !nul));
    if (b == NULL)
        abort();
    if (in->left > 0)
        memcpy(b, in->p, in->left);
    if (nul)
        b[in->left] = '\0';
    *len = in->left;
    in->p += in->left;
    in->left = 0;
    return b;
}

#endif
