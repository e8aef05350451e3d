// What a launcher needs to take over a Slurm run whose launcher is gone (killed, crashed,
// its machine rebooted) while the job still runs: the job, the attempt's telemetry wire id,
// the address its ranks send to, the collector's CURVE keys and the attempt's place on the
// run's time line. Written beside the store's Slurm output (a folder only this account
// enters) when the job is submitted, removed when the launcher has seen the job end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "comm/telemetry/curve_keys.h"

namespace ranklab {

struct FollowRecord {
  std::string job_id;
  std::string wire_id;
  std::string endpoint;                 // "tcp://ADDR:PORT", as the ranks were told
  std::optional<CollectorCurve> curve;  // none: telemetry.encrypt = false
  int64_t time_offset_ns = 0;
};

// The folder beside the store `db_path` where Slurm writes a run's output and its launcher
// its follow record ("<store's folder>/slurm"): a cluster's nodes share the home folder.
std::string slurmFolderOf(const std::string& db_path);

// "<dir>/ranklab-<run>-<job>.follow".
std::string followRecordPath(const std::string& dir, int64_t run_id, const std::string& job_id);

// Written 0600, created exclusively (never through a link); throws naming the path.
void writeFollowRecord(const std::string& path, const FollowRecord& record);
// Nothing when there is no such file; throws naming the path when it is not this account's
// own regular file of mode 0600, or does not read as a record.
std::optional<FollowRecord> readFollowRecord(const std::string& path);

}  // namespace ranklab
