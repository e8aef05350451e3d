// Shared look of the workbench charts: colours and fonts a person can read in a screenshot.
#pragma once

#include <QColor>
#include <QFont>

class QChart;
class QAbstractAxis;

namespace ranklab {

QColor rankColour(int rank);  // distinct, in a fixed order
QFont chartTitleFont();
QFont axisTitleFont();
QFont axisLabelFont();
QFont legendFont();

// White background, titled, legend at the top, tight margins.
void styleChart(QChart* chart, const QString& title);
void styleAxis(QAbstractAxis* axis, const QString& title);

}  // namespace ranklab
