# Failover and channel modes that used to stop themselves (issue 14 items
# 3 and 7): each runs to the end.
set(F ${NSIM_TESTS}/data/faults)
nsim_expect(cli.faults.rebind_qp_mid_flight 0
            CMD ${NCCLSIM} run ${F}/rebind_qp_mid_flight.json --stats
            OUT "Avg bus bandwidth +: 15[0-9]\\..*failover at 125.352 us: channel 14, rank 7 -> 15: rebind_qp: QP 0x1a104 dead")
nsim_expect(cli.faults.rebind_nic_two_qps 0
            CMD ${NCCLSIM} run ${F}/rebind_nic_two_qps.json --stats
            OUT "Avg bus bandwidth.*rebind_nic: moved from h1.nic3 -> h0.nic3 to h1.nic0 -> h0.nic0")
foreach(q 1 2 4 8)
  nsim_expect(cli.faults.shared_comms_qps${q} 0
              CMD ${NCCLSIM} run ${F}/shared_env.json --qps ${q}
              OUT "channel mode shared.*Avg bus bandwidth +: 42\\.0")
endforeach()
