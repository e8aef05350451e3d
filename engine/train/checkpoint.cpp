#include "engine/train/checkpoint.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <zlib.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "storage/bounded_read.h"
#include "storage/private_files.h"

namespace ranklab {

namespace {

static_assert(std::endian::native == std::endian::little, "checkpoints are little-endian");

constexpr char kMagic[8] = {'R', 'L', 'A', 'B', 'C', 'K', 'P', 'T'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8 + 4;
enum class RecordType : uint8_t { kInt64 = 1, kFloats = 2, kString = 3 };

// ---- writing ----

class RecordWriter {
 public:
  void integer(const std::string& name, int64_t value) {
    begin(name, RecordType::kInt64, 1);
    raw(&value, sizeof value);
  }
  void floats(const std::string& name, const std::vector<float>& values) {
    begin(name, RecordType::kFloats, values.size());
    raw(values.data(), values.size() * sizeof(float));
  }
  void text(const std::string& name, const std::string& value) {
    begin(name, RecordType::kString, value.size());
    raw(value.data(), value.size());
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void begin(const std::string& name, RecordType type, uint64_t count) {
    const auto length = static_cast<uint16_t>(name.size());
    raw(&length, sizeof length);
    raw(name.data(), name.size());
    raw(&type, 1);
    raw(&count, sizeof count);
  }
  void raw(const void* data, size_t size) { bytes_.append(static_cast<const char*>(data), size); }

  std::string bytes_;
};

uint32_t crc32Of(const char* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

[[noreturn]] void failWith(const std::string& path, const std::string& operation) {
  throw CheckpointError(path + ": cannot " + operation + ": " + std::strerror(errno));
}

// The checkpoint's bytes in a new file beside it, PATH.tmp-PID (0600, created exclusively,
// never through a link), fsynced. A leftover of this account's under that name (a writer
// that had this pid) is replaced; anything else there (a link, another account's file) is
// refused, naming it.
std::string writeTemporary(const std::string& path, const std::string& data) {
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
  if (notOwnFileReason(temporary).empty()) ::unlink(temporary.c_str());
  try {
    writeNewPrivateFile(temporary, data, /*durable=*/true);
  } catch (const PrivateFileError& e) {
    throw CheckpointError(std::string(e.what()) + " (the checkpoint " + path + " is unchanged)");
  }
  return temporary;
}

// Another account that can replace files in the folder could swap the checkpoint for its own.
void requireOwnFolder(const std::filesystem::path& folder) {
  const std::string why = sharedFolderReason(folder.string());
  if (!why.empty())
    throw CheckpointError(folder.string() + ": " + why +
                          "; ranklab will not write checkpoints where another account can "
                          "replace them (choose a folder of this account's)");
}

void fsyncFolder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) failWith(folder, "open the checkpoint's folder to fsync it");
  const int result = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (result != 0) failWith(folder, "fsync the checkpoint's folder");
}

// ---- reading ----

struct Record {
  RecordType type;
  uint64_t count;
  const char* data;
};

uint64_t elementBytes(RecordType type) {
  switch (type) {
    case RecordType::kInt64:
      return 8;
    case RecordType::kFloats:
      return 4;
    case RecordType::kString:
      return 1;
  }
  return 0;
}

class RecordReader {
 public:
  RecordReader(std::string path, const std::string& payload) : path_(std::move(path)) {
    size_t at = 0;
    auto take = [&](void* out, size_t size, const char* what) {
      if (payload.size() - at < size) {
        throw CheckpointError(path_ + ": corrupted: " + what + " at payload byte " +
                              std::to_string(at) + " runs past the end");
      }
      std::memcpy(out, payload.data() + at, size);
      at += size;
    };
    while (at < payload.size()) {
      uint16_t length = 0;
      take(&length, sizeof length, "a record name's length");
      std::string name(length, '\0');
      take(name.data(), length, "a record name");
      Record record{};
      take(&record.type, 1, "a record type");
      take(&record.count, sizeof record.count, "a record's element count");
      const uint64_t element = elementBytes(record.type);
      if (element == 0) {
        throw CheckpointError(path_ + ": corrupted: record \"" + name + "\" has unknown type " +
                              std::to_string(static_cast<int>(record.type)));
      }
      if (record.count > (payload.size() - at) / element) {
        throw CheckpointError(path_ + ": corrupted: record \"" + name + "\" promises " +
                              std::to_string(record.count) + " elements, more than the file holds");
      }
      record.data = payload.data() + at;
      at += record.count * element;
      records_[name] = record;
    }
  }

  int64_t integer(const std::string& name) const {
    const Record& r = find(name, RecordType::kInt64);
    int64_t value;
    std::memcpy(&value, r.data, sizeof value);
    return value;
  }
  std::vector<float> floats(const std::string& name) const {
    const Record& r = find(name, RecordType::kFloats);
    std::vector<float> values(r.count);
    std::memcpy(values.data(), r.data, r.count * sizeof(float));
    return values;
  }
  std::string text(const std::string& name) const {
    const Record& r = find(name, RecordType::kString);
    return std::string(r.data, r.count);
  }
  bool has(const std::string& name) const { return records_.count(name) > 0; }
  // Names of the records that start with `prefix`, without it.
  std::vector<std::string> namesUnder(const std::string& prefix) const {
    std::vector<std::string> names;
    for (const auto& [name, record] : records_) {
      if (name.rfind(prefix, 0) == 0) names.push_back(name.substr(prefix.size()));
    }
    return names;
  }

 private:
  const Record& find(const std::string& name, RecordType type) const {
    const auto it = records_.find(name);
    if (it == records_.end()) {
      throw CheckpointError(path_ + ": incomplete: no \"" + name + "\" record");
    }
    const bool count_ok = type != RecordType::kInt64 || it->second.count == 1;
    if (it->second.type != type || !count_ok) {
      throw CheckpointError(path_ + ": corrupted: record \"" + name + "\" has the wrong type");
    }
    return it->second;
  }

  std::string path_;
  std::map<std::string, Record> records_;
};

// codec.ranks, then per rank codec.R.tensor.KEY (floats) and codec.R.counter.KEY (int64).
void writeCodecStates(RecordWriter& records, const Checkpoint& c) {
  records.text("compression", c.compression);
  records.integer("codec.ranks", static_cast<int64_t>(c.codec_states.size()));
  for (size_t r = 0; r < c.codec_states.size(); ++r) {
    const std::string prefix = "codec." + std::to_string(r) + ".";
    for (const auto& [key, values] : c.codec_states[r].tensors)
      records.floats(prefix + "tensor." + key, values);
    for (const auto& [key, value] : c.codec_states[r].counters)
      records.integer(prefix + "counter." + key, static_cast<int64_t>(value));
  }
}

void readCodecStates(const RecordReader& records, Checkpoint& c) {
  c.compression = records.text("compression");
  const int64_t ranks = records.integer("codec.ranks");
  for (int64_t r = 0; r < ranks; ++r) {
    const std::string prefix = "codec." + std::to_string(r) + ".";
    CodecState state;
    for (const auto& key : records.namesUnder(prefix + "tensor."))
      state.tensors[key] = records.floats(prefix + "tensor." + key);
    for (const auto& key : records.namesUnder(prefix + "counter."))
      state.counters[key] = static_cast<uint64_t>(records.integer(prefix + "counter." + key));
    c.codec_states.push_back(std::move(state));
  }
}

template <class T>
T readLittleEndian(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace

void writeCheckpoint(const std::string& path, const Checkpoint& c) {
  RecordWriter records;
  records.text("model", c.model);
  records.floats("params", c.params);
  records.text("optimizer", c.optimizer);
  records.integer("optimizer.steps", c.optimizer_state.steps);
  for (const auto& [name, values] : c.optimizer_state.tensors) {
    records.floats("optimizer.state." + name, values);
  }
  records.integer("step", c.step);
  records.integer("epoch", c.epoch);
  records.integer("step_in_epoch", c.step_in_epoch);
  records.integer("training_passes", static_cast<int64_t>(c.training_passes));
  records.integer("seed", static_cast<int64_t>(c.seed));
  records.integer("world", c.world);
  records.integer("replicas", c.replicas);
  records.integer("batch_size", c.batch_size);
  if (c.has_loss_scale) {
    records.floats("amp.loss_scale", std::vector<float>{c.loss_scale});
    records.integer("amp.clean_steps", c.loss_scale_clean_steps);
    records.integer("amp.skipped_steps", c.loss_scale_skipped_steps);
  }
  writeCodecStates(records, c);

  const std::string& payload = records.bytes();
  std::string file(kMagic, sizeof kMagic);
  const uint32_t version = kCheckpointVersion, reserved = 0,
                 crc = crc32Of(payload.data(), payload.size());
  const uint64_t size = payload.size();
  file.append(reinterpret_cast<const char*>(&version), 4);
  file.append(reinterpret_cast<const char*>(&reserved), 4);
  file.append(reinterpret_cast<const char*>(&size), 8);
  file.append(reinterpret_cast<const char*>(&crc), 4);
  file += payload;

  const std::filesystem::path target(path);
  const auto folder =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  requireOwnFolder(folder);
  removeAbandonedTemporaries(path);
  const std::string temporary = writeTemporary(path, file);
  // rename replaces whatever is at `path` (a link too) by the new file: never follows it.
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
    failWith(path, "rename " + temporary + " over it");
  }
  fsyncFolder(folder.string());
}

// PATH.tmp-PID files of writers killed mid-write (their pid no longer runs): each is as large
// as a checkpoint, and a run restarted after every failure would pile them up.
void removeAbandonedTemporaries(const std::string& path) {
  const std::filesystem::path target(path);
  const std::string prefix = target.filename().string() + ".tmp-";
  const auto folder =
      target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    // Only this account's own regular files (lstat): never a link, never another's file.
    if (!notOwnFileReason(entry.path().string()).empty()) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (::kill(pid, 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), error);
  }
}

namespace {

// A CRC that checks says the bytes are the writer's, not that they make sense: each field
// within what a run can have written, named in the error (issue 33, item 7).
void checkCount(const std::string& path, const char* field, int64_t value, int64_t least) {
  if (value < least) {
    throw CheckpointError(path + ": field \"" + field + "\" is " + std::to_string(value) +
                          "; a run writes " + std::to_string(least) + " or more");
  }
}

void checkFinite(const std::string& path, const std::string& field,
                 const std::vector<float>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw CheckpointError(path + ": field \"" + field + "\" holds a non-finite value at " +
                            std::to_string(i) + " (" + std::to_string(values[i]) +
                            "): a checkpoint is written only from finite parameters");
    }
  }
}

void checkFields(const Checkpoint& c, const std::string& path) {
  checkCount(path, "step", c.step, 0);
  checkCount(path, "epoch", c.epoch, 1);
  // (Not bounded by step: after an elastic resume, steps keep their numbers while the epoch
  // is counted in the new world's steps. The run checks it against its epoch's length.)
  checkCount(path, "step_in_epoch", c.step_in_epoch, 0);
  checkCount(path, "world", c.world, 1);
  checkCount(path, "replicas", c.replicas, 1);
  if (c.replicas > c.world || c.world % c.replicas != 0) {
    throw CheckpointError(path + ": field \"replicas\" is " + std::to_string(c.replicas) +
                          "; a run's data-parallel replicas divide its world of " +
                          std::to_string(c.world) + " ranks");
  }
  checkCount(path, "batch_size", c.batch_size, 1);
  checkCount(path, "optimizer.steps", c.optimizer_state.steps, 0);
  checkFinite(path, "params", c.params);
  for (const auto& [name, values] : c.optimizer_state.tensors)
    checkFinite(path, "optimizer.state." + name, values);
  if (c.has_loss_scale) {
    if (!std::isfinite(c.loss_scale) || c.loss_scale <= 0) {
      throw CheckpointError(path + ": field \"amp.loss_scale\" is " + std::to_string(c.loss_scale) +
                            "; a loss scale is finite and positive");
    }
    checkCount(path, "amp.clean_steps", c.loss_scale_clean_steps, 0);
    checkCount(path, "amp.skipped_steps", c.loss_scale_skipped_steps, 0);
  }
}

}  // namespace

