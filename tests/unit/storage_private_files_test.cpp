// Files and folders made beside a store (issue 57) on real files, with links and files
// planted by a second real account (nobody) in a folder it can write, as /tmp is: nothing is
// written or re-permissioned through a link, another account's folder or store is refused
// naming it and why, and what holds runs is 0600.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "storage/private_files.h"
#include "storage/run_store.h"
#include "storage/store_error.h"
#include "storage/store_files.h"
#include "tests/support/second_account.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

namespace fs = std::filesystem;
using testing::contentsOf;
using testing::modeOf;

class PrivateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::canBecomeNobody()) GTEST_SKIP() << "needs root to act as nobody (uid 65534)";
    shared_ = testing::sharedFolderIn(folder_.path());
    victim_ = testing::victimFile(folder_.path());
  }
  // The error `act` throws (of any std::exception type), "" when it throws none.
  template <class Act>
  static std::string errorOf(Act act) {
    try {
      act();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  void expectVictimUntouched() const {
    EXPECT_EQ(contentsOf(victim_), "root's own\n");
    EXPECT_EQ(modeOf(victim_), 0600u);
  }

  testing::TempFolder folder_;
  fs::path shared_, victim_;
};

TEST_F(PrivateFiles, ANewFileIs0600AndALinkPlantedAtItsNameIsNeverWrittenThrough) {
  writeNewPrivateFile((shared_ / "mine").string(), "weights");
  EXPECT_EQ(modeOf(shared_ / "mine"), 0600u);
  EXPECT_EQ(contentsOf(shared_ / "mine"), "weights");
  ASSERT_TRUE(testing::plantLinkAsNobody(victim_, shared_ / "planted"));
  const std::string said =
      errorOf([&] { writeNewPrivateFile((shared_ / "planted").string(), "weights"); });
  EXPECT_NE(said.find((shared_ / "planted").string() +
                      ": cannot write: it is a symbolic link; ranklab will not write through it"),
            std::string::npos)
      << said;
  expectVictimUntouched();
}

TEST_F(PrivateFiles, ALogIsOnlyThisAccountsOwnRegularFileNeverALink) {
  const int fd = openPrivateLog((shared_ / "run-1.log").string());
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(modeOf(shared_ / "run-1.log"), 0600u);
  ASSERT_TRUE(testing::plantLinkAsNobody(victim_, shared_ / "run-2.log"));
  std::string said = errorOf([&] { openPrivateLog((shared_ / "run-2.log").string()); });
  EXPECT_NE(said.find("run-2.log: cannot write: it is a symbolic link"), std::string::npos) << said;
  ASSERT_TRUE(testing::asNobody([&] { return std::ofstream(shared_ / "run-3.log").good(); }));
  said = errorOf([&] { openPrivateLog((shared_ / "run-3.log").string()); });
  EXPECT_NE(said.find("run-3.log: cannot write: it is owned by uid 65534 (nobody), not by this "
                      "account (root)"),
            std::string::npos)
      << said;
  expectVictimUntouched();
}

TEST_F(PrivateFiles, AFolderIsMade0700OrReusedOnlyWhenItIsThisAccountsOwn) {
  ensurePrivateFolder((shared_ / "new").string(), "the test folder");
  EXPECT_EQ(modeOf(shared_ / "new"), 0700u);
  fs::create_directory(shared_ / "old");
  chmod((shared_ / "old").c_str(), 0755);  // made by an older ranklab: tightened
  ensurePrivateFolder((shared_ / "old").string(), "the test folder");
  EXPECT_EQ(modeOf(shared_ / "old"), 0700u);
}

TEST_F(PrivateFiles, ALinkedFolderIsRefusedAndItsTargetNotRepermissioned) {
  const fs::path target = folder_.path() / "etc";
  fs::create_directory(target);
  chmod(target.c_str(), 0755);
  ASSERT_TRUE(testing::plantLinkAsNobody(target, shared_ / "slurm"));
  const std::string said = errorOf(
      [&] { ensurePrivateFolder((shared_ / "slurm").string(), "the Slurm output folder"); });
  EXPECT_NE(said.find((shared_ / "slurm").string() +
                      ": cannot use it as the Slurm output folder: is a symbolic link; ranklab "
                      "will not write through it"),
            std::string::npos)
      << said;
  EXPECT_EQ(modeOf(target), 0755u);
}

TEST_F(PrivateFiles, AnotherAccountsFolderOrOneOthersCanWriteIsRefusedNamingIt) {
  ASSERT_TRUE(testing::asNobody([&] { return mkdir((shared_ / "theirs").c_str(), 0700) == 0; }));
  std::string said =
      errorOf([&] { ensurePrivateFolder((shared_ / "theirs").string(), "the launch folder"); });
  EXPECT_NE(said.find("theirs: cannot use it as the launch folder: owned by uid 65534 (nobody), "
                      "not by this account (root)"),
            std::string::npos)
      << said;
  fs::create_directory(shared_ / "open");
  chmod((shared_ / "open").c_str(), 0777);
  said = errorOf([&] { ensurePrivateFolder((shared_ / "open").string(), "the launch folder"); });
  EXPECT_NE(said.find("open: cannot use it as the launch folder: writable by others (mode 0777)"),
            std::string::npos)
      << said;
  EXPECT_EQ(modeOf(shared_ / "open"), 0777u) << "refused, not changed";
}

TEST_F(PrivateFiles, ANewStoreAndItsWalAndShmAre0600) {
  const fs::path db = shared_ / "runs.db";
  RunStore store(db.string());
  NewRun run;
  run.name = "x";
  store.createRun(run);
  EXPECT_EQ(modeOf(db), 0600u);
  ASSERT_TRUE(fs::exists(db.string() + "-wal"));
  EXPECT_EQ(modeOf(db.string() + "-wal"), 0600u);
  EXPECT_EQ(modeOf(db.string() + "-shm"), 0600u);
}

TEST_F(PrivateFiles, ALinkPlantedAtTheStoreOrItsWalIsRefusedNeverFollowed) {
  const fs::path db = shared_ / "runs.db";
  ASSERT_TRUE(testing::plantLinkAsNobody(victim_, db.string() + "-wal"));
  std::string said = errorOf([&] { RunStore store(db.string()); });
  EXPECT_NE(said.find(db.string() + "-wal: is a symbolic link; ranklab will not let SQLite write "
                                    "through it"),
            std::string::npos)
      << said;
  const fs::path other = shared_ / "other.db";
  ASSERT_TRUE(testing::plantLinkAsNobody(victim_, other));
  said = errorOf([&] { RunStore store(other.string()); });
  EXPECT_NE(said.find(other.string() + ": is a symbolic link owned by uid 65534 (nobody)"),
            std::string::npos)
      << said;
  expectVictimUntouched();
}

TEST_F(PrivateFiles, AStoreAnotherAccountOwnsIsRefusedUnlessTheUserSaysSo) {
  const fs::path db = shared_ / "runs.db";
  { RunStore made(db.string()); }
  ASSERT_EQ(chown(db.c_str(), testing::kNobody, testing::kNobody), 0);
  const std::string said = errorOf([&] { requireOwnStore(db.string(), false); });
  EXPECT_EQ(said, db.string() +
                      ": owned by uid 65534 (nobody), not by this account (root); pass "
                      "--allow-foreign-store to open it anyway");
  EXPECT_EQ(errorOf([&] { requireOwnStore(db.string(), true); }), "");
  EXPECT_EQ(errorOf([&] { requireOwnStore((shared_ / "absent.db").string(), false); }), "");
}

}  // namespace
}  // namespace ranklab
