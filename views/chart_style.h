// Shared look of the workbench charts: colours and fonts a person can read in a screenshot.
#pragma once

#include <QColor>
#include <QFont>

#include "views/models/rank_colour.h"

class QChart;
class QAbstractAxis;
class QValueAxis;

namespace ranklab {

// An event's mark: trouble in red, AMP's skips in amber, the launcher's recovery in green.
QColor eventColour(const QString& kind);

QFont chartTitleFont();
QFont axisTitleFont();
QFont axisLabelFont();
QFont legendFont();

// White background, titled, legend at the top, tight margins.
void styleChart(QChart* chart, const QString& title);
void styleAxis(QAbstractAxis* axis, const QString& title);
// Range [low, high] widened to whole ticks of 1, 2 or 5 × 10^k, about `ticks` of them,
// labelled with as many decimals as the tick size needs (none when `whole`).
void fitAxis(QValueAxis* axis, double low, double high, int ticks = 6, bool whole = false);

}  // namespace ranklab
