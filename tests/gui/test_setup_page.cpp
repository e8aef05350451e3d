// The job setup page with real widgets: typing an invalid value marks the field with the
// validator's reason and disables Launch; fixing it enables Launch and shows the command.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "engine/job/job_keys.h"
#include "views/setup_page.h"

using namespace ranklab;

namespace {

LaunchOptions launchOptions() {
  LaunchOptions options;
  options.worker_path = "/opt/ranklab/ranklab-worker";
  return options;
}

QString presetsDir() {
  return QStringLiteral(RANKLAB_SOURCE_DIR "/resources/jobs");
}

}  // namespace

class SetupPageTest : public QObject {
  Q_OBJECT

 private slots:
  void everySchemaKeyHasAnEditor() {
    SetupPage page(launchOptions(), presetsDir());
    for (const JobKey& key : jobKeys())
      QVERIFY2(page.editorFor(QString::fromStdString(key.path)), key.path.c_str());
    QVERIFY(qobject_cast<QComboBox*>(page.editorFor(QStringLiteral("parallel.algorithm"))));
  }

  // Keys that change nothing for the job as chosen are hidden; choosing shows them.
  void onlyTheKeysThatApplyAreShown() {
    SetupPage page(launchOptions(), presetsDir());
    page.show();
    QVERIFY(page.loadFile(presetsDir() + QStringLiteral("/quickstart.toml")));
    const auto visible = [&page](const char* path) {
      return page.editorFor(QString::fromLatin1(path))->isVisible();
    };
    QVERIFY(visible("data.path"));
    QVERIFY(!visible("data.arms"));         // spirals only
    QVERIFY(!visible("parallel.servers"));  // parameter server only
    QVERIFY(!visible("compression.bits"));  // qsgd only
    const auto* hidden = page.findChild<QLabel*>(QStringLiteral("hiddenKeys"));
    QVERIFY(hidden && hidden->text().contains(QStringLiteral("hidden")));

    auto* dataset = qobject_cast<QComboBox*>(page.editorFor(QStringLiteral("data.dataset")));
    dataset->setCurrentText(QStringLiteral("spirals"));
    QVERIFY(visible("data.arms"));
    QVERIFY(!visible("data.path"));
    auto* strategy = qobject_cast<QComboBox*>(page.editorFor(QStringLiteral("parallel.strategy")));
    strategy->setCurrentText(QStringLiteral("ps-async"));
    QVERIFY(visible("parallel.servers"));
    QVERIFY(visible("parallel.staleness"));
    QVERIFY(!visible("parallel.algorithm"));

    page.showAllBox()->setChecked(true);
    QVERIFY(visible("compression.bits"));
    QVERIFY(hidden->text().isEmpty());
    page.showAllBox()->setChecked(false);
    QVERIFY(!visible("compression.bits"));
  }

  // A hidden key in error is shown anyway: its error must be seen to be fixed.
  void aKeyInErrorIsShownEvenWhereItDoesNotApply() {
    SetupPage page(launchOptions(), presetsDir());
    page.show();
    page.setValue(QStringLiteral("compression.bits"), QStringLiteral("99"));
    QVERIFY(page.editorFor(QStringLiteral("compression.bits"))->isVisible());
    QVERIFY(!page.launchButton()->isEnabled());
  }

  void tooltipsComeFromTheJobFileDocs() {
    SetupPage page(launchOptions(), presetsDir());
    const QString tip = page.editorFor(QStringLiteral("parallel.bucket_kb"))->toolTip();
    QVERIFY2(tip.contains(QStringLiteral("gradient bucket size in KiB")), qPrintable(tip));
    QVERIFY2(tip.contains(QStringLiteral("integer, default 0")), qPrintable(tip));
  }

