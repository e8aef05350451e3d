// ranklab.torch watching a real PyTorch DDP job (two gloo ranks started with torchrun's
// environment, python/ranklab/torch.py): every step reaches the real Collector, its parts add
// up to its time, its all-reduced bytes are the parameters', and a rank that sleeps 30 ms in
// each forward is the one the others wait for.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "comm/telemetry/collector.h"
#include "tests/support/shell_quoted.h"

namespace ranklab {
namespace {

using Clock = std::chrono::steady_clock;
using testing::shellQuoted;

// A TCP port free a moment ago, for gloo's rendezvous (MASTER_PORT).
int freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  bind(fd, reinterpret_cast<sockaddr*>(&address), size);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

int64_t median(std::vector<int64_t> values) {
  std::nth_element(values.begin(), values.begin() + long(values.size() / 2), values.end());
  return values[values.size() / 2];
}

TEST(PythonWatch, TwoDdpRanksStreamStepsWhosePartsAddUpAndNameTheStraggler) {
  constexpr int kWorld = 2, kSteps = 30;
  constexpr int64_t kParamBytes = 4 * (784 * 128 + 128 + 128 * 10 + 10);
  const RunCurveKeys keys = newRunCurveKeys();
  Collector collector("watch-run", kWorld, "tcp://127.0.0.1:*", keys.collector);
  const std::string common =
      "PYTHONPATH=" RANKLAB_PYTHON_DIR " RANKLAB_TELEMETRY_ENDPOINT=" + collector.endpoint() +
      " RANKLAB_RUN_ID=watch-run " + "RANKLAB_TELEMETRY_KEYS=" + shellQuoted(keysText(keys.ranks)) +
      " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(freePort()) +
      " STRAGGLER_RANK=1 STEPS=" + std::to_string(kSteps) + " OMP_WAIT_POLICY=PASSIVE";
  std::vector<FILE*> ranks;
  for (int r = 0; r < kWorld; ++r) {
    const std::string command =
        common + " RANK=" + std::to_string(r) + " LOCAL_RANK=" + std::to_string(r) +
        " /usr/bin/python3 " RANKLAB_SOURCE_DIR "/tests/support/watched_ddp.py 2>&1";
    ranks.push_back(popen(command.c_str(), "r"));
    ASSERT_NE(ranks.back(), nullptr);
  }
  std::map<int, std::vector<telemetry::Envelope>> steps;
  int byes = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline && byes < kWorld)
    for (auto& e : collector.receive(50)) {
      byes += e.has_bye();
      if (e.has_step()) steps[e.rank()].push_back(std::move(e));
    }
  for (FILE* rank : ranks) {
    std::string out;
    char buffer[512];
    while (fgets(buffer, sizeof buffer, rank)) out += buffer;
    EXPECT_EQ(pclose(rank), 0) << out;
  }
  EXPECT_TRUE(collector.takeRejected().empty());

  std::map<int, int64_t> median_wait;
  for (int r = 0; r < kWorld; ++r) {
    ASSERT_EQ(steps[r].size(), size_t(kSteps)) << "rank " << r;
    EXPECT_EQ(collector.gaps(r), 0);
    std::vector<int64_t> waits, off;
    for (size_t i = 1; i < steps[r].size(); ++i) {
      const telemetry::Step& s = steps[r][i].step();
      const telemetry::Phases& p = s.phases();
      EXPECT_EQ(s.step(), int64_t(i + 1));
      EXPECT_EQ(s.bytes_raw(), kParamBytes) << "step " << s.step();
      EXPECT_EQ(s.samples(), 64);
      EXPECT_GT(s.loss(), 0.0);
      const int64_t took = steps[r][i].time_ns() - steps[r][i - 1].time_ns();
      const int64_t parts = p.data_ns() + p.forward_ns() + p.backward_ns() + p.wait_ns() +
                            p.comm_ns() - p.comm_hidden_ns() + p.update_ns();
      off.push_back(std::abs(parts - took) * 1000 / std::max<int64_t>(1, took));
      waits.push_back(p.wait_ns());
    }
    EXPECT_LE(median(off), 50) << "rank " << r << ": parts against the step's time, per mille";
    median_wait[r] = median(waits);
  }
  std::printf("median wait: rank 0 %.2f ms, rank 1 %.2f ms\n", median_wait[0] / 1e6,
              median_wait[1] / 1e6);
  // Rank 1 sleeps 30 ms a forward: rank 0 waits for it in the first bucket, rank 1 hardly.
  EXPECT_GT(median_wait[0], 15'000'000) << "rank 0's median wait, ns";
  EXPECT_LT(median_wait[1], 5'000'000) << "rank 1's median wait, ns";
}

}  // namespace
}  // namespace ranklab
