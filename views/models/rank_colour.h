// The colour of a rank, the same in every chart, table and log line.
#pragma once

#include <QColor>

namespace ranklab {

QColor rankColour(int rank);  // distinct, in a fixed order; rank < 0 (the launcher) is grey

}  // namespace ranklab
