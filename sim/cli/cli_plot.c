/* SPDX-License-Identifier: MIT
 *
 * cli_plot.c - "ncclsim plot": gnuplot pictures of sweep results
 * (curves, heatmap) and of `ncclsim compare --json` (compare).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output/plot.h"
#include "sim/core/units.h"

enum { OPT_KIND = 256, OPT_X, OPT_Y, OPT_SIZE, OPT_WHERE, OPT_METRIC,
       OPT_TITLE, OPT_SCRIPT, OPT_WIDTH, OPT_HEIGHT };

static const struct option plot_long[] = {
    {"kind", required_argument, NULL, OPT_KIND},
    {"x", required_argument, NULL, OPT_X},
    {"y", required_argument, NULL, OPT_Y},
    {"size", required_argument, NULL, OPT_SIZE},
    {"where", required_argument, NULL, OPT_WHERE},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"title", required_argument, NULL, OPT_TITLE},
    {"script", required_argument, NULL, OPT_SCRIPT},
    {"width", required_argument, NULL, OPT_WIDTH},
    {"height", required_argument, NULL, OPT_HEIGHT},
    {"output", required_argument, NULL, 'o'},
    {NULL, 0, NULL, 0},
};

static int parse_px(const char *v, unsigned *out)
{
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (end == v || *end != '\0' || n < 100 || n > 8000)
        return nsim_cli_usage("plot", "--width/--height: expected 100..8000 "
                                      "pixels, got '%s'", v);
    *out = (unsigned)n;
    return 0;
}

static int plot_opt(int c, const char *v, char **argv, nsim_plot_opts *o)
{
    const char *why;
    switch (c) {
    case OPT_KIND:
        if (strcmp(v, "curves") == 0)
            o->kind = NSIM_PLOT_CURVES;
        else if (strcmp(v, "heatmap") == 0)
            o->kind = NSIM_PLOT_HEATMAP;
        else if (strcmp(v, "compare") == 0)
            o->kind = NSIM_PLOT_COMPARE;
        else
            return nsim_cli_usage("plot", "--kind: expected curves, heatmap "
                                          "or compare, got '%s'", v);
        return 0;
    case OPT_METRIC:
        if (strcmp(v, "busbw") == 0)
            o->metric = NSIM_METRIC_BUSBW;
        else if (strcmp(v, "algbw") == 0)
            o->metric = NSIM_METRIC_ALGBW;
        else if (strcmp(v, "time") == 0)
            o->metric = NSIM_METRIC_TIME;
        else
            return nsim_cli_usage("plot", "--metric: expected busbw, algbw or "
                                          "time, got '%s'", v);
        return 0;
    case OPT_X: o->x = v; return 0;
    case OPT_Y: o->y = v; return 0;
    case OPT_TITLE: o->title = v; return 0;
    case OPT_SCRIPT: o->script = v; return 0;
    case 'o': o->out = v; return 0;
    case OPT_WIDTH: return parse_px(v, &o->width);
    case OPT_HEIGHT: return parse_px(v, &o->height);
    case OPT_SIZE:
        if (nsim_units_parse_size(v, &o->size, &why) != NSIM_OK || !o->size)
            return nsim_cli_usage("plot", "--size: '%s': %s", v,
                                  o->size ? why : "expected a size > 0");
        return 0;
    case OPT_WHERE:
        if (o->nwhere == NSIM_PLOT_MAX_WHERE)
            return nsim_cli_usage("plot", "--where: at most %d",
                                  NSIM_PLOT_MAX_WHERE);
        if (strchr(v, '=') == NULL)
            return nsim_cli_usage("plot", "--where: expected KNOB=VALUE, got "
                                          "'%s'", v);
        o->where[o->nwhere++] = v;
        return 0;
    case ':': return nsim_cli_usage("plot", "%s needs a value", argv[optind - 1]);
    default: return nsim_cli_usage("plot", "unknown option '%s'", argv[optind - 1]);
    }
}

int nsim_cmd_plot(int argc, char **argv)
{
    nsim_err err = {0};
    nsim_plot_opts o = {0};
    int c, rc = 0, kind_given = 0;
    optind = 1;
    opterr = 0;
    while (rc == 0 &&
           (c = getopt_long(argc, argv, ":o:", plot_long, NULL)) != -1) {
        kind_given |= c == OPT_KIND;
        rc = plot_opt(c, optarg, argv, &o);
    }
    if (rc != 0)
        return rc;
    if (!kind_given)
        return nsim_cli_usage("plot", "expected --kind curves, heatmap or "
                                      "compare");
    if (optind >= argc)
        return nsim_cli_usage("plot", "expected a results file");
    if (o.out == NULL)
        return nsim_cli_usage("plot", "expected -o OUT.png or -o OUT.svg");
    size_t n = strlen(o.out);
    if (n < 5 || (strcmp(o.out + n - 4, ".png") && strcmp(o.out + n - 4, ".svg")))
        return nsim_cli_usage("plot", "-o '%s': expected a .png or .svg name",
                              o.out);
    if (o.kind == NSIM_PLOT_HEATMAP && (o.x == NULL || o.y == NULL))
        return nsim_cli_usage("plot", "--kind heatmap needs --x KNOB and --y "
                                      "KNOB");
    if (nsim_plot((const char *const *)argv + optind, (size_t)(argc - optind),
                  &o, &err) != NSIM_OK)
        return nsim_cli_fail(&err);
    return NSIM_EXIT_OK;
}
