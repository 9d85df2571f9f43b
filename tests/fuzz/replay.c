/*
 * Runs a fuzz target over files and directories of inputs without
 * libFuzzer: the corpus as a regression test in every build (gcc, ASan),
 * and the way to replay one input. Usage: replay-<target> PATH...
 * Exit 0 when every input ran; a broken invariant aborts.
 */
#include "fuzz.h"

#include <dirent.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (buf == NULL)
        return -1;
    /* An exact-size copy, so that a read past the input is seen. */
    uint8_t *exact = malloc(n > 0 ? n : 1);
    if (exact == NULL) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;

    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += run_file(argv[i]) != 0;
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            char path[4096];
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            bad += run_file(path) != 0;
            files++;
        }
        if (d != NULL)
            closedir(d);
    }
    printf("replay: %d inputs, %d unreadable\n", files, bad);
    return files == 0 || bad > 0 ? 1 : 0;
}
