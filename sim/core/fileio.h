/* SPDX-License-Identifier: MIT
 *
 * fileio.h - reading input files and writing output files safely.
 *
 * Owns: the one way ncclsim reads a whole input file (regular files only,
 * size checked before reading, never blocking on a FIFO) and writes an
 * output file, and the list of the inputs a command has read, so that an
 * output naming one of them is refused instead of overwriting it.
 *
 * Writing an output: "-" is stdout; a symlink is followed and its target
 * replaced; a regular (or new) file is written to a temporary name in the
 * target's directory, fsync'd and renamed over it; anything else (a
 * device, a FIFO, /dev/stdout) is written in place. Every write, fsync
 * and close is checked (ENOSPC, EIO: "cannot write").
 *
 * Between nsim_out_begin and nsim_out_commit every output is staged: all
 * of a command's files are written to temporary names and renamed only
 * when all of them are written (stdout and in-place outputs are written
 * then too), so a command that fails leaves none of them behind. Outside
 * a transaction nsim_write_file_atomic writes at once. Temporary files
 * are removed on SIGINT / SIGTERM (nsim_out_install_signals) and at exit.
 */
#ifndef NSIM_CORE_FILEIO_H
#define NSIM_CORE_FILEIO_H

#include <stddef.h>

#include "err.h"

/* Largest input file read (checked with fstat before reading). */
#define NSIM_READ_MAX_BYTES (1ull << 30)

/* Reads a whole regular file (at most NSIM_READ_MAX_BYTES) into a
 * NUL-terminated buffer the caller frees, and remembers it as an input of
 * this command. Directories, FIFOs, devices and sockets are refused
 * without reading or blocking; errors name the file. */
NSIM_NODISCARD int nsim_read_file(const char *path, char **text, size_t *len,
                                  nsim_err *err);

/* Writes (or, inside a transaction, stages) len bytes to path as above.
 * Refused: path is an input read by this command (same device and inode),
 * or the same file as another output of the transaction. */
NSIM_NODISCARD int nsim_write_file_atomic(const char *path, const char *text,
                                          size_t len, nsim_err *err);

/* Starts staging outputs (one transaction at a time). */
void nsim_out_begin(void);
/* Writes the staged stdout and in-place outputs, then renames every
 * temporary file onto its target. On any failure nothing staged is left
 * behind (temporary files removed) and err names the output. */
NSIM_NODISCARD int nsim_out_commit(nsim_err *err);
/* Drops every staged output and removes its temporary file. */
void nsim_out_abort(void);

/* A scratch file (in $TMPDIR or /tmp, name ending in suffix) holding
 * text, removed by nsim_out_scratch_remove, at exit or on a signal. */
NSIM_NODISCARD int nsim_out_scratch(const char *suffix, const char *text,
                                    size_t len, char *name, size_t cap,
                                    nsim_err *err);
void nsim_out_scratch_remove(const char *name);

/* Installs SIGINT / SIGTERM / SIGHUP / SIGPIPE handlers (unless the
 * signal is ignored) that remove the temporary and scratch files, then
 * die of the signal (exit status non-zero), and an atexit hook that
 * removes what is left. Idempotent. */
void nsim_out_install_signals(void);

/* Forgets one input: a file the command reads back and then rewrites on
 * purpose (sweep --resume reads its own output). */
void nsim_inputs_forget(const char *path);

/* Forgets the inputs read so far (tests; a long-lived caller between
 * commands). */
void nsim_inputs_reset(void);

#endif
