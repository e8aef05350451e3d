// The job keys a form is built from: every schema key, with its kind and allowed values,
// and files written from form text are checked exactly like files on disk.
#include "engine/job/job_keys.h"
#include "engine/job/job_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

using namespace ranklab;
using ::testing::HasSubstr;

namespace {

const JobKey& key(const std::string& path) {
  const JobKey* k = findJobKey(path);
  EXPECT_NE(k, nullptr) << path;
  static const JobKey none;
  return k ? *k : none;
}

}  // namespace

TEST(JobKeys, EveryKeyOfTheResolvedJobIsListedOnce) {
  // toTomlText writes every key; each one must be a form key, and no form key is extra.
  const JobValues written = jobValues(JobSpec{});
  std::set<std::string> paths;
  for (const JobKey& k : jobKeys()) EXPECT_TRUE(paths.insert(k.path).second) << k.path;
  EXPECT_EQ(paths.size(), written.size());
  for (const auto& [path, value] : written) EXPECT_TRUE(paths.count(path)) << path;
}

TEST(JobKeys, KindsAllowedValuesAndDefaultsComeFromTheSchema) {
  EXPECT_EQ(key("name").kind, JobValueKind::Text);
  EXPECT_EQ(key("name").section, "");
  EXPECT_EQ(key("train.epochs").kind, JobValueKind::Integer);
  EXPECT_EQ(key("train.epochs").allowed, "1..10000");
  EXPECT_EQ(key("train.epochs").default_value, "2");
  EXPECT_EQ(key("train.lr").kind, JobValueKind::Number);
  EXPECT_EQ(key("train.lr").allowed, "> 0 and <= 10");
  EXPECT_EQ(key("train.momentum").default_value, "0.9");
  EXPECT_EQ(key("model.layers").kind, JobValueKind::IntegerList);
  EXPECT_EQ(key("model.layers").default_value, "[256, 128]");
  const JobKey& algorithm = key("parallel.algorithm");
  EXPECT_EQ(algorithm.kind, JobValueKind::Choice);
  EXPECT_THAT(algorithm.choices, ::testing::Contains("ring"));
  EXPECT_THAT(algorithm.choices, ::testing::Contains("mpi"));
  EXPECT_EQ(key("parallel.ranks").section_purpose, "how many ranks and how they combine gradients");
}

TEST(JobKeys, ValuesInTextAreFormText) {
  const JobValues values = jobValuesInText(
      "name = \"demo\"\n[train]\nlr = 0.1\nbogus = 1\n[model]\nlayers = [ 64, 32 ]\n");
  EXPECT_EQ(values.at("name"), "demo");
  EXPECT_EQ(values.at("train.lr"), "0.1");
  EXPECT_EQ(values.at("model.layers"), "[64, 32]");
  EXPECT_EQ(values.count("train.bogus"), 0u);
  EXPECT_EQ(values.count("train.epochs"), 0u);  // not set by the file
  EXPECT_TRUE(jobValuesInText("[train\n").empty());
}

TEST(JobKeys, TextFromValuesParsesBackToTheSameJob) {
  JobSpec job;
  job.name = "it's \"quoted\"";
  job.train.lr = 0.125;
  job.model.layers = {8, 4};
  job.parallel.algorithm = "mpi";
  const JobSpec back = parseJob(jobTextFromValues(jobValues(job)), "form");
  EXPECT_EQ(back, job);
}

TEST(JobKeys, TextThatIsNotAValueIsReportedAgainstItsKey) {
  JobValues values = jobValues(JobSpec{});
  values["train.epochs"] = "many";
  values["train.lr"] = "0";
  const auto issues = checkJob(jobTextFromValues(values), "form.toml");
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(issues[0].key, "train.epochs");
  EXPECT_THAT(issues[0].message, HasSubstr("expected an integer, got string"));
  EXPECT_EQ(issues[1].key, "train.lr");
  EXPECT_THAT(issues[1].message, HasSubstr("must be > 0 and <= 10, got 0"));
}
