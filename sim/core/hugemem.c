/* SPDX-License-Identifier: MIT
 *
 * hugemem.c - huge pages for the simulation's state (see hugemem.h).
 */
#include "hugemem.h"

#include <stdint.h>
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

size_t nsim_huge_collapse(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    size_t total = 0;
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        char perms[8] = "", path[256] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &lo, &hi, perms,
                   path) < 3)
            continue;
        /* the heap and anonymous private mappings (malloc's large
         * blocks); not stacks, files or the vdso */
        if (strcmp(perms, "rw-p") != 0 ||
            (path[0] != '\0' && strcmp(path, "[heap]") != 0))
            continue;
        uintptr_t a = ((uintptr_t)lo + NSIM_HUGE_PAGE - 1) &
                      ~(uintptr_t)(NSIM_HUGE_PAGE - 1);
        uintptr_t b = (uintptr_t)hi & ~(uintptr_t)(NSIM_HUGE_PAGE - 1);
        if (b <= a || b - a < COLLAPSE_MIN)
            continue;
        (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
        (void)madvise((void *)a, b - a, MADV_COLLAPSE);
        total += b - a;
    }
    fclose(f);
    return total;
}
