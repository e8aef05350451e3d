#include "storage/bounded_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <system_error>

namespace ranklab {

namespace {

// What a file that is not a regular one is, for the refusal.
const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (a named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

void requireRegular(const std::string& path, mode_t mode) {
  if (!S_ISREG(mode))
    throw FileReadError(path, std::string("is ") + kindOf(mode) + ", not a regular file");
}

}  // namespace

std::string errnoCause(int error) {
  std::string text = std::generic_category().message(error);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

std::string byteSize(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  int unit = 0;
  while (unit + 1 < 6 && bytes >> (10 * (unit + 2)) > 0) ++unit;
  const uint64_t scale = uint64_t{1} << (10 * (unit + 1));
  if (bytes % scale == 0) return std::to_string(bytes / scale) + " " + kUnits[unit];
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", static_cast<double>(bytes) / scale, kUnits[unit]);
  return text;
}

std::string overLimit(uint64_t bytes, ReadLimit limit) {
  return "is " + byteSize(bytes) + "; " + limit.what + " are limited to " + byteSize(limit.bytes);
}

BoundedFile::BoundedFile(std::string path, ReadLimit limit)
    : path_(std::move(path)), limit_(limit) {
  // Refused before opening where possible: opening a device can itself do something.
  struct stat status {};
  if (::stat(path_.c_str(), &status) == 0) requireRegular(path_, status.st_mode);
  // O_NONBLOCK: a FIFO put in the file's place since has no writer to wait for.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd_ < 0) throw FileReadError(path_, "cannot open: " + errnoCause(errno));
  if (::fstat(fd_, &status) != 0) {
    const int error = errno;
    ::close(fd_);
    throw FileReadError(path_, "cannot stat: " + errnoCause(error));
  }
  try {
    requireRegular(path_, status.st_mode);
    size_ = static_cast<uint64_t>(status.st_size);
    if (size_ > limit_.bytes) throw FileReadError(path_, overLimit(size_, limit_));
  } catch (...) {
    ::close(fd_);
    throw;
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

BoundedFile::~BoundedFile() {
  if (fd_ >= 0) ::close(fd_);
}

int BoundedFile::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

size_t BoundedFile::read(void* out, size_t size) {
  if (size == 0) return 0;
  // At the limit, one more byte read says whether the file has grown past it.
  const uint64_t room = limit_.bytes - done_;
  char probe;
  void* into = room == 0 ? &probe : out;
  const size_t want = room == 0 ? 1 : static_cast<size_t>(std::min<uint64_t>(size, room));
  ssize_t got;
  do {
    got = ::read(fd_, into, want);
  } while (got < 0 && errno == EINTR);
  if (got < 0) throw FileReadError(path_, "cannot read: " + errnoCause(errno));
  if (room == 0 && got > 0)
    throw FileReadError(path_, "grew past " + byteSize(limit_.bytes) + " while read; " +
                                   limit_.what + " are limited to " + byteSize(limit_.bytes));
  done_ += static_cast<uint64_t>(got);
  return static_cast<size_t>(got);
}

BoundedStream::BoundedStream(std::string path, ReadLimit limit) : file_(std::move(path), limit) {
  stream_ =
      ::fopencookie(this, "rb", cookie_io_functions_t{&readCookie, nullptr, nullptr, nullptr});
  if (stream_ == nullptr) throw FileReadError(file_.path(), "cannot read: " + errnoCause(errno));
}

BoundedStream::~BoundedStream() {
  if (stream_ != nullptr) std::fclose(stream_);
}

ssize_t BoundedStream::readCookie(void* cookie, char* out, size_t size) {
  auto* self = static_cast<BoundedStream*>(cookie);
  try {
    return static_cast<ssize_t>(self->file_.read(out, size));
  } catch (const FileReadError& e) {  // stdio is C: the error waits for throwIfFailed()
    self->error_ = e;
    errno = EIO;
    return -1;
  }
}

void BoundedStream::throwIfFailed() const {
  if (error_) throw *error_;
}

namespace {

// The whole file into a std::string or a byte vector, reserved once from its size.
template <class Bytes>
Bytes readWhole(const std::string& path, ReadLimit limit) {
  BoundedFile file(path, limit);
  Bytes bytes;
  bytes.reserve(static_cast<size_t>(file.size()));
  char buffer[1 << 16];
  while (const size_t got = file.read(buffer, sizeof buffer))
    bytes.insert(bytes.end(), buffer, buffer + got);
  return bytes;
}

}  // namespace

std::string readBoundedFile(const std::string& path, ReadLimit limit) {
  return readWhole<std::string>(path, limit);
}

std::vector<uint8_t> readBoundedBytes(const std::string& path, ReadLimit limit) {
  return readWhole<std::vector<uint8_t>>(path, limit);
}

}  // namespace ranklab
