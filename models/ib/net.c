/* placeholder replaced below */
#include "models/transport.h"
static int net_setup(const nsim_xport_env *env, uint32_t conn, void **state,
                     nsim_err *err)
{
    (void)env; (void)conn; (void)state;
    return NSIM_ERR(err, NSIM_ENOTSUP, "NET transport not built yet");
}
static void net_teardown(void *s) { (void)s; }
static int net_send(void *s, uint32_t sm, uint64_t b, nsim_time *d) { (void)s; (void)sm; (void)b; (void)d; return NSIM_ENOTSUP; }
static int net_consumed(void *s) { (void)s; return NSIM_ENOTSUP; }
const nsim_transport_ops nsim_net_transport = {"NET", net_setup, net_teardown, net_send, net_consumed};
