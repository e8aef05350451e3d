add_executable(engine_tests
  unit/registry_test.cpp
  unit/idx_dataset_test.cpp
  unit/shard_loader_test.cpp
  unit/strategies_thread_test.cpp
  unit/priority_sync_test.cpp
  unit/device_sync_test.cpp
  unit/device_codec_test.cpp
  unit/device_powersgd_test.cpp
  unit/device_ps_test.cpp
  unit/zero_thread_test.cpp
  unit/tensor_parallel_thread_test.cpp
  unit/sequence_parallel_test.cpp
  unit/grad_clip_thread_test.cpp
  unit/pipeline_test.cpp
  unit/step_schedule_test.cpp
  unit/trainer_test.cpp
  unit/activation_memory_test.cpp)
target_link_libraries(engine_tests PRIVATE ranklab_engine ranklab_storage GTest::gtest_main ZLIB::ZLIB)
gtest_discover_tests(engine_tests TEST_PREFIX "engine." PROPERTIES TIMEOUT 120)
# bf16 AMP end to end, where oneDNN has no bf16 matmul (the AVX2 and baseline builds).
ranklab_discover_per_isa(engine_tests "engine." TEST_FILTER "DeviceSync.EveryHostStaged*")

add_executable(checkpoint_data_tests unit/checkpoint_test.cpp unit/checkpoint_compression_test.cpp
               unit/checkpoint_split_test.cpp
               unit/data_test.cpp)
target_link_libraries(checkpoint_data_tests PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(checkpoint_data_tests TEST_PREFIX "engine." PROPERTIES TIMEOUT 120)

# Training steps against PyTorch 1.13: the fixture writes the reference with the
# interpreter that has torch, the test replays it.
set(RANKLAB_TORCH_PYTHON /usr/bin/python3 CACHE FILEPATH "Python with torch, for reference values")
set(torch_reference_dir ${CMAKE_CURRENT_BINARY_DIR}/torch_reference)
add_test(NAME torch_reference.generate
         COMMAND ${RANKLAB_TORCH_PYTHON} ${PROJECT_SOURCE_DIR}/tests/reference/torch_training_steps.py
                 ${torch_reference_dir})
set_tests_properties(torch_reference.generate PROPERTIES FIXTURES_SETUP torch_reference TIMEOUT 120)
add_executable(torch_step_tests unit/torch_step_test.cpp)
target_link_libraries(torch_step_tests PRIVATE ranklab_engine GTest::gtest_main)
target_compile_definitions(torch_step_tests PRIVATE RANKLAB_TORCH_REFERENCE_DIR="${torch_reference_dir}")
gtest_discover_tests(torch_step_tests TEST_PREFIX "torch."
                     PROPERTIES FIXTURES_REQUIRED torch_reference TIMEOUT 60)
foreach(isa avx2 default)
  gtest_discover_tests(torch_step_tests TEST_PREFIX "torch.${isa}."
                       PROPERTIES FIXTURES_REQUIRED torch_reference TIMEOUT 60
                                  ENVIRONMENT "RANKLAB_CPU_ISA=${isa}")
endforeach()

# Training on the GPU against the CPU (ctest -L gpu); built everywhere, skipped without a GPU.
add_executable(gpu_training_test unit/gpu_training_test.cpp unit/gpu_zero_test.cpp
                                 unit/nccl_one_rank_test.cpp)
target_link_libraries(gpu_training_test PRIVATE ranklab_engine GTest::gtest_main)
gtest_discover_tests(gpu_training_test TEST_PREFIX "gpu." PROPERTIES TIMEOUT 600 LABELS gpu)

# The simulator (engine/sim) against the engine's formulas; no data files, no ranks.
add_executable(sim_tests unit/simulator_test.cpp unit/model_part_test.cpp)
target_link_libraries(sim_tests PRIVATE ranklab_sim ranklab_storage GTest::gtest_main)
gtest_discover_tests(sim_tests TEST_PREFIX "sim." PROPERTIES TIMEOUT 60)
