#include "launch/bench/bench_args.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace ranklab {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

}  // namespace

std::vector<std::string> splitCommaList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<std::string> benchArgs(const AllreduceBenchOptions& o) {
  return {"--bench",          "allreduce",
          "--algorithms",     joined(o.algorithms),
          "--min-bytes",      std::to_string(o.min_bytes),
          "--max-bytes",      std::to_string(o.max_bytes),
          "--ranks-per-host", std::to_string(o.ranks_per_host),
          "--seconds",        std::to_string(o.seconds_per_size),
          "--repeats",        std::to_string(o.repeats)};
}

AllreduceBenchOptions parseBenchArgs(const std::vector<std::string>& args) {
  AllreduceBenchOptions o;
  if (args.size() < 2 || args[0] != "--bench" || args[1] != "allreduce")
    throw std::invalid_argument("ranklab-worker: --bench takes allreduce");
  for (size_t i = 2; i < args.size(); i += 2) {
    const std::string& flag = args[i];
    if (i + 1 >= args.size())
      throw std::invalid_argument("ranklab-worker: " + flag + " needs a value");
    const std::string& value = args[i + 1];
    try {
      if (flag == "--algorithms")
        o.algorithms = splitCommaList(value);
      else if (flag == "--min-bytes")
        o.min_bytes = std::stoull(value);
      else if (flag == "--max-bytes")
        o.max_bytes = std::stoull(value);
      else if (flag == "--ranks-per-host")
        o.ranks_per_host = std::stoi(value);
      else if (flag == "--seconds")
        o.seconds_per_size = std::stod(value);
      else if (flag == "--repeats")
        o.repeats = std::stoi(value);
      else
        throw std::invalid_argument(
            "unknown option (allowed: --algorithms, --min-bytes, --max-bytes, "
            "--ranks-per-host, --seconds, --repeats)");
    } catch (const std::logic_error& e) {
      throw std::invalid_argument("ranklab-worker --bench: " + flag + " " + value + ": " +
                                  e.what());
    }
  }
  return o;
}

int runBenchRank(Communicator& comm, const std::vector<std::string>& args) {
  const auto rows = runAllreduceBench(comm, parseBenchArgs(args));
  if (comm.rank() == 0) {
    for (const auto& row : rows) std::printf("%s\n", benchRowJson(row).c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace ranklab
