/* The baseline for `uringkit readfiles`: a plain synchronous loop, one file
 * at a time: open, read to end of file, close (optionally XXH64 of the bytes,
 * with libxxhash, as readfiles does).  The file list is gathered first (not
 * timed), the loop is timed alone, like readfiles' own "files/s".
 *
 *   cc -O2 -o sync_readfiles bench/sync_readfiles.c -lxxhash
 *   sync_readfiles [--hash] DIR      prints: files bytes seconds files_per_s
 *   sync_readfiles [--hash] -        the same over the paths listed on stdin,
 *                                    one per line (as `readfiles -` reads them)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

static char** paths;
static size_t npaths, cap;

static void walk(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) {
        perror(dir);
        exit(1);
    }
    struct dirent* e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char* p = malloc(strlen(dir) + strlen(e->d_name) + 2);
        sprintf(p, "%s/%s", dir, e->d_name);
        if (e->d_type == DT_DIR) {
            walk(p);
            free(p);
            continue;
        }
        if (e->d_type != DT_REG) {
            free(p);
            continue;
        }
        if (npaths == cap) {
            cap = cap ? cap * 2 : 1024;
            paths = realloc(paths, cap * sizeof *paths);
        }
        paths[npaths++] = p;
    }
    closedir(d);
}

static void read_list(void) {
    char* line = NULL;
    size_t len = 0;
    ssize_t n;
    while ((n = getline(&line, &len, stdin)) > 0) {
        if (line[n - 1] == '\n') line[--n] = '\0';
        if (n == 0) continue;
        if (npaths == cap) {
            cap = cap ? cap * 2 : 1024;
            paths = realloc(paths, cap * sizeof *paths);
        }
        paths[npaths++] = strdup(line);
    }
    free(line);
}

static int by_name(const void* a, const void* b) {
    return strcmp(*(char* const*)a, *(char* const*)b);
}

int main(int argc, char** argv) {
    int hash = argc > 2 && !strcmp(argv[1], "--hash");
    if (argc < 2 + hash) {
        fprintf(stderr, "usage: sync_readfiles [--hash] DIR|-\n");
        return 2;
    }
    if (!strcmp(argv[1 + hash], "-")) {
        read_list(); /* in the list's order */
    } else {
        walk(argv[1 + hash]);
        qsort(paths, npaths, sizeof *paths, by_name);
    }
    static char buf[128 * 1024];
    XXH64_state_t* st = XXH64_createState();
    unsigned long long bytes = 0, sum = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < npaths; ++i) {
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            perror(paths[i]);
            continue;
        }
        if (hash) XXH64_reset(st, 0);
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) {
            if (hash) XXH64_update(st, buf, (size_t)n);
            bytes += (unsigned long long)n;
        }
        close(fd);
        if (hash) sum ^= XXH64_digest(st);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%zu %llu %.6f %.0f %llx\n", npaths, bytes, s, (double)npaths / s, sum);
    return 0;
}
