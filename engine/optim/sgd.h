// SGD with momentum and weight decay over one flat buffer, PyTorch's update rule:
// g += wd * p;  v = momentum * v + g;  p -= lr * v.
#pragma once

#include <cstddef>
#include <vector>

namespace ranklab {

class Sgd {
 public:
  Sgd(size_t parameters, double momentum, double weight_decay);
  void step(float* params, const float* grads, double lr);

 private:
  float momentum_;
  float weight_decay_;
  std::vector<float> velocity_;
};

}  // namespace ranklab