namespace {

// The header's promises against the file's `size` (its bytes, or as fstat saw it): checked
// before a payload of that size is allocated.
void checkHeader(const std::string& head, uint64_t size, const std::string& path) {
  if (head.size() < sizeof kMagic || std::memcmp(head.data(), kMagic, sizeof kMagic) != 0) {
    throw CheckpointError(path +
                          ": not a ranklab checkpoint (it does not start with \"RLABCKPT\")");
  }
  if (std::min<uint64_t>(size, head.size()) < kHeaderBytes) {
    throw CheckpointError(path + ": truncated: " + std::to_string(size) +
                          " bytes, shorter than the " + std::to_string(kHeaderBytes) +
                          "-byte header");
  }
  const auto version = readLittleEndian<uint32_t>(head, 8);
  if (version < 1 || version > kCheckpointVersion) {
    throw CheckpointError(path + ": checkpoint format version " + std::to_string(version) +
                          "; this build reads versions 1 to " + std::to_string(kCheckpointVersion));
  }
  const auto payload = readLittleEndian<uint64_t>(head, 16);
  if (size - kHeaderBytes != payload) {
    throw CheckpointError(path + ": truncated or padded: the header promises " +
                          std::to_string(payload) + " payload bytes, the file holds " +
                          std::to_string(size - kHeaderBytes));
  }
}

// Read whole into memory, a checkpoint can be no larger than the machine's.
ReadLimit checkpointLimit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const uint64_t memory = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : ~uint64_t{0};
  return {memory, "checkpoints (read whole into this machine's memory)"};
}

