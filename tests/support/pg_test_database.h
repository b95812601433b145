// A database of its own on the test binary's shared PostgreSQL (pg_cluster.h), dropped when
// the object ends: what a test that needs one PostgreSQL database sets up. open() skips the
// test loudly when PostgreSQL is not installed, or fails it when it is required
// ($TUNEPLANE_REQUIRE_POSTGRES=1, CI); the caller returns when the test was skipped or failed.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "support/pg_cluster.h"

namespace tuneplane::test {

// kPasswordRole's password. The role is made once per server, by the first test that asks
// for it, and keeps that password: every test that owns a database by it gives this one.
inline constexpr const char* kPasswordRolePassword = "pg-secret-6d1f0e9a";

class PgTestDatabase {
 public:
  PgTestDatabase() = default;
  PgTestDatabase(const PgTestDatabase&) = delete;
  PgTestDatabase& operator=(const PgTestDatabase&) = delete;
  ~PgTestDatabase() {
    if (cluster_ != nullptr && !name_.empty()) cluster_->dropDatabase(name_);
  }

  // With `owner`, that role (made with `password`) owns the new database.
  void open(const std::string& owner = "", const std::string& password = "") {
    std::string why;
    cluster_ = sharedPostgres(why);
    if (cluster_ == nullptr) {
      if (postgresRequired()) FAIL() << "PostgreSQL required: " << why;
      GTEST_SKIP() << "*** SKIPPED: no PostgreSQL: " << why
                   << " (scripts/install-deps.sh installs it)";
    }
    std::string error;
    name_ = cluster_->createDatabase(error, owner, password);
    ASSERT_FALSE(name_.empty()) << error;
  }
  bool ready() const { return cluster_ != nullptr && !name_.empty(); }
  // A libpq URI for the database, as `user` (the server's superuser by default).
  std::string uri(const std::string& user = "") const { return cluster_->uri(name_, user); }

 private:
  PgCluster* cluster_ = nullptr;
  std::string name_;
};

}  // namespace tuneplane::test
