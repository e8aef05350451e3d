// Exports never replace what is not a regular file (issue 33, item 2): "-", FIFOs and
// devices are written into, symbolic links and folders refused, regular files replaced
// whole through a part file no one else can plant. Real FIFOs and device nodes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>

#include "storage/atomic_file.h"

namespace ranklab {
namespace {

namespace fs = std::filesystem;

class ExportTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ranklab-export-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static int64_t writeHello(const std::string& path) {
    return writeFileWhole(path, "the test export", [](std::ostream& out) {
      out << "hello\n";
      return int64_t{6};
    });
  }
  static std::string refusalOf(const std::string& path) {
    try {
      writeHello(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
  static std::string contentOf(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // Names in the folder other than the given ones (a part file left behind).
  std::string leftovers(std::initializer_list<std::string> expected) const {
    std::string extra;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (std::find(expected.begin(), expected.end(), name) == expected.end()) extra += name + " ";
    }
    return extra;
  }

  fs::path dir_;
};

TEST_F(ExportTargetTest, AFifoIsWrittenIntoAndStaysAFifo) {
  const std::string fifo = (dir_ / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return contentOf(fifo); });
  EXPECT_EQ(writeHello(fifo), 6);
  EXPECT_EQ(reader.get(), "hello\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(leftovers({"pipe"}), "");
}

TEST_F(ExportTargetTest, ADeviceIsWrittenIntoAndNeverReplaced) {
  EXPECT_EQ(writeHello("/dev/null"), 6);
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  // /dev/full: every write fails; the error names the path, and the device stays.
  const std::string said = refusalOf("/dev/full");
  EXPECT_NE(said.find("/dev/full: cannot write the test export"), std::string::npos) << said;
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
}

TEST_F(ExportTargetTest, ASymbolicLinkOrAFolderIsRefusedAndLeftAlone) {
  const fs::path victim = dir_ / "victim.txt", link = dir_ / "export.csv";
  std::ofstream(victim) << "keep me\n";
  fs::create_symlink(victim, link);
  const std::string said = refusalOf(link.string());
  EXPECT_NE(said.find("it is a symbolic link"), std::string::npos) << said;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(contentOf(victim), "keep me\n");
  const std::string folder = refusalOf(dir_.string());
  EXPECT_NE(folder.find("it is a folder"), std::string::npos) << folder;
  EXPECT_EQ(leftovers({"victim.txt", "export.csv"}), "");
}

TEST_F(ExportTargetTest, ARegularFileIsReplacedWholeAndAPlantedPartLinkIsNotFollowed) {
  const fs::path target = dir_ / "steps.csv", victim = dir_ / "victim.txt";
  std::ofstream(target) << "old\n";
  std::ofstream(victim) << "keep me\n";
  // The old fixed part-file name, planted as a link by another account.
  fs::create_symlink(victim, dir_ / "steps.csv.part");
  const mode_t saved = umask(027);
  EXPECT_EQ(writeHello(target.string()), 6);
  umask(saved);
  EXPECT_EQ(contentOf(target), "hello\n");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all, fs::perms(0640))
      << "0666 less the umask, as a plain create";
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(target)));
  EXPECT_EQ(contentOf(victim), "keep me\n");
  EXPECT_EQ(leftovers({"steps.csv", "victim.txt", "steps.csv.part"}), "");
}

TEST_F(ExportTargetTest, AFailedWriteLeavesTheOldFileAndNoPartFile) {
  const fs::path target = dir_ / "steps.csv";
  std::ofstream(target) << "old\n";
  EXPECT_THROW(writeFileWhole(target.string(), "the test export",
                              [](std::ostream&) -> int64_t { throw std::runtime_error("boom"); }),
               std::runtime_error);
  EXPECT_EQ(contentOf(target), "old\n");
  EXPECT_EQ(leftovers({"steps.csv"}), "");
}

}  // namespace
}  // namespace ranklab
