/* SPDX-License-Identifier: MIT
 *
 * fuzz_scenario.c - libFuzzer harness for the scenario reader
 * (nsim_scenario_load): header, collective, sizes, knobs, "env" (NCCL_*
 * variables), "params", the topology (inline, or by name: the
 * *.topo.json files of scenarios/ and tests/data/ are copied beside the
 * scenario), and the fault plan with its failover policies,
 * which is then checked against the channels as `run` does. A cluster
 * spec ("topology": {"cluster": ...}) over 64 nodes is skipped: building
 * it takes seconds and hundreds of MB per input, which the fuzzer would
 * report as a slow unit or out of memory, not a reader bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <dirent.h>

#include "fuzz_util.h"
#include "sim/exec/scenario.h"
#include "sim/core/jread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int big_cluster(const uint8_t *data, size_t size)
{
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "topology");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(t, "cluster");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "nodes");
    int big = cJSON_IsNumber(n) && !(n->valuedouble <= 64);
    cJSON_Delete(root);
    return big;
}

/* Copies the topologies of scenarios/ and tests/data/ beside the
 * scenario, so that seeds name them ("topology": "seed-4gpu.topo.json"). */
static void copy_topologies(void)
{
    static const char *const dirs[] = {NSIM_SRC_DIR "/scenarios",
                                       NSIM_SRC_DIR "/tests/data"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        DIR *d = opendir(dirs[i]);
        if (d == NULL)
            abort();
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            size_t n = strlen(e->d_name);
            if (n < 10 || strcmp(e->d_name + n - 10, ".topo.json") != 0)
                continue;
            char path[512], *text = NULL;
            size_t len = 0;
            nsim_err err = {0};
            snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
            if (nsim_read_file(path, &text, &len, &err) != NSIM_OK)
                abort();
            fuzz_write(e->d_name, (const uint8_t *)text, len);
            free(text);
        }
        closedir(d);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        copy_topologies();
        ready = 1;
    }
    if (big_cluster(data, size))
        return 0;
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    const char *path = fuzz_write("scenario.json", data, size);
    if (nsim_scenario_load(path, &s, &err) != NSIM_OK)
        return 0;
    nsim_fault_plan fp;
    memset(&fp, 0, sizeof fp);
    uint32_t nch = s->nchannels ? s->nchannels : 1;
    if (nsim_scenario_fault_plan(s, nch, &fp, &err) == NSIM_OK) {
        volatile uint32_t sink = fp.nfaults;
        (void)sink;
    }
    if (nsim_scenario_check_sizes(s, &err) == NSIM_OK) {
        nsim_plan_req r = nsim_scenario_request(s, s->min_bytes);
        nsim_scenario_fit_request(s, &r);
    }
    nsim_scenario_destroy(s);
    return 0;
}
