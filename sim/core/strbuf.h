/* SPDX-License-Identifier: MIT
 *
 * strbuf.h - a growable text buffer for writers that build a whole file
 * in memory before one atomic write (plot scripts, traces, sweep CSV and
 * JSON).
 *
 * Owns: the text (s, malloc'd, NUL-terminated once anything is
 * appended). An allocation failure sets oom and makes every later append
 * a no-op, so a writer checks once, at the end.
 */
#ifndef NSIM_CORE_STRBUF_H
#define NSIM_CORE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "err.h"

typedef struct nsim_strbuf {
    char *s;
    size_t len, cap;
    int oom;
} nsim_strbuf;

/* Appends printf-style text; the first allocation is 64 KiB. */
void nsim_strbuf_printf(nsim_strbuf *b, const char *fmt, ...)
    NSIM_PRINTF(2, 3);
void nsim_strbuf_vprintf(nsim_strbuf *b, const char *fmt, va_list ap);

#endif
