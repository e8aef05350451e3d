// The runs page driven as a person does, modal dialogs included: the delete confirmation
// (cancel keeps the run, yes removes it from the SQLite file), the rename dialog, and the
// chart of the selected run exported as PNG and SVG through the save dialog.
#include <QApplication>
#include <QFileDialog>
#include <QImage>
#include <QInputDialog>
#include <QLineSeries>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTimer>
#include <QtTest>
#include <functional>

#include "tests/gui/stored_runs_fixture.h"
#include "views/curve_chart.h"
#include "views/main_window.h"
#include "views/models/runs_table_model.h"
#include "views/runs_page.h"

using namespace ranklab;
using namespace ranklab::gui_test;

namespace {

// Acts on the next modal dialog of type Dialog as soon as it is shown (the click that opens
// it does not return until the dialog is closed). Fails the test if none shows up.
template <typename Dialog>
void whenDialogShows(std::function<void(Dialog*)> act, bool* seen) {
  *seen = false;
  auto attempts = std::make_shared<int>(0);
  auto poll = std::make_shared<std::function<void()>>();
  *poll = [act, seen, attempts, poll] {
    if (auto* dialog = qobject_cast<Dialog*>(QApplication::activeModalWidget());
        dialog && dialog->isVisible()) {
      *seen = true;
      act(dialog);
      return;
    }
    if (++*attempts < 500) QTimer::singleShot(10, *poll);
  };
  QTimer::singleShot(0, *poll);
}

QPushButton* button(RunsPage* page, const char* name) {
  return page->findChild<QPushButton*>(QLatin1String(name));
}

struct Window {
  Fixture fixture;
  MainWindow window;
  Window() : window(options(fixture.db)) {
    window.show();
    window.showPage(MainWindow::RunsTab);
  }
  static WorkbenchOptions options(const QString& db) {
    WorkbenchOptions o;
    o.db_path = db;
    return o;
  }
  RunsPage* runs() { return window.runsPage(); }
};

}  // namespace

class RunsPageTest : public QObject {
  Q_OBJECT

 private slots:
  void deleteAsksFirstAndCancelKeepsTheRun() {
    Window w;
    QTRY_COMPARE_WITH_TIMEOUT(w.window.runsModel()->rowCount(), 2, 10000);
    w.runs()->selectRun(w.fixture.mpi);
    QSignalSpy changed(w.window.runsPage(), &RunsPage::deleteRequested);

    bool seen = false;
    QString question;
    whenDialogShows<QMessageBox>(
        [&](QMessageBox* box) {
          question = box->text();
          box->button(QMessageBox::Cancel)->click();
        },
        &seen);
    QTest::mouseClick(button(w.runs(), "deleteRuns"), Qt::LeftButton);
    QVERIFY(seen);
    QVERIFY2(question.contains(QStringLiteral("run %1").arg(w.fixture.mpi)), qPrintable(question));
    QCOMPARE(changed.count(), 0);
    QTest::qWait(300);  // had anything been sent to the store, it would land by now
    QCOMPARE(w.window.runsModel()->rowCount(), 2);
    RunStore store(w.fixture.db.toStdString());
    QVERIFY(store.run(w.fixture.mpi));
    QCOMPARE(store.steps(w.fixture.mpi).size(), size_t(3 * 8));
  }

  void deleteConfirmedRemovesTheRunFromTheFile() {
    Window w;
    QTRY_COMPARE_WITH_TIMEOUT(w.window.runsModel()->rowCount(), 2, 10000);
    w.runs()->selectRun(w.fixture.mpi);
    bool seen = false;
    whenDialogShows<QMessageBox>([](QMessageBox* box) { box->button(QMessageBox::Yes)->click(); },
                                 &seen);
    QTest::mouseClick(button(w.runs(), "deleteRuns"), Qt::LeftButton);
    QVERIFY(seen);
    QTRY_COMPARE_WITH_TIMEOUT(w.window.runsModel()->rowCount(), 1, 10000);
    QCOMPARE(w.window.runsModel()->rowOfRun(w.fixture.mpi), -1);
    RunStore store(w.fixture.db.toStdString());
    QVERIFY(!store.run(w.fixture.mpi));
    QVERIFY(store.steps(w.fixture.mpi).empty());
    QVERIFY(store.stepBins(w.fixture.mpi).empty());
    QVERIFY(store.run(w.fixture.ring));  // the other run stays
  }

