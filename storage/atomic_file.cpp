#include "storage/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace ranklab {

int64_t writeFileWhole(const std::string& path, const std::string& what,
                       const std::function<int64_t(std::ostream&)>& write) {
  auto error = [&](const std::string& cause) {
    return std::runtime_error(path + ": cannot write " + what + ": " + cause);
  };
  const std::string partial = path + ".part";
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) throw error(std::strerror(errno));
  int64_t written = 0;
  try {
    written = write(out);
    out.close();
    if (!out) throw error("write failed (disk full?)");
  } catch (...) {
    std::remove(partial.c_str());
    throw;
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const std::string cause = std::strerror(errno);
    std::remove(partial.c_str());
    throw error(cause);
  }
  return written;
}

}  // namespace ranklab
