// A share of a collective whose ranks own uneven parts (a layer's window of ZeRO's chunks):
// `count` floats that rank `owner` receives (a reduction) or sends (a gather).
#pragma once

#include <cstddef>

namespace ranklab {

struct NcclPiece {
  int owner = 0;
  const float* send = nullptr;  // device memory; a gather reads it on the owner alone
  float* recv = nullptr;        // device memory; a reduction writes it on the owner alone
  size_t count = 0;
};

}  // namespace ranklab
