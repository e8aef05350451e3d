// What the launcher starts for one attempt's ranks and watches until it ends: mpirun as a
// child process of its own (launch/child_process.h), or a Slurm batch job whose script runs
// mpirun inside the allocation (launch/slurm_job.h).
#pragma once

#include <functional>
#include <string>

namespace ranklab {

class RankProcess {
 public:
  using LineHandler = std::function<void(bool is_stderr, const std::string& line)>;
  virtual ~RankProcess() = default;

  // Waits up to wait_ms for output and hands every complete line to on_line.
  virtual void pump(int wait_ms, const LineHandler& on_line) = 0;
  // False once it has ended.
  virtual bool running() = 0;
  // Exit status; 128 + signal when killed by a signal. Valid once running() is false.
  virtual int exitCode() const = 0;
  virtual void terminate() = 0;  // ask it to end (SIGTERM, or scancel)
  virtual void kill() = 0;       // end it now
  // What people are told was started and has ended ("mpirun", "rank 3").
  virtual std::string name() const { return "mpirun"; }
};

}  // namespace ranklab
