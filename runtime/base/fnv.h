/*
 * FNV-1a, 64 bits: the hash of results and decisions that ranks compare
 * (the majority gates, collectives/coll_gate.c and agree_gate.c). Not a
 * checksum against corruption (coll_csum.c mixes words for that).
 */
#ifndef UCFT_FNV_H
#define UCFT_FNV_H

#include <stddef.h>
#include <stdint.h>

#define UCFT_FNV_BASIS 0xcbf29ce484222325ull

/* h extended by n bytes at p. */
static inline uint64_t ucft_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

#endif
