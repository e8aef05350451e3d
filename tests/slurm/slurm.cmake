# A real Slurm cluster on this machine (slurmctld, slurmd, munge; one node of 2 CPUs) running
# ranklab's jobs through `ranklab run --slurm` (label slurm; skipped with a message where the
# daemons are missing or this is not root). Serial: its ranks take the cluster's 2 CPUs, and
# it waits for its queue's states.
# With the workbench built, it also checks that reopening it takes over a run whose launcher
# was killed.
set(slurm_workbench "")
if(TARGET ranklab-workbench)
  set(slurm_workbench $<TARGET_FILE:ranklab-workbench>)
endif()
add_test(NAME slurm.QueueRunCancelNodeDownRefusal
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_test.sh
                 $<TARGET_FILE:ranklab> ${PROJECT_SOURCE_DIR} ${slurm_workbench})
set_tests_properties(slurm.QueueRunCancelNodeDownRefusal PROPERTIES
  LABELS slurm SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 300)

# Two Slurm nodes on two network-namespace hosts (as tests/multihost makes them), a rank on
# each, telemetry back over the bridge; skipped, saying why, where namespaces cannot be made.
add_test(NAME slurm.TwoNodesOnNamespaceHosts
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm_two_nodes_test.sh
                 $<TARGET_FILE:ranklab> ${PROJECT_SOURCE_DIR})
set_tests_properties(slurm.TwoNodesOnNamespaceHosts PROPERTIES
  LABELS slurm SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 300)
