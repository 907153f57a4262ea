/* SPDX-License-Identifier: MIT
 *
 * hugemem.c - huge pages for the simulation's state (see hugemem.h).
 */
#include "hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/* Below this a process's state fits the TLB's reach anyway. */
#define COLLAPSE_MIN (8u << 20)

static size_t round_up(size_t b)
{
    return (b + NSIM_HUGE_PAGE - 1) / NSIM_HUGE_PAGE * NSIM_HUGE_PAGE;
}

void *nsim_huge_alloc(size_t bytes)
{
    size_t n = round_up(bytes);
    /* over-map by one huge page to align the start on one */
    char *m = mmap(NULL, n + NSIM_HUGE_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    uintptr_t a = ((uintptr_t)m + NSIM_HUGE_PAGE - 1) &
                  ~(uintptr_t)(NSIM_HUGE_PAGE - 1);
    char *p = (char *)a;
    if (p > m)
        munmap(m, (size_t)(p - m));
    if (p + n < m + n + NSIM_HUGE_PAGE)
        munmap(p + n, (size_t)(m + n + NSIM_HUGE_PAGE - (p + n)));
    (void)madvise(p, n, MADV_HUGEPAGE);
    return p;
}

void nsim_huge_free(void *p, size_t bytes)
{
    if (p != NULL)
        munmap(p, round_up(bytes));
}

void *nsim_huge_take(nsim_huge_slab *s, size_t bytes)
{
    bytes = (bytes + 63) & ~(size_t)63;
    if (bytes > NSIM_HUGE_PAGE - 64)
        return NULL;
    if (s->cur == NULL || (size_t)(s->end - s->cur) < bytes) {
        char *c = nsim_huge_alloc(NSIM_HUGE_PAGE);
        if (c == NULL)
            return NULL;
        *(void **)c = s->chunks; /* the first 64 bytes link the slabs */
        s->chunks = c;
        s->cur = c + 64;
        s->end = c + NSIM_HUGE_PAGE;
    }
    void *p = s->cur;
    s->cur += bytes;
    return p;
}

void nsim_huge_release(nsim_huge_slab *s)
{
    while (s->chunks != NULL) {
        void *next = *(void **)s->chunks;
        nsim_huge_free(s->chunks, NSIM_HUGE_PAGE);
        s->chunks = next;
    }
    s->cur = s->end = NULL;
}

/* One mapping of /proc/self/smaps: moved to huge pages if it is the heap
 * or anonymous and private, large, and mostly resident (a sparse mapping,
 * such as a sanitizer's shadow, would only grow). */
static size_t collapse_one(unsigned long lo, unsigned long hi,
                           const char *perms, const char *path,
                           unsigned long rss_kb)
{
    if (strcmp(perms, "rw-p") != 0 ||
        (path[0] != '\0' && strcmp(path, "[heap]") != 0))
        return 0;
    uintptr_t a = ((uintptr_t)lo + NSIM_HUGE_PAGE - 1) &
                  ~(uintptr_t)(NSIM_HUGE_PAGE - 1);
    uintptr_t b = (uintptr_t)hi & ~(uintptr_t)(NSIM_HUGE_PAGE - 1);
    if (b <= a || b - a < COLLAPSE_MIN ||
        (uint64_t)rss_kb * 1024 * 2 < (uint64_t)(hi - lo))
        return 0;
    (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
    (void)madvise((void *)a, b - a, MADV_COLLAPSE);
    return b - a;
}

size_t nsim_huge_collapse(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512], perms[8] = "", path[256] = "";
    unsigned long lo = 0, hi = 0, kb;
    int have = 0;
    size_t total = 0;
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long a, b;
        char pm[8] = "", pa[256] = "";
        int n = sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &a, &b, pm, pa);
        if (n >= 3 && strchr(line, '-') < strchr(line, ' ')) {
            lo = a;
            hi = b;
            snprintf(perms, sizeof perms, "%s", pm);
            snprintf(path, sizeof path, "%s", n == 4 ? pa : "");
            have = 1;
        } else if (have && sscanf(line, "Rss: %lu kB", &kb) == 1) {
            total += collapse_one(lo, hi, perms, path, kb);
            have = 0;
        }
    }
    fclose(f);
    return total;
}

void *nsim_line_calloc(size_t n, size_t sz)
{
    if (n == 0 || sz == 0)
        n = sz = 1;
    if (n > (SIZE_MAX - 63) / sz)
        return NULL;
    size_t bytes = (n * sz + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, bytes);
    if (p != NULL)
        memset(p, 0, bytes);
    return p;
}
