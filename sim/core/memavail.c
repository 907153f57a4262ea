/* SPDX-License-Identifier: MIT
 *
 * memavail.c - how much memory this process may still take (memavail.h).
 */
#include "memavail.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The first line of path as a number of bytes; 0 when the file is
 * missing or says "max" (cgroup v2's no limit). */
static uint64_t read_bytes(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    char word[32] = "";
    if (f == NULL)
        return 0;
    if (fscanf(f, "%31s", word) == 1 && strcmp(word, "max") != 0 &&
        sscanf(word, "%llu", &v) != 1)
        v = 0;
    fclose(f);
    return (uint64_t)v;
}

static uint64_t meminfo_available(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[256];
    unsigned long long kb = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return (uint64_t)kb * 1024;
}

/* Lowers *room to what the cgroup directory dir leaves: limit less
 * usage (files named limit and usage in it), when it has a limit. A limit
 * of 2^62 or more is v1's "unlimited". */
static void bound_by(const char *dir, const char *limit, const char *usage,
                     uint64_t *room)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, limit);
    uint64_t lim = read_bytes(path);
    if (lim == 0 || lim >= (1ull << 62))
        return;
    snprintf(path, sizeof path, "%s/%s", dir, usage);
    uint64_t use = read_bytes(path);
    uint64_t left = use < lim ? lim - use : 0;
    if (left < *room)
        *room = left;
}

/* Every level from the cgroup's directory up to the hierarchy's root:
 * a limit set on a parent (a Slurm job above its step, a pod above its
 * container) binds too. Where the process's own path is not there (a
 * container sees its cgroup as the root), the root is still read. */
static void bound_hierarchy(const char *root, const char *rel,
                            const char *limit, const char *usage,
                            uint64_t *room)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s%s", root, rel);
    size_t base = strlen(root);
    for (;;) {
        bound_by(dir, limit, usage, room);
        char *slash = strrchr(dir + base, '/');
        if (slash == NULL)
            break;
        *slash = '\0';
    }
}

uint64_t nsim_mem_available_from(const char *meminfo, const char *cgroup,
                                 const char *sysfs, uint64_t fallback)
{
    uint64_t room = meminfo_available(meminfo);
    if (room == 0)
        room = fallback;
    FILE *f = fopen(cgroup, "r");
    char line[4096];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        /* "0::/path" (v2) or "4:memory:/path" (v1, memory among its
         * controllers) */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL || c2[1] != '/')
            continue;
        *c2 = '\0';
        const char *ctl = c1 + 1, *rel = strcmp(c2 + 1, "/") ? c2 + 1 : "";
        if (*ctl == '\0') {
            bound_hierarchy(sysfs, rel, "memory.max", "memory.current", &room);
            continue;
        }
        char ctls[256];
        snprintf(ctls, sizeof ctls, ",%s,", ctl);
        if (strstr(ctls, ",memory,") == NULL)
            continue;
        char root[4096];
        snprintf(root, sizeof root, "%s/memory", sysfs);
        bound_hierarchy(root, rel, "memory.limit_in_bytes",
                        "memory.usage_in_bytes", &room);
    }
    if (f != NULL)
        fclose(f);
    return room;
}

uint64_t nsim_mem_available(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz
                                         : (uint64_t)4 << 30;
    return nsim_mem_available_from("/proc/meminfo", "/proc/self/cgroup",
                                   "/sys/fs/cgroup", phys);
}