  void invalidValueShowsItsErrorAndDisablesLaunch() {
    SetupPage page(launchOptions(), presetsDir());
    page.show();
    QVERIFY(page.loadFile(presetsDir() + QStringLiteral("/quickstart.toml")));
    QVERIFY(page.launchButton()->isEnabled());
    QVERIFY(page.commandText().contains(QStringLiteral("mpirun")));
    QVERIFY(page.commandText().contains(QStringLiteral("-np 4 /opt/ranklab/ranklab-worker")));

    // Type into the learning-rate field the way a person does.
    auto* lr = qobject_cast<QLineEdit*>(page.editorFor(QStringLiteral("train.lr")));
    QVERIFY(lr);
    lr->selectAll();
    QTest::keyClicks(lr, QStringLiteral("0"));
    const auto* error = page.findChild<QLabel*>(QStringLiteral("error:train.lr"));
    QVERIFY(error);
    QVERIFY(error->isVisible());
    QCOMPARE(error->text(), QStringLiteral("must be > 0 and <= 10, got 0"));
    QVERIFY(!page.launchButton()->isEnabled());
    QVERIFY(!lr->styleSheet().isEmpty());  // marked
    QVERIFY(page.commandText().contains(QStringLiteral("when the job is valid")));

    // Text where a number belongs is reported against its key too.
    auto* ranks = qobject_cast<QLineEdit*>(page.editorFor(QStringLiteral("parallel.ranks")));
    ranks->selectAll();
    QTest::keyClicks(ranks, QStringLiteral("two"));
    QCOMPARE(page.errorTextFor(QStringLiteral("parallel.ranks")),
             QStringLiteral("expected an integer, got string"));

    // Fix both: Launch comes back and the command follows the form.
    ranks->selectAll();
    QTest::keyClicks(ranks, QStringLiteral("2"));
    lr->selectAll();
    QTest::keyClicks(lr, QStringLiteral("0.1"));
    QVERIFY(!error->isVisible());
    QVERIFY(page.launchButton()->isEnabled());
    QVERIFY(page.commandText().contains(QStringLiteral("-np 2 ")));

    QSignalSpy launch(&page, &SetupPage::launchRequested);
    QTest::mouseClick(page.launchButton(), Qt::LeftButton);
    QCOMPARE(launch.count(), 1);
    const QString text = launch.first().at(0).toString();
    QVERIFY(text.contains(QStringLiteral("lr = 0.1")));
    QVERIFY(text.contains(QStringLiteral("ranks = 2")));
  }

  // The hosts field takes the job file's array; the command shows mpirun's placement and
  // the inline job's size, and a bad entry is named.
  void hostsGoIntoTheCommand() {
    SetupPage page(launchOptions(), presetsDir());
    page.show();
    QVERIFY(page.loadFile(presetsDir() + QStringLiteral("/quickstart.toml")));
    auto* hosts = qobject_cast<QLineEdit*>(page.editorFor(QStringLiteral("launch.hosts")));
    QVERIFY(hosts && hosts->isVisible());
    hosts->selectAll();
    QTest::keyClicks(hosts, QStringLiteral("[\"node1:2\", \"node2:2\"]"));
    QVERIFY2(page.launchButton()->isEnabled(),
             qPrintable(page.errorTextFor(QStringLiteral("launch.hosts")) + hosts->text()));
    const QString command = page.commandText();
    QVERIFY2(command.contains(QStringLiteral("--host node1:2,node2:2 ")), qPrintable(command));
    QVERIFY(command.contains(QStringLiteral("--job-text <the resolved job, ")));
    QVERIFY(command.contains(QStringLiteral("<this machine's address>")));
    hosts->selectAll();
    QTest::keyClicks(hosts, QStringLiteral("[\"node1:two\"]"));
    QVERIFY(page.errorTextFor(QStringLiteral("launch.hosts"))
                .contains(QStringLiteral("got \"node1:two\"")));
    QVERIFY(!page.launchButton()->isEnabled());
  }

  void crossKeyProblemsMarkTheKeyTheValidatorNames() {
    SetupPage page(launchOptions(), presetsDir());
    page.setValue(QStringLiteral("parallel.ranks"), QStringLiteral("2"));
    page.setValue(QStringLiteral("fault.straggler_rank"), QStringLiteral("3"));
    QVERIFY(page.errorTextFor(QStringLiteral("fault.straggler_rank"))
                .contains(QStringLiteral("parallel.ranks is 2")));
    QVERIFY(!page.launchButton()->isEnabled());
  }