// Up to `size` bytes onto `out`, fewer only at the end of the file.
void readUpTo(BoundedFile& file, std::string& out, uint64_t size) {
  char buffer[1 << 16];
  while (size > 0) {
    const size_t got = file.read(buffer, std::min<uint64_t>(size, sizeof buffer));
    if (got == 0) return;
    out.append(buffer, got);
    size -= got;
  }
}

// The file's bytes: never blocking on a FIFO, never reading a device, the header checked
// against the file's size before its payload is read.
std::string readCheckpointBytes(const std::string& path) {
  std::string bytes;
  try {
    BoundedFile file(path, checkpointLimit());
    readUpTo(file, bytes, kHeaderBytes);
    checkHeader(bytes, file.size(), path);
    bytes.reserve(file.size());
    readUpTo(file, bytes, file.size() - kHeaderBytes + 1);  // one byte more tells it grew
  } catch (const FileReadError& e) {
    throw CheckpointError(e.what());
  }
  return bytes;
}

}  // namespace

Checkpoint readCheckpoint(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw CheckpointError(path + ": is a folder, not a checkpoint file");
  try {
    return parseCheckpoint(readCheckpointBytes(path), path);
  } catch (const std::bad_alloc&) {  // the ranks of this machine together, say
    throw CheckpointError(path + ": cannot read it: out of memory (std::bad_alloc)");
  }
}

