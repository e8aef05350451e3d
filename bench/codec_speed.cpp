// bench_codec_speed: encode and decode time of every flat-buffer codec on one core, on a
// gradient the size of the quickstart MLP's (235,146 floats, normal with heavy-tailed
// outliers), and the payload size. No MPI, no training: the codecs' own cost, free of the
// oversubscription that inflates the in-run figures of bench_codecs.
// Usage: bench_codec_speed [--repeats N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "comm/codecs/codec.h"
#include "comm/codecs/powersgd.h"
#include "comm/collectives/allreduce_registry.h"
#include "comm/memory/thread_communicator.h"
#include "engine/model/compute_device.h"
#include "engine/train/powersgd_sync.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

constexpr size_t kCount = 235146;

std::vector<float> gradient() {
  std::mt19937_64 rng(1);
  std::normal_distribution<float> normal(0.f, 1e-3f);
  std::vector<float> g(kCount);
  for (size_t i = 0; i < kCount; ++i) g[i] = normal(rng) * (i % 97 == 0 ? 30.f : 1.f);
  return g;
}

double medianUs(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

template <class Fn>
double timeUs(int repeats, Fn&& fn) {
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    samples.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return medianUs(samples);
}

int run(int repeats) {
  const auto g = gradient();
  std::printf("%zu floats (%zu bytes), median of %d runs, one thread\n", kCount, kCount * 4,
              repeats);
  std::printf("%-24s %12s %12s %14s %8s\n", "codec", "encode us", "decode us", "payload bytes",
              "ratio");
  struct Case {
    std::string label;
    CodecOptions options;
  };
  std::vector<Case> cases;
  auto add = [&](std::string label, std::string codec, auto tweak) {
    CodecOptions o;
    o.codec = codec;
    tweak(o);
    cases.push_back({std::move(label), o});
  };
  auto none = [](CodecOptions&) {};
  add("fp16", "fp16", none);
  add("bf16", "bf16", none);
  for (int bits : {8, 4, 2}) {
    add("qsgd " + std::to_string(bits) + "-bit", "qsgd",
        [bits](CodecOptions& o) { o.bits = bits; });
  }
  add("topk 1%", "topk", none);
  add("topk 1% fp16 values", "topk", [](CodecOptions& o) { o.half_values = true; });
  add("randomk 10%", "randomk", [](CodecOptions& o) { o.ratio = 0.1; });
  add("threshold 0.005", "threshold", [](CodecOptions& o) { o.threshold = 0.005; });
  add("sign", "sign", none);
  std::vector<uint8_t> payload;
  std::vector<float> out(kCount);
  for (const auto& c : cases) {
    auto codec = makeCodec(c.options, 0);
    const double enc = timeUs(repeats, [&] { codec->encode(g.data(), kCount, payload); });
    const double dec = timeUs(repeats, [&] {
      codec->decode(payload.data(), payload.size(), kCount, out.data(), DecodeMode::kAssign);
    });
    std::printf("%-24s %12.1f %12.1f %14zu %7.1fx\n", c.label.c_str(), enc, dec, payload.size(),
                kCount * 4.0 / payload.size());
  }
  // PowerSGD on the MLP's three weight matrices, one rank on the CPU (PowerSgdSync: project,
  // orthonormalise and reconstruct; its sums of one rank move nothing).
  ThreadRendezvous rendezvous(1);
  ThreadCommunicator comm(rendezvous, 0);
  for (int rank : {1, 2, 4}) {
    CodecOptions options;
    options.codec = "powersgd";
    options.rank = rank;
    options.error_feedback = false;
    options.matrices = {
        {0, 256, 784}, {256 * 784 + 256, 128, 256}, {256 * 784 + 256 + 128 * 256 + 128, 10, 128}};
    const PowerSgd layout(options.matrices, kCount, rank, true, 1);
    PowerSgdSync power(comm, AllreduceChoice("ring"), options, cpuDevice());
    power.start(nullptr, kCount);
    std::vector<float> work = g;
    const double total = timeUs(repeats, [&] {
      power.sync(work.data(), kCount);
      work = g;
    });
    const size_t floats = layout.firstFloats() + layout.secondFloats();
    std::printf("%-24s %12.1f %12s %14zu %7.1fx\n",
                ("powersgd rank " + std::to_string(rank)).c_str(), total, "(in encode)", floats * 4,
                kCount * 4.0 / (floats * 4));
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  int repeats = 21;
  if (argc == 3 && std::string(argv[1]) == "--repeats") repeats = std::max(1, std::atoi(argv[2]));
  ranklab::kernels::setBlasThreads(1);
  return ranklab::run(repeats);
}
