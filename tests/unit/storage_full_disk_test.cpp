// A store on a full disk (issue 33, item 6): opening it must not need to write, so every run
// can still be read exactly when a user needs to look; writes fail naming why; runs to mark
// lost wait for space. A real tmpfs, filled to the last byte; skipped where none can be mounted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/run_store.h"
#include "tests/unit/storage_test_support.h"

namespace ranklab {
namespace {

namespace fs = std::filesystem;
using storage_test::exampleRun;
using storage_test::exampleStep;

class FullDiskStore : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ranklab-full-disk-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    if (mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=4m") != 0) {
      const std::string why = std::strerror(errno);
      fs::remove(dir_);
      GTEST_SKIP() << "cannot mount a 4 MiB tmpfs to fill (" << why
                   << "): needs root and mount rights";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  std::string db() const { return (dir_ / "runs.db").string(); }

  // Writes zeros until the disk refuses one more byte.
  void fill() {
    const int fd = open((dir_ / "filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::vector<char> zeros(4096, 0);
    for (size_t size = zeros.size(); size > 0;) {
      if (::write(fd, zeros.data(), size) < 0) size /= 2;  // ENOSPC: try the remnant
    }
    close(fd);
    ASSERT_EQ(fs::space(dir_).available, 0u);
  }
  void makeRoom() { fs::remove(dir_ / "filler"); }

  // A launcher that stores a run of 50 steps a rank and dies without finishing or closing
  // it: the rows stay in the WAL file, the run `running`, its launcher gone.
  void storeAnOrphanRun() {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      RunStore store(db());
      const int64_t id = store.createRun(exampleRun("orphan"));
      RecordBatch batch;
      for (int rank = 0; rank < 2; ++rank)
        for (int64_t step = 1; step <= 50; ++step)
          batch.steps.push_back(exampleStep(id, rank, step));
      store.write(batch);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }

  fs::path dir_;
  bool mounted_ = false;
};

TEST_F(FullDiskStore, RowsStillInTheWalAreReadAndMarkingTheLostRunWaitsForSpace) {
  storeAnOrphanRun();
  ASSERT_GT(fs::file_size(db() + "-wal"), 0u) << "the rows should still be in the WAL";
  fill();
  {
    RunStore store(db());
    const std::string& why = store.readOnlyReason();
    EXPECT_NE(why.find(db()), std::string::npos) << why;
    EXPECT_NE(why.find("the disk is full"), std::string::npos) << why;
    EXPECT_NE(why.find("1 run(s) whose launcher is gone are shown lost"), std::string::npos) << why;
    const std::vector<RunRow> runs = store.listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, "lost") << "shown as what it is: nobody follows it";
    EXPECT_EQ(store.run(runs[0].id)->status, "lost");
    EXPECT_TRUE(store.events(runs[0].id).empty()) << "but not written: that needs room";
    EXPECT_EQ(store.steps(runs[0].id).size(), 100u);
    ASSERT_TRUE(store.summary(runs[0].id));
    try {
      store.createRun(exampleRun("new"));
      FAIL() << "a write on a full disk must fail";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("the disk is full"), std::string::npos) << e.what();
    }
  }
  makeRoom();
  RunStore store(db());
  EXPECT_EQ(store.readOnlyReason(), "");
  EXPECT_EQ(store.listRuns().at(0).status, "lost") << "marked once the disk had room";
  ASSERT_EQ(store.events(1).size(), 1u);
  EXPECT_EQ(store.events(1)[0].kind, "lost");
  EXPECT_EQ(store.steps(1).size(), 100u) << "nothing stored was lost";
}

TEST_F(FullDiskStore, ACleanlyClosedStoreIsReadByManyAtOnce) {
  {
    RunStore store(db());
    const int64_t id = store.createRun(exampleRun("finished"));
    RecordBatch batch;
    for (int64_t step = 1; step <= 20; ++step) batch.steps.push_back(exampleStep(id, 0, step));
    store.write(batch);
    store.finishRun(id, "done", 1.0, 0.5);
  }
  ASSERT_FALSE(fs::exists(db() + "-wal")) << "closing the last connection folds the WAL in";
  fill();
  RunStore first(db());
  RunStore second(db());  // a view reading one run on two threads opens two
  for (RunStore* store : {&first, &second}) {
    EXPECT_NE(store->readOnlyReason().find("the disk is full"), std::string::npos);
    EXPECT_EQ(store->readOnlyReason().find("lost"), std::string::npos) << "none to mark";
    ASSERT_EQ(store->listRuns().size(), 1u);
    EXPECT_EQ(store->run(1)->status, "done");
    EXPECT_EQ(store->steps(1).size(), 20u);
  }
}

}  // namespace
}  // namespace ranklab
