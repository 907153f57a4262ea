/* SPDX-License-Identifier: MIT
 *
 * cli_explain.c - "ncclsim explain SCENARIO -b SIZE [--json FILE]": what
 * bounds one size of a scenario (sim/exec/explain.h), with run's options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "sim/core/jread.h"
#include "sim/exec/explain.h"
#include "sim/exec/scenario.h"

/* Was a size given (-b, --minbytes)? It is the one explained. */
static int size_given(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], "-b", 2) == 0 ||
            strncmp(argv[i], "--minbytes", 10) == 0)
            return 1;
    return 0;
}

int nsim_cmd_explain(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_scenario *s = NULL;
    nsim_cli_run_opts ro = {0};
    nsim_explanation x;
    int rc = nsim_cli_load_run("explain", argc, argv, &s, &ro, &err);
    if (rc == 0 && (ro.csv_out || ro.plot_out || ro.trace_out || ro.analytic))
        rc = nsim_cli_usage("explain", "--csv/--plot/--trace/--mode are "
                                       "options of 'ncclsim run'");
    if (rc == 0) {
        uint64_t size = size_given(argc, argv) ? s->min_bytes : s->max_bytes;
        if (nsim_explain(s, size, &x, &err) != NSIM_OK)
            rc = -1;
    }
    if (rc == 0 && !ro.quiet) {
        printf("# explain: %s on %s (%u ranks)\n", s->name,
               nsim_topo_name(s->topo), nsim_topo_nranks(s->topo));
        nsim_explain_print(stdout, &x);
    }
    if (rc == 0 && ro.json_out != NULL) {
        cJSON *o = nsim_explain_json(&x);
        char *text = o ? cJSON_Print(o) : NULL;
        cJSON_Delete(o);
        if (text == NULL)
            rc = (NSIM_ERR(&err, NSIM_ENOMEM, "out of memory"), -1);
        else if (nsim_write_file_atomic(ro.json_out, text, strlen(text),
                                        &err) != NSIM_OK)
            rc = -1;
        free(text);
    }
    nsim_scenario_destroy(s);
    return rc < 0 ? nsim_cli_fail(&err) : rc;
}
