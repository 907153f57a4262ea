/* SPDX-License-Identifier: MIT
 *
 * bootstrap.c - TCP bootstrap with token authentication (see
 * bootstrap.h). SHA-256 is written from FIPS 180-4.
 */
#include "bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- SHA-256 and HMAC ------------------------------------------------ */

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], v[8];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25);
        uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
        uint32_t t1 = v[7] + S1 + ch + K[i] + w[i];
        uint32_t S0 = ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22);
        uint32_t mj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
        uint32_t t2 = S0 + mj;
        memmove(&v[1], &v[0], 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

void nsim_sha256(const void *data, size_t len, uint8_t out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t *p = data;
    size_t n = len;
    while (n >= 64) {
        sha_block(h, p);
        p += 64;
        n -= 64;
    }
    uint8_t last[128] = {0};
    memcpy(last, p, n);
    last[n] = 0x80;
    size_t tot = n + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++)
        last[tot - 1 - i] = (uint8_t)(bits >> (8 * i));
    sha_block(h, last);
    if (tot == 128)
        sha_block(h, last + 64);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(h[i] >> 8);
        out[4 * i + 3] = (uint8_t)h[i];
    }
}

void nsim_hmac_sha256(const void *key, size_t klen, const void *msg,
                      size_t mlen, uint8_t out[32])
{
    uint8_t k[64] = {0}, inner[32];
    if (klen > 64)
        nsim_sha256(key, klen, k);
    else
        memcpy(k, key, klen);
    uint8_t *buf = malloc(64 + (mlen > 32 ? mlen : 32));
    if (buf == NULL) { /* no MAC: a value that never matches a peer's */
        memset(out, 0, 32);
        return;
    }
    for (int i = 0; i < 64; i++)
        buf[i] = k[i] ^ 0x36;
    memcpy(buf + 64, msg, mlen);
    nsim_sha256(buf, 64 + mlen, inner);
    for (int i = 0; i < 64; i++)
        buf[i] = k[i] ^ 0x5c;
    memcpy(buf + 64, inner, 32);
    nsim_sha256(buf, 96, out);
    free(buf);
}

int nsim_ct_equal(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

/* ---- framing over TCP, every wait bounded ---------------------------- */

enum { MSG_CHALLENGE = 1, MSG_HELLO, MSG_WELCOME, MSG_REJECT, MSG_BLOB,
       MSG_ALL, MSG_SYNC, MSG_SYNCR };

#define MAGIC "NSIMBOOT1"
#define NONCE 16

struct nsim_boot {
    uint32_t rank, nranks;
    double timeout_s;
    int *fd;     /* rank 0: per peer rank; others: fd[0] to rank 0 */
    char addr[256];
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int io_wait(int fd, short ev, double deadline)
{
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, ev, 0};
        int rc = poll(&p, 1, (int)(left * 1000) + 1);
        if (rc > 0)
            return 1;
        if (rc < 0 && errno != EINTR)
            return -1;
    }
}

