// The in-memory transport's point-to-point, probe and split semantics, which the
// collectives and the parameter server rely on (MPI gives the same guarantees).
#include <gtest/gtest.h>

#include <functional>
#include <thread>
#include <vector>

#include "comm/memory/thread_communicator.h"

namespace ranklab {
namespace {

void runRanks(ThreadRendezvous& rendezvous, const std::function<void(ThreadCommunicator&)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < rendezvous.world(); ++r) {
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(rendezvous, r);
      body(comm);
    });
  }
  for (auto& t : threads) t.join();
}

TEST(ThreadCommunicator, ReceivesMatchInPostOrderWhateverOrderTheyAreWaitedIn) {
  ThreadRendezvous rendezvous(2);
  runRanks(rendezvous, [](ThreadCommunicator& comm) {
    if (comm.rank() == 0) {
      int first = 0, second = 0;
      Ticket a = comm.irecv(&first, sizeof first, 1, 7);
      Ticket b = comm.irecv(&second, sizeof second, 1, 7);
      b->wait();
      a->wait();
      EXPECT_EQ(first, 10);
      EXPECT_EQ(second, 20);
    } else {
      const int ten = 10, twenty = 20;
      comm.send(&ten, sizeof ten, 0, 7);
      comm.send(&twenty, sizeof twenty, 0, 7);
    }
  });
}

TEST(ThreadCommunicator, TagsKeepProtocolsApart) {
  ThreadRendezvous rendezvous(2);
  runRanks(rendezvous, [](ThreadCommunicator& comm) {
    if (comm.rank() == 1) {
      const int a = 1, b = 2;
      comm.send(&a, sizeof a, 0, 5);
      comm.send(&b, sizeof b, 0, 6);
    } else {
      int b = 0, a = 0;
      comm.recv(&b, sizeof b, 1, 6);  // the later message, by its tag
      comm.recv(&a, sizeof a, 1, 5);
      EXPECT_EQ(a, 1);
      EXPECT_EQ(b, 2);
    }
  });
}

TEST(ThreadCommunicator, ProbeFindsAnySenderAndLeavesTheMessageQueued) {
  ThreadRendezvous rendezvous(4);
  runRanks(rendezvous, [](ThreadCommunicator& comm) {
    if (comm.rank() != 0) {
      std::vector<float> payload(comm.rank(), static_cast<float>(comm.rank()));
      comm.send(payload.data(), payload.size() * sizeof(float), 0, 3);
      return;
    }
    float total = 0;
    for (int i = 0; i < 3; ++i) {
      const MessageInfo info = comm.probe(Communicator::kAnySource, 3);
      ASSERT_EQ(info.bytes, info.source * sizeof(float));
      std::vector<float> payload(info.source);
      comm.recv(payload.data(), info.bytes, info.source, 3);
      for (float v : payload) total += v;
    }
    EXPECT_EQ(total, 1.f + 4.f + 9.f);
  });
}

TEST(ThreadCommunicator, WrongSizeIsAnErrorNamingBothSizes) {
  ThreadRendezvous rendezvous(2);
  runRanks(rendezvous, [](ThreadCommunicator& comm) {
    if (comm.rank() == 1) {
      const double d = 1;
      comm.send(&d, sizeof d, 0, 1);
    } else {
      float f = 0;
      try {
        comm.recv(&f, sizeof f, 1, 1);
        ADD_FAILURE() << "expected a size error";
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("expected 4 bytes from rank 1, got 8"),
                  std::string::npos)
            << e.what();
      }
    }
  });
}

TEST(ThreadCommunicator, SplitOrdersByKeyAndLeavesOutNegativeColors) {
  ThreadRendezvous rendezvous(6);
  runRanks(rendezvous, [](ThreadCommunicator& comm) {
    // Color by parity, reversed key order; rank 5 stays out.
    const int color = comm.rank() == 5 ? -1 : comm.rank() % 2;
    auto child = comm.split(color, -comm.rank());
    if (comm.rank() == 5) {
      EXPECT_EQ(child, nullptr);
      return;
    }
    ASSERT_NE(child, nullptr);
    const int expected_size = color == 0 ? 3 : 2;  // {4, 2, 0} and {3, 1}
    EXPECT_EQ(child->size(), expected_size);
    const int expected_rank = color == 0 ? (4 - comm.rank()) / 2 : (3 - comm.rank()) / 2;
    EXPECT_EQ(child->rank(), expected_rank);
    float sum = static_cast<float>(comm.rank());
    child->allreduceSumNative(&sum, 1);
    EXPECT_EQ(sum, color == 0 ? 6.f : 4.f);
  });
}

TEST(ThreadCommunicator, HostSplitFollowsRanksPerHost) {
  ThreadRendezvous rendezvous(5, 2);
  runRanks(rendezvous, [](ThreadCommunicator& comm) {
    auto host = comm.splitByHost();
    EXPECT_EQ(host->size(), comm.rank() == 4 ? 1 : 2);
    EXPECT_EQ(host->rank(), comm.rank() % 2);
  });
}

}  // namespace
}  // namespace ranklab
