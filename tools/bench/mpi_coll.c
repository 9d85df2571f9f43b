/*
 * mpi_coll: the Open MPI side of tools/bench/coll_vs_mpi.sh. Not part of
 * the CMake build (ucft has no MPI dependency); the script compiles it
 * with mpicc into its own temporary directory:
 *
 *   mpicc -O2 -o mpi_coll tools/bench/mpi_coll.c
 *   mpirun -np N ./mpi_coll bcast|allreduce|barrier|reduce|allgather|
 *          reduce_scatter SIZE ITERS WARMUP [sync]
 *
 * It measures exactly as `ucft-bench coll` does: WARMUP untimed operations,
 * one MPI_Barrier, then ITERS back-to-back blocking operations (root 0;
 * int64 sum for the reductions; allgather and reduce_scatter: SIZE is the
 * whole vector, n blocks of SIZE / 8 / n int64, MPI_Allgather and
 * MPI_Reduce_scatter_block), each rank timing the interval between
 * its own completions; per rank mean (total / ITERS), median and p99;
 * rank 0 prints one JSON line with the max over ranks of each. With
 * "sync", each operation is timed alone and followed by an untimed
 * MPI_Barrier (ucft-bench coll --sync).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run(const char *op, void *a, void *b, int size, int nranks)
{
    int n64 = size / 8 > 0 ? size / 8 : 1;
    int blk = n64 / nranks > 0 ? n64 / nranks : 1;
    if (strcmp(op, "allgather") == 0)
        return MPI_Allgather(a, blk, MPI_INT64_T, b, blk, MPI_INT64_T,
                             MPI_COMM_WORLD);
    if (strcmp(op, "reduce_scatter") == 0)
        return MPI_Reduce_scatter_block(a, b, blk, MPI_INT64_T, MPI_SUM,
                                        MPI_COMM_WORLD);
    if (strcmp(op, "bcast") == 0)
        return MPI_Bcast(a, size, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (strcmp(op, "allreduce") == 0)
        return MPI_Allreduce(a, b, n64, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (strcmp(op, "reduce") == 0)
        return MPI_Reduce(a, b, n64, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    return MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc != 5 && !(argc == 6 && strcmp(argv[5], "sync") == 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_coll OP SIZE ITERS WARMUP [sync]\n");
        MPI_Finalize();
        return 2;
    }
    const char *op = argv[1];
    int sync = argc == 6;
    int size = atoi(argv[2]), iters = atoi(argv[3]), warmup = atoi(argv[4]);
    if (size < 1 || iters < 1 || warmup < 0) {
        MPI_Finalize();
        return 2;
    }
    size_t bytes = size < 8 ? 8 : (size_t)size;
    if (bytes < 8 * (size_t)nranks)
        bytes = 8 * (size_t)nranks; /* one int64 per block at least */
    int64_t *a = calloc(bytes, 1), *b = calloc(bytes, 1);
    double *t = calloc((size_t)iters, sizeof(*t));
    a[0] = rank + 1;
    for (int i = 0; i < warmup; i++)
        run(op, a, b, size, nranks);
    MPI_Barrier(MPI_COMM_WORLD);
    double prev = now_us(), total = 0;
    for (int i = 0; i < iters; i++) {
        if (sync)
            prev = now_us();
        run(op, a, b, size, nranks);
        double x = now_us();
        t[i] = x - prev;
        total += x - prev;
        prev = x;
        if (sync)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    double mine[3], worst[3];
    mine[0] = total / iters;
    qsort(t, (size_t)iters, sizeof(*t), cmp);
    mine[1] = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
    mine[2] = t[(size_t)(0.99 * (iters - 1))];
    MPI_Reduce(mine, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("{\"bench\":\"mpi_coll\",\"op\":\"%s\",\"ranks\":%d,"
               "\"size\":%d,\"iters\":%d,\"mean_us\":%.3f,"
               "\"median_us\":%.3f,\"p99_us\":%.3f}\n",
               op, nranks, size, iters, worst[0], worst[1], worst[2]);
    free(a);
    free(b);
    free(t);
    MPI_Finalize();
    return 0;
}
