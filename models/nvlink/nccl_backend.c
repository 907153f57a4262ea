/* SPDX-License-Identifier: MIT
 *
 * nccl_backend.c - the nccl hardware backend: the scenario's collective
 * through the real NCCL on the GPUs of this machine, one process driving
 * every rank (ncclCommInitAll, nccl-tests -g N style), with the
 * scenario's NCCL_* knobs in the environment and NCCL_DEBUG=INFO written
 * to a log file that sim/topo/ncclog.c reads back (channels, rings,
 * version). Timing as nccl-tests: a CPU timer around the launches of
 * `iters` ops (grouped over the ranks) and one final synchronization;
 * the check fills the pattern of models/host/hdtype.h, runs once and
 * counts wrong elements.
 *
 * NCCL and the CUDA runtime are loaded with dlopen (--nccl-lib, or
 * libnccl.so.2 / libcudart.so on the library path or under
 * /usr/local/cuda/lib64), so the backend is always built; the few entry
 * points used are declared here from NCCL's documented API. Without a
 * GPU it stops at once with cudaGetDeviceCount's error.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sim/exec/hwbackends.h"
#include "sim/topo/ncclog.h"

typedef int (*fn_count)(int *);
typedef const char *(*fn_errstr)(int);
typedef int (*fn_int)(int);
typedef int (*fn_malloc)(void **, size_t);
typedef int (*fn_free)(void *);
typedef int (*fn_memcpy)(void *, const void *, size_t, int);
typedef int (*fn_stream_create)(void **);
typedef int (*fn_stream)(void *);
typedef int (*fn_version)(int *);
typedef int (*fn_init_all)(void **, int, const int *);
typedef int (*fn_comm)(void *);
typedef int (*fn_void)(void);
typedef int (*fn_allreduce)(const void *, void *, size_t, int, int, void *,
                            void *);
typedef int (*fn_allgather)(const void *, void *, size_t, int, void *, void *);
typedef int (*fn_bcast)(const void *, void *, size_t, int, int, void *,
                        void *);
typedef int (*fn_reduce)(const void *, void *, size_t, int, int, int, void *,
                         void *);
typedef int (*fn_p2p)(const void *, size_t, int, int, void *, void *);
typedef int (*fn_recv)(void *, size_t, int, int, void *, void *);

enum { H2D = 1, D2H = 2 };

struct nsim_nccl {
    void *cudart, *lib;
    fn_count dev_count;
    fn_errstr cuda_err, nccl_err;
    fn_int set_device;
    fn_malloc dmalloc;
    fn_free dfree;
    fn_memcpy dmemcpy;
    fn_stream_create stream_create;
    fn_stream stream_sync, stream_destroy;
    fn_version version;
    fn_init_all init_all;
    fn_comm comm_destroy;
    fn_void group_start, group_end;
    fn_allreduce allreduce, reducescatter;
    fn_allgather allgather;
    fn_bcast bcast;
    fn_reduce reduce;
    fn_p2p send;
    fn_recv recv;
    const nsim_scenario *s;
    nsim_nccl_opts o;
    int ndev, nccl_version;
    void **comms, **streams;
    void **sendbuf, **recvbuf;
    uint64_t cap_in, cap_out;
    char log_pattern[512], log_dir[256];
};

static void *open_first(const char *const *names, char *why, size_t wl)
{
    why[0] = '\0';
    for (int i = 0; names[i] != NULL; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (h != NULL)
            return h;
        if (why[0] == '\0')
            snprintf(why, wl, "%s", dlerror());
    }
    return NULL;
}

#define SYM(h, field, name)                                                  \
    do {                                                                     \
        *(void **)&n->field = dlsym(h, name);                                \
        if (n->field == NULL)                                                \
            return NSIM_ERR(err, NSIM_ENOTSUP, "nccl backend: %s has no %s", \
                            #h, name);                                       \
    } while (0)

static int load_cudart(nsim_nccl *n, nsim_err *err)
{
    static const char *const names[] = {
        "libcudart.so", "libcudart.so.13", "libcudart.so.12",
        "/usr/local/cuda/lib64/libcudart.so", NULL};
    char why[256];
    void *cudart = open_first(names, why, sizeof why);
    if (cudart == NULL)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "nccl backend: no CUDA runtime: dlopen(libcudart.so, "
                        "and under /usr/local/cuda/lib64): %s", why);
    n->cudart = cudart;
    SYM(cudart, dev_count, "cudaGetDeviceCount");
    SYM(cudart, cuda_err, "cudaGetErrorString");
    SYM(cudart, set_device, "cudaSetDevice");
    SYM(cudart, dmalloc, "cudaMalloc");
    SYM(cudart, dfree, "cudaFree");
    SYM(cudart, dmemcpy, "cudaMemcpy");
    SYM(cudart, stream_create, "cudaStreamCreate");
    SYM(cudart, stream_sync, "cudaStreamSynchronize");
    SYM(cudart, stream_destroy, "cudaStreamDestroy");
    return NSIM_OK;
}

static int load_nccl(nsim_nccl *n, nsim_err *err)
{
    const char *const names[] = {n->o.lib ? n->o.lib : "libnccl.so.2",
                                 n->o.lib ? NULL : "/usr/local/cuda/lib64/libnccl.so.2",
                                 NULL};
    char why[256];
    void *lib = open_first(names, why, sizeof why);
    if (lib == NULL)
        return NSIM_ERR(err, NSIM_ENOTSUP,
                        "nccl backend: cannot load NCCL (%s): %s",
                        n->o.lib ? n->o.lib : "libnccl.so.2; give --nccl-lib "
                                              "PATH", why);
    n->lib = lib;
    SYM(lib, nccl_err, "ncclGetErrorString");
    SYM(lib, version, "ncclGetVersion");
    SYM(lib, init_all, "ncclCommInitAll");
    SYM(lib, comm_destroy, "ncclCommDestroy");
    SYM(lib, group_start, "ncclGroupStart");
    SYM(lib, group_end, "ncclGroupEnd");
    SYM(lib, allreduce, "ncclAllReduce");
    SYM(lib, reducescatter, "ncclReduceScatter");
    SYM(lib, allgather, "ncclAllGather");
    SYM(lib, bcast, "ncclBroadcast");
    SYM(lib, reduce, "ncclReduce");
    SYM(lib, send, "ncclSend");
    SYM(lib, recv, "ncclRecv");
    return NSIM_OK;
}

/* ncclDataType_t / ncclRedOp_t numbers (nccl.h). */
static int nccl_type(nsim_hdt t)
{
    static const int map[NSIM_HDT__COUNT] = {0, 1, 2, 3, 4, 5, 6, 9, 7, 8,
                                             10, 11};
    return map[t];
}

