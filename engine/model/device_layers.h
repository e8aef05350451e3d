// The layers and the loss head a device computes, by kind (layer_request.h). Models ask for
// each layer (models.cpp) and the loss head (network.cpp). One of a ComputeDevice's
// concerns (compute_device.h).
#pragma once

#include <memory>

#include "engine/model/layer.h"
#include "engine/model/layer_request.h"
#include "engine/model/loss_head.h"

namespace ranklab {

class DeviceLayers {
 public:
  virtual ~DeviceLayers() = default;
  // Throws std::invalid_argument naming a kind the device has no layer for.
  virtual std::unique_ptr<Layer> makeLayer(const LayerRequest& request) const = 0;
  virtual std::unique_ptr<LossHead> makeLossHead() const = 0;
};

}  // namespace ranklab
