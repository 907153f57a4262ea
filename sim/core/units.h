/* SPDX-License-Identifier: MIT
 *
 * units.h - reading and writing quantities with units ("400 Gb/s",
 * "130 ns", "4 MiB"), so that input files carry their units and a missing
 * or wrong unit is an error rather than a silent factor of 8 or 1000.
 *
 * Bandwidth is held as bytes per second (double), time as picoseconds.
 */
#ifndef NSIM_CORE_UNITS_H
#define NSIM_CORE_UNITS_H

/* The bandwidths a model takes: a physical floor (1 Mb/s; below it a
 * link would be modelled as infinitely fast or run out of memory) and a
 * ceiling above any link or memory (1 PB/s). */
#define NSIM_BW_MIN_BYTES 125e3
#define NSIM_BW_MAX_BYTES 1e15

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "sim.h"

/* "400 Gb/s", "50 GB/s", "25GBps", "100 Mb/s", "1.2 Tb/s", "12 B/s".
 * NSIM_OK or NSIM_EINVAL (what is wrong goes to why, a static string). */
int nsim_units_parse_bw(const char *s, double *bytes_per_s, const char **why);
/* "130 ns", "1.5 us", "500 ps", "2 ms", "1 s". */
int nsim_units_parse_time(const char *s, nsim_time *ps, const char **why);
/* "4 MiB", "512 KiB", "1 GiB", "4096", "1G" (nccl-tests style, powers of
 * 1024 for K/M/G and KiB/MiB/GiB; KB/MB/GB are powers of 1000). */
int nsim_units_parse_size(const char *s, uint64_t *bytes, const char **why);

/* Canonical text that parses back to the same value. */
void nsim_units_format_bw(double bytes_per_s, char *buf, size_t len);
void nsim_units_format_time(nsim_time ps, char *buf, size_t len);
/* A size as a message gives it: "1.50 GiB" from 1 GiB up, else
 * "12.3 MiB" (powers of 1024, as the size options take them). */
void nsim_units_format_size(uint64_t bytes, char *buf, size_t len);

/* Serialization time of bytes at bw, rounded up to a whole picosecond. */
static inline nsim_time nsim_xfer_ps(uint64_t bytes, double bytes_per_s)
{
    double t = (double)bytes * 1e12 / bytes_per_s;
    nsim_time ps = (nsim_time)t;
    return ps + ((double)ps < t);
}

#endif
