#include "views/models/workbench_settings.h"

#include <QSettings>

namespace ranklab {

namespace {

QSettings settings() {
  return QSettings(QStringLiteral("ranklab"), QStringLiteral("ranklab-workbench"));
}

}  // namespace

QStringList WorkbenchSettings::recentJobs() {
  return settings().value(QStringLiteral("jobs/recent")).toStringList();
}

void WorkbenchSettings::addRecentJob(const QString& path) {
  if (path.isEmpty()) return;
  QStringList recent = recentJobs();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecentJobs) recent.removeLast();
  settings().setValue(QStringLiteral("jobs/recent"), recent);
}

QString WorkbenchSettings::lastDb() {
  return settings().value(QStringLiteral("store/last")).toString();
}

void WorkbenchSettings::setLastDb(const QString& path) {
  settings().setValue(QStringLiteral("store/last"), path);
}

QByteArray WorkbenchSettings::windowGeometry() {
  return settings().value(QStringLiteral("window/geometry")).toByteArray();
}

QByteArray WorkbenchSettings::windowState() {
  return settings().value(QStringLiteral("window/state")).toByteArray();
}

void WorkbenchSettings::setWindowLayout(const QByteArray& geometry, const QByteArray& state) {
  QSettings s = settings();
  s.setValue(QStringLiteral("window/geometry"), geometry);
  s.setValue(QStringLiteral("window/state"), state);
}

double WorkbenchSettings::smoothing() {
  return qBound(0.0, settings().value(QStringLiteral("charts/smoothing"), 0.6).toDouble(), 0.99);
}

void WorkbenchSettings::setSmoothing(double weight) {
  settings().setValue(QStringLiteral("charts/smoothing"), weight);
}

int WorkbenchSettings::xAxis() {
  return settings().value(QStringLiteral("charts/x_axis"), 0).toInt();
}

void WorkbenchSettings::setXAxis(int axis) {
  settings().setValue(QStringLiteral("charts/x_axis"), axis);
}

int WorkbenchSettings::compareCurve() {
  return settings().value(QStringLiteral("compare/curve"), 0).toInt();
}

void WorkbenchSettings::setCompareCurve(int index) {
  settings().setValue(QStringLiteral("compare/curve"), index);
}

}  // namespace ranklab
