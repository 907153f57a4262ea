/* SPDX-License-Identifier: MIT
 *
 * test_trace.c - the Chrome trace (Perfetto) of a run checked against
 * the trace event format: the fields each phase requires (ph B/E/X/i/C/
 * s/f/M: name, pid, tid, ts in us, dur, scope, counter args, flow ids,
 * metadata names), B/E balanced and X slices nested per track, flows
 * paired; the tracks the trace promises (channels, QPs, counters, flows);
 * and the size cap (sampling, with a note).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>

#include "nsim_test.h"
#include "output/trace.h"
#include "sim/core/jread.h"
#include "sim/exec/run.h"
#include "sim/exec/scenario.h"

#define SCEN NSIM_SOURCE_DIR "/scenarios/"

typedef struct counts {
    size_t x_op, x_wr, i_cqe, i_retx, i_cts, c_credit, c_link, flows, meta;
} counts;

static int num(const cJSON *o, const char *k, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return 0;
    *v = it->valuedouble;
    return 1;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

typedef struct slice {
    double pid, tid, ts, end;
} slice;

static int slice_cmp(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->end > y->end ? -1 : x->end < y->end; /* outer first */
}

/* The checker: 0 if text is a valid trace, else 1 with why filled in. */
static int check_trace(const char *text, counts *n, char *why, size_t len)
{
    cJSON *root = cJSON_Parse(text);
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    memset(n, 0, sizeof *n);
    if (!cJSON_IsArray(evs)) {
        snprintf(why, len, "no traceEvents array");
        cJSON_Delete(root);
        return 1;
    }
    size_t ne = (size_t)cJSON_GetArraySize(evs), ns = 0, i = 0;
    slice *sl = calloc(ne + 1, sizeof *sl);
    double *flow_s = calloc(ne + 1, sizeof *flow_s);
    double *flow_f = calloc(ne + 1, sizeof *flow_f);
    long depth_be = 0;
    int bad = 0;
    const cJSON *e;
    for (size_t k = 0; k <= ne; k++)
        flow_s[k] = flow_f[k] = -1;
    cJSON_ArrayForEach(e, evs)
    {
        const char *ph = str(e, "ph"), *name = str(e, "name");
        double pid, tid, ts, dur, id;
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
#define FAIL(...)                                                            \
    do {                                                                     \
        int o_ = snprintf(why, len, "event %zu: ", i);                       \
        snprintf(why + o_, len - (size_t)o_, __VA_ARGS__);                   \
        bad = 1;                                                             \
        goto out;                                                            \
    } while (0)
        if (!cJSON_IsObject(e) || ph == NULL || strlen(ph) != 1 ||
            strchr("BEXiICstfM", ph[0]) == NULL)
            FAIL("%s", "ph missing or not a known phase");
        if (name == NULL)
            FAIL("ph %s without a name", ph);
        if (!num(e, "pid", &pid) || pid < 0 || pid != floor(pid))
            FAIL("%s: pid missing or not a whole number", name);
        if (ph[0] == 'M') {
            n->meta++;
            if (!cJSON_IsObject(args))
                FAIL("metadata %s without args", name);
            if (strcmp(name, "process_name") == 0 ||
                strcmp(name, "thread_name") == 0) {
                if (str(args, "name") == NULL)
                    FAIL("%s without args.name", name);
            } else if (strcmp(name, "process_sort_index") == 0 ||
                       strcmp(name, "thread_sort_index") == 0) {
                double si;
                if (!num(args, "sort_index", &si))
                    FAIL("%s without args.sort_index", name);
            } else if (strcmp(name, "process_labels") != 0) {
                FAIL("metadata name %s is not one of the format's", name);
            }
            if (strncmp(name, "thread", 6) == 0 && !num(e, "tid", &tid))
                FAIL("%s without tid", name);
            i++;
            continue;
        }
        if (!num(e, "ts", &ts) || ts < 0)
            FAIL("%s: ts (us) missing or negative", name);
        if (ph[0] != 'C' && (!num(e, "tid", &tid) || tid < 0))
            FAIL("%s (ph %s): tid missing", name, ph);
        switch (ph[0]) {
        case 'X':
            if (!num(e, "dur", &dur) || dur < 0)
                FAIL("%s: X without a dur >= 0", name);
            sl[ns++] = (slice){pid, tid, ts, ts + dur};
            if (strcmp(str(e, "cat") ? str(e, "cat") : "", "op") == 0)
                n->x_op++;
            else if (strcmp(str(e, "cat") ? str(e, "cat") : "", "wr") == 0)
                n->x_wr++;
            break;
        case 'B': depth_be++; break;
        case 'E':
            if (--depth_be < 0)
                FAIL("%s", "E without B");
            break;
        case 'i':
        case 'I': {
            const char *s = str(e, "s");
            if (s != NULL && strcmp(s, "g") && strcmp(s, "p") && strcmp(s, "t"))
                FAIL("%s: instant scope '%s' is not g, p or t", name, s);
            const char *cat = str(e, "cat") ? str(e, "cat") : "";
            n->i_cqe += strcmp(cat, "cqe") == 0;
            n->i_retx += strcmp(cat, "retx") == 0;
            n->i_cts += strcmp(cat, "cts") == 0;
            break;
        }
        case 'C': {
            const cJSON *a;
            if (!cJSON_IsObject(args) || args->child == NULL)
                FAIL("%s: counter without args", name);
            cJSON_ArrayForEach(a, args) if (!cJSON_IsNumber(a))
                FAIL("%s: counter value %s is not a number", name, a->string);
            const char *cat = str(e, "cat") ? str(e, "cat") : "";
            n->c_credit += strcmp(cat, "credits") == 0;
            n->c_link += strcmp(cat, "link") == 0;
            break;
        }
        case 's':
        case 'f':
        case 't':
            if (!num(e, "id", &id) || id < 0 || id >= (double)ne ||
                str(e, "cat") == NULL)
                FAIL("%s: flow event without an id or a cat", name);
            if (ph[0] == 'f' && str(e, "bp") && strcmp(str(e, "bp"), "e"))
                FAIL("%s: flow end bp must be \"e\"", name);
            if (ph[0] == 's') {
                if (flow_s[(size_t)id] >= 0)
                    FAIL("flow id %g started twice", id);
                flow_s[(size_t)id] = ts;
            } else if (ph[0] == 'f') {
                if (flow_f[(size_t)id] >= 0)
                    FAIL("flow id %g finished twice", id);
                flow_f[(size_t)id] = ts;
            }
            break;
        }
        i++;
    }
    if (depth_be != 0) {
        snprintf(why, len, "B/E unbalanced");
        bad = 1;
        goto out;
    }
    for (size_t k = 0; k < ne; k++) {
        if ((flow_s[k] >= 0) != (flow_f[k] >= 0)) {
            snprintf(why, len, "flow id %zu not paired", k);
            bad = 1;
            goto out;
        }
        if (flow_s[k] >= 0) {
            n->flows++;
            if (flow_f[k] + 1e-9 < flow_s[k]) {
                snprintf(why, len, "flow id %zu ends before it starts", k);
                bad = 1;
                goto out;
            }
        }
    }
    /* X slices of one track nest: none starts inside another and ends
     * after it */
    qsort(sl, ns, sizeof *sl, slice_cmp);
    for (size_t k = 0; k + 1 < ns; k++) {
        const slice *a = &sl[k], *b = &sl[k + 1];
        if (a->pid == b->pid && a->tid == b->tid && b->ts < a->end - 1e-6 &&
            b->end > a->end + 1e-6) {
            snprintf(why, len, "slices overlap on pid %g tid %g at %g us",
                     a->pid, a->tid, b->ts);
            bad = 1;
            goto out;
        }
    }
out:
    free(sl);
    free(flow_s);
    free(flow_f);
    cJSON_Delete(root);
    return bad;
}

