// Records for store tests: a job, attempts and components with every field set to a value
// that a wrong column, a swapped pair or a lost byte would change.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>

#include "../catalog/temp_dir.h"
#include "store/sqlite_job_store.h"

namespace tuneplane::store::testing {

inline constexpr int64_t kT0 = 1'700'000'000'000;

inline JobRecord sampleJob(const std::string& id, int64_t created_ms = kT0) {
  JobRecord job;
  job.id = id;
  job.name = id.substr(0, id.rfind('-'));
  job.owner = "alice";
  job.labels = {{"team", "nlp"}, {"tuneplane.io/priority", "high"}};
  job.spec =
      "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: " + job.name + "\n";
  job.phase = JobPhase::kPending;
  job.reason = "accepted";
  job.created_ms = created_ms;
  job.updated_ms = created_ms + 1;
  job.next_attempt_ms = 0;
  return job;
}

inline ComponentRecord sampleComponent(int index) {
  ComponentRecord c;
  c.index = index;
  c.pool = index == 0 ? "learners" : "actors";
  c.slurm_job_id = 4000 + static_cast<uint64_t>(index);
  c.sluid = "sC0FFEE0000" + std::to_string(10 + index);
  c.state = {"RUNNING", "COMPLETING"};
  c.reason = "None";
  c.exit_code = 0;
  c.signal = std::nullopt;
  c.nodes = "gpu[1-2]";
  c.start_time = 1'700'000'100 + index;
  c.end_time = 0;
  return c;
}

inline AttemptRecord sampleAttempt(const std::string& job_id, int number, int components = 2) {
  AttemptRecord a;
  a.job_id = job_id;
  a.number = number;
  a.phase = AttemptPhase::kRunning;
  a.reason = "running on gpu[1-2]";
  a.cause = EndCause::kNone;
  a.submit_token = "tp-" + job_id + "-" + std::to_string(number);
  a.staging_dir = "/shared/jobs/" + job_id + "/attempts/" + std::to_string(number);
  a.slurm_job_id = 4000;
  for (int i = 0; i < components; ++i) a.components.push_back(sampleComponent(i));
  a.created_ms = kT0 + 10;
  a.submitted_ms = kT0 + 20;
  a.ended_ms = 0;
  a.lookups = 3;
  a.next_lookup_ms = kT0 + 30;
  a.missing_polls = 1;
  return a;
}

inline EventRecord event(const std::string& job_id, int attempt, const std::string& from,
                         const std::string& to, int64_t time_ms = kT0,
                         const std::string& actor = "reconciler") {
  return EventRecord{0, job_id, attempt, time_ms, from, to, "because " + to, actor};
}

inline EventRecord created(const JobRecord& job) {
  return event(job.id, 0, "", "Pending", job.created_ms, job.owner);
}

inline std::unique_ptr<SqliteJobStore> openOrDie(const std::string& path,
                                                 SqliteJobStoreOptions options = {}) {
  auto store = SqliteJobStore::open(path, options);
  EXPECT_TRUE(store.has_value()) << (store ? "" : store.error().describe());
  return store ? std::move(*store) : nullptr;
}

inline std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace tuneplane::store::testing

namespace tuneplane::store::testing {

// Runs a suite against both kinds of database: ":memory:" (one connection) and a file
// (writer + reader pool), since they take different paths through the store.
class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    path_ = GetParam() ? dir_.file("store.db") : SqliteJobStore::kInMemory;
    store_ = openOrDie(path_);
    ASSERT_NE(store_, nullptr);
  }

  // Creates `job` with its creation event; fails the test if the store refuses.
  void create(const JobRecord& job) {
    auto done = store_->createJob(job, created(job));
    ASSERT_TRUE(done) << done.error().describe();
  }
  void commitOk(const Change& change) {
    auto done = store_->commit(change);
    ASSERT_TRUE(done) << done.error().describe();
  }
  JobView viewOf(const std::string& id) {
    auto view = store_->getJob(id);
    EXPECT_TRUE(view && view->has_value()) << id;
    return view && view->has_value() ? **view : JobView{};
  }

  tuneplane::testing::TempDir dir_;
  std::string path_;
  std::unique_ptr<SqliteJobStore> store_;
};

inline std::string storeKindName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "File" : "Memory";
}

}  // namespace tuneplane::store::testing
