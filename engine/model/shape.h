// A sample's shape, channels-last (H, W, C); a feature vector of n values is (1, 1, n).
#pragma once

#include <cstddef>
#include <string>

namespace ranklab {

struct Shape {
  int height = 1, width = 1, channels = 0;
  size_t size() const { return static_cast<size_t>(height) * width * channels; }
  std::string str() const;  // "28x28x1" for images, "784" for feature vectors
  bool operator==(const Shape&) const = default;
};

}  // namespace ranklab
