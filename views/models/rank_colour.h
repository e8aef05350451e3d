// The colours of ranks and of step phases, the same in every chart, table and log line.
#pragma once

#include <QColor>

namespace ranklab {

QColor rankColour(int rank);  // distinct, in a fixed order; rank < 0 (the launcher) is grey
// The colour of a step phase (Phase in run_series.h): compute in blues and greens, moving
// bytes in orange, waiting in red, so the eye finds the wait at once.
QColor phaseColour(int phase);

}  // namespace ranklab
