// The transformer's own kernels on the CPU, as PyTorch computes them: LayerNorm over the
// last dimension, the exact (erf) GELU, and causal multi-head self-attention over a packed
// q|k|v row (nanoGPT's c_attn output). Rows are row-major; `rows` counts every position of
// every sample. Parameter gradients are added to (`accumulate`) or written.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab::kernels {

// y = (x - mean) / sqrt(var + eps) * weight + bias per row of `width`; mean and rstd
// (1 / sqrt(var + eps)) per row kept for the backward. var is the biased one, as PyTorch's.
void layerNormForward(const float* x, const float* weight, const float* bias, float* y, float* mean,
                      float* rstd, size_t rows, int width, float eps);
// dx (written, where not null) from dy; dweight, dbias (+)= their sums over the rows.
void layerNormBackward(const float* x, const float* weight, const float* mean, const float* rstd,
                       const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                       int width, bool accumulate);

// y = x * Phi(x) (the erf form, PyTorch's nn.GELU()); where `slope` is not null, also
// slope = GELU'(x) = Phi(x) + x phi(x), so the backward is one product (erf and exp are
// most of a GELU's time: computed once a step, not twice).
void geluForward(const float* x, float* y, float* slope, size_t n);
// dx = dy * slope, the forward's.
void geluBackward(const float* slope, const float* dy, float* dx, size_t n);

// Causal self-attention of `batch` sequences of `length` positions, each row of qkv holding
// q, k and v (3 * width floats), each of `heads` heads reading width / heads of each. y
// (batch, length, width) = softmax(q k^T / sqrt(d), positions up to the row's own) v, the
// heads side by side; probs (batch, heads, length, length) keeps the softmax for the
// backward (zero above the diagonal).
void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                            int width, int heads);
// dqkv (written) from dy, the forward's qkv and probs.
void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                             int batch, int length, int width, int heads);

// y (batch * length, width) = token_table[tokens] + position_table[position]; tokens are
// ids as floats (the batches' float samples), each checked against `vocab`: one outside
// [0, vocab) throws std::out_of_range naming it and its position.
void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                      float* y, int batch, int length, int width, int vocab);
// dtoken_table += dy's rows at their tokens (always added: a tied head writes first);
// dposition_table (+)= dy summed over the batch.
void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                       float* dposition_table, int batch, int length, int width,
                       bool accumulate_positions);

}  // namespace ranklab::kernels