Checkpoint parseCheckpoint(const std::string& bytes, const std::string& path) {
  checkHeader(bytes, bytes.size(), path);
  const auto version = readLittleEndian<uint32_t>(bytes, 8);
  const auto size = readLittleEndian<uint64_t>(bytes, 16);
  const auto crc = readLittleEndian<uint32_t>(bytes, 24);
  if (crc32Of(bytes.data() + kHeaderBytes, size) != crc) {
    throw CheckpointError(path + ": corrupted: the payload's CRC-32 does not match the header");
  }

  const std::string payload = bytes.substr(kHeaderBytes);  // the records point into it
  const RecordReader records(path, payload);
  Checkpoint c;
  c.model = records.text("model");
  c.params = records.floats("params");
  c.optimizer = records.text("optimizer");
  c.optimizer_state.steps = records.integer("optimizer.steps");
  for (const auto& name : records.namesUnder("optimizer.state.")) {
    c.optimizer_state.tensors.emplace_back(name, records.floats("optimizer.state." + name));
  }
  c.step = records.integer("step");
  c.epoch = static_cast<int>(records.integer("epoch"));
  c.step_in_epoch = records.integer("step_in_epoch");
  c.training_passes = static_cast<uint64_t>(records.integer("training_passes"));
  c.seed = static_cast<uint64_t>(records.integer("seed"));
  c.world = static_cast<int>(records.integer("world"));
  // Added without a version bump (readers skip records they do not know).
  c.replicas = records.has("replicas") ? static_cast<int>(records.integer("replicas")) : c.world;
  c.batch_size = static_cast<int>(records.integer("batch_size"));
  c.has_loss_scale = records.has("amp.loss_scale");
  if (c.has_loss_scale) {
    const auto scale = records.floats("amp.loss_scale");
    if (scale.size() != 1) {
      throw CheckpointError(path + ": corrupted: record \"amp.loss_scale\" holds " +
                            std::to_string(scale.size()) + " values, not 1");
    }
    c.loss_scale = scale[0];
    c.loss_scale_clean_steps = records.integer("amp.clean_steps");
    c.loss_scale_skipped_steps = records.integer("amp.skipped_steps");
  }
  c.version = version;
  if (version >= 2) readCodecStates(records, c);
  checkFields(c, path);
  return c;
}

}  // namespace ranklab