static char *trace_of(const char *scen, uint64_t bytes, uint32_t qps,
                      size_t cap, cJSON **other)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_plan *p = NULL;
    nsim_exec_result r = {0};
    nsim_run_row row;
    char path[64], *text = NULL;
    size_t len = 0;
    nsim_run_opts o = {.keep = 1, .want_trace = 1, .trace_cap = cap};
    NSIM_ASSERT_OK(nsim_scenario_load(scen, &s, &err));
    s->qps_per_conn = qps;
    NSIM_ASSERT_OK(nsim_run_size(s, &o, bytes, &row, &p, &r, &err));
    snprintf(path, sizeof path, "test_trace_%d.json", (int)getpid());
    NSIM_ASSERT_OK(nsim_trace_write(path, s->topo, p, &r, cap, &err));
    NSIM_ASSERT_OK(nsim_read_file(path, &text, &len, &err));
    remove(path);
    cJSON *root = cJSON_Parse(text);
    *other = cJSON_DetachItemFromObject(root, "otherData");
    cJSON_Delete(root);
    nsim_exec_result_free(&r);
    nsim_plan_destroy(p);
    nsim_scenario_destroy(s);
    return text;
}

static void test_trace_format(void)
{
    counts n;
    char why[256] = "";
    cJSON *other = NULL;
    char *text = trace_of(SCEN "dgx-h100-2node-allreduce.json", 4u << 20, 2, 0,
                          &other);
    int bad = check_trace(text, &n, why, sizeof why);
    if (bad)
        fprintf(stderr, "\n  trace: %s\n", why);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(n.x_op > 0);      /* channel tracks */
    CU_ASSERT(n.x_wr > 0);      /* QP tracks: work requests */
    CU_ASSERT(n.i_cqe >= 2 * n.x_wr); /* send and receive completions */
    CU_ASSERT(n.i_cts > 0);
    CU_ASSERT(n.c_credit > 0);
    CU_ASSERT(n.c_link > 0);
    CU_ASSERT(n.flows > 0);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(other, "note")->valuestring,
                           "complete");
    cJSON_Delete(other);
    free(text);
}

