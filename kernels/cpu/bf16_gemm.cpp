#include "kernels/cpu/bf16_gemm.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "kernels/cpu/cpu_isa.h"

#ifdef RANKLAB_HAVE_DNNL
#include <omp.h>

#include <dnnl.hpp>
#endif

namespace ranklab::kernels {

namespace {

// Widens a (rows, cols) bf16 matrix with leading dimension ld into a packed fp32 one.
void widen(const bf16_t* src, int rows, int cols, int ld, std::vector<float>& dst) {
  dst.resize(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    bf16ToFloat(src + static_cast<size_t>(r) * ld, dst.data() + static_cast<size_t>(r) * cols,
                cols);
  }
}

bool portableForced() {
  const char* env = std::getenv("RANKLAB_BF16_GEMM");
  return env && std::strcmp(env, "portable") == 0;
}

#ifdef RANKLAB_HAVE_DNNL
// One matmul primitive per shape, built on first use: building one costs far more than
// running it on the MLP's shapes.
class OnednnMatmul {
 public:
  static OnednnMatmul& instance() {
    static OnednnMatmul matmul;
    return matmul;
  }

  void run(Trans ta, Trans tb, int m, int n, int k, float alpha, const bf16_t* a, int lda,
           const bf16_t* b, int ldb, float beta, float* c, int ldc) {
    using dnnl::memory;
    const Key key{ta == Trans::kYes, tb == Trans::kYes, m, n, k, lda, ldb, ldc, alpha, beta};
    std::lock_guard lock(mutex_);
    useOnednnTeam();
    auto it = cache_.find(key);
    if (it == cache_.end()) it = cache_.emplace(key, build(key)).first;
    Entry& e = it->second;
    memory am(e.a, engine_, const_cast<bf16_t*>(a));
    memory bm(e.b, engine_, const_cast<bf16_t*>(b));
    memory cm(e.c, engine_, c);
    e.matmul.execute(stream_, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    stream_.wait();
  }

  // oneDNN's name for the kernel it picks, e.g. "brg:avx512_core_amx_bf16"; empty where it
  // has none but its slow reference code, or none at all: oneDNN 2.6 has no bf16 matmul
  // below AVX-512 (avx512_core), so an AVX2 CPU takes the portable path.
  const std::string& implementation() {
    static const std::string impl = [this] {
      try {
        std::string name = build({false, true, 64, 64, 64, 64, 64, 64, 1.f, 0.f}).impl;
        return name.rfind("ref", 0) == 0 ? std::string() : name;
      } catch (const dnnl::error&) {
        return std::string();
      }
    }();
    return impl;
  }

 private:
  using Key = std::tuple<bool, bool, int, int, int, int, int, int, float, float>;
  struct Entry {
    dnnl::memory::desc a, b, c;
    dnnl::matmul matmul;
    std::string impl;
  };

  OnednnMatmul() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) { useOnednnTeam(); }

  Entry build(const Key& key) {
    using dnnl::memory;
    const auto [ta, tb, m, n, k, lda, ldb, ldc, alpha, beta] = key;
    // Transposes are strides: op(A) (m, k) stored (k, m) has strides (1, lda).
    Entry e;
    e.a = memory::desc({m, k}, memory::data_type::bf16,
                       ta ? memory::dims{1, lda} : memory::dims{lda, 1});
    e.b = memory::desc({k, n}, memory::data_type::bf16,
                       tb ? memory::dims{1, ldb} : memory::dims{ldb, 1});
    e.c = memory::desc({m, n}, memory::data_type::f32, memory::dims{ldc, 1});
    dnnl::primitive_attr attr;
    if (alpha != 1.f) attr.set_output_scales(0, {alpha});
    if (beta != 0.f) {
      dnnl::post_ops ops;
      ops.append_sum(beta);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e.a, e.b, e.c), attr, engine_);
    e.matmul = dnnl::matmul(pd);
    e.impl = pd.impl_info_str();
    return e;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::mutex mutex_;
  std::map<Key, Entry> cache_;
};
#endif

}  // namespace

void gemmBf16Portable(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha,
                      const bf16_t* a, int lda, const bf16_t* b, int ldb, float beta, float* c,
                      int ldc) {
  if (m == 0 || n == 0) return;
  thread_local std::vector<float> wa, wb;
  const bool ta = trans_a == Trans::kYes, tb = trans_b == Trans::kYes;
  widen(a, ta ? k : m, ta ? m : k, lda, wa);
  widen(b, tb ? n : k, tb ? k : n, ldb, wb);
  sgemm(trans_a, trans_b, m, n, k, alpha, wa.data(), ta ? m : k, wb.data(), tb ? k : n, beta, c,
        ldc);
}

namespace {

// Whether gemmBf16 runs in oneDNN: built in, not switched off, and a bf16 kernel for this CPU.
bool onednnBf16() {
#ifdef RANKLAB_HAVE_DNNL
  static const bool use = !portableForced() && !OnednnMatmul::instance().implementation().empty();
  return use;
#else
  return false;
#endif
}

}  // namespace

void gemmBf16(Trans trans_a, Trans trans_b, int m, int n, int k, float alpha, const bf16_t* a,
              int lda, const bf16_t* b, int ldb, float beta, float* c, int ldc) {
  if (m == 0 || n == 0) return;
#ifdef RANKLAB_HAVE_DNNL
  if (k > 0 && onednnBf16()) {
    return OnednnMatmul::instance().run(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                                        ldc);
  }
#endif
  gemmBf16Portable(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

std::string bf16GemmBackend() {
  const std::string portable = "portable (sgemm on widened inputs";
#ifdef RANKLAB_HAVE_DNNL
  if (onednnBf16()) return "onednn (" + OnednnMatmul::instance().implementation() + ")";
  if (!portableForced()) {
    return portable + "; oneDNN has no bf16 matmul below AVX-512 (avx512_core): kernels' ISA " +
           isaName(activeIsa()) + ", this CPU's flags " + cpuSimdFlags() + ")";
  }
#endif
  return portable + ")";
}

}  // namespace ranklab::kernels
