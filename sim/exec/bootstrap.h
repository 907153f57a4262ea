/* SPDX-License-Identifier: MIT
 *
 * bootstrap.h - the TCP bootstrap of multi-process hardware runs (the
 * verbs backend): rank 0 listens on the first entry of a host list, every
 * other rank connects to it; each side proves the shared token with
 * HMAC-SHA256 over the other's fresh nonce (the token never crosses the
 * wire; MACs are compared in constant time); then blobs (QP numbers, GIDs,
 * rkeys, addresses) are all-gathered through rank 0, and jobs are fenced
 * by barriers that also reduce a value (max) and a count (sum).
 *
 * Every wait is bounded by the timeout: a peer that never connects, a
 * wrong token, a peer that closes or goes silent mid-run: an error naming
 * the rank and the address, never a hang.
 */
#ifndef NSIM_EXEC_BOOTSTRAP_H
#define NSIM_EXEC_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "sim/core/err.h"

typedef struct nsim_boot nsim_boot;

/* hosts: "HOST:PORT" (rank 0's listening address; other ranks may be
 * listed after it, for documentation, but only the first is used). */
NSIM_NODISCARD int nsim_boot_connect(uint32_t rank, uint32_t nranks,
                                     const char *hosts, const char *token,
                                     double timeout_s, nsim_boot **out,
                                     nsim_err *err);
/* all[r * len .. ] gets rank r's blob; every rank gives len bytes. */
NSIM_NODISCARD int nsim_boot_allgather(nsim_boot *b, const void *mine,
                                       size_t len, void *all, nsim_err *err);
/* A barrier; *max_v becomes the maximum and *sum_v the sum over ranks. */
NSIM_NODISCARD int nsim_boot_sync(nsim_boot *b, double *max_v, double *sum_v,
                                  nsim_err *err);
void nsim_boot_close(nsim_boot *b);

/* HMAC-SHA256 (FIPS 180-4, RFC 2104), exposed for tests. */
void nsim_sha256(const void *data, size_t len, uint8_t out[32]);
void nsim_hmac_sha256(const void *key, size_t klen, const void *msg,
                      size_t mlen, uint8_t out[32]);
/* 1 if equal; time independent of where they differ. */
int nsim_ct_equal(const void *a, const void *b, size_t n);

#endif
