// Records for store tests: a job, attempts and components with every field set to a value
// that a wrong column, a swapped pair or a lost byte would change.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <thread>

#include "../catalog/temp_dir.h"
#include "store/postgres_job_store.h"
#include "store/sqlite_job_store.h"
#include "support/pg_cluster.h"
#include "support/wait.h"

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

// The backends every store test runs against: SQLite in memory (one connection), SQLite in
// a file (writer + reader pool) and PostgreSQL (writer + reader pool, a database of its own
// per test on the binary's shared server, tests/support/pg_cluster.h).
enum class Backend { kSqliteMemory, kSqliteFile, kPostgres };

inline const auto kAllBackends =
    ::testing::Values(Backend::kSqliteMemory, Backend::kSqliteFile, Backend::kPostgres);

inline std::string backendName(const ::testing::TestParamInfo<Backend>& info) {
  switch (info.param) {
    case Backend::kSqliteMemory:
      return "Memory";
    case Backend::kSqliteFile:
      return "File";
    case Backend::kPostgres:
      return "Postgres";
  }
  return "Unknown";
}

// A store of one backend, and where it is, so a test can open a second one on the same
// database (a restart, a second replica).
class BackendDatabase {
 public:
  // Skips the test (loudly) when the backend is PostgreSQL and none is installed, unless
  // TUNEPLANE_REQUIRE_POSTGRES=1 (CI), where that fails it.
  void setUp(Backend backend) {
    backend_ = backend;
    switch (backend) {
      case Backend::kSqliteMemory:
        location_ = SqliteJobStore::kInMemory;
        return;
      case Backend::kSqliteFile:
        location_ = dir_.file("store.db");
        return;
      case Backend::kPostgres: {
        std::string why;
        cluster_ = tuneplane::test::sharedPostgres(why);
        if (cluster_ == nullptr) {
          if (tuneplane::test::postgresRequired()) FAIL() << "PostgreSQL required: " << why;
          GTEST_SKIP() << "*** SKIPPED: no PostgreSQL for the store tests: " << why
                       << " (scripts/install-deps.sh installs it)";
        }
        std::string error;
        database_ = cluster_->createDatabase(error);
        ASSERT_FALSE(database_.empty()) << error;
        location_ = cluster_->uri(database_);
        return;
      }
    }
  }
  ~BackendDatabase() {
    if (cluster_ != nullptr && !database_.empty()) cluster_->dropDatabase(database_);
  }

  // A new store on this database; nullptr (and a failure) when it will not open.
  std::unique_ptr<JobStore> open() const {
    if (backend_ == Backend::kPostgres) {
      auto store = PostgresJobStore::open(location_, {.reader_connections = 2});
      EXPECT_TRUE(store.has_value()) << (store ? "" : store.error().describe());
      return store ? std::move(*store) : nullptr;
    }
    return openOrDie(location_);
  }
  Backend backend() const { return backend_; }
  const std::string& location() const { return location_; }

 private:
  Backend backend_ = Backend::kSqliteMemory;
  tuneplane::testing::TempDir dir_;
  tuneplane::test::PgCluster* cluster_ = nullptr;
  std::string database_;
  std::string location_;
};

// `want` as the store keeps it after `commits` commits: its version counts them, and its change
// sequence is the store's (checked to be set, then taken from `got`).
inline JobRecord asStored(JobRecord want, const JobRecord& got, int64_t commits) {
  EXPECT_GT(got.change_seq, 0) << want.id;
  want.version = commits;
  want.change_seq = got.change_seq;
  return want;
}

// Runs a suite against every backend, since each takes a different path through the store.
class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    db_.setUp(GetParam());
    if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
    store_ = db_.open();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override { store_.reset(); }

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
    EXPECT_TRUE(view && view->has_value()) << id << (view ? "" : ": " + view.error().describe());
    return view && view->has_value() ? **view : JobView{};
  }

  BackendDatabase db_;
  std::unique_ptr<JobStore> store_;
};

}  // namespace tuneplane::store::testing
