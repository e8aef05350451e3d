// Which part of the whole model a tensor-parallel slice holds: a layer request says how its
// layer is split (Megatron's column- and row-parallel Linears), each of the layer's tensors
// how it is cut from the whole model's tensor, so a rank builds its part and takes its
// values from the whole model without knowing the layers by name.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ranklab {

// How a layer is split over the slices: whole (replicated), its outputs (a column-parallel
// Linear: rows of W and of b) or its inputs (row-parallel: columns of W; the bias whole,
// added by the first slice alone).
enum class SliceSplit { kWhole, kOutputs, kInputs };

// A layer's slice: slice `index` of `count`. `groups`: its outputs are that many equal
// groups, each split alike (a GPT block's c_attn: q, k and v).
struct TensorSlice {
  SliceSplit split = SliceSplit::kWhole;
  int index = 0;
  int count = 1;
  int groups = 1;
  bool isSplit() const { return split != SliceSplit::kWhole && count > 1; }
};

// How a tensor of `rows` rows (0: a vector) is cut from the whole model's: whole, rows
// [index * k, (index + 1) * k) of each of `groups` equal groups, or those columns of each row.
enum class TensorCut { kWhole, kRows, kColumns };

struct TensorPart {
  TensorCut cut = TensorCut::kWhole;
  TensorSlice slice;  // which slice's part (its split is the layer's)
  bool isCut() const { return cut != TensorCut::kWhole && slice.count > 1; }
};

// A split layer's weight and bias parts (a Linear's: weight (outputs, inputs), bias (outputs)).
TensorPart weightPartOf(const TensorSlice& slice);
TensorPart biasPartOf(const TensorSlice& slice);

// The whole tensor's size, for a part of `size` values.
size_t wholeSizeOf(const TensorPart& part, size_t size);

// Copies the part (`size` values of `rows` rows, as ParamTensor) of the whole tensor at
// `whole` into `to`.
template <class T>
void copyPart(const T* whole, const TensorPart& part, size_t size, int rows, T* to);

extern template void copyPart<float>(const float*, const TensorPart&, size_t, int, float*);
extern template void copyPart<uint64_t>(const uint64_t*, const TensorPart&, size_t, int, uint64_t*);

}  // namespace ranklab
