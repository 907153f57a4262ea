/* SPDX-License-Identifier: MIT
 *
 * strbuf.c - a growable text buffer (see strbuf.h).
 */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>

void nsim_strbuf_vprintf(nsim_strbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (b->oom || n < 0) {
        b->oom = 1;
        return;
    }
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 1 << 16;
        while (c < b->len + (size_t)n + 1)
            c *= 2;
        char *g = realloc(b->s, c);
        if (g == NULL) {
            b->oom = 1;
            return;
        }
        b->s = g;
        b->cap = c;
    }
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    b->len += (size_t)n;
}

void nsim_strbuf_printf(nsim_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nsim_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
}
