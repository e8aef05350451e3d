# Two network-namespace hosts on this machine, 2 ranks each, through mpirun (label
# multihost; skipped with a message where namespaces cannot be made). Serial: it times a
# dead link against the hang limit.
add_test(NAME multihost.TwoHostsTwoRanksEach
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/multihost/multihost_test.sh
                 $<TARGET_FILE:ranklab> ${PROJECT_SOURCE_DIR})
set_tests_properties(multihost.TwoHostsTwoRanksEach PROPERTIES
  LABELS multihost SKIP_RETURN_CODE 77 RUN_SERIAL TRUE TIMEOUT 400)
