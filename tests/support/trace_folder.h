// Test support: a temporary folder to write trace files into and a run store in it to import
// them into, for the trace import tests.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "storage/run_store.h"
#include "tests/support/temp_folder.h"

namespace ranklab::testing {

class TraceFolderTest : public ::testing::Test {
 protected:
  // Writes `text` into the folder's file `name`: its path.
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = folder_.file(name);
    std::ofstream(path) << text;
    return path;
  }

  TempFolder folder_;
  RunStore store_{folder_.file("runs.db")};
};

}  // namespace ranklab::testing
