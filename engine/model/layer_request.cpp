#include "engine/model/layer_request.h"

namespace ranklab {

std::string layerKindName(LayerKind kind) {
#define RANKLAB_LAYER_KIND_NAME(enumerator, name) \
  if (kind == LayerKind::enumerator) return name;
  RANKLAB_LAYER_KINDS(RANKLAB_LAYER_KIND_NAME)
#undef RANKLAB_LAYER_KIND_NAME
  return "kind " + std::to_string(static_cast<int>(kind));
}

}  // namespace ranklab
