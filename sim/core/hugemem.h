/* SPDX-License-Identifier: MIT
 *
 * hugemem.h - the simulation's state on 2 MiB pages.
 *
 * A packet-level run touches its state (events, pieces, QPs, rings, paths,
 * servers) in an order no cache follows; at tens of thousands of
 * connections the cost per event is then the TLB's, not the model's (on
 * this machine, a VM, 4 KiB pages made a 2-node AllToAll 4-5x slower per
 * event). Owns: anonymous mappings on transparent huge pages for the
 * pools, and a pass that moves the process's heap onto huge pages once a
 * run's state is built. Both are hints: where the kernel has no THP they
 * do nothing and everything still works. Also: zeroed blocks that start
 * on a cache line, for state laid out by line (lanes, connections).
 */
#ifndef NSIM_CORE_HUGEMEM_H
#define NSIM_CORE_HUGEMEM_H

#include <stddef.h>

#define NSIM_HUGE_PAGE (2u << 20)

/* bytes (rounded up to NSIM_HUGE_PAGE) of zeroed memory, or NULL. */
void *nsim_huge_alloc(size_t bytes);
void nsim_huge_free(void *p, size_t bytes); /* NULL-safe; same bytes */

/* Pools carve their blocks out of huge-page slabs: take hands out bytes
 * (at most NSIM_HUGE_PAGE, 64-byte aligned, zeroed) from the current slab
 * or a new one; release unmaps them all. A zeroed struct is empty. */
typedef struct nsim_huge_slab {
    char *cur, *end;
    void *chunks; /* the slabs, linked through their first word */
} nsim_huge_slab;

void *nsim_huge_take(nsim_huge_slab *s, size_t bytes);
void nsim_huge_release(nsim_huge_slab *s);

/* Asks the kernel to back the heap and the other large anonymous
 * mappings with huge pages, now (MADV_COLLAPSE) and on later faults
 * (MADV_HUGEPAGE). Returns the bytes covered. Skips small mappings and
 * sparse ones (a sanitizer's shadow would only grow). */
size_t nsim_huge_collapse(void);

/* n zeroed elements of sz bytes, the block 64-byte aligned and its size
 * rounded up to whole lines; free() releases it. NULL on overflow or
 * without memory (n = 0 still returns a block). */
void *nsim_line_calloc(size_t n, size_t sz);

#endif
