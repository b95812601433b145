// The end-to-end fixture on PostgreSQL (e2e_fixture.h's ServeE2eTest, with serve given
// `--db postgresql://…`): a database of its own on the test binary's real PostgreSQL
// (support/pg_cluster.h), owned by a role that must authenticate with its password, which
// serve reads from server.db_password_file; a short lease so that failovers come quickly.
// Shared by the replica tests (serve_e2e_postgres_test.cc, serve_e2e_replica_fault_test.cc).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "../catalog/temp_dir.h"
#include "e2e_fixture.h"
#include "support/pg_test_database.h"

namespace tuneplane::cli::testing {

inline constexpr const char* kPostgresPassword = test::kPasswordRolePassword;

class ServeE2ePostgresTest : public ServeE2eTest {
 protected:
  void SetUp() override {
    database_.open(test::kPasswordRole, kPostgresPassword);
    if (!database_.ready()) return;
    password_file_ = secrets_.write("db.pass", std::string(kPostgresPassword) + "\n");
    ASSERT_EQ(::chmod(password_file_.c_str(), 0600), 0);
    ServeE2eTest::SetUp();
  }
  void TearDown() override {
    if (database_.ready()) ServeE2eTest::TearDown();
  }  // the database is dropped after
  std::string db() const override { return database_.uri(test::kPasswordRole); }
  std::string serverExtra() const override {
    return "  db_password_file: " + password_file_ +
           "\n  lease_seconds: " + std::to_string(kLeaseSeconds) + "\n";
  }

  static constexpr int kLeaseSeconds = 2;

  // The value of the unlabelled metric `name` in `url`'s /metrics; nullopt when it did not
  // answer or has no such line.
  static std::optional<int64_t> metric(const std::string& url, const std::string& name) {
    const auto value = test::metricValue(url, name);
    return value ? std::optional<int64_t>(static_cast<int64_t>(*value)) : std::nullopt;
  }
  // tuneplane_leader from `url`'s /metrics: 1, 0, or -1 when it did not answer.
  static int leaderGauge(const std::string& url) {
    const auto value = metric(url, "tuneplane_leader");
    return value ? static_cast<int>(*value) : -1;
  }

  test::PgTestDatabase database_;
  tuneplane::testing::TempDir secrets_;
  std::string password_file_;
};

}  // namespace tuneplane::cli::testing
