// Collects steps that arrive one by one (queued from the run thread) and hands them on in
// batches at most kIntervalMs apart: the model and the charts do their work once per
// batch, not once per step, so thousands of steps a second leave the UI thread idle.
#pragma once

#include <QObject>
#include <QTimer>
#include <vector>

#include "storage/records.h"

namespace ranklab {

class StepBatcher : public QObject {
  Q_OBJECT

 public:
  static constexpr int kIntervalMs = 50;

  explicit StepBatcher(QObject* parent = nullptr);

  void add(const StepRow& step);
  void addAll(const std::vector<StepRow>& steps);
  void flush();  // hands on what is pending now (e.g. when the run ends)

 signals:
  void batchReady(const std::vector<ranklab::StepRow>& steps);

 private:
  std::vector<StepRow> pending_;
  QTimer timer_;
};

}  // namespace ranklab
