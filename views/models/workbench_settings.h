// What the workbench remembers between sessions (QSettings: ~/.config/ranklab/...):
// recent jobs, the last run store, window layout and chart choices.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace ranklab {

class WorkbenchSettings {
 public:
  static constexpr int kMaxRecentJobs = 8;

  static QStringList recentJobs();
  static void addRecentJob(const QString& path);  // most recent first, no duplicates

  static QString lastDb();
  static void setLastDb(const QString& path);

  static QByteArray windowGeometry();
  static QByteArray windowState();
  static void setWindowLayout(const QByteArray& geometry, const QByteArray& state);

  static double smoothing();  // 0..0.99, the debiased EMA weight
  static void setSmoothing(double weight);
  static int xAxis();  // XAxis as int
  static void setXAxis(int axis);
  static int compareCurve();  // the compare page's curve, as its list index
  static void setCompareCurve(int index);
};

}  // namespace ranklab