static void test_trace_cap(void)
{
    counts n, full;
    char why[256] = "";
    cJSON *other = NULL, *o2 = NULL;
    char *all = trace_of(SCEN "dgx-h100-2node-allreduce.json", 4u << 20, 2, 0,
                         &o2);
    char *text = trace_of(SCEN "dgx-h100-2node-allreduce.json", 4u << 20, 2,
                          2000, &other);
    CU_ASSERT_EQUAL(check_trace(all, &full, why, sizeof why), 0);
    int bad = check_trace(text, &n, why, sizeof why);
    if (bad)
        fprintf(stderr, "\n  capped trace: %s\n", why);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(n.x_op < full.x_op);
    CU_ASSERT(n.x_op > 0);
    CU_ASSERT(strlen(text) < strlen(all) / 2);
    CU_ASSERT(cJSON_GetObjectItem(other, "op_stride")->valuedouble > 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(cJSON_GetObjectItem(other, "note")->valuestring,
                                  "sampled"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "trace sampled (size cap)"));
    cJSON_Delete(other);
    cJSON_Delete(o2);
    free(text);
    free(all);
}

/* Packet loss: the QP's retransmissions are marked. */
static void test_trace_retransmissions(void)
{
    counts n;
    char why[256] = "";
    cJSON *other = NULL;
    char *text = trace_of(NSIM_TEST_DATA "/faults/loss_retransmit.json",
                          16u << 20, 1, 0, &other);
    int bad = check_trace(text, &n, why, sizeof why);
    if (bad)
        fprintf(stderr, "\n  trace: %s\n", why);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(n.i_retx > 0);
    cJSON_Delete(other);
    free(text);
}

/* The checker refuses what the format forbids. */
static void test_checker_refuses(void)
{
    static const char *const bad[] = {
        "{\"traceEvents\": [{\"name\": \"a\", \"ph\": \"X\", \"pid\": 0, "
        "\"tid\": 0, \"ts\": 1}]}", /* X without dur */
        "{\"traceEvents\": [{\"name\": \"a\", \"ph\": \"X\", \"pid\": 0, "
        "\"tid\": 0, \"ts\": 0, \"dur\": 5}, {\"name\": \"b\", \"ph\": \"X\", "
        "\"pid\": 0, \"tid\": 0, \"ts\": 2, \"dur\": 5}]}", /* overlap */
        "{\"traceEvents\": [{\"name\": \"f\", \"ph\": \"s\", \"id\": 0, "
        "\"cat\": \"flow\", \"pid\": 0, \"tid\": 0, \"ts\": 0}]}", /* unpaired */
        "{\"traceEvents\": [{\"name\": \"c\", \"ph\": \"C\", \"pid\": 0, "
        "\"ts\": 0, \"args\": {\"v\": \"x\"}}]}", /* counter not a number */
        "{\"traceEvents\": [{\"name\": \"weird\", \"ph\": \"M\", \"pid\": 0, "
        "\"args\": {}}]}", /* unknown metadata */
        "{\"traceEvents\": [{\"name\": \"i\", \"ph\": \"i\", \"s\": \"q\", "
        "\"pid\": 0, \"tid\": 0, \"ts\": 0}]}", /* bad scope */
        "{\"traceEvents\": [{\"name\": \"x\", \"ph\": \"X\", \"tid\": 0, "
        "\"ts\": 0, \"dur\": 1}]}", /* no pid */
    };
    counts n;
    char why[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_EQUAL(check_trace(bad[i], &n, why, sizeof why), 1);
}

CU_TestInfo nsim_test_trace[] = {
    {"trace event format: fields per phase, nesting, flows, tracks",
     test_trace_format},
    {"trace size cap: sampled, still valid, says so", test_trace_cap},
    {"trace marks retransmissions", test_trace_retransmissions},
    {"the format checker refuses broken traces", test_checker_refuses},
    CU_TEST_INFO_NULL,
};
