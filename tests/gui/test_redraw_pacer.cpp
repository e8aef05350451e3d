// RedrawPacer: redraws stretch while the UI thread works more than its share, and come
// back to the fastest pace once it works less, never beyond the bounds.
#include <QtTest>

#include "views/models/redraw_pacer.h"

using namespace ranklab;

class RedrawPacerTest : public QObject {
  Q_OBJECT

 private slots:
  void stretchesUnderLoadAndRecovers() {
    RedrawPacer pacer(70, 1000, 0.1);
    double cpu = 0, wall = 0;
    QCOMPARE(pacer.nextIntervalMs(cpu, wall), 70);  // nothing measured yet
    int last = 70;
    for (int i = 0; i < 20; ++i) {  // the thread busy 40 % of each interval
      wall += last / 1000.0;
      cpu += 0.4 * last / 1000.0;
      const int next = pacer.nextIntervalMs(cpu, wall);
      QVERIFY2(next >= last, "never faster while over its share");
      last = next;
    }
    QCOMPARE(last, 1000);           // 4x its share: pinned at the slowest
    for (int i = 0; i < 20; ++i) {  // then idle but for the redraw itself, 1 %
      wall += last / 1000.0;
      cpu += 0.01 * last / 1000.0;
      last = pacer.nextIntervalMs(cpu, wall);
    }
    QCOMPARE(last, 70);
  }

  void settlesWhereTheShareIsMet() {
    RedrawPacer pacer(10, 5000, 0.1);
    double cpu = 0, wall = 0;
    pacer.nextIntervalMs(cpu, wall);
    int last = 10;
    for (int i = 0; i < 60; ++i) {  // each redraw costs 20 ms of CPU
      wall += last / 1000.0;
      cpu += 0.020;
      last = pacer.nextIntervalMs(cpu, wall);
    }
    QVERIFY2(last >= 190 && last <= 210, qPrintable(QString::number(last)));  // 20 ms / 0.1
  }

  void threadCpuCounts() {
    const double before = threadCpuSeconds();
    volatile double sink = 0;
    for (int i = 0; i < 20000000; ++i) sink = sink + i * 1e-9;
    QVERIFY(threadCpuSeconds() > before);
    QVERIFY(processCpuSeconds() >= threadCpuSeconds());
  }
};

QTEST_GUILESS_MAIN(RedrawPacerTest)
#include "test_redraw_pacer.moc"
