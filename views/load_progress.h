// A progress bar for what a page waits on from the store reader: it appears only when the
// answer takes longer than kDelayMs (a live run's window, asked for every second, would
// otherwise flicker), busy until told a stage, hidden when the answer comes.
#pragma once

#include <QProgressBar>
#include <QTimer>

namespace ranklab {

class LoadProgress : public QProgressBar {
  Q_OBJECT

 public:
  static constexpr int kDelayMs = 150;

  explicit LoadProgress(QWidget* parent = nullptr);

  void start();                                          // a request went out
  void setStage(int done, int of, const QString& text);  // how far it is
  void finish();                                         // its answer (or failure) came
  bool loading() const { return loading_; }

 private:
  QTimer delay_;
  bool loading_ = false;
};

}  // namespace ranklab
