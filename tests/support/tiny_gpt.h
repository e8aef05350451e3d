// Test support: a GPT small enough for thread-rank tests, and the text it learns.
#pragma once

#include <string>

#include "engine/data/text_dataset.h"
#include "engine/job/job_spec.h"

namespace ranklab::testing {

// `job` made a GPT of 2 blocks, 4 heads of width 8, on windows of 16 bytes, 8 per batch.
inline JobSpec tinyGpt(JobSpec job) {
  job.data.dataset = DatasetKind::kText;
  job.data.path = defaultDataPath(job.data.dataset);
  job.model.kind = ModelKind::kGpt;
  job.model.context = 16;
  job.model.width = 32;
  job.model.heads = 4;
  job.model.blocks = 2;
  job.train.batch_size = 8;
  job.train.eval_batches = 2;
  return job;
}

// Windows of `context` bytes over bytes [from, to) of one line repeated.
inline Dataset lineWindows(size_t from, size_t to, int context = 16) {
  std::string line = "the quick brown fox jumps over lazy dogs\n", text;
  while (text.size() < to) text += line;
  return textWindows({text.begin() + from, text.begin() + to}, context);
}

}  // namespace ranklab::testing
