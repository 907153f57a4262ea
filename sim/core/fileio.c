/* SPDX-License-Identifier: MIT
 *
 * fileio.c - checked input reading and staged, atomic output writing (see
 * fileio.h).
 */
#define _GNU_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ---- inputs read by this command ---- */

#define MAX_INPUTS 64

static struct {
    dev_t dev;
    ino_t ino;
    char path[256];
} inputs[MAX_INPUTS];
static unsigned ninputs;

static void remember_input(const struct stat *st, const char *path)
{
    for (unsigned i = 0; i < ninputs; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
            return;
    if (ninputs == MAX_INPUTS)
        return;
    inputs[ninputs].dev = st->st_dev;
    inputs[ninputs].ino = st->st_ino;
    snprintf(inputs[ninputs].path, sizeof inputs[ninputs].path, "%s", path);
    ninputs++;
}

void nsim_inputs_reset(void) { ninputs = 0; }

void nsim_inputs_forget(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return;
    for (unsigned i = 0; i < ninputs; i++)
        if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino) {
            inputs[i] = inputs[--ninputs];
            return;
        }
}

static const char *input_named(const struct stat *st)
{
    for (unsigned i = 0; i < ninputs; i++)
        if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
            return inputs[i].path;
    return NULL;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

int nsim_read_file(const char *path, char **text, size_t *len,
                   nsim_err *err)
{
    /* O_NONBLOCK: opening a FIFO with no writer must not block */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return NSIM_ERR(err, NSIM_EIO, "%s: cannot open: %s", path,
                        strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return NSIM_ERR(err, NSIM_EIO, "%s: cannot read: %s", path,
                        strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return NSIM_ERR(err, NSIM_EIO,
                        "%s: not a regular file (%s); give a file", path,
                        kind_of(st.st_mode));
    }
    if ((unsigned long long)st.st_size > NSIM_READ_MAX_BYTES) {
        close(fd);
        return NSIM_ERR(err, NSIM_EIO,
                        "%s: %llu bytes, over the %llu MiB limit of an "
                        "input file",
                        path, (unsigned long long)st.st_size,
                        NSIM_READ_MAX_BYTES >> 20);
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    int bad = 0;
    while (buf != NULL) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            bad = errno;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap) { /* the file grew while being read */
            char *nb = cap < NSIM_READ_MAX_BYTES ? realloc(buf, cap * 2 + 1)
                                                 : NULL;
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    close(fd);
    if (buf == NULL || bad) {
        free(buf);
        return NSIM_ERR(err, bad ? NSIM_EIO : NSIM_ENOMEM,
                        "%s: cannot read: %s", path,
                        bad ? strerror(bad) : "out of memory (or over the "
                                              "input limit)");
    }
    buf[n] = '\0';
    remember_input(&st, path);
    *text = buf;
    *len = n;
    return NSIM_OK;
}

/* ---- temporary files, removable from a signal handler ---- */

#define MAX_TEMPS 32

static char temp_name[MAX_TEMPS][PATH_MAX];
static volatile sig_atomic_t temp_used[MAX_TEMPS];
static pid_t temp_owner[MAX_TEMPS]; /* a forked child leaves them alone */

static int temp_claim(const char *name)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (!temp_used[i]) {
            snprintf(temp_name[i], sizeof temp_name[i], "%s", name);
            temp_owner[i] = getpid();
            temp_used[i] = 1; /* after the name is complete */
            return i;
        }
    return -1;
}

static void temp_release(int i, int remove_file)
{
    if (i < 0)
        return;
    if (remove_file && temp_used[i])
        unlink(temp_name[i]);
    temp_used[i] = 0;
}

static void on_signal(int sig)
{
    /* async-signal-safe: getpid, unlink, signal, raise */
    pid_t me = getpid();
    for (int i = 0; i < MAX_TEMPS; i++)
        if (temp_used[i] && temp_owner[i] == me)
            unlink(temp_name[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_all_temps(void)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        temp_release(i, temp_owner[i] == getpid());
}

void nsim_out_install_signals(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SIGHUP: the terminal went away; SIGPIPE: stdout closed (| head)
     * while the outputs are committed */
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (int i = 0; i < 4; i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    for (int i = 0; i < 4; i++) {
        struct sigaction old;
        /* a signal the caller ignores (nohup, SIG_IGN) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
    atexit(remove_all_temps);
}

/* ---- writing ---- */

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

typedef enum out_kind { OUT_RENAME, OUT_INPLACE, OUT_STDOUT } out_kind;

typedef struct out_entry {
    char path[PATH_MAX];   /* as named, for messages */
    char target[PATH_MAX]; /* the file written (symlinks followed) */
    out_kind kind;
    int temp;          /* OUT_RENAME: slot of the temporary file */
    char *data;        /* in place / stdout: held until the commit */
    size_t len;
    dev_t dev;         /* an existing target's identity */
    ino_t ino;
    int exists;
    int fd;            /* OUT_STDOUT: 1 or 2 */
} out_entry;

#define MAX_OUTPUTS 16

static out_entry staged[MAX_OUTPUTS];
static unsigned nstaged;
static int in_transaction;
static unsigned temp_seq;

static int starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Follows path's symlinks to the file they name, even when that file does
 * not exist yet (a dangling link is written through, as `>` does). */
static int resolve_target(const char *path, char *out, size_t cap,
                          nsim_err *err)
{
    char cur[PATH_MAX];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hop = 0; hop < 40; hop++) {
        struct stat lst;
        if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode)) {
            if ((size_t)snprintf(out, cap, "%s", cur) >= cap)
                return NSIM_ERR(err, NSIM_EINVAL, "%s: path too long", path);
            return NSIM_OK;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            return NSIM_ERR(err, NSIM_EIO, "%s: cannot follow the link: %s",
                            path, strerror(errno));
        link[n] = '\0';
        if (link[0] == '/') {
            snprintf(cur, sizeof cur, "%s", link);
        } else {
            char next[PATH_MAX];
            const char *slash = strrchr(cur, '/');
            int dl = slash ? (int)(slash - cur) : -1;
            if ((size_t)(dl >= 0 ? snprintf(next, sizeof next, "%.*s/%s", dl,
                                             cur, link)
                                  : snprintf(next, sizeof next, "%s", link)) >=
                sizeof next)
                return NSIM_ERR(err, NSIM_EINVAL, "%s: path too long", path);
            snprintf(cur, sizeof cur, "%s", next);
        }
    }
    return NSIM_ERR(err, NSIM_EIO, "%s: too many levels of symbolic links",
                    path);
}

static int fail_write(const char *path, int e, nsim_err *err)
{
    return NSIM_ERR(err, NSIM_EIO, "%s: cannot write: %s", path, strerror(e));
}

/* Writes the temporary file of e: created next to the target, with the
 * target's permissions if it exists, every byte checked, fsync'd. */
static int write_temp(out_entry *e, const char *text, size_t len,
                      mode_t mode, nsim_err *err)
{
    char tmp[PATH_MAX];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", e->target,
                         (long)getpid(), temp_seq++) >= sizeof tmp)
        return NSIM_ERR(err, NSIM_EINVAL, "%s: path too long", e->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return fail_write(e->path, errno, err);
    e->temp = temp_claim(tmp);
    if (e->temp < 0) {
        close(fd);
        unlink(tmp);
        return NSIM_ERR(err, NSIM_EINVAL, "%s: too many outputs", e->path);
    }
    if (e->exists)
        (void)fchmod(fd, mode & 07777);
    int bad = write_all(fd, text, len) != 0 ? errno : 0;
    if (!bad && fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        bad = errno;
    if (close(fd) != 0 && !bad)
        bad = errno;
    if (bad) {
        temp_release(e->temp, 1);
        e->temp = -1;
        return fail_write(e->path, bad, err);
    }
    return NSIM_OK;
}

/* Writes an in-place output (a device, a FIFO, /dev/stdout) or stdout. */
static int write_in_place(const out_entry *e, nsim_err *err)
{
    if (e->kind == OUT_STDOUT) {
        if (fflush(stdout) != 0 || fflush(stderr) != 0 ||
            write_all(e->fd, e->data, e->len) != 0)
            return fail_write(e->path, errno, err);
        return NSIM_OK;
    }
    fflush(stdout); /* /dev/stdout after what is already printed */
    int fd = open(e->path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return fail_write(e->path, errno, err);
    int bad = write_all(fd, e->data, e->len) != 0 ? errno : 0;
    if (close(fd) != 0 && !bad)
        bad = errno;
    return bad ? fail_write(e->path, bad, err) : NSIM_OK;
}

static void entry_free(out_entry *e, int remove_temp)
{
    if (e->kind == OUT_RENAME)
        temp_release(e->temp, remove_temp);
    free(e->data);
    e->data = NULL;
}

/* Checks path and fills e (everything but the content). */
static int prepare(const char *path, out_entry *e, struct stat *st,
                   nsim_err *err)
{
    memset(e, 0, sizeof *e);
    e->temp = -1;
    if (path == NULL || path[0] == '\0')
        return NSIM_ERR(err, NSIM_EINVAL, "an output file name is empty");
    snprintf(e->path, sizeof e->path, "%s", path);
    /* "-" and the names of stdout / stderr: the descriptor itself (as awk
     * does; reopening /proc/self/fd/1 is not the same file everywhere) */
    static const char *const std_names[] = {
        "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1",
        "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"};
    for (int i = 0; i < 7; i++)
        if (strcmp(path, std_names[i]) == 0) {
            e->kind = OUT_STDOUT;
            e->fd = i < 4 ? STDOUT_FILENO : STDERR_FILENO;
            return NSIM_OK;
        }
    NSIM_TRY(resolve_target(path, e->target, sizeof e->target, err));
    /* stat the name as given: the kernel follows /proc's magic links
     * (/dev/stdout -> pipe:[N]) that readlink cannot */
    e->exists = stat(path, st) == 0 || stat(e->target, st) == 0;
    if (e->exists) {
        const char *in = input_named(st);
        if (in != NULL)
            return NSIM_ERR(err, NSIM_EINVAL,
                            "%s: refusing to overwrite an input of this "
                            "command (read as %s)",
                            path, in);
        if (S_ISDIR(st->st_mode))
            return NSIM_ERR(err, NSIM_EINVAL,
                            "%s: is a directory; give a file name", path);
        e->dev = st->st_dev;
        e->ino = st->st_ino;
    }
    /* devices, FIFOs and the /dev and /proc links (/dev/stdout, which may
     * point at the shell's redirection) are written in place */
    e->kind = (e->exists && !S_ISREG(st->st_mode)) ||
                      starts_with(path, "/dev/") ||
                      starts_with(path, "/proc/") ||
                      starts_with(e->target, "/dev/") ||
                      starts_with(e->target, "/proc/")
                  ? OUT_INPLACE
                  : OUT_RENAME;
    for (unsigned i = 0; i < nstaged; i++) {
        const out_entry *o = &staged[i];
        int same = o->kind != OUT_STDOUT && e->kind != OUT_STDOUT &&
                   ((e->exists && o->exists && o->dev == e->dev &&
                     o->ino == e->ino) ||
                    strcmp(o->target, e->target) == 0);
        if (same && e->kind == OUT_RENAME)
            return NSIM_ERR(err, NSIM_EINVAL,
                            "%s: is also the output %s of this command", path,
                            o->path);
    }
    return NSIM_OK;
}

static int stage(const char *path, const char *text, size_t len,
                 nsim_err *err)
{
    if (nstaged == MAX_OUTPUTS)
        return NSIM_ERR(err, NSIM_EINVAL, "%s: too many outputs", path);
    out_entry *e = &staged[nstaged];
    struct stat st;
    memset(&st, 0, sizeof st);
    NSIM_TRY(prepare(path, e, &st, err));
    if (e->kind == OUT_RENAME) {
        NSIM_TRY(write_temp(e, text, len, st.st_mode, err));
    } else {
        e->data = malloc(len ? len : 1);
        if (e->data == NULL)
            return NSIM_ERR(err, NSIM_ENOMEM, "%s: out of memory", path);
        memcpy(e->data, text, len);
        e->len = len;
    }
    nstaged++;
    return NSIM_OK;
}

void nsim_out_begin(void)
{
    nsim_out_abort();
    in_transaction = 1;
}

void nsim_out_abort(void)
{
    for (unsigned i = 0; i < nstaged; i++)
        entry_free(&staged[i], 1);
    nstaged = 0;
    in_transaction = 0;
}

int nsim_out_commit(nsim_err *err)
{
    int rc = NSIM_OK;
    /* what can fail halfway first: in-place outputs (a full device), then
     * stdout, then the renames */
    for (unsigned i = 0; i < nstaged && rc == NSIM_OK; i++)
        if (staged[i].kind == OUT_INPLACE)
            rc = write_in_place(&staged[i], err);
    for (unsigned i = 0; i < nstaged && rc == NSIM_OK; i++)
        if (staged[i].kind == OUT_STDOUT)
            rc = write_in_place(&staged[i], err);
    for (unsigned i = 0; i < nstaged && rc == NSIM_OK; i++) {
        out_entry *e = &staged[i];
        if (e->kind != OUT_RENAME)
            continue;
        if (rename(temp_name[e->temp], e->target) != 0)
            rc = fail_write(e->path, errno, err);
        else
            temp_release(e->temp, 0);
    }
    nsim_out_abort(); /* removes the temporary files not renamed */
    return rc;
}

int nsim_write_file_atomic(const char *path, const char *text, size_t len,
                           nsim_err *err)
{
    if (in_transaction)
        return stage(path, text, len, err);
    /* a one-file transaction, keeping any outer staging state intact */
    unsigned first = nstaged;
    int rc = stage(path, text, len, err);
    if (rc == NSIM_OK) {
        out_entry *e = &staged[first];
        if (e->kind != OUT_RENAME)
            rc = write_in_place(e, err);
        else if (rename(temp_name[e->temp], e->target) != 0)
            rc = fail_write(e->path, errno, err);
        else
            temp_release(e->temp, 0);
        entry_free(e, 1);
        nstaged = first;
    }
    return rc;
}

int nsim_out_scratch(const char *suffix, const char *text, size_t len,
                     char *name, size_t cap, nsim_err *err)
{
    const char *dir = getenv("TMPDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/tmp";
    if ((size_t)snprintf(name, cap, "%s/ncclsim.XXXXXX%s", dir, suffix) >=
        cap)
        return NSIM_ERR(err, NSIM_EINVAL, "scratch file name too long");
    int fd = mkstemps(name, (int)strlen(suffix));
    if (fd < 0)
        return NSIM_ERR(err, NSIM_EIO, "%s: cannot create a scratch file: %s",
                        dir, strerror(errno));
    int slot = temp_claim(name);
    int bad = slot < 0 ? ENFILE : write_all(fd, text, len) != 0 ? errno : 0;
    if (close(fd) != 0 && !bad)
        bad = errno;
    if (bad) {
        if (slot >= 0)
            temp_release(slot, 1);
        else
            unlink(name);
        return fail_write(name, bad, err);
    }
    return NSIM_OK;
}

void nsim_out_scratch_remove(const char *name)
{
    for (int i = 0; i < MAX_TEMPS; i++)
        if (temp_used[i] && strcmp(temp_name[i], name) == 0) {
            temp_release(i, 1);
            return;
        }
}
