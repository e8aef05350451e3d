// Reading a file a user named (a job, a data set, a checkpoint, a trace) as a hostile
// neighbour or a slip of the keyboard could have made it: never blocking (a FIFO without a
// writer), never unbounded (/dev/zero, a file that keeps growing while read), and every
// refusal naming the file and the cause ("permission denied", "is a FIFO ...", "is 7.0 GiB;
// job files are limited to 16 MiB").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ranklab {

// What a kind of file may hold, named in the refusal: {16 << 20, "job files"} reads
// "job files are limited to 16 MiB".
struct ReadLimit {
  uint64_t bytes;
  const char* what;
};

class FileReadError : public std::runtime_error {
 public:
  FileReadError(const std::string& path, const std::string& cause)
      : std::runtime_error(path + ": " + cause), cause_(cause) {}
  // Without the path: "permission denied", "is a character device, not a regular file".
  const std::string& cause() const { return cause_; }

 private:
  std::string cause_;
};

// A regular file opened without blocking and read no further than its limit.
class BoundedFile {
 public:
  // Throws FileReadError: cannot open (with errno's text), not a regular file (which kind it
  // is), or larger than the limit.
  BoundedFile(std::string path, ReadLimit limit);
  ~BoundedFile();
  BoundedFile(const BoundedFile&) = delete;
  BoundedFile& operator=(const BoundedFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // as the file was when opened
  // Up to `size` bytes into `out`; 0 at the end. Throws FileReadError when a read fails or
  // the file has grown past the limit since it was opened.
  size_t read(void* out, size_t size);
  // The descriptor, handed over to a reader that takes one (gzdopen, fdopen); the caller
  // bounds what it reads from then on.
  int release();

 private:
  std::string path_;
  ReadLimit limit_;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t done_ = 0;
};

// A stdio stream over a BoundedFile, for a reader that takes a FILE*: the limit holds while
// it reads. A failed read, or one past the limit, ends the stream with an error (ferror);
// throwIfFailed() then throws it as the FileReadError it was.
class BoundedStream {
 public:
  BoundedStream(std::string path, ReadLimit limit);  // throws as BoundedFile does
  ~BoundedStream();
  BoundedStream(const BoundedStream&) = delete;
  BoundedStream& operator=(const BoundedStream&) = delete;

  std::FILE* get() const { return stream_; }
  void throwIfFailed() const;

 private:
  static ssize_t readCookie(void* cookie, char* out, size_t size);

  BoundedFile file_;
  std::optional<FileReadError> error_;
  std::FILE* stream_ = nullptr;
};

// The whole file, at most limit.bytes; throws FileReadError.
std::string readBoundedFile(const std::string& path, ReadLimit limit);
std::vector<uint8_t> readBoundedBytes(const std::string& path, ReadLimit limit);

// The refusal of `bytes` over `limit`: "is 7.0 GiB; job files are limited to 16 MiB".
std::string overLimit(uint64_t bytes, ReadLimit limit);
// "16 MiB", "7.0 GiB", "300 bytes".
std::string byteSize(uint64_t bytes);
// errno's text as a message goes on: EACCES is "permission denied".
std::string errnoCause(int error);

}  // namespace ranklab
