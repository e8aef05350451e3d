# Real MPI ranks: each test runs under mpirun with 1..N ranks (oversubscribed).
set(RANKLAB_MPI_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none)

function(ranklab_add_mpi_test name target max_ranks)
  foreach(np RANGE 1 ${max_ranks})
    add_test(NAME ${name}.np${np}
      COMMAND ${MPIEXEC_EXECUTABLE} --oversubscribe --bind-to none -np ${np} $<TARGET_FILE:${target}>)
    set_tests_properties(${name}.np${np} PROPERTIES
      ENVIRONMENT "${RANKLAB_MPI_ENV}" TIMEOUT 180 PROCESSORS 2 LABELS mpi)
  endforeach()
endfunction()

# One main() for every mpirun test program (tests/support/mpi_test_main.cpp).
add_library(ranklab_mpi_test_main STATIC support/mpi_test_main.cpp)
target_link_libraries(ranklab_mpi_test_main PUBLIC ranklab_comm_mpi GTest::gtest)

add_executable(mpi_collectives_test mpi/collectives_test.cpp)
target_link_libraries(mpi_collectives_test PRIVATE ranklab_mpi_test_main)
ranklab_add_mpi_test(mpi_collectives mpi_collectives_test 8)

# The data x pipeline x tensor layout's sub-communicators (engine/train/parallel_layout.h).
add_executable(mpi_layout_test mpi/parallel_layout_test.cpp)
target_link_libraries(mpi_layout_test PRIVATE ranklab_mpi_test_main ranklab_engine)
ranklab_add_mpi_test(mpi_layout mpi_layout_test 8)