/* 0, or -1 (closed: errno 0; timed out: ETIMEDOUT; else errno). */
static int send_all(int fd, const void *buf, size_t n, double deadline)
{
    const uint8_t *p = buf;
    while (n > 0) {
        if (io_wait(fd, POLLOUT, deadline) <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int recv_all(int fd, void *buf, size_t n, double deadline)
{
    uint8_t *p = buf;
    while (n > 0) {
        int w = io_wait(fd, POLLIN, deadline);
        if (w <= 0) {
            errno = w == 0 ? ETIMEDOUT : errno;
            return -1;
        }
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k == 0)
            errno = 0;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int send_msg(int fd, uint32_t type, const void *p, uint32_t len,
                    double deadline)
{
    uint32_t h[2] = {htonl(type), htonl(len)};
    if (send_all(fd, h, sizeof h, deadline) != 0)
        return -1;
    return len ? send_all(fd, p, len, deadline) : 0;
}

/* Receives a message of the given type and at most max bytes. */
static int recv_msg(int fd, uint32_t want, void *p, uint32_t max,
                    uint32_t *len, double deadline, uint32_t *got_type)
{
    uint32_t h[2];
    if (recv_all(fd, h, sizeof h, deadline) != 0)
        return -1;
    uint32_t type = ntohl(h[0]), n = ntohl(h[1]);
    *got_type = type;
    if (n > max || (type != want && type != MSG_REJECT)) {
        errno = EPROTO;
        return -1;
    }
    if (n && recv_all(fd, p, n, deadline) != 0)
        return -1;
    if (len)
        *len = n;
    return 0;
}

static int io_error(nsim_boot *b, uint32_t peer, const char *what,
                    nsim_err *err)
{
    int e = errno;
    if (e == ETIMEDOUT)
        return NSIM_ERR(err, NSIM_ESTATE,
                        "rank %u: bootstrap: %s: rank %u sent nothing for "
                        "%.0f s (timed out)", b->rank, what, peer,
                        b->timeout_s);
    if (e == 0 || e == ECONNRESET || e == EPIPE)
        return NSIM_ERR(err, NSIM_ESTATE,
                        "rank %u: bootstrap: %s: lost peer: rank %u closed "
                        "the connection", b->rank, what, peer);
    if (e == EPROTO)
        return NSIM_ERR(err, NSIM_ESTATE,
                        "rank %u: bootstrap: %s: rank %u sent an unexpected "
                        "message", b->rank, what, peer);
    return NSIM_ERR(err, NSIM_EIO, "rank %u: bootstrap: %s: rank %u: %s",
                    b->rank, what, peer, strerror(e));
}

static int split_addr(const char *hosts, char *host, size_t hl, char *port,
                      size_t pl, nsim_err *err)
{
    const char *end = strchr(hosts, ',');
    size_t n = end ? (size_t)(end - hosts) : strlen(hosts);
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
        if (hosts[i] == ':')
            colon = hosts + i;
    if (colon == NULL || colon == hosts || (size_t)(colon - hosts) >= hl ||
        n - (size_t)(colon - hosts) - 1 >= pl || colon + 1 == hosts + n)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "--hosts: expected HOST:PORT[,...], got '%s'", hosts);
    memcpy(host, hosts, (size_t)(colon - hosts));
    host[colon - hosts] = '\0';
    memcpy(port, colon + 1, n - (size_t)(colon - hosts) - 1);
    port[n - (size_t)(colon - hosts) - 1] = '\0';
    return NSIM_OK;
}

static void mac_of(const char *token, char role, const uint8_t nonce[NONCE],
                   uint32_t rank, uint32_t nranks, uint8_t out[32])
{
    uint8_t m[1 + NONCE + 8];
    m[0] = (uint8_t)role;
    memcpy(m + 1, nonce, NONCE);
    uint32_t r = htonl(rank), n = htonl(nranks);
    memcpy(m + 1 + NONCE, &r, 4);
    memcpy(m + 5 + NONCE, &n, 4);
    nsim_hmac_sha256(token, strlen(token), m, sizeof m, out);
}

static int nonce(uint8_t out[NONCE], nsim_err *err)
{
    if (getrandom(out, NONCE, 0) != NONCE)
        return NSIM_ERR(err, NSIM_EIO, "bootstrap: getrandom: %s",
                        strerror(errno));
    return NSIM_OK;
}

typedef struct hello {
    uint32_t rank, nranks;
    uint8_t nonce[NONCE];
    uint8_t mac[32];
} hello;

/* Rank 0: one peer's handshake on a fresh connection. Returns its rank
 * or -1 (rejected: the reason in *why). */
static int64_t server_handshake(nsim_boot *b, int fd, const char *token,
                                double deadline, char *why, size_t wl)
{
    uint8_t ch[sizeof MAGIC + NONCE], mac[32];
    hello h;
    uint32_t len, type;
    memcpy(ch, MAGIC, sizeof MAGIC);
    if (nonce(ch + sizeof MAGIC, NULL) != NSIM_OK ||
        send_msg(fd, MSG_CHALLENGE, ch, sizeof ch, deadline) != 0 ||
        recv_msg(fd, MSG_HELLO, &h, sizeof h, &len, deadline, &type) != 0 ||
        len != sizeof h) {
        snprintf(why, wl, "a connection that did not complete the "
                          "handshake");
        return -1;
    }
    uint32_t r = ntohl(h.rank), n = ntohl(h.nranks);
    mac_of(token, 'c', ch + sizeof MAGIC, r, n, mac);
    const char *reason = NULL;
    if (!nsim_ct_equal(mac, h.mac, 32))
        reason = "wrong token";
    else if (n != b->nranks || r == 0 || r >= b->nranks)
        reason = "rank or rank count does not fit";
    else if (b->fd[r] >= 0)
        reason = "rank already connected";
    if (reason != NULL) {
        snprintf(why, wl, "a peer claiming rank %u: %s", r, reason);
        (void)send_msg(fd, MSG_REJECT, reason, (uint32_t)strlen(reason),
                       deadline);
        return -1;
    }
    mac_of(token, 's', h.nonce, r, n, mac);
    if (send_msg(fd, MSG_WELCOME, mac, 32, deadline) != 0) {
        snprintf(why, wl, "rank %u left during the handshake", r);
        return -1;
    }
    return r;
}

static int serve(nsim_boot *b, const char *host, const char *port,
                 const char *token, double deadline, nsim_err *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g != 0)
        return NSIM_ERR(err, NSIM_EIO, "rank 0: bootstrap: %s:%s: %s", host,
                        port, gai_strerror(g));
    int ls = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    if (ls >= 0)
        (void)setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ls < 0 || bind(ls, ai->ai_addr, ai->ai_addrlen) != 0 ||
        listen(ls, (int)b->nranks) != 0) {
        int e = errno;
        freeaddrinfo(ai);
        if (ls >= 0)
            close(ls);
        return NSIM_ERR(err, NSIM_EIO, "rank 0: bootstrap: cannot listen on "
                        "%s:%s: %s", host, port, strerror(e));
    }
    freeaddrinfo(ai);
    uint32_t joined = 1;
    char why[160] = "";
    while (joined < b->nranks) {
        if (io_wait(ls, POLLIN, deadline) <= 0)
            break;
        int fd = accept(ls, NULL, NULL);
        if (fd < 0)
            continue;
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int64_t r = server_handshake(b, fd, token, deadline, why, sizeof why);
        if (r < 0) {
            close(fd);
            if (strstr(why, "wrong token") != NULL) {
                close(ls);
                return NSIM_ERR(err, NSIM_ESTATE,
                                "rank 0: bootstrap: authentication failed: "
                                "%s (the --token differs)", why);
            }
            continue;
        }
        b->fd[r] = fd;
        joined++;
    }
    close(ls);
    if (joined == b->nranks)
        return NSIM_OK;
    char missing[256] = "";
    size_t off = 0;
    for (uint32_t r = 1; r < b->nranks && off + 12 < sizeof missing; r++)
        if (b->fd[r] < 0)
            off += (size_t)snprintf(missing + off, sizeof missing - off,
                                    "%s%u", off ? ", " : "", r);
    return NSIM_ERR(err, NSIM_ESTATE,
                    "rank 0: bootstrap: rank(s) %s never connected to %s:%s "
                    "within %.0f s%s%s", missing, host, port, b->timeout_s,
                    why[0] ? "; also refused " : "", why);
}

static int join(nsim_boot *b, const char *host, const char *port,
                const char *token, double deadline, nsim_err *err)
{
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int fd = -1, last = 0, one = 1;
    while (fd < 0 && now_s() < deadline) {
        int g = getaddrinfo(host, port, &hints, &ai);
        if (g != 0)
            return NSIM_ERR(err, NSIM_EIO, "rank %u: bootstrap: %s:%s: %s",
                            b->rank, host, port, gai_strerror(g));
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            last = errno;
            close(fd);
            fd = -1;
            struct timespec ts = {0, 50000000};
            nanosleep(&ts, NULL);
        }
        freeaddrinfo(ai);
    }
    if (fd < 0)
        return NSIM_ERR(err, NSIM_ESTATE,
                        "rank %u: bootstrap: cannot reach rank 0 at %s:%s "
                        "within %.0f s: %s", b->rank, host, port,
                        b->timeout_s, last ? strerror(last) : "timed out");
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    b->fd[0] = fd;
    uint8_t ch[sizeof MAGIC + NONCE], mac[32];
    char reason[128] = "";
    uint32_t len = 0, type = 0;
    if (recv_msg(fd, MSG_CHALLENGE, ch, sizeof ch, &len, deadline, &type) ||
        len != sizeof ch || memcmp(ch, MAGIC, sizeof MAGIC) != 0)
        return io_error(b, 0, "handshake (not an ncclsim bootstrap?)", err);
    hello h = {htonl(b->rank), htonl(b->nranks), {0}, {0}};
    NSIM_TRY(nonce(h.nonce, err));
    mac_of(token, 'c', ch + sizeof MAGIC, b->rank, b->nranks, h.mac);
    if (send_msg(fd, MSG_HELLO, &h, sizeof h, deadline) != 0 ||
        recv_msg(fd, MSG_WELCOME, reason, sizeof reason - 1, &len, deadline,
                 &type) != 0) {
        if (errno == 0 || errno == ECONNRESET)
            return NSIM_ERR(err, NSIM_ESTATE,
                            "rank %u: bootstrap: rank 0 at %s:%s closed the "
                            "connection during authentication (wrong token?)",
                            b->rank, host, port);
        return io_error(b, 0, "handshake", err);
    }
    if (type == MSG_REJECT) {
        reason[len] = '\0';
        return NSIM_ERR(err, NSIM_ESTATE,
                        "rank %u: bootstrap: rank 0 at %s:%s refused us: %s",
                        b->rank, host, port, reason);
    }
    memcpy(mac, reason, 32);
    uint8_t want[32];
    mac_of(token, 's', h.nonce, b->rank, b->nranks, want);
    if (len != 32 || !nsim_ct_equal(mac, want, 32))
        return NSIM_ERR(err, NSIM_ESTATE,
                        "rank %u: bootstrap: rank 0 at %s:%s failed to prove "
                        "the token (wrong token)", b->rank, host, port);
    return NSIM_OK;
}

