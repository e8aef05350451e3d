#include "engine/model/tensor_slice.h"

#include <algorithm>

namespace ranklab {

TensorPart weightPartOf(const TensorSlice& slice) {
  if (!slice.isSplit()) return {};
  const TensorCut cut =
      slice.split == SliceSplit::kOutputs ? TensorCut::kRows : TensorCut::kColumns;
  return {cut, slice};
}

TensorPart biasPartOf(const TensorSlice& slice) {
  if (!slice.isSplit() || slice.split == SliceSplit::kInputs) return {};
  return {TensorCut::kRows, slice};
}

size_t wholeSizeOf(const TensorPart& part, size_t size) {
  return part.isCut() ? size * static_cast<size_t>(part.slice.count) : size;
}

template <class T>
void copyPart(const T* whole, const TensorPart& part, size_t size, int rows, T* to) {
  if (!part.isCut()) {
    std::copy_n(whole, size, to);
    return;
  }
  const TensorSlice& at = part.slice;
  const size_t row_count = rows > 0 ? static_cast<size_t>(rows) : size;  // a vector's rows: 1 value
  const size_t row = size / row_count;
  if (part.cut == TensorCut::kColumns) {  // every row, its columns [index * k, (index + 1) * k)
    const size_t whole_row = row * at.count;
    for (size_t i = 0; i < row_count; ++i)
      std::copy_n(whole + i * whole_row + at.index * row, row, to + i * row);
    return;
  }
  // kRows: of each group, rows [index * k, (index + 1) * k).
  const size_t held = row_count / at.groups, whole_group = held * at.count;
  for (int g = 0; g < at.groups; ++g) {
    std::copy_n(whole + (g * whole_group + at.index * held) * row, held * row, to + g * held * row);
  }
}

template void copyPart<float>(const float*, const TensorPart&, size_t, int, float*);
template void copyPart<uint64_t>(const uint64_t*, const TensorPart&, size_t, int, uint64_t*);

}  // namespace ranklab
