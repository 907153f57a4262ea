/* SPDX-License-Identifier: MIT
 *
 * err.c - status strings and the error record (see err.h).
 */
#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *nsim_strerror(int code)
{
    switch (code) {
#define XX(name, val, msg)                                                   \
    case NSIM_##name:                                                        \
        return msg;
        NSIM_ERRNO_MAP(XX)
#undef XX
    }
    return "unknown error";
}

int nsim__err_setv(nsim_err *err, int code, const char *file, int line,
                   const char *fmt, va_list ap)
{
    if (err == NULL)
        return code;
    err->code = code;
    err->file = file;
    err->line = line;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return code;
}

int nsim__err_set(nsim_err *err, int code, const char *file, int line,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nsim__err_setv(err, code, file, line, fmt, ap);
    va_end(ap);
    return code;
}

void nsim_err_clear(nsim_err *err)
{
    if (err == NULL)
        return;
    memset(err, 0, sizeof *err);
}

void nsim__panic(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "ncclsim: internal error at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
