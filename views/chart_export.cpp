#include "views/chart_export.h"

#include <QFileInfo>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

namespace ranklab {

QString exportChart(QWidget* chart, const QString& path) {
  if (QFileInfo(path).suffix().compare(QLatin1String("svg"), Qt::CaseInsensitive) == 0) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(chart->size());
    svg.setViewBox(QRect(QPoint(0, 0), chart->size()));
    svg.setTitle(chart->windowTitle());
    QPainter painter;
    if (!painter.begin(&svg)) return QObject::tr("%1: cannot write the SVG file").arg(path);
    chart->render(&painter);  // vector output: lines and text stay sharp at any size
    painter.end();
    return QFileInfo(path).size() > 0 ? QString()
                                      : QObject::tr("%1: the SVG file is empty").arg(path);
  }
  const QPixmap pixels = chart->grab();
  if (!pixels.save(path, "PNG")) return QObject::tr("%1: cannot write the PNG file").arg(path);
  return {};
}

}  // namespace ranklab
