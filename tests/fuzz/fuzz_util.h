/* SPDX-License-Identifier: MIT
 *
 * fuzz_util.h - what the harnesses of readers that take a path (scenario,
 * params file) share: a private directory holding the input as a file,
 * plus the fixed topology files a scenario may name.
 */
#ifndef NSIM_FUZZ_UTIL_H
#define NSIM_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The directory, created once per process under $TMPDIR (or /tmp). */
static const char *fuzz_dir(void)
{
    static char dir[256];
    if (dir[0] == '\0') {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/nsim-fuzz-XXXXXX",
                 t != NULL && t[0] != '\0' ? t : "/tmp");
        if (mkdtemp(dir) == NULL)
            abort(); /* the harness cannot run at all */
    }
    return dir;
}

/* Writes data to DIR/name and returns the path (static buffer). */
static const char *fuzz_write(const char *name, const uint8_t *data,
                              size_t size)
{
    static char path[320];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        abort();
    if (size > 0 && fwrite(data, 1, size, f) != size)
        abort();
    if (fclose(f) != 0)
        abort();
    return path;
}

#endif
