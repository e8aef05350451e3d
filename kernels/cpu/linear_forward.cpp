#include "kernels/cpu/linear_forward.h"

#include <cstddef>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/gemm.h"

#ifdef RANKLAB_HAVE_DNNL
#include <omp.h>

#include <dnnl.hpp>
#include <map>
#include <memory>
#include <tuple>
#endif

namespace ranklab::kernels {

namespace {

#ifdef RANKLAB_HAVE_DNNL
using dnnl::memory;

// oneDNN's matmul for one shape: y = act(x . W^T + b), W^T read in place from W (out, in).
// Measured 2-8 % faster than dnnl_sgemm on the MLP's forward shapes (bench/LOG.md).
class LinearMatmul {
 public:
  LinearMatmul(const dnnl::engine& engine, int rows, int in, int out, bool relu)
      : x_(memory::desc({rows, in}, memory::data_type::f32, memory::dims{in, 1}), engine,
           DNNL_MEMORY_NONE),
        w_(memory::desc({in, out}, memory::data_type::f32, memory::dims{1, in}), engine,
           DNNL_MEMORY_NONE),
        bias_(memory::desc({1, out}, memory::data_type::f32, memory::dims{out, 1}), engine,
              DNNL_MEMORY_NONE),
        y_(memory::desc({rows, out}, memory::data_type::f32, memory::dims{out, 1}), engine,
           DNNL_MEMORY_NONE) {
    dnnl::post_ops ops;
    if (relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    const dnnl::matmul::desc desc(x_.get_desc(), w_.get_desc(), bias_.get_desc(), y_.get_desc());
    matmul_ = dnnl::matmul(dnnl::matmul::primitive_desc(desc, attr, engine));
  }

  void run(dnnl::stream& stream, const float* x, const float* w, const float* bias, float* y) {
    x_.set_data_handle(const_cast<float*>(x));
    w_.set_data_handle(const_cast<float*>(w));
    bias_.set_data_handle(const_cast<float*>(bias));
    y_.set_data_handle(y);
    matmul_.execute(
        stream,
        {{DNNL_ARG_SRC, x_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_BIAS, bias_}, {DNNL_ARG_DST, y_}});
  }

 private:
  memory x_, w_, bias_, y_;
  dnnl::matmul matmul_;
};

// The calling thread's primitives: ranks may be threads of one process (tests), and a
// oneDNN stream and its primitives' scratch are not for two threads at once.
struct ThreadMatmuls {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<std::tuple<int, int, int, bool>, std::unique_ptr<LinearMatmul>> by_shape;

  LinearMatmul& of(int rows, int in, int out, bool relu) {
    auto& slot = by_shape[{rows, in, out, relu}];
    if (!slot) slot = std::make_unique<LinearMatmul>(engine, rows, in, out, relu);
    return *slot;
  }
};

void onednnLinearForward(const float* x, const float* w, const float* bias, float* y, int rows,
                         int in, int out, bool relu) {
  useOnednnTeam();
  thread_local ThreadMatmuls matmuls;
  matmuls.of(rows, in, out, relu).run(matmuls.stream, x, w, bias, y);
}
#endif

}  // namespace

void linearForward(const float* x, const float* w, const float* bias, float* y, int rows, int in,
                   int out, bool relu) {
  if (rows == 0 || out == 0) return;
#ifdef RANKLAB_HAVE_DNNL
  if (sgemmRunsInOnednn(Trans::kNo, Trans::kYes, rows, out, in)) {
    return onednnLinearForward(x, w, bias, y, rows, in, out, relu);
  }
#endif
  // As PyTorch's addmm: the GEMM adds onto the bias rows (beta 1).
  copyBiasRows(y, bias, rows, out);
  sgemm(Trans::kNo, Trans::kYes, rows, out, in, 1.f, x, in, w, in, 1.f, y, out);
  if (relu) reluForward(y, y, static_cast<size_t>(rows) * out);
}

}  // namespace ranklab::kernels
