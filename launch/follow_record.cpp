#include "launch/follow_record.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "storage/private_files.h"

namespace ranklab {

namespace {

std::runtime_error recordError(const std::string& path, const std::string& why) {
  return std::runtime_error(path + ": " + why);
}

// "name value" lines.
std::string recordText(const FollowRecord& r) {
  std::ostringstream out;
  out << "job_id " << r.job_id << "\nwire_id " << r.wire_id << "\nendpoint " << r.endpoint
      << "\ntime_offset_ns " << r.time_offset_ns << "\n";
  if (r.curve)
    out << "server_public " << r.curve->server.public_key << "\nserver_secret "
        << r.curve->server.secret_key << "\nclient_public " << r.curve->client_public << "\n";
  return out.str();
}

FollowRecord parseRecord(const std::string& path, const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  std::string name, value;
  while (lines >> name >> value) fields[name] = value;
  for (const char* required : {"job_id", "wire_id", "endpoint", "time_offset_ns"})
    if (!fields.count(required)) throw recordError(path, std::string("no ") + required);
  FollowRecord r;
  r.job_id = fields["job_id"];
  r.wire_id = fields["wire_id"];
  r.endpoint = fields["endpoint"];
  try {
    r.time_offset_ns = std::stoll(fields["time_offset_ns"]);
  } catch (const std::exception&) {
    throw recordError(path, "time_offset_ns is not a number");
  }
  if (fields.count("server_secret")) {
    r.curve =
        CollectorCurve{{fields["server_public"], fields["server_secret"]}, fields["client_public"]};
    if (r.curve->server.public_key.size() != 40 || r.curve->server.secret_key.size() != 40 ||
        r.curve->client_public.size() != 40)
      throw recordError(path, "its CURVE keys are not three 40-character Z85 keys");
  }
  return r;
}

}  // namespace

std::string slurmFolderOf(const std::string& db_path) {
  const auto parent = std::filesystem::path(db_path).parent_path();
  return ((parent.empty() ? std::filesystem::path(".") : parent) / "slurm").string();
}

std::string followRecordPath(const std::string& dir, int64_t run_id, const std::string& job_id) {
  return dir + "/ranklab-" + std::to_string(run_id) + "-" + job_id + ".follow";
}

void writeFollowRecord(const std::string& path, const FollowRecord& record) {
  writeNewPrivateFile(path, recordText(record));
}

std::optional<FollowRecord> readFollowRecord(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw recordError(path, std::string("cannot open it: ") + std::strerror(errno));
  }
  struct stat info {};
  // Its keys admit telemetry as the run's: only a file this account wrote for itself.
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != geteuid() ||
      (info.st_mode & 077) != 0) {
    close(fd);
    throw recordError(path, "not this account's own file of mode 0600: not read");
  }
  std::string text;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(fd, buffer, sizeof buffer)) > 0 && text.size() < 65536)
    text.append(buffer, static_cast<size_t>(n));
  close(fd);
  return parseRecord(path, text);
}

}  // namespace ranklab
