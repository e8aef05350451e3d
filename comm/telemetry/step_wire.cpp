#include "comm/telemetry/step_wire.h"

namespace ranklab {

void encodeMeasures(const StepMeasures& from, telemetry::Step& to) {
  auto* phases = to.mutable_phases();
#define RANKLAB_ENCODE_PHASE(name, kind) phases->set_##name##_ns(from.name##_ns);
  RANKLAB_STEP_PHASES(RANKLAB_ENCODE_PHASE)
#undef RANKLAB_ENCODE_PHASE
  phases->set_comm_hidden_ns(from.comm_hidden_ns);
#define RANKLAB_ENCODE_MEASURE(type, name, init) to.set_##name(from.name);
  RANKLAB_STEP_MEASURES(RANKLAB_ENCODE_MEASURE)
#undef RANKLAB_ENCODE_MEASURE
}

void decodeMeasures(const telemetry::Step& from, StepMeasures& to) {
#define RANKLAB_DECODE_PHASE(name, kind) to.name##_ns = from.phases().name##_ns();
  RANKLAB_STEP_PHASES(RANKLAB_DECODE_PHASE)
#undef RANKLAB_DECODE_PHASE
  to.comm_hidden_ns = from.phases().comm_hidden_ns();
#define RANKLAB_DECODE_MEASURE(type, name, init) to.name = from.name();
  RANKLAB_STEP_MEASURES(RANKLAB_DECODE_MEASURE)
#undef RANKLAB_DECODE_MEASURE
}

}  // namespace ranklab
