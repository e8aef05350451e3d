// What a model asks a device for, one layer at a time: its kind and its shape. Each kind is
// listed once here; every device builds it from one table (makeLayerOn in layers.cpp), so a
// new kind is this line, its class written once over the device's passes and one case in
// the table (-Wswitch names a table that misses it).
#pragma once

#include <array>
#include <string>

#include "engine/model/shape.h"
#include "engine/model/tensor_slice.h"

namespace ranklab {

// X(enumerator, name shown in errors and traces)
#define RANKLAB_LAYER_KINDS(X) \
  X(kLinear, "linear")         \
  X(kConv2d, "conv2d")         \
  X(kMaxPool2d, "maxpool2d")   \
  X(kReLU, "relu")             \
  X(kDropout, "dropout")       \
  X(kFlatten, "flatten")       \
  X(kEmbedding, "embedding")   \
  X(kLayerNorm, "layernorm")   \
  X(kGelu, "gelu")             \
  X(kCausalSelfAttention, "attention")

#define RANKLAB_LAYER_KIND_ENUMERATOR(kind, name) kind,
enum class LayerKind { RANKLAB_LAYER_KINDS(RANKLAB_LAYER_KIND_ENUMERATOR) };
#undef RANKLAB_LAYER_KIND_ENUMERATOR

#define RANKLAB_LAYER_KIND_ENTRY(kind, name) LayerKind::kind,
// Every kind, for the tests that sweep them.
inline constexpr std::array kLayerKinds = {RANKLAB_LAYER_KINDS(RANKLAB_LAYER_KIND_ENTRY)};
#undef RANKLAB_LAYER_KIND_ENTRY

// "linear", "conv2d", ...; "kind N" for a value outside the list.
std::string layerKindName(LayerKind kind);

// One layer a model wants, whatever computes it.
struct LayerRequest {
  LayerKind kind = LayerKind::kLinear;
  std::string name;  // "fc0", "conv1"
  Shape input;
  int outputs = 0;    // Linear: features; Conv2d: channels
  int kernel = 0;     // Conv2d: square kernel side
  float dropout = 0;  // Dropout: probability
  // Linear: its tensor-parallel slice (input and outputs are the slice's own). A
  // row-parallel slice other than the first holds and learns the bias but adds none, so
  // the slices' sum has it once.
  TensorSlice slice = {};
  int heads = 0;  // CausalSelfAttention: heads (input: (length, 1, 3 * width))
  int vocab = 0;  // Embedding: tokens (input: (length, 1, 1); outputs: width)
};

}  // namespace ranklab
