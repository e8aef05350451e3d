// The compression ratio as the workbench shows it: "57.4x", or "–" when nothing was
// compressed (raw equals sent) or nothing was sent.
#pragma once

#include <QString>

#include "storage/records.h"

namespace ranklab {

inline QString compressionText(int64_t bytes_raw, int64_t bytes_tx) {
  const std::optional<double> ratio = compressionRatio(bytes_raw, bytes_tx);
  return ratio ? QStringLiteral("%1x").arg(*ratio, 0, 'f', 1) : QStringLiteral("–");
}

}  // namespace ranklab
