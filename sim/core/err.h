/* SPDX-License-Identifier: MIT
 *
 * err.h - status codes and the error record every fallible call fills.
 *
 * Owns: the nsim_status list (one X-macro gives the enum and the strings),
 * nsim_err (code, file, line, message) and the helpers that set it.
 * Rule: a function that can fail returns int (NSIM_OK or a negative code)
 * and sets the detail once, where the error is found; callers pass the
 * code up with NSIM_TRY. The CLI prints err.msg once.
 */
#ifndef NSIM_CORE_ERR_H
#define NSIM_CORE_ERR_H

#include <stdarg.h>

#define NSIM_NODISCARD __attribute__((warn_unused_result))
#define NSIM_PRINTF(a, b) __attribute__((format(printf, a, b)))

#define NSIM_ERRNO_MAP(XX)                                                   \
    XX(OK, 0, "success")                                                     \
    XX(ENOMEM, 1, "out of memory")                                           \
    XX(EINVAL, 2, "invalid argument")                                        \
    XX(ENOTSUP, 3, "not supported by the model")                             \
    XX(ECONFIG, 4, "invalid configuration")                                  \
    XX(ESTATE, 5, "wrong object state")                                      \
    XX(EIO, 6, "input/output error")                                         \
    XX(ENOENT, 7, "not found")                                               \
    XX(EAGAIN, 8, "resource temporarily full")                               \
    XX(ESIM, 9, "simulation error")                                          \
    XX(EFAULT, 10, "stopped by the fault plan")                              \
    XX(EBUDGET, 11, "over the memory or event budget")

typedef enum {
#define XX(name, val, msg) NSIM_##name = -(val),
    NSIM_ERRNO_MAP(XX)
#undef XX
} nsim_status;

typedef struct nsim_err {
    int code;
    const char *file;
    int line;
    char msg[512];
} nsim_err;

const char *nsim_strerror(int code);

/* Records code, place and message in err (err may be NULL); returns code. */
int nsim__err_set(nsim_err *err, int code, const char *file, int line,
                  const char *fmt, ...) NSIM_PRINTF(5, 6);
int nsim__err_setv(nsim_err *err, int code, const char *file, int line,
                   const char *fmt, va_list ap);
void nsim_err_clear(nsim_err *err);

#define NSIM_ERR(e, code, ...)                                               \
    nsim__err_set((e), (code), __FILE__, __LINE__, __VA_ARGS__)
#define NSIM_TRY(call)                                                       \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != NSIM_OK)                                                  \
            return rc_;                                                      \
    } while (0)

/* Broken invariants: print place and abort. Never for input errors. */
void nsim__panic(const char *file, int line, const char *fmt, ...)
    NSIM_PRINTF(3, 4) __attribute__((noreturn));
#define NSIM_PANIC(...) nsim__panic(__FILE__, __LINE__, __VA_ARGS__)

#endif
