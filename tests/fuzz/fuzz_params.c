/* SPDX-License-Identifier: MIT
 *
 * fuzz_params.c - libFuzzer harness for the model parameters: the same
 * bytes as an object applied over the defaults (a scenario's "params",
 * nsim_params_apply) and as a params file (nsim_params_load: the object,
 * or one under "params"); the table is then written as JSON.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "fuzz_util.h"
#include "models/params.h"
#include "sim/core/jread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nsim_err err = {0};
    nsim_params p;
    cJSON *root = NULL;
    char *text = NULL;
    nsim_params_defaults(&p);
    if (nsim_json_parse((const char *)data, size, "fuzz.json", &root,
                        &err) == NSIM_OK) {
        if (cJSON_IsObject(root) &&
            nsim_params_apply(&p, root, "fuzz.json", &err) == NSIM_OK &&
            nsim_params_to_json(&p, &text, &err) == NSIM_OK)
            free(text);
        cJSON_Delete(root);
    }
    nsim_params_defaults(&p);
    const char *path = fuzz_write("params.json", data, size);
    if (nsim_params_load(&p, path, &err) == NSIM_OK &&
        nsim_params_to_json(&p, &text, &err) == NSIM_OK)
        free(text);
    return 0;
}