int nsim_boot_connect(uint32_t rank, uint32_t nranks, const char *hosts,
                      const char *token, double timeout_s, nsim_boot **out,
                      nsim_err *err)
{
    char host[200], port[32];
    if (hosts == NULL || token == NULL || token[0] == '\0')
        return NSIM_ERR(err, NSIM_EINVAL,
                        "bootstrap: needs --hosts HOST:PORT and a --token");
    if (nranks < 2 || rank >= nranks)
        return NSIM_ERR(err, NSIM_EINVAL,
                        "bootstrap: rank %u of %u: expected 0..%u", rank,
                        nranks, nranks ? nranks - 1 : 0);
    NSIM_TRY(split_addr(hosts, host, sizeof host, port, sizeof port, err));
    nsim_boot *b = calloc(1, sizeof *b);
    int *fd = calloc(nranks, sizeof *fd);
    if (b == NULL || fd == NULL) {
        free(b);
        free(fd);
        return NSIM_ERR(err, NSIM_ENOMEM, "bootstrap: out of memory");
    }
    for (uint32_t i = 0; i < nranks; i++)
        fd[i] = -1;
    *b = (nsim_boot){rank, nranks, timeout_s, fd, ""};
    snprintf(b->addr, sizeof b->addr, "%s:%s", host, port);
    double deadline = now_s() + timeout_s;
    int rc = rank == 0 ? serve(b, host, port, token, deadline, err)
                       : join(b, host, port, token, deadline, err);
    if (rc != NSIM_OK) {
        nsim_boot_close(b);
        return rc;
    }
    *out = b;
    return NSIM_OK;
}

