// Run under mpirun: every data x pipeline x tensor layout of the world, on real ranks. Each
// group must hold exactly the ranks that share its coordinates, in order, and its
// all-reduce must sum over them alone.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "comm/mpi/mpi_communicator.h"
#include "engine/train/parallel_layout.h"

namespace ranklab {
namespace {

std::vector<LayoutDegrees> layoutsOf(int ranks) {
  std::vector<LayoutDegrees> layouts;
  for (int tensor = 1; tensor <= ranks; ++tensor) {
    for (int pipeline = 1; pipeline * tensor <= ranks; ++pipeline) {
      if (ranks % (tensor * pipeline) == 0)
        layouts.push_back({ranks / (tensor * pipeline), pipeline, tensor});
    }
  }
  return layouts;
}

// The sum over the group of each member's world rank, and the members' world ranks as
// the layout's coordinates say they should be.
void expectGroup(Communicator& group, int world_rank, const std::vector<int>& members, int position,
                 const std::string& what) {
  ASSERT_EQ(group.size(), static_cast<int>(members.size())) << what;
  EXPECT_EQ(group.rank(), position) << what;
  std::vector<float> seen(members.size(), 0.f);
  seen[group.rank()] = static_cast<float>(world_rank);
  group.allreduceSumNative(seen.data(), seen.size());
  for (size_t i = 0; i < members.size(); ++i)
    EXPECT_EQ(seen[i], static_cast<float>(members[i])) << what << " member " << i;
}

TEST(ParallelLayout, EveryFactorisationOfTheWorldGroupsTheRightRanks) {
  MpiCommunicator world;
  for (const LayoutDegrees& d : layoutsOf(world.size())) {
    ParallelLayout layout(world, d);
    const LayoutCoords me = layout.coords();
    EXPECT_EQ(rankOf(me, d), world.rank()) << d.str();
    std::vector<int> data, pipeline, tensor;
    for (int i = 0; i < d.data; ++i) data.push_back(rankOf({i, me.stage, me.slice}, d));
    for (int i = 0; i < d.pipeline; ++i) pipeline.push_back(rankOf({me.data, i, me.slice}, d));
    for (int i = 0; i < d.tensor; ++i) tensor.push_back(rankOf({me.data, me.stage, i}, d));
    expectGroup(layout.dataGroup(), world.rank(), data, me.data, d.str() + " data group");
    expectGroup(layout.pipelineGroup(), world.rank(), pipeline, me.stage,
                d.str() + " pipeline group");
    expectGroup(layout.tensorGroup(), world.rank(), tensor, me.slice, d.str() + " tensor group");
  }
}

TEST(ParallelLayout, TensorSlicesAreAdjacentRanks) {
  const LayoutDegrees d{2, 2, 2};
  EXPECT_EQ(coordsOf(1, d), (LayoutCoords{0, 0, 1}));
  EXPECT_EQ(coordsOf(2, d), (LayoutCoords{0, 1, 0}));
  EXPECT_EQ(coordsOf(4, d), (LayoutCoords{1, 0, 0}));
  for (int r = 0; r < 8; ++r) EXPECT_EQ(rankOf(coordsOf(r, d), d), r);
}

TEST(ParallelLayout, AProductOtherThanTheRanksNamesBoth) {
  MpiCommunicator world;
  try {
    ParallelLayout layout(world, {world.size() + 1, 1, 1});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs " + std::to_string(world.size() + 1) +
                                         " ranks, but there are " + std::to_string(world.size())),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ranklab
