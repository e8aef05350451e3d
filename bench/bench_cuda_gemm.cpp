// bench_cuda_gemm: the CUDA device's layers against cuBLAS alone, on the GEMMs of the
// benchmark MLP (784-256-128-10) and CNN (conv 5x5 1->16, pool, conv 16->32, pool, fc 1568->10)
// at batch 64 and 512. For each layer it times, on warm device buffers:
//   cuBLAS       the layer's products called directly with cublasSgemm (forward y = x W^T;
//                backward dW = dy^T x and, except for a model's first layer, dx = dy W);
//   cuda::sgemm  the same products through ranklab::cuda::sgemm (kernels/cuda);
//   layer        the layer's forward + backward from cudaDevice(0).makeLayer(...), as a
//                network runs it (bias, the ReLU a hidden Linear absorbs, the bias gradient;
//                a Conv2d's im2col and col2im too, which the cuBLAS column does not count:
//                its rows are for information, their goal is not checked).
// Each figure is the median over --repeats batches of --iters back-to-back calls, timed with
// CUDA events after a warm-up, in microseconds per call. Before timing, the layer's outputs
// (y, dW, dx) are checked against cuBLAS's on the same operands (Linear layers).
// The goal: the layer within 10 % of cuBLAS (ratio layer/cuBLAS <= 1.10) on the Linear rows.
// Without a usable GPU it prints "skipped: <why>" and exits 0.
// Usage: bench_cuda_gemm [--iters N] [--repeats N] [--json]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "engine/model/compute_device.h"
#include "engine/model/cuda_device.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/gpu_probe.h"

namespace ranklab {
namespace {

using kernels::Trans;

void check(cudaError_t code, const char* what) {
  if (code != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA ") + what + ": " + cudaGetErrorString(code));
  }
}

void check(cublasStatus_t code, const char* what) {
  if (code != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + what + ": status " +
                             std::to_string(static_cast<int>(code)));
  }
}

struct Options {
  int iters = 200;
  int repeats = 7;
  bool json = false;
};

Options parseOptions(int argc, char** argv) {
  Options o;
  const std::string program = "bench_cuda_gemm";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--json") {
      o.json = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(program + ": " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--iters") {
      o.iters = bench::integerOption(program, flag, value, 1);
    } else if (flag == "--repeats") {
      o.repeats = bench::integerOption(program, flag, value, 1);
    } else {
      throw std::invalid_argument(program + ": unknown option " + flag +
                                  " (allowed: --iters, --repeats, --json)");
    }
  }
  return o;
}

// One layer of a benchmark model at one batch size.
struct Case {
  std::string model;  // "mlp", "cnn"
  std::string name;   // "fc0 784->256 +relu"
  LayerKind kind;
  Shape input;
  int outputs;
  int kernel;  // Conv2d
  bool relu;   // a ReLU follows that the layer absorbs (hidden Linear)
  bool first;  // the model's first layer: no input gradient
  int batch;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (int batch : {64, 512}) {
    all.push_back(
        {"mlp", "fc0 784->256 +relu", LayerKind::kLinear, {1, 1, 784}, 256, 0, true, true, batch});
    all.push_back(
        {"mlp", "fc1 256->128 +relu", LayerKind::kLinear, {1, 1, 256}, 128, 0, true, false, batch});
    all.push_back(
        {"mlp", "fc2 128->10", LayerKind::kLinear, {1, 1, 128}, 10, 0, false, false, batch});
    all.push_back({"cnn",
                   "conv0 28x28x1->16 k5",
                   LayerKind::kConv2d,
                   {28, 28, 1},
                   16,
                   5,
                   false,
                   true,
                   batch});
    all.push_back({"cnn",
                   "conv1 14x14x16->32 k5",
                   LayerKind::kConv2d,
                   {14, 14, 16},
                   32,
                   5,
                   false,
                   false,
                   batch});
    all.push_back(
        {"cnn", "fc0 1568->10", LayerKind::kLinear, {1, 1, 1568}, 10, 0, false, false, batch});
  }
  return all;
}

