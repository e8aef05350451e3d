// Saves a chart (any widget that paints itself) as PNG or SVG, chosen by the file's suffix.
#pragma once

#include <QString>

class QWidget;

namespace ranklab {

// "" on success, else why it failed (the path and the cause).
QString exportChart(QWidget* chart, const QString& path);

}  // namespace ranklab