static void set_knob(const char *name, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    setenv(name, buf, 1);
}

/* The scenario's knobs as NCCL reads them (nccl-internals 9). */
static void set_env(const nsim_scenario *s, const char *log)
{
    if (s->nchannels_given) {
        set_knob("NCCL_MIN_NCHANNELS", s->nchannels);
        set_knob("NCCL_MAX_NCHANNELS", s->nchannels);
    }
    set_knob("NCCL_IB_QPS_PER_CONNECTION", s->qps_per_conn);
    set_knob("NCCL_BUFFSIZE", s->buffsize);
    if (s->proto_set)
        setenv("NCCL_PROTO", nsim_proto_name(s->proto), 1);
    if (s->algo_set)
        setenv("NCCL_ALGO", nsim_algo_name(s->algo), 1);
    if (s->net_peer_channels)
        set_knob("NCCL_NCHANNELS_PER_NET_PEER", s->net_peer_channels);
    if (s->cross_nic >= 0)
        set_knob("NCCL_CROSS_NIC", (uint64_t)s->cross_nic);
    if (s->pat_enable != 2)
        set_knob("NCCL_PAT_ENABLE", s->pat_enable);
    if (s->nvls_enable != 2)
        set_knob("NCCL_NVLS_ENABLE", s->nvls_enable);
    if (s->channel_mode == NSIM_CHANNEL_SHARED)
        setenv("NCCL_NET_SHARED_COMMS", "1", 1);
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT,GRAPH,TUNING,ENV", 1);
    setenv("NCCL_DEBUG_FILE", log, 1);
}

static int cuda_fail(nsim_nccl *n, int rc, const char *what, nsim_err *err)
{
    return NSIM_ERR(err, NSIM_EIO, "nccl backend: %s: %s (CUDA error %d)",
                    what, n->cuda_err(rc), rc);
}

static int nccl_fail(nsim_nccl *n, int rc, const char *what, nsim_err *err)
{
    return NSIM_ERR(err, NSIM_EIO, "nccl backend: %s: %s (ncclResult %d)",
                    what, n->nccl_err(rc), rc);
}