// A device array of floats.
struct Device {
  float* p = nullptr;
  size_t n = 0;
  explicit Device(size_t count) : n(count) {
    check(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(float)), "malloc");
  }
  ~Device() { cudaFree(p); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  void upload(const std::vector<float>& v) {
    check(cudaMemcpy(p, v.data(), n * sizeof(float), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<float> download() const {
    std::vector<float> v(n);
    check(cudaMemcpy(v.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost), "download");
    return v;
  }
  void poison() { check(cudaMemset(p, 0xff, n * sizeof(float)), "memset"); }  // NaNs
};

std::vector<float> randomValues(size_t n, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// ||a - b|| / ||b||; infinite when a holds a NaN (an unwritten element).
double relativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    ref += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / std::max(ref, 1e-300));
}

// A product of the layer in row-major terms, C (M, N) = op(A) op(B), as kernels::sgemm takes it.
struct Product {
  Trans ta, tb;
  int m, n, k;
  const float* a;
  int lda;
  const float* b;
  int ldb;
  float* c;
  int ldc;
};

// Row-major C = op(A).op(B) is column-major C^T = op(B)^T.op(A)^T: swap the operands.
void cublasRowMajor(cublasHandle_t handle, const Product& p) {
  const float one = 1.f, zero = 0.f;
  auto op = [](Trans t) { return t == Trans::kYes ? CUBLAS_OP_T : CUBLAS_OP_N; };
  check(cublasSgemm(handle, op(p.tb), op(p.ta), p.n, p.m, p.k, &one, p.b, p.ldb, p.a, p.lda, &zero,
                    p.c, p.ldc),
        "sgemm");
}

// Median microseconds per call of `body` over `repeats` batches of `iters` calls.
template <class Body>
double timeMicros(const Options& o, Body body) {
  for (int i = 0; i < std::max(10, o.iters / 10); ++i) body();  // warm-up
  check(cudaDeviceSynchronize(), "synchronize");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> samples;
  for (int r = 0; r < o.repeats; ++r) {
    check(cudaEventRecord(start, cudaStreamPerThread), "record");
    for (int i = 0; i < o.iters; ++i) body();
    check(cudaEventRecord(stop, cudaStreamPerThread), "record");
    check(cudaEventSynchronize(stop), "event sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    samples.push_back(1000.0 * ms / o.iters);
  }
  check(cudaGetLastError(), "launch");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

struct Row {
  Case c;
  double gflop = 0;  // per call, the counted products
  double cublas_us = 0, wrapper_us = 0, layer_us = 0;
  double err_y = -1, err_dw = -1, err_dx = -1;  // -1: not checked
};

// A Linear layer and its device operands, as measure() set them up.
struct LinearUnderTest {
  Layer& layer;
  Device &w, &dw, &x, &y, &dy, &dx;
  float* dx_p;  // null for a model's first layer (no input gradient)
};

// Runs the layer's forward and backward once and fills row's errors against cuBLAS's
// products on the same operands (plus bias, and through the absorbed ReLU).
void checkAgainstCublas(const LinearUnderTest& t, const Case& c,
                        const std::vector<Product>& products, cublasHandle_t handle, Row& row) {
  const int n_out = c.outputs;
  const int k_in = static_cast<int>(c.input.size());
  ForwardPass pass;
  pass.training = true;
  t.y.poison();
  t.dw.poison();
  if (t.dx_p) t.dx.poison();
  t.layer.forward(t.x.p, t.y.p, c.batch, pass);
  t.layer.backward(t.x.p, t.y.p, t.dy.p, t.dx_p, c.batch);
  check(cudaDeviceSynchronize(), "layer");
  const auto y_layer = t.y.download(), dw_layer = t.dw.download();
  const auto dx_layer = t.dx_p ? t.dx.download() : std::vector<float>();
  const auto w_host = t.w.download();  // weight (out, in), then bias (out)
  for (const Product& p : products) cublasRowMajor(handle, p);
  check(cudaDeviceSynchronize(), "cublas");
  auto y_ref = t.y.download();
  const auto dy_host = t.dy.download();
  std::vector<float> dy_eff = dy_host;
  for (size_t i = 0; i < y_ref.size(); ++i) {
    y_ref[i] += w_host[static_cast<size_t>(n_out) * k_in + i % n_out];  // + bias
    if (c.relu) {
      y_ref[i] = std::max(y_ref[i], 0.f);
      if (y_layer[i] <= 0.f) dy_eff[i] = 0.f;  // the gradient through the absorbed ReLU
    }
  }
  row.err_y = relativeError(y_layer, y_ref);
  if (c.relu) {  // cuBLAS again with the masked gradient
    t.dy.upload(dy_eff);
    for (size_t i = 1; i < products.size(); ++i) cublasRowMajor(handle, products[i]);
    check(cudaDeviceSynchronize(), "cublas");
    t.dy.upload(dy_host);
  }
  row.err_dw = relativeError(dw_layer, t.dw.download());
  if (t.dx_p) row.err_dx = relativeError(dx_layer, t.dx.download());
}

Row measure(const Case& c, const ComputeDevice& device, cublasHandle_t handle, const Options& o,
            std::mt19937_64& rng) {
  LayerRequest request;
  request.kind = c.kind;
  request.name = c.name;
  request.input = c.input;
  request.outputs = c.outputs;
  request.kernel = c.kernel;
  std::unique_ptr<Layer> layer = device.makeLayer(request);
  if (c.relu && !layer->absorbFollowingRelu()) {
    throw std::runtime_error(c.name + ": the CUDA Linear did not absorb its ReLU");
  }
  size_t params = 0;
  for (const ParamTensor& t : layer->paramTensors()) params += t.size;
  const Shape out = layer->outputShape();
  const size_t in_n = c.input.size() * c.batch, out_n = out.size() * c.batch;

  Device w(params), dw(params), x(in_n), y(out_n), dy(out_n), dx(in_n);
  layer->bind(w.p, dw.p);
  layer->init(rng);  // PyTorch's U(-1/sqrt(fan_in), ..), uploaded
  layer->overwriteGradients(true);
  x.upload(randomValues(in_n, rng));
  dy.upload(randomValues(out_n, rng));
  float* dx_p = c.first ? nullptr : dx.p;

  // The products cuBLAS is timed on: a Linear's own; a Conv2d's GEMMs over its im2col
  // matrix (rows B*H*W, columns Cin*k*k), on scratch operands of those shapes.
  const int rows = c.kind == LayerKind::kLinear ? c.batch : c.batch * out.height * out.width;
  const int k_in = c.kind == LayerKind::kLinear ? static_cast<int>(c.input.size())
                                                : c.input.channels * c.kernel * c.kernel;
  const int n_out = c.outputs;
  Device cols(static_cast<size_t>(rows) * k_in), col_grads(static_cast<size_t>(rows) * k_in),
      gy(static_cast<size_t>(rows) * n_out), gdy(static_cast<size_t>(rows) * n_out),
      gw(static_cast<size_t>(n_out) * k_in), gdw(static_cast<size_t>(n_out) * k_in);
  const bool linear = c.kind == LayerKind::kLinear;
  const float* A = linear ? x.p : cols.p;
  const float* W = linear ? w.p : gw.p;
  float* Y = linear ? y.p : gy.p;
  const float* DY = linear ? dy.p : gdy.p;
  float* DW = linear ? dw.p : gdw.p;
  float* DX = linear ? dx.p : col_grads.p;
  if (!linear) {
    cols.upload(randomValues(cols.n, rng));
    gw.upload(randomValues(gw.n, rng));
    gdy.upload(randomValues(gdy.n, rng));
  }
  std::vector<Product> products = {
      {Trans::kNo, Trans::kYes, rows, n_out, k_in, A, k_in, W, k_in, Y, n_out},     // y = x W^T
      {Trans::kYes, Trans::kNo, n_out, k_in, rows, DY, n_out, A, k_in, DW, k_in}};  // dW = dy^T x
  if (!c.first) {
    products.push_back({Trans::kNo, Trans::kNo, rows, k_in, n_out, DY, n_out, W, k_in, DX, k_in});
  }

  Row row;
  row.c = c;
  for (const Product& p : products) row.gflop += 2.0 * p.m * p.n * p.k / 1e9;

  ForwardPass pass;
  pass.training = true;
  // The layer's results against cuBLAS's on the same operands.
  if (linear) checkAgainstCublas({*layer, w, dw, x, y, dy, dx, dx_p}, c, products, handle, row);

  row.cublas_us = timeMicros(o, [&] {
    for (const Product& p : products) cublasRowMajor(handle, p);
  });
  row.wrapper_us = timeMicros(o, [&] {
    for (const Product& p : products) {
      cuda::sgemm(p.ta, p.tb, p.m, p.n, p.k, 1.f, p.a, p.lda, p.b, p.ldb, 0.f, p.c, p.ldc);
    }
  });
  row.layer_us = timeMicros(o, [&] {
    layer->forward(x.p, y.p, c.batch, pass);
    layer->backward(x.p, y.p, dy.p, dx_p, c.batch);
  });
  return row;
}

int run(int argc, char** argv) {
  const Options o = parseOptions(argc, argv);
  std::string why;
  if (kernels::usableGpus(&why) == 0) {
    std::printf("skipped: %s\n", why.empty() ? "no usable CUDA device" : why.c_str());
    return 0;
  }
  const ComputeDevice& device = cudaDevice(0);
  check(cudaSetDevice(0), "set device");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  cublasHandle_t handle = nullptr;
  check(cublasCreate(&handle), "create");
  // The layers' stream (this thread's own): cuBLAS's stream 0 would be the legacy one.
  check(cublasSetStream(handle, cudaStreamPerThread), "set stream");
  std::mt19937_64 rng(1);

  std::vector<Row> rows;
  for (const Case& c : cases()) rows.push_back(measure(c, device, handle, o, rng));
  cublasDestroy(handle);

  const double kGoal = 1.10;
  int misses = 0, wrong = 0;
  if (o.json) {
    for (const Row& r : rows) {
      std::printf(
          "{\"model\":\"%s\",\"layer\":\"%s\",\"batch\":%d,\"gflop\":%.6f,\"cublas_us\":%.3f,"
          "\"cuda_sgemm_us\":%.3f,\"layer_us\":%.3f,\"ratio\":%.4f,\"err_y\":%.3g,\"err_dw\":%.3g,"
          "\"err_dx\":%.3g}\n",
          r.c.model.c_str(), r.c.name.c_str(), r.c.batch, r.gflop, r.cublas_us, r.wrapper_us,
          r.layer_us, r.layer_us / r.cublas_us, r.err_y, r.err_dw, r.err_dx);
    }
  }
  std::printf("device: %s (sm_%d%d, %d SMs); fp32, cublasSgemm default math mode (no TF32)\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  std::printf("per call: median of %d x %d calls, CUDA events; ratio = layer / cuBLAS\n\n",
              o.repeats, o.iters);
  std::printf("%-4s %-24s %5s | %10s %10s %10s | %6s %7s | %-9s | %s\n", "model", "layer", "batch",
              "cuBLAS us", "sgemm us", "layer us", "ratio", "GFLOP/s", "goal", "max rel. error");
  for (const Row& r : rows) {
    const double ratio = r.layer_us / r.cublas_us;
    const bool linear = r.c.kind == LayerKind::kLinear;
    std::string goal = "info";
    if (linear) {
      goal = ratio <= kGoal ? "met" : "NOT met";
      if (ratio > kGoal) ++misses;
    }
    const double err = std::max({r.err_y, r.err_dw, r.err_dx});
    char err_text[64] = "- (conv: not checked)";
    if (linear) {
      std::snprintf(err_text, sizeof err_text, "%.2g%s", err, err > 1e-4 ? "  WRONG" : "");
      if (!(err <= 1e-4)) ++wrong;
    }
    std::printf("%-4s %-24s %5d | %10.2f %10.2f %10.2f | %6.2f %7.0f | %-9s | %s\n",
                r.c.model.c_str(), r.c.name.c_str(), r.c.batch, r.cublas_us, r.wrapper_us,
                r.layer_us, ratio, r.gflop / (r.layer_us * 1e-6), goal.c_str(), err_text);
  }
  std::printf(
      "\ngoal: a Linear layer's forward+backward within 10 %% of cuBLAS alone on its products "
      "(ratio <= %.2f): %s (%d of the Linear rows missed it)\n",
      kGoal, misses == 0 ? "met" : "NOT met", misses);
  std::printf(
      "conv rows: cuBLAS on the im2col GEMMs only (no im2col/col2im, no bias): a floor, "
      "for information\n");
  if (wrong > 0) {
    std::fprintf(stderr, "bench_cuda_gemm: %d layer(s) disagree with cuBLAS (rel. error > 1e-4)\n",
                 wrong);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace ranklab

int main(int argc, char** argv) {
  try {
    return ranklab::run(argc, argv);
  } catch (const std::invalid_argument& e) {  // a bad option: the message names the program
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_cuda_gemm: %s\n", e.what());
    return 1;
  }
}
