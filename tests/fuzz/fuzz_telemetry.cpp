// libFuzzer target: bytes off the telemetry wire, as the collector decodes and validates them,
// and a valid Step's measures as the recorder reads them. Nothing may crash or leak.
#include <cstddef>
#include <cstdint>

#include "comm/telemetry/collector.h"
#include "comm/telemetry/step_wire.h"
#include "storage/records.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto decoded = ranklab::decodeMessage(data, size, "fuzz", 4);
  if (decoded.envelope && decoded.envelope->has_step()) {
    ranklab::StepRow row;
    ranklab::decodeMeasures(decoded.envelope->step(), row);
  }
  return 0;
}
