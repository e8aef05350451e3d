// The transformer's own kernels on a GPU: the twins of kernels/cpu/transformer.h, with the
// same shapes, layouts and semantics (LayerNorm over the last dimension, the exact erf GELU,
// causal multi-head self-attention over a packed q|k|v row, the token and position
// embedding). The conventions of layer_kernels.h hold: device pointers, the calling thread's
// own default stream, every launch checked. Every sum runs in an order fixed by the shape
// (the same bits every call, not the CPU's): a row's by a block's tree, a column's over the
// rows in order; the attention's products through cuBLAS in fp32.
#pragma once

#include <cstddef>

namespace ranklab::cuda {

// y = (x - mean) / sqrt(var + eps) * weight + bias per row of `width`; mean and rstd per row
// kept for the backward (var the biased one, as PyTorch's).
void layerNormForward(const float* x, const float* weight, const float* bias, float* y, float* mean,
                      float* rstd, size_t rows, int width, float eps);
// dx (written, where not null) from dy; dweight, dbias (+)= their sums over the rows.
// `scratch` holds rows * width floats (dy times the normalised x, summed by columns).
void layerNormBackward(const float* x, const float* weight, const float* mean, const float* rstd,
                       const float* dy, float* dx, float* dweight, float* dbias, size_t rows,
                       int width, bool accumulate, float* scratch);

// y = x * Phi(x); where `slope` is not null also slope = Phi(x) + x phi(x).
void geluForward(const float* x, float* y, float* slope, size_t n);
// dx = dy * slope.
void geluBackward(const float* slope, const float* dy, float* dx, size_t n);

// Causal self-attention of `batch` sequences of `length` positions over rows of q|k|v (3 *
// width floats, `heads` heads of width / heads each): y (batch, length, width) and probs
// (batch, heads, length, length), zero above the diagonal.
void causalAttentionForward(const float* qkv, float* y, float* probs, int batch, int length,
                            int width, int heads);
// dqkv (written) from dy, the forward's qkv and probs; `scratch` holds heads * length *
// length floats.
void causalAttentionBackward(const float* qkv, const float* probs, const float* dy, float* dqkv,
                             int batch, int length, int width, int heads, float* scratch);

// y (batch * length, width) = token_table[tokens] + position_table[position], tokens ids as
// floats; one outside [0, vocab) throws std::out_of_range naming it and its position (read
// back once a call: the forward waits for its own kernel).
void embeddingForward(const float* tokens, const float* token_table, const float* position_table,
                      float* y, int batch, int length, int width, int vocab);
// dtoken_table += dy's rows at their tokens (always added: a tied head writes first), each
// table row summed over the positions in order; dposition_table (+)= dy summed over the batch.
void embeddingBackward(const float* tokens, const float* dy, float* dtoken_table,
                       float* dposition_table, int batch, int length, int width, int vocab,
                       bool accumulate_positions);

}  // namespace ranklab::cuda
