# Real sockets, real SQLite files, real mpirun: the parts working together.
add_executable(telemetry_store_test integration/telemetry_store_test.cpp)
target_link_libraries(telemetry_store_test PRIVATE ranklab_launch GTest::gtest_main Threads::Threads)
gtest_discover_tests(telemetry_store_test TEST_PREFIX "integration." PROPERTIES TIMEOUT 120)

# The launcher's watch over rank processes, on real child processes.
add_executable(rank_watch_test integration/rank_watch_test.cpp)
target_link_libraries(rank_watch_test PRIVATE ranklab_launch GTest::gtest_main)
gtest_discover_tests(rank_watch_test TEST_PREFIX "integration." PROPERTIES TIMEOUT 60)

# Where a job with hosts sends mpirun and its telemetry (real resolver and routes).
add_executable(host_placement_test integration/host_placement_test.cpp)
target_link_libraries(host_placement_test PRIVATE ranklab_launch GTest::gmock GTest::gtest_main)
gtest_discover_tests(host_placement_test TEST_PREFIX "integration." PROPERTIES TIMEOUT 60)

# What the launcher asks of Slurm and reads back (no cluster: tests/slurm has the real one).
add_executable(slurm_job_test integration/slurm_job_test.cpp)
target_link_libraries(slurm_job_test PRIVATE ranklab_launch GTest::gmock GTest::gtest_main)
gtest_discover_tests(slurm_job_test TEST_PREFIX "integration." PROPERTIES TIMEOUT 60)

# The launcher's private folders for what it hands the ranks (real files, modes, links).
add_executable(private_dir_test integration/private_dir_test.cpp unit/rejection_log_test.cpp)
target_link_libraries(private_dir_test PRIVATE ranklab_launch GTest::gtest_main)
gtest_discover_tests(private_dir_test TEST_PREFIX "integration." PROPERTIES TIMEOUT 60)

# Tests of the real `ranklab` CLI. Each case launches mpirun with up to 4 ranks on 2 cores:
# one at a time, never beside a GUI test's ranks, but a one-process test may run beside
# them (the locks: tests/CMakeLists.txt). The ones that time something (a straggler's wait, a hang
# or a restart against its limit) run alone: TIMED, RUN_SERIAL.
function(ranklab_cli_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "TIMED" "" "")
  add_executable(${name} integration/${name}.cpp)
  target_link_libraries(${name} PRIVATE ranklab_storage GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    RANKLAB_CLI="$<TARGET_FILE:ranklab>"
    RANKLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  add_dependencies(${name} ranklab ranklab-worker)
  if(arg_TIMED)
    gtest_discover_tests(${name} TEST_PREFIX "integration." PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
  else()
    gtest_discover_tests(${name} TEST_PREFIX "integration." PROPERTIES TIMEOUT 300)
    set_property(GLOBAL APPEND PROPERTY RANKLAB_CLI_RANK_TESTS ${name}_TESTS)
  endif()
endfunction()

ranklab_cli_test(cli_test)
ranklab_cli_test(cli_parallel_test)
ranklab_cli_test(strategies_test TIMED)
ranklab_cli_test(cli_store_test)
# The memory estimate: validate prints it, run refuses a job too big (nothing launched).
ranklab_cli_test(cli_memory_test)
# simulate, calibrate and plan (docs/plan.md): a simulated pipeline against a real one.
ranklab_cli_test(cli_plan_test)
# PyTorch's own traces (a real DDP job under torch.profiler) imported and analysed.
ranklab_cli_test(cli_import_test)
# analyze's stragglers (chronic, moving) and hang section, and runs show's, on stored runs.
ranklab_cli_test(cli_analyze_test)
ranklab_cli_test(fault_test TIMED)
ranklab_cli_test(restart_test TIMED)
# Forged ZeroMQ senders against a real run's collector: a flood of garbage and well-formed lies.
ranklab_cli_test(telemetry_flood_test)
target_link_libraries(telemetry_flood_test PRIVATE cppzmq ranklab_telemetry)
# The workbench's way to run a job: a detached launcher, signals, a follower of the store.
ranklab_cli_test(detached_run_test)
target_link_libraries(detached_run_test PRIVATE ranklab_launch)

# The PyTorch twins of bench/ start and print their JSON line (a few steps each), so a
# benchmark's peer cannot break unnoticed between benchmark runs.
set(bench_dir ${PROJECT_SOURCE_DIR}/bench)
add_test(NAME bench.TorchTrainTwinRuns
         COMMAND ${RANKLAB_TORCH_PYTHON} ${bench_dir}/torch_train.py --model mlp --batch 64
                 --threads 1 --steps 5 --warmup 1 --json)
add_test(NAME bench.TorchDdpTwinRunsOnTwoRanks
         COMMAND ${RANKLAB_TORCH_PYTHON} ${bench_dir}/torch_ddp_mlp.py --world 2 --batch 64
                 --steps 5 --warmup 1 --json)
add_test(NAME bench.TorchTrainTwinRunsTheGptInBf16
         COMMAND ${RANKLAB_TORCH_PYTHON} ${bench_dir}/torch_train.py --model gpt --dtype bf16
                 --batch 2 --threads 1 --steps 2 --warmup 1 --json)
set_tests_properties(bench.TorchTrainTwinRuns bench.TorchDdpTwinRunsOnTwoRanks
                     bench.TorchTrainTwinRunsTheGptInBf16 PROPERTIES
  PASS_REGULAR_EXPRESSION "\"samples_per_s\": *[1-9]" TIMEOUT 120 PROCESSORS 2)
# bench/lib.sh and lib.py, the helpers the run-* scripts share: JSON fields, ratios, maxima,
# goal verdicts, the newest run.
add_test(NAME bench.lib COMMAND ${PROJECT_SOURCE_DIR}/tests/integration/bench_lib_test.sh)
add_test(NAME bench.lib.py COMMAND ${PROJECT_SOURCE_DIR}/tests/integration/bench_lib_test.py)
set_tests_properties(bench.lib bench.lib.py PROPERTIES TIMEOUT 30)

