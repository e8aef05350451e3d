// bench_kernel_choice: which kernel each GEMM of the benchmark models takes (batch 64), at
// this process's BLAS threads and instruction set (RANKLAB_CPU_ISA), and its GFLOP/s beside
// every other kernel that could compute it: a regression in the choice, or in a kernel on
// one instruction set, shows as a changed row (bench/run-throughput prints it per ISA).
// The rates are of the GEMM alone on warm operands; a convolution's forward and weight
// gradient read the im2col matrix in place in training, here a formed one.
// The GPT's rows are gpt-char's products (batch 16 x 64 tokens, width 128, 4 heads, 256
// tokens): each block's four Linears and its attention's per-head products, then the head.
// --bf16 adds the GPT's products that bf16 AMP runs in bf16 (the four Linears; the
// attention's products and the head stay fp32), through gemmBf16, as "gpt-bf16" rows.
// Usage: bench_kernel_choice [--threads T] [--batch N] [--bf16]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/best_rate.h"
#include "engine/model/layers.h"
#include "engine/model/models.h"
#include "kernels/cpu/bf16_gemm.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/gemm.h"

namespace ranklab {
namespace {

using kernels::GemmKernel;
using kernels::GemmShape;
using kernels::Trans;

Network model(const std::string& kind) {
  const Shape image{28, 28, 1};
  if (kind == "mlp") return makeMlp(image, {256, 128}, 10, 0.f, 1);
  if (kind == "cnn") return makeCnn(image, {16, 32}, 5, {}, 10, 0.f, 1);
  return makeCnn(image, {32, 64}, 5, {256, 128}, 10, 0.f, 1);
}

struct NamedGemm {
  std::string layer;
  GemmShape shape;
};

// A Linear's three products over `rows` rows, as WeightedLayer::gemms names them.
void addLinear(std::vector<NamedGemm>& out, const std::string& name, int rows, int in, int outs) {
  out.push_back({name, {"forward", Trans::kNo, Trans::kYes, rows, outs, in}});
  out.push_back({name, {"weight grad", Trans::kYes, Trans::kNo, outs, in, rows}});
  out.push_back({name, {"input grad", Trans::kNo, Trans::kNo, rows, in, outs}});
}

// gpt-char's products (resources/jobs/gpt-char.toml): one block's (all four alike) and the
// head's; attention per sequence and head: scores Q.K^T, context P.V, and their gradients.
std::vector<NamedGemm> gptGemms() {
  constexpr int kBatch = 16, kContext = 64, kWidth = 128, kHeads = 4, kVocab = 256;
  constexpr int kRows = kBatch * kContext, kHead = kWidth / kHeads;
  std::vector<NamedGemm> g;
  addLinear(g, "c_attn", kRows, kWidth, 3 * kWidth);
  g.push_back({"attn", {"scores", Trans::kNo, Trans::kYes, kContext, kContext, kHead}});
  g.push_back({"attn", {"context", Trans::kNo, Trans::kNo, kContext, kHead, kContext}});
  g.push_back({"attn", {"d probs", Trans::kNo, Trans::kYes, kContext, kContext, kHead}});
  g.push_back({"attn", {"d values", Trans::kYes, Trans::kNo, kContext, kHead, kContext}});
  g.push_back({"attn", {"d queries", Trans::kNo, Trans::kNo, kContext, kHead, kContext}});
  addLinear(g, "c_proj", kRows, kWidth, kWidth);
  addLinear(g, "mlp_fc", kRows, kWidth, 4 * kWidth);
  addLinear(g, "mlp_proj", kRows, 4 * kWidth, kWidth);
  addLinear(g, "head", kRows, kWidth, kVocab);
  return g;
}

std::vector<NamedGemm> gemmsOf(const std::string& kind, int batch) {
  if (kind == "gpt") return gptGemms();
  std::vector<NamedGemm> out;
  const Network net = model(kind);
  for (const auto& layer : net.layers()) {
    const auto* weighted = dynamic_cast<const WeightedLayer*>(layer.get());
    if (!weighted) continue;
    for (const GemmShape& p : weighted->gemms(batch)) out.push_back({layer->name(), p});
  }
  return out;
}

// GFLOP/s of `kernel` on the product, in batches of about 20 ms.
double rate(GemmKernel kernel, const GemmShape& p) {
  const int a_cols = p.trans_a == Trans::kNo ? p.k : p.m;
  const int b_cols = p.trans_b == Trans::kNo ? p.n : p.k;
  std::vector<float> a(static_cast<size_t>(p.m) * p.k, 0.5f),
      b(static_cast<size_t>(p.k) * p.n, 0.25f);
  std::vector<float> c(static_cast<size_t>(p.m) * p.n);
  const double flops = 2.0 * p.m * p.n * p.k;
  auto call = [&] {
    kernels::sgemmWith(kernel, p.trans_a, p.trans_b, p.m, p.n, p.k, 1.f, a.data(), a_cols, b.data(),
                       b_cols, 0.f, c.data(), p.n);
  };
  return bench::bestGflops(call, flops, std::max(3, static_cast<int>(2e9 / flops)));
}

// GFLOP/s of gemmBf16 (AMP's bf16 products) on the product, inputs already bf16.
double bf16Rate(const GemmShape& p) {
  const int a_cols = p.trans_a == Trans::kNo ? p.k : p.m;
  const int b_cols = p.trans_b == Trans::kNo ? p.n : p.k;
  std::vector<kernels::bf16_t> a(static_cast<size_t>(p.m) * p.k, kernels::floatToBf16(0.5f)),
      b(static_cast<size_t>(p.k) * p.n, kernels::floatToBf16(0.25f));
  std::vector<float> c(static_cast<size_t>(p.m) * p.n);
  const double flops = 2.0 * p.m * p.n * p.k;
  auto call = [&] {
    kernels::gemmBf16(p.trans_a, p.trans_b, p.m, p.n, p.k, 1.f, a.data(), a_cols, b.data(), b_cols,
                      0.f, c.data(), p.n);
  };
  return bench::bestGflops(call, flops, std::max(3, static_cast<int>(2e9 / flops)));
}

void printRow(const char* model, const NamedGemm& g, const char* chosen, double rate,
              const std::string (&cells)[3]) {
  const GemmShape& p = g.shape;
  std::printf("%-8s %-8s %-11s %c%c %6d %5d %6d | %-8s %7.1f | %7s %7s %8s\n", model,
              g.layer.c_str(), p.what, p.trans_a == Trans::kYes ? 'T' : 'N',
              p.trans_b == Trans::kYes ? 'T' : 'N', p.m, p.n, p.k, chosen, rate, cells[0].c_str(),
              cells[1].c_str(), cells[2].c_str());
}

void printFp32Rows(int batch) {
  for (const std::string kind : {"mlp", "cnn", "cnn-wide", "gpt"}) {
    for (const NamedGemm& g : gemmsOf(kind, batch)) {
      const GemmShape& p = g.shape;
      const GemmKernel chosen = kernels::sgemmKernel(p.trans_a, p.trans_b, p.m, p.n, p.k);
      double rates[3] = {};
      for (GemmKernel k : {GemmKernel::kSkinny, GemmKernel::kOnednn, GemmKernel::kOpenBlas}) {
        if (kernels::sgemmKernelApplies(k, p.trans_a, p.trans_b, p.n, p.k))
          rates[static_cast<int>(k)] = rate(k, p);
      }
      auto cell = [](double r) { return r > 0 ? std::to_string(static_cast<int>(r + 0.5)) : "-"; };
      printRow(kind.c_str(), g, kernels::gemmKernelName(chosen), rates[static_cast<int>(chosen)],
               {cell(rates[0]), cell(rates[1]), cell(rates[2])});
    }
  }
}

void printBf16Rows() {
  std::printf("bf16 GEMM: %s\n", kernels::bf16GemmBackend().c_str());
  for (const NamedGemm& g : gptGemms())
    if (g.layer != "attn" && g.layer != "head")
      printRow("gpt-bf16", g, "bf16", bf16Rate(g.shape), {"-", "-", "-"});
}

int run(int argc, char** argv) {
  int threads = 1, batch = 64;
  bool bf16 = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--threads" || flag == "--batch") && i + 1 < argc) {
      (flag == "--threads" ? threads : batch) =
          bench::integerOption("bench_kernel_choice", flag, argv[++i], 1);
    } else if (flag == "--bf16") {
      bf16 = true;
    } else {
      std::fprintf(stderr,
                   "bench_kernel_choice: unknown option %s (allowed: --threads T, --batch N, "
                   "--bf16)\n",
                   flag.c_str());
      return 2;
    }
  }
  kernels::setBlasThreads(threads);
  const char* isa = kernels::isaName(kernels::activeIsa());
  std::printf(
      "kernel choice: isa %s, %d thread(s), batch %d; GFLOP/s of each kernel that applies\n", isa,
      threads, batch);
  std::printf("%-8s %-8s %-11s %2s %6s %5s %6s | %-8s %7s | %7s %7s %8s\n", "model", "layer",
              "gemm", "op", "m", "n", "k", "chosen", "GFLOP/s", "skinny", "oneDNN", "OpenBLAS");
  printFp32Rows(batch);
  if (bf16) printBf16Rows();
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  return ranklab::bench::runReportingErrors("bench_kernel_choice", ranklab::run, argc, argv);
}