int nsim_nccl_open(const nsim_scenario *s, const nsim_nccl_opts *o,
                   nsim_nccl **out, nsim_err *err)
{
    nsim_nccl *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    n->s = s;
    n->o = *o;
    int rc = load_cudart(n, err);
    if (rc == NSIM_OK) {
        int c = n->dev_count(&n->ndev);
        if (c != 0 || n->ndev == 0)
            rc = NSIM_ERR(err, NSIM_ENOTSUP,
                          "nccl backend: no GPU: cudaGetDeviceCount returned "
                          "%d device(s): %s (CUDA error %d)", c ? 0 : n->ndev,
                          c ? n->cuda_err(c) : "no CUDA device", c);
    }
    uint32_t nr = nsim_topo_nranks(s->topo);
    if (rc == NSIM_OK && (uint32_t)n->ndev < nr)
        rc = NSIM_ERR(err, NSIM_ECONFIG,
                      "nccl backend: scenario %s has %u ranks, this machine "
                      "has %d GPU(s) (NCCL puts one rank on each GPU)",
                      s->source, nr, n->ndev);
    if (rc == NSIM_OK)
        rc = load_nccl(n, err);
    if (rc == NSIM_OK && n->version(&n->nccl_version) != 0)
        n->nccl_version = 0;
    if (rc == NSIM_OK) {
        snprintf(n->log_dir, sizeof n->log_dir, "/tmp/ncclsim-nccl-%ld",
                 (long)getpid());
        snprintf(n->log_pattern, sizeof n->log_pattern, "%s.log",
                 n->log_dir);
        set_env(s, n->log_pattern);
        n->ndev = (int)nr;
        n->comms = calloc(nr, sizeof *n->comms);
        n->streams = calloc(nr, sizeof *n->streams);
        n->sendbuf = calloc(nr, sizeof *n->sendbuf);
        n->recvbuf = calloc(nr, sizeof *n->recvbuf);
        if (!n->comms || !n->streams || !n->sendbuf || !n->recvbuf)
            rc = NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    }
    for (int d = 0; rc == NSIM_OK && d < n->ndev; d++) {
        int c = n->set_device(d);
        if (c == 0)
            c = n->stream_create(&n->streams[d]);
        if (c != 0)
            rc = cuda_fail(n, c, "cudaStreamCreate", err);
    }
    if (rc == NSIM_OK) {
        int c = n->init_all(n->comms, n->ndev, NULL);
        if (c != 0)
            rc = nccl_fail(n, c, "ncclCommInitAll", err);
    }
    if (rc != NSIM_OK) {
        nsim_nccl_close(n);
        return rc;
    }
    *out = n;
    return NSIM_OK;
}

static int ensure_buffers(nsim_nccl *n, uint64_t in, uint64_t out,
                          nsim_err *err)
{
    if (in <= n->cap_in && out <= n->cap_out)
        return NSIM_OK;
    for (int d = 0; d < n->ndev; d++) {
        n->set_device(d);
        if (n->sendbuf[d])
            n->dfree(n->sendbuf[d]);
        if (n->recvbuf[d])
            n->dfree(n->recvbuf[d]);
        n->sendbuf[d] = n->recvbuf[d] = NULL;
        int c = n->dmalloc(&n->sendbuf[d], in ? in : 1);
        if (c == 0)
            c = n->dmalloc(&n->recvbuf[d], out ? out : 1);
        if (c != 0)
            return cuda_fail(n, c, "cudaMalloc", err);
    }
    n->cap_in = in;
    n->cap_out = out;
    return NSIM_OK;
}

