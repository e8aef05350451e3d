// Which keys the setup form shows, and the docs behind its tooltips.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "engine/job/job_key_docs.h"
#include "engine/job/job_key_relevance.h"
#include "engine/job/job_keys.h"

namespace ranklab {
namespace {

// A rule naming a key or a choice the schema does not have would silently never fire.
TEST(JobKeyRelevance, EveryRuleNamesRealKeysAndChoices) {
  for (const RelevanceRule& rule : relevanceRules()) {
    ASSERT_NE(findJobKey(rule.key), nullptr) << rule.key;
    const JobKey* when = findJobKey(rule.when);
    ASSERT_NE(when, nullptr) << rule.when;
    if (when->kind != JobValueKind::Choice) continue;
    for (const std::string& v : rule.values)
      EXPECT_NE(std::find(when->choices.begin(), when->choices.end(), v), when->choices.end())
          << rule.key << ": " << rule.when << " has no value \"" << v << "\"";
  }
}

TEST(JobKeyRelevance, DefaultsHideOtherDatasetsOptimizersAndStrategies) {
  const JobValues defaults;  // fashion-mnist, mlp, sgd, allreduce/ring, no codec, fp32
  for (const char* hidden :
       {"data.arms", "data.noise", "model.channels", "train.beta1", "train.lr_gamma",
        "parallel.servers", "parallel.staleness", "parallel.average_every",
        "parallel.ranks_per_host", "compression.bits", "compression.error_feedback",
        "amp.init_scale", "fault.straggler_delay_ms", "train.checkpoint_every", "train.tf32",
        "parallel.device_collectives"})
    EXPECT_FALSE(keyApplies(hidden, defaults)) << hidden;
  for (const char* shown : {"data.path", "train.momentum", "parallel.algorithm",
                            "parallel.bucket_kb", "compression.codec", "amp.dtype", "train.lr"})
    EXPECT_TRUE(keyApplies(shown, defaults)) << shown;
}

TEST(JobKeyRelevance, ChoosingAValueShowsItsKeys) {
  EXPECT_TRUE(keyApplies("data.arms", {{"data.dataset", "spirals"}}));
  EXPECT_FALSE(keyApplies("data.arms", {{"data.dataset", "moons"}}));
  EXPECT_TRUE(keyApplies("data.noise", {{"data.dataset", "moons"}}));
  EXPECT_TRUE(keyApplies("parallel.staleness", {{"parallel.strategy", "ps-async"}}));
  EXPECT_FALSE(keyApplies("parallel.staleness", {{"parallel.strategy", "ps-sync"}}));
  EXPECT_FALSE(keyApplies("parallel.algorithm", {{"parallel.strategy", "ps-sync"}}));
  EXPECT_TRUE(keyApplies("parallel.ranks_per_host", {{"parallel.algorithm", "hierarchical"}}));
  EXPECT_FALSE(keyApplies("parallel.ranks_per_host", {{"parallel.algorithm", "hierarchical"},
                                                      {"parallel.strategy", "ps-sync"}}));
  EXPECT_FALSE(keyApplies("parallel.bucket_kb", {{"parallel.algorithm", "shm-sharded"}}));
  EXPECT_TRUE(keyApplies("compression.ratio", {{"compression.codec", "topk"}}));
  EXPECT_TRUE(keyApplies("compression.momentum_correction", {{"compression.codec", "topk"}}));
  EXPECT_FALSE(keyApplies("compression.momentum_correction",
                          {{"compression.codec", "topk"}, {"train.optimizer", "adam"}}));
  EXPECT_TRUE(keyApplies("amp.init_scale", {{"amp.dtype", "bf16"}}));
  EXPECT_TRUE(keyApplies("fault.straggler_delay_ms", {{"fault.straggler_rank", "2"}}));
  EXPECT_TRUE(keyApplies("train.checkpoint_every", {{"train.checkpoint_path", "c.bin"}}));
  EXPECT_TRUE(keyApplies("parallel.device_collectives", {{"train.device", "cuda:1"}}));
  EXPECT_TRUE(keyApplies("train.tf32", {{"train.device", "cuda"}}));
}

// The docs and the schema list the same keys, with the same defaults.
TEST(JobKeyDocs, EveryKeyIsDocumentedWithItsDefault) {
  const auto& docs = jobKeyDocs();
  for (const JobKey& key : jobKeys()) {
    const auto it = docs.find(key.path);
    ASSERT_NE(it, docs.end()) << key.path << " has no row in docs/job-file.md";
    EXPECT_FALSE(it->second.text.empty()) << key.path;
    EXPECT_EQ(it->second.text.find('`'), std::string::npos) << it->second.text;
  }
  for (const auto& [path, doc] : docs)
    EXPECT_NE(findJobKey(path), nullptr) << "docs/job-file.md documents unknown key " << path;
  EXPECT_EQ(docs.at("train.lr").type, "float");
  EXPECT_EQ(docs.at("train.lr").default_value, "0.05");
  EXPECT_EQ(docs.at("data.dataset").default_value, "fashion-mnist");
}

TEST(JobKeyDocs, EscapedPipesAndLinksReadAsText) {
  const auto docs = parseJobKeyDocs(
      "### `[compression]` — x\n\n| key | type | default | allowed |\n|---|---|---|---|\n"
      "| `threshold` | float | `0.05` | send \\|g\\| at least this, [see](c.md#x) |\n");
  ASSERT_EQ(docs.count("compression.threshold"), 1u);
  EXPECT_EQ(docs.at("compression.threshold").text, "send |g| at least this, see");
}

}  // namespace
}  // namespace ranklab
