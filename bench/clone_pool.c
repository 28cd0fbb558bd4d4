/* Does a thread pool pay for cloning a tree's files?  Clones every regular
 * file of SRC (one flat directory) into DST (created) the way `uringkit cp -r`
 * does on a reflink file system: open the source, create the destination
 * (O_EXCL), FICLONE, close both, with THREADS threads taking files in turn
 * (1 = inline on the submitting thread).  Prints files/s.
 *
 *   cc -O2 -pthread -o clone_pool bench/clone_pool.c
 *   clone_pool SRC DST THREADS
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char **names;
static size_t count;
static atomic_size_t next;
static int src_dir, dst_dir;
static atomic_int failures;

static void *work(void *arg) {
    (void)arg;
    for (;;) {
        const size_t i = atomic_fetch_add(&next, 1);
        if (i >= count) return NULL;
        const int s = openat(src_dir, names[i], O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (s < 0 || fstat(s, &st) != 0) {
            atomic_fetch_add(&failures, 1);
            continue;
        }
        const int d =
            openat(dst_dir, names[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   st.st_mode & 0777);
        if (d < 0 || ioctl(d, FICLONE, s) != 0) atomic_fetch_add(&failures, 1);
        if (d >= 0 && close(d) != 0) atomic_fetch_add(&failures, 1);
        close(s);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: clone_pool SRC DST THREADS\n");
        return 2;
    }
    const int threads = atoi(argv[3]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    DIR *dir = opendir(argv[1]);
    if (!dir) {
        perror(argv[1]);
        return 4;
    }
    size_t cap = 1024;
    names = malloc(cap * sizeof *names);
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_type != DT_REG) continue;
        if (count == cap) names = realloc(names, (cap *= 2) * sizeof *names);
        names[count++] = strdup(e->d_name);
    }
    src_dir = dirfd(dir);
    if (mkdir(argv[2], 0755) != 0) {
        perror(argv[2]);
        return 4;
    }
    dst_dir = open(argv[2], O_RDONLY | O_DIRECTORY);
    pthread_t tid[64];
    for (int t = 1; t < threads && t < 64; ++t) pthread_create(&tid[t], NULL, work, NULL);
    work(NULL);
    for (int t = 1; t < threads && t < 64; ++t) pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%d threads: %zu files in %.3f s, %.0f files/s, %d failures\n", threads, count, s,
           count / s, failures);
    return failures ? 1 : 0;
}