/* One collective on every rank, grouped (nccl-tests' startColl). */
static int launch(nsim_nccl *n, uint64_t bytes, int in_place, nsim_err *err)
{
    const nsim_scenario *s = n->s;
    nsim_hdt dt;
    nsim_hop op = NSIM_HOP_SUM;
    if (nsim_hdt_parse(s->dtype, &dt) != 0)
        return NSIM_ERR(err, NSIM_ENOTSUP, "datatype %s", s->dtype);
    (void)nsim_hop_parse(s->redop, &op);
    uint32_t ts = nsim_hdt_size(dt), nr = (uint32_t)n->ndev;
    size_t count = bytes / ts;
    int t = nccl_type(dt), rc = n->group_start();
    for (int r = 0; rc == 0 && r < n->ndev; r++) {
        void *sb = n->sendbuf[r], *rb = n->recvbuf[r];
        void *cm = n->comms[r], *st = n->streams[r];
        size_t blk = count / nr;
        if (in_place)
            sb = s->coll == NSIM_COLL_ALLGATHER
                     ? (uint8_t *)rb + (size_t)r * blk * ts
                 : s->coll == NSIM_COLL_REDUCESCATTER ? sb
                                                       : rb;
        if (in_place && s->coll == NSIM_COLL_REDUCESCATTER)
            rb = (uint8_t *)sb + (size_t)r * blk * ts;
        switch (s->coll) {
        case NSIM_COLL_ALLREDUCE: rc = n->allreduce(sb, rb, count, t, (int)op, cm, st); break;
        case NSIM_COLL_ALLGATHER: rc = n->allgather(sb, rb, blk, t, cm, st); break;
        case NSIM_COLL_REDUCESCATTER: rc = n->reducescatter(sb, rb, blk, t, (int)op, cm, st); break;
        case NSIM_COLL_BROADCAST: rc = n->bcast(sb, rb, count, t, (int)s->root, cm, st); break;
        case NSIM_COLL_REDUCE: rc = n->reduce(sb, rb, count, t, (int)op, (int)s->root, cm, st); break;
        case NSIM_COLL_SENDRECV:
            rc = n->send(sb, count, t, (int)((r + 1) % nr), cm, st);
            if (rc == 0)
                rc = n->recv(rb, count, t, (int)((r + nr - 1) % nr), cm, st);
            break;
        default: /* AllToAll: a send and a receive per peer */
            for (uint32_t p = 0; rc == 0 && p < nr; p++) {
                rc = n->send((uint8_t *)sb + p * blk * ts, blk, t, (int)p, cm, st);
                if (rc == 0)
                    rc = n->recv((uint8_t *)rb + p * blk * ts, blk, t, (int)p, cm, st);
            }
        }
    }
    int g = n->group_end();
    if (rc != 0 || g != 0)
        return nccl_fail(n, rc ? rc : g, nsim_coll_name(s->coll), err);
    return NSIM_OK;
}

