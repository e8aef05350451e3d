// The launcher's private folders (issue 33, item 1) on real files: no other account can
// predict, plant, read or rewrite the job the ranks read, and a killed launcher's folders are
// removed by the next one, never anyone else's.
#include "launch/private_dir.h"

#include "launch/slurm_queue.h"
#include "tests/support/second_account.h"
#include "tests/support/temp_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace ranklab {
namespace {

namespace fs = std::filesystem;

class PrivateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    parent_ = fs::temp_directory_path() / ("ranklab-private-test-" + std::to_string(getpid()));
    fs::remove_all(parent_);
    fs::create_directories(parent_);
  }
  void TearDown() override { fs::remove_all(parent_); }

  static mode_t modeOf(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(lstat(path.c_str(), &info), 0) << path;
    return info.st_mode & 07777;
  }
  // A pid that no process has now: a child that has exited and been reaped.
  static pid_t exitedPid() {
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
    return child;
  }
  fs::path folder(pid_t pid, const char* tag) const {
    const fs::path path = parent_ / ("ranklab-" + std::to_string(pid) + "-" + tag);
    fs::create_directories(path);
    std::ofstream(path / "job-1.toml") << "left behind\n";
    return path;
  }

  fs::path parent_;
};

TEST_F(PrivateDirTest, OnlyThisAccountCanEnterItAndItsFilesAreNew) {
  std::string path, file;
  {
    const PrivateDir dir(parent_.string());
    path = dir.path();
    EXPECT_EQ(fs::path(path).parent_path(), parent_);
    EXPECT_EQ(
        fs::path(path).filename().string().rfind("ranklab-" + std::to_string(getpid()) + "-", 0),
        0u)
        << path;
    EXPECT_EQ(modeOf(path), 0700u);
    file = dir.write("job-1.toml", "name = \"x\"\n");
    EXPECT_EQ(modeOf(file), 0600u);
    std::ifstream in(file);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "name = \"x\"\n");
    // A name already there, a link above all, is never written through.
    const fs::path victim = parent_ / "victim.txt";
    std::ofstream(victim) << "keep me\n";
    fs::create_symlink(victim, fs::path(path) / "job-2.toml");
    try {
      dir.write("job-2.toml", "planted");
      ADD_FAILURE() << "wrote through a link";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("job-2.toml: cannot write: "), std::string::npos)
          << e.what();
    }
    std::ifstream kept(victim);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "keep me\n");
  }
  EXPECT_FALSE(fs::exists(path)) << "removed with everything in it";
}

TEST_F(PrivateDirTest, TheNextLauncherRemovesOnlyExitedLaunchersFolders) {
  const fs::path dead = folder(exitedPid(), "aB3dE9");
  const fs::path mine = folder(getpid(), "Zz0Zz0");
  const fs::path init = folder(1, "Qq1Qq1");  // a process that always runs
  const fs::path other_name = parent_ / ("ranklab-" + std::to_string(exitedPid()) + "-toolongname");
  fs::create_directories(other_name);
  // A link named like a dead launcher's folder: neither followed nor removed.
  const fs::path target = parent_ / "target";
  fs::create_directories(target);
  std::ofstream(target / "keep.txt") << "keep\n";
  const fs::path link = parent_ / ("ranklab-" + std::to_string(exitedPid()) + "-LnK123");
  fs::create_directory_symlink(target, link);
  fs::path foreign;
  if (geteuid() == 0) {  // another account's folder, as root can make one
    foreign = folder(exitedPid(), "Fo0Fo0");
    ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);
  }
  EXPECT_EQ(removeStalePrivateDirs(parent_.string()), 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(mine));
  EXPECT_TRUE(fs::exists(init));
  EXPECT_TRUE(fs::exists(other_name));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::exists(target / "keep.txt"));
  if (!foreign.empty()) {
    EXPECT_TRUE(fs::exists(foreign)) << "another account's folder";
  }
}

// The store's slurm/ folder (issue 57, item 2) in a folder another account can write: a link
// it planted there is refused before any permission change, and so is its own folder.
TEST(SlurmOutputFolder, ALinkOrAnotherAccountsFolderIsRefusedAndNothingRepermissioned) {
  if (!testing::canBecomeNobody()) GTEST_SKIP() << "needs root to act as nobody (uid 65534)";
  testing::TempFolder folder;
  const fs::path shared = testing::sharedFolderIn(folder.path());
  const fs::path etc = folder.path() / "etc";
  fs::create_directory(etc);
  chmod(etc.c_str(), 0755);
  ASSERT_TRUE(testing::plantLinkAsNobody(etc, shared / "slurm"));
  const std::string db = (shared / "runs.db").string();
  auto refusal = [&] {
    try {
      slurmOutputDir(db);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(refusal().find((shared / "slurm").string() +
                           ": cannot use it as the Slurm output folder: is a symbolic link; "
                           "ranklab will not write through it"),
            std::string::npos)
      << refusal();
  EXPECT_EQ(testing::modeOf(etc), 0755u) << "the link's target was re-permissioned";
  ASSERT_TRUE(testing::asNobody([&] { return unlink((shared / "slurm").c_str()) == 0; }));
  ASSERT_TRUE(testing::asNobody([&] { return mkdir((shared / "slurm").c_str(), 0700) == 0; }));
  EXPECT_NE(refusal().find("owned by uid 65534 (nobody), not by this account (root)"),
            std::string::npos)
      << refusal();
  ASSERT_TRUE(testing::asNobody([&] { return rmdir((shared / "slurm").c_str()) == 0; }));
  EXPECT_EQ(slurmOutputDir(db), (shared / "slurm").string());
  EXPECT_EQ(testing::modeOf(shared / "slurm"), 0700u);
}

}  // namespace
}  // namespace ranklab