int nsim_boot_allgather(nsim_boot *b, const void *mine, size_t len, void *all,
                        nsim_err *err)
{
    double deadline = now_s() + b->timeout_s;
    uint8_t *a = all;
    uint32_t got, type;
    if (len > (1u << 24) || len * b->nranks > (1u << 30))
        return NSIM_ERR(err, NSIM_EINVAL, "bootstrap: blob of %zu bytes", len);
    memcpy(a + b->rank * len, mine, len);
    if (b->rank != 0) {
        if (send_msg(b->fd[0], MSG_BLOB, mine, (uint32_t)len, deadline) != 0 ||
            recv_msg(b->fd[0], MSG_ALL, a, (uint32_t)(len * b->nranks), &got,
                     deadline, &type) != 0 ||
            type != MSG_ALL || got != len * b->nranks)
            return io_error(b, 0, "all-gather", err);
        return NSIM_OK;
    }
    for (uint32_t r = 1; r < b->nranks; r++)
        if (recv_msg(b->fd[r], MSG_BLOB, a + r * len, (uint32_t)len, &got,
                     deadline, &type) != 0 ||
            type != MSG_BLOB || got != len)
            return io_error(b, r, "all-gather", err);
    for (uint32_t r = 1; r < b->nranks; r++)
        if (send_msg(b->fd[r], MSG_ALL, a, (uint32_t)(len * b->nranks),
                     deadline) != 0)
            return io_error(b, r, "all-gather", err);
    return NSIM_OK;
}

int nsim_boot_sync(nsim_boot *b, double *max_v, double *sum_v, nsim_err *err)
{
    double deadline = now_s() + b->timeout_s, v[2] = {*max_v, *sum_v};
    uint32_t got, type;
    if (b->rank != 0) {
        if (send_msg(b->fd[0], MSG_SYNC, v, sizeof v, deadline) != 0 ||
            recv_msg(b->fd[0], MSG_SYNCR, v, sizeof v, &got, deadline,
                     &type) != 0 ||
            type != MSG_SYNCR || got != sizeof v)
            return io_error(b, 0, "barrier", err);
        *max_v = v[0];
        *sum_v = v[1];
        return NSIM_OK;
    }
    for (uint32_t r = 1; r < b->nranks; r++) {
        double p[2];
        if (recv_msg(b->fd[r], MSG_SYNC, p, sizeof p, &got, deadline,
                     &type) != 0 ||
            type != MSG_SYNC || got != sizeof p)
            return io_error(b, r, "barrier", err);
        v[0] = p[0] > v[0] ? p[0] : v[0];
        v[1] += p[1];
    }
    for (uint32_t r = 1; r < b->nranks; r++)
        if (send_msg(b->fd[r], MSG_SYNCR, v, sizeof v, deadline) != 0)
            return io_error(b, r, "barrier", err);
    *max_v = v[0];
    *sum_v = v[1];
    return NSIM_OK;
}

void nsim_boot_close(nsim_boot *b)
{
    if (b == NULL)
        return;
    for (uint32_t r = 0; r < b->nranks; r++)
        if (b->fd[r] >= 0)
            close(b->fd[r]);
    free(b->fd);
    free(b);
}