  // data.path's default follows data.dataset on the form; a path the user set stays.
  void theDataPathFollowsTheDatasetUntilSet() {
    SetupPage page(launchOptions(), presetsDir());
    auto* path = qobject_cast<QLineEdit*>(page.editorFor(QStringLiteral("data.path")));
    QVERIFY(path);
    page.setValue(QStringLiteral("data.dataset"), QStringLiteral("text"));
    QCOMPARE(path->text(), QString::fromLatin1(kDefaultTextCorpus));
    QCOMPARE(page.draft().value("data.path"), std::string(kDefaultTextCorpus));
    page.setValue(QStringLiteral("data.dataset"), QStringLiteral("fashion-mnist"));
    QCOMPARE(path->text(), QString::fromLatin1(kFashionMnistFolder));
    page.setValue(QStringLiteral("data.path"), QStringLiteral("/tmp/poems.txt"));
    page.setValue(QStringLiteral("data.dataset"), QStringLiteral("text"));
    QCOMPARE(path->text(), QStringLiteral("/tmp/poems.txt"));
    SetupPage file(launchOptions(), presetsDir());
    QVERIFY(file.loadFile(presetsDir() + QStringLiteral("/gpt-char.toml")));
    QCOMPARE(file.draft().value("data.path"), std::string(kDefaultTextCorpus));
  }

  void savedJobLoadsBackTheSame() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("mine.toml"));
    SetupPage page(launchOptions(), presetsDir());
    page.setValue(QStringLiteral("name"), QStringLiteral("mine"));
    page.setValue(QStringLiteral("model.layers"), QStringLiteral("[64, 32]"));
    page.setValue(QStringLiteral("parallel.algorithm"), QStringLiteral("mpi"));
    QVERIFY(page.saveFile(path));

    SetupPage other(launchOptions(), presetsDir());
    QVERIFY(other.loadFile(path));
    QCOMPARE(other.draft().values(), page.draft().values());
    QCOMPARE(qobject_cast<QComboBox*>(other.editorFor(QStringLiteral("parallel.algorithm")))
                 ->currentText(),
             QStringLiteral("mpi"));
    QVERIFY(other.draft().valid());
  }

  // [[faults]] have no form field: a loaded file's faults still reach the launched job and
  // a saved file, and a form change that makes one invalid is an issue.
  void faultsOfAFileAreKeptThroughTheForm() {
    SetupPage page(launchOptions(), presetsDir());
    QVERIFY(page.loadFile(presetsDir() + QStringLiteral("/lessons/failure.toml")));
    QVERIFY(page.draft().hasFaults());
    const auto job = page.draft().job();
    QVERIFY(job);
    QCOMPARE(int(job->faults.size()), 1);
    QCOMPARE(job->faults[0].rank, 2);
    QCOMPARE(job->faults[0].at_step, int64_t(25));
    page.setValue(QStringLiteral("parallel.ranks"), QStringLiteral("2"));
    QVERIFY(!page.draft().valid());  // rank 2 of 2 ranks
    QVERIFY(!page.draft().issuesFor("faults[0].rank").empty() ||
            !page.draft().otherIssues().empty());
  }

  void unknownKeysOfAFileAreShownNotKept() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("typo.toml"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("[train]\nbatch_sise = 32\n");
    file.close();
    SetupPage page(launchOptions(), presetsDir());
    QVERIFY(page.loadFile(path));
    QCOMPARE(int(page.draft().fileIssues().size()), 1);
    QVERIFY(page.draft().valid());  // the form itself holds a valid job
    const auto* other = page.findChild<QLabel*>(QStringLiteral("otherIssues"));
    QVERIFY(other->text().contains(QStringLiteral("did you mean batch_size")));
  }
};

QTEST_MAIN(SetupPageTest)
#include "test_setup_page.moc"
