#include "comm/collectives/allreduce.h"

namespace ranklab {

void Allreduce::runScaled(float* data, size_t count, float scale) {
  run(data, count);
  for (size_t i = 0; i < count; ++i) data[i] *= scale;
}

}  // namespace ranklab
