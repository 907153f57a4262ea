/* SPDX-License-Identifier: MIT
 *
 * memavail.h - how much memory this process may still take.
 *
 * Owns: the figure the default memory budget is taken from. The kernel's
 * MemAvailable counts the whole machine; in a container or a batch job
 * (Slurm, systemd, Docker, Kubernetes) the process's memory cgroup is the
 * limit the OOM killer enforces, so the room left under it (its limit
 * less its usage, on every level up to the root: cgroup v2 memory.max and
 * memory.current, v1 memory.limit_in_bytes and memory.usage_in_bytes)
 * bounds the figure too.
 */
#ifndef NSIM_CORE_MEMAVAIL_H
#define NSIM_CORE_MEMAVAIL_H

#include <stdint.h>

/* The memory this process may still take, in bytes: the least of
 * MemAvailable and the room under each of its cgroup's limits; the
 * machine's physical memory where /proc/meminfo cannot be read. */
uint64_t nsim_mem_available(void);

/* The same, read from other files (tests): meminfo as /proc/meminfo,
 * cgroup as /proc/self/cgroup, sysfs as /sys/fs/cgroup (its v1
 * controllers in subdirectories, v2 unified at the top). A file that is
 * missing or unreadable sets no bound. fallback: the figure where meminfo
 * gives none. */
uint64_t nsim_mem_available_from(const char *meminfo, const char *cgroup,
                                 const char *sysfs, uint64_t fallback);

#endif