static int sync_all(nsim_nccl *n, nsim_err *err)
{
    for (int d = 0; d < n->ndev; d++) {
        n->set_device(d);
        int c = n->stream_sync(n->streams[d]);
        if (c != 0)
            return cuda_fail(n, c, "cudaStreamSynchronize", err);
    }
    return NSIM_OK;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int check_once(nsim_nccl *n, uint64_t bytes, uint64_t in_b,
                      uint64_t out_b, int in_place, int64_t *wrong,
                      nsim_err *err)
{
    const nsim_scenario *s = n->s;
    nsim_hdt dt;
    nsim_hop op = NSIM_HOP_SUM;
    (void)nsim_hdt_parse(s->dtype, &dt);
    (void)nsim_hop_parse(s->redop, &op);
    uint32_t ts = nsim_hdt_size(dt), nr = (uint32_t)n->ndev;
    uint64_t blk = bytes / nr / ts, cnt = out_b / ts, bad;
    uint8_t *h = malloc(in_b > out_b ? in_b : out_b);
    if (h == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    *wrong = 0;
    if (in_place && nsim_coll_is_p2p(s->coll)) {
        *wrong = -1;
        free(h);
        return NSIM_OK;
    }
    for (uint32_t r = 0; r < nr; r++) {
        nsim_hdt_fill(dt, op, nr, r, 0, h, in_b / ts);
        n->set_device((int)r);
        void *dst = n->sendbuf[r];
        if (in_place && s->coll == NSIM_COLL_ALLGATHER)
            dst = (uint8_t *)n->recvbuf[r] + r * blk * ts;
        else if (in_place && s->coll != NSIM_COLL_REDUCESCATTER)
            dst = n->recvbuf[r];
        int c = n->dmemcpy(dst, h, in_b, H2D);
        if (c != 0) {
            free(h);
            return cuda_fail(n, c, "cudaMemcpy", err);
        }
    }
    int rc = launch(n, bytes, in_place, err);
    if (rc == NSIM_OK)
        rc = sync_all(n, err);
    for (uint32_t r = 0; rc == NSIM_OK && r < nr; r++) {
        void *src = n->recvbuf[r];
        if (in_place && s->coll == NSIM_COLL_REDUCESCATTER)
            src = (uint8_t *)n->sendbuf[r] + r * blk * ts;
        int c = n->dmemcpy(h, src, out_b, D2H);
        if (c != 0) {
            rc = cuda_fail(n, c, "cudaMemcpy", err);
            break;
        }
        switch (s->coll) {
        case NSIM_COLL_ALLREDUCE: *wrong += (int64_t)nsim_hdt_check(dt, op, nr, -1, 0, h, cnt, &bad); break;
        case NSIM_COLL_REDUCESCATTER: *wrong += (int64_t)nsim_hdt_check(dt, op, nr, -1, r * blk, h, cnt, &bad); break;
        case NSIM_COLL_REDUCE:
            if (r == s->root)
                *wrong += (int64_t)nsim_hdt_check(dt, op, nr, -1, 0, h, cnt, &bad);
            break;
        case NSIM_COLL_BROADCAST: *wrong += (int64_t)nsim_hdt_check(dt, op, nr, (int32_t)s->root, 0, h, cnt, &bad); break;
        case NSIM_COLL_SENDRECV: *wrong += (int64_t)nsim_hdt_check(dt, op, nr, (int32_t)((r + nr - 1) % nr), 0, h, cnt, &bad); break;
        default: /* AllGather: block j from rank j; AllToAll: from rank j's block r */
            for (uint32_t j = 0; j < nr; j++)
                *wrong += (int64_t)nsim_hdt_check(
                    dt, op, nr, (int32_t)j,
                    s->coll == NSIM_COLL_ALLTOALL ? r * blk : 0,
                    h + j * blk * ts, blk, &bad);
        }
    }
    free(h);
    return rc;
}

int nsim_nccl_measure_size(nsim_nccl *n, uint64_t bytes, nsim_hwx_measure *m,
                           nsim_err *err)
{
    const nsim_scenario *s = n->s;
    uint32_t nr = (uint32_t)n->ndev;
    uint64_t in_b = bytes, out_b = bytes;
    if (s->coll == NSIM_COLL_ALLGATHER)
        in_b = bytes / nr;
    if (s->coll == NSIM_COLL_REDUCESCATTER)
        out_b = bytes / nr;
    NSIM_TRY(ensure_buffers(n, in_b, out_b, err));
    for (uint32_t i = 0; i < n->o.warmup; i++)
        NSIM_TRY(launch(n, bytes, 0, err));
    NSIM_TRY(sync_all(n, err));
    for (int ip = 0; ip < 2; ip++) {
        double t0 = now_s();
        for (uint32_t i = 0; i < n->o.iters; i++)
            NSIM_TRY(launch(n, bytes, ip, err));
        NSIM_TRY(sync_all(n, err));
        double us = (now_s() - t0) / n->o.iters * 1e6;
        *(ip ? &m->time_ip_us : &m->time_us) = us;
        NSIM_TRY(check_once(n, bytes, in_b, out_b, ip,
                            ip ? &m->wrong_ip : &m->wrong, err));
    }
    return NSIM_OK;
}

cJSON *nsim_nccl_info(nsim_nccl *n)
{
    cJSON *o = cJSON_CreateObject();
    char v[32];
    snprintf(v, sizeof v, "%d", n->nccl_version);
    cJSON_AddStringToObject(o, "nccl_version_code", v);
    cJSON_AddStringToObject(o, "nccl_debug_file", n->log_pattern);
    cJSON_AddNumberToObject(o, "gpus", n->ndev);
    nsim_ncclog *log = NULL;
    if (nsim_ncclog_load(n->log_pattern, &log, NULL) == NSIM_OK) {
        const nsim_log_info *li = nsim_ncclog_info(log);
        cJSON_AddStringToObject(o, "nccl_version", li->version);
        cJSON_AddNumberToObject(o, "coll_channels", li->coll_channels);
        cJSON_AddNumberToObject(o, "nvls_channels", li->nvls_channels);
        cJSON_AddNumberToObject(o, "p2p_channels", li->p2p_channels);
        cJSON_AddNumberToObject(o, "rings", (double)nsim_ncclog_nrings(log));
        nsim_ncclog_destroy(log);
    }
    return o;
}

void nsim_nccl_close(nsim_nccl *n)
{
    if (n == NULL)
        return;
    for (int d = 0; n->comms && d < n->ndev; d++) {
        if (n->comms[d])
            n->comm_destroy(n->comms[d]);
        n->set_device(d);
        if (n->sendbuf && n->sendbuf[d])
            n->dfree(n->sendbuf[d]);
        if (n->recvbuf && n->recvbuf[d])
            n->dfree(n->recvbuf[d]);
        if (n->streams && n->streams[d])
            n->stream_destroy(n->streams[d]);
    }
    free(n->comms);
    free(n->streams);
    free(n->sendbuf);
    free(n->recvbuf);
    if (n->lib)
        dlclose(n->lib);
    if (n->cudart)
        dlclose(n->cudart);
    free(n);
}