  void renameDialogRenamesInTheFileAndCancelDoesNot() {
    Window w;
    QTRY_COMPARE_WITH_TIMEOUT(w.window.runsModel()->rowCount(), 2, 10000);
    w.runs()->selectRun(w.fixture.ring);
    bool seen = false;
    QString offered;
    whenDialogShows<QInputDialog>(
        [&](QInputDialog* dialog) {
          offered = dialog->textValue();
          dialog->setTextValue(QStringLiteral("  never mind  "));
          dialog->reject();
        },
        &seen);
    QTest::mouseClick(button(w.runs(), "renameRun"), Qt::LeftButton);
    QVERIFY(seen);
    QCOMPARE(offered, QStringLiteral("ring"));  // the current name, to edit
    QTest::qWait(300);
    QCOMPARE(RunStore(w.fixture.db.toStdString()).run(w.fixture.ring)->name, "ring");

    whenDialogShows<QInputDialog>(
        [](QInputDialog* dialog) {
          dialog->setTextValue(QStringLiteral("  baseline  "));
          dialog->accept();
        },
        &seen);
    QTest::mouseClick(button(w.runs(), "renameRun"), Qt::LeftButton);
    QVERIFY(seen);
    QTRY_VERIFY_WITH_TIMEOUT(
        RunStore(w.fixture.db.toStdString()).run(w.fixture.ring)->name == "baseline", 10000);
    QTRY_COMPARE_WITH_TIMEOUT(
        w.window.runsModel()->runAt(w.window.runsModel()->rowOfRun(w.fixture.ring)).name,
        std::string("baseline"), 10000);
    QCOMPARE(RunStore(w.fixture.db.toStdString()).run(w.fixture.mpi)->name, "mpi");
  }

  void selectedRunsChartExportsAsPngAndSvg() {
    Window w;
    QTRY_COMPARE_WITH_TIMEOUT(w.window.runsModel()->rowCount(), 2, 10000);
    {
      RunsTableModel empty;
      RunsPage fresh(&empty);
      QVERIFY(!button(&fresh, "exportChart")->isEnabled());  // nothing drawn yet
    }
    QPushButton* export_chart = button(w.runs(), "exportChart");
    w.runs()->selectRun(w.fixture.mpi);
    QTRY_COMPARE_WITH_TIMEOUT(w.runs()->previewRunId(), w.fixture.mpi, 10000);
    QVERIFY(export_chart->isEnabled());
    CurveChart* chart = w.runs()->previewChart();
    QCOMPARE(chart->seriesCount(), 3 + 1);  // 3 ranks and their mean
    QCOMPARE(chart->seriesFor(kMeanKey)->count(), 8);

    for (const QString& suffix : {QStringLiteral("png"), QStringLiteral("svg")}) {
      const QString path = w.fixture.dir.filePath(QStringLiteral("preview.") + suffix);
      bool seen = false;
      whenDialogShows<QFileDialog>(
          [&](QFileDialog* dialog) {
            dialog->selectFile(path);
            static_cast<QDialog*>(dialog)->accept();  // as the Save button does
          },
          &seen);
      QTest::mouseClick(export_chart, Qt::LeftButton);
      QVERIFY(seen);
      QFile file(path);
      QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(path));
      const QByteArray bytes = file.readAll();
      QVERIFY(bytes.size() > 1000);
      if (suffix == QLatin1String("png")) {
        QVERIFY(bytes.startsWith("\x89PNG\r\n\x1a\n"));
        const QImage image(path);
        QCOMPARE(image.size(), chart->size());
      } else {
        QVERIFY(bytes.contains("<svg"));
        QVERIFY(bytes.contains("mean of ranks"));  // the legend, as text
      }
    }
    // Once the run is deleted its chart goes too, and there is nothing left to export.
    RunStore(w.fixture.db.toStdString()).deleteRun(w.fixture.mpi);
    w.window.refreshRuns();
    QTRY_COMPARE_WITH_TIMEOUT(w.runs()->previewRunId(), 0, 10000);
    QVERIFY(!export_chart->isEnabled());
    QVERIFY(!w.runs()->exportPreview(w.fixture.dir.filePath(QStringLiteral("x.png"))).isEmpty());
  }
};

QTEST_MAIN(RunsPageTest)
#include "test_runs_page.moc"
