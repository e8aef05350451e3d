// Reading a file a user named (issue 57, items 5 and 6): a device, a FIFO without a writer,
// a folder, /proc/self/mem, a file over its limit or one that grows past it while read, one
// this account may not read: each refused within a second, naming the file and the cause.
#include "storage/bounded_read.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "tests/support/second_account.h"
#include "tests/support/temp_folder.h"

namespace ranklab {
namespace {

using testing::TempFolder;

constexpr ReadLimit kSmall{1 << 10, "test files"};

// The refusal of reading `path`, and that it came within a second.
std::string refusal(const std::string& path, ReadLimit limit = kSmall) {
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    readBoundedFile(path, limit);
  } catch (const FileReadError& e) {
    message = e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << path;
  return message;
}

TEST(BoundedRead, ReadsARegularFileWhole) {
  TempFolder folder;
  std::ofstream(folder.file("a.txt")) << "hello";
  EXPECT_EQ(readBoundedFile(folder.file("a.txt"), kSmall), "hello");
  EXPECT_EQ(readBoundedBytes(folder.file("a.txt"), kSmall).size(), 5u);
}

TEST(BoundedRead, DevicesFifosAndFoldersAreRefusedWithoutBlocking) {
  TempFolder folder;
  const std::string fifo = folder.file("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refusal("/dev/zero"), "/dev/zero: is a character device, not a regular file");
  EXPECT_EQ(refusal(fifo), fifo + ": is a FIFO (a named pipe), not a regular file");
  EXPECT_EQ(refusal(folder.path().string()),
            folder.path().string() + ": is a folder, not a regular file");
  // A link to a device is the device.
  std::filesystem::create_symlink("/dev/zero", folder.file("zero.txt"));
  EXPECT_EQ(refusal(folder.file("zero.txt")),
            folder.file("zero.txt") + ": is a character device, not a regular file");
}

TEST(BoundedRead, ProcSelfMemSaysItCannotBeRead) {
  EXPECT_EQ(refusal("/proc/self/mem"), "/proc/self/mem: cannot read: input/output error");
}

TEST(BoundedRead, AFileOverItsLimitIsRefusedNamingTheLimit) {
  TempFolder folder;
  const std::string big = folder.file("big");
  std::ofstream(big) << "x";
  std::filesystem::resize_file(big, uint64_t{7} << 30);  // sparse: nothing is written
  EXPECT_EQ(refusal(big), big + ": is 7 GiB; test files are limited to 1 KiB");
  std::filesystem::resize_file(big, 1536);
  EXPECT_EQ(refusal(big), big + ": is 1.5 KiB; test files are limited to 1 KiB");
}

TEST(BoundedRead, AFileThatGrowsWhileReadStopsAtItsLimit) {
  TempFolder folder;
  const std::string growing = folder.file("growing");
  std::ofstream(growing) << std::string(100, 'a');
  BoundedFile file(growing, kSmall);
  std::ofstream(growing, std::ios::app) << std::string(2000, 'b');  // after the size was seen
  char buffer[4096];
  size_t total = 0;
  try {
    while (const size_t got = file.read(buffer, sizeof buffer)) total += got;
    ADD_FAILURE() << "read " << total << " bytes past the limit";
  } catch (const FileReadError& e) {
    EXPECT_EQ(std::string(e.what()),
              growing + ": grew past 1 KiB while read; test files are limited to 1 KiB");
  }
  EXPECT_EQ(total, 1024u);
}

TEST(BoundedRead, AStreamSaysWhyItEndedEarly) {
  TempFolder folder;
  const std::string growing = folder.file("growing");
  std::ofstream(growing) << std::string(100, 'a');
  const BoundedStream stream(growing, kSmall);
  std::ofstream(growing, std::ios::app) << std::string(2000, 'b');
  char buffer[4096];
  EXPECT_EQ(std::fread(buffer, 1, sizeof buffer, stream.get()), 1024u);
  EXPECT_TRUE(std::ferror(stream.get()));
  EXPECT_THROW(stream.throwIfFailed(), FileReadError);
}

TEST(BoundedRead, AFileThisAccountMayNotReadSaysPermissionDenied) {
  if (!testing::canBecomeNobody()) GTEST_SKIP() << "needs root to become nobody (uid 65534)";
  TempFolder folder;
  std::filesystem::permissions(folder.path(), std::filesystem::perms(0755));
  const std::string secret = folder.file("secret");
  std::ofstream(secret) << "root's";
  ASSERT_EQ(chmod(secret.c_str(), 0), 0);
  EXPECT_TRUE(testing::asNobody(
      [&] { return refusal(secret) == secret + ": cannot open: permission denied"; }));
}

TEST(BoundedRead, SizesAndCausesReadAsPeopleSayThem) {
  EXPECT_EQ(byteSize(1), "1 byte");
  EXPECT_EQ(byteSize(300), "300 bytes");
  EXPECT_EQ(byteSize(16 << 20), "16 MiB");
  EXPECT_EQ(byteSize(uint64_t{7'516'192'768}), "7 GiB");
  EXPECT_EQ(byteSize(uint64_t{7'000'000'000}), "6.5 GiB");
  EXPECT_EQ(overLimit(uint64_t{7} << 30, {16 << 20, "job files"}),
            "is 7 GiB; job files are limited to 16 MiB");
  EXPECT_EQ(errnoCause(EACCES), "permission denied");
  EXPECT_EQ(errnoCause(ENOENT), "no such file or directory");
}

}  // namespace
}  // namespace ranklab
