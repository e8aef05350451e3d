// The per-step record on the wire: StepMeasures (storage/step_record.h) to and from the
// telemetry Step message, field by field from the record's lists.
#pragma once

#include "comm/telemetry/telemetry.pb.h"
#include "storage/step_record.h"

namespace ranklab {

void encodeMeasures(const StepMeasures& from, telemetry::Step& to);
void decodeMeasures(const telemetry::Step& from, StepMeasures& to);

}  // namespace ranklab
