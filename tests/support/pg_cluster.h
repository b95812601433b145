// A real PostgreSQL server for tests, from the machine's packages (Debian: postgresql;
// scripts/install-deps.sh installs it): initdb and pg_ctl in a fresh temporary directory,
// listening only on a Unix socket in that directory (no TCP port, nothing shared with other
// tests or the host's own cluster), trust authentication for its one superuser, fsync off.
//
// The binaries are not on PATH on Debian: postgresBinDir() looks at $TUNEPLANE_PG_BINDIR,
// then `pg_config --bindir`, then the newest /usr/lib/postgresql/*/bin. initdb refuses to
// run as root, so when the tests run as root (CI) the directory is given to `nobody` and the
// server runs as nobody (setpriv). Every wait is bounded (pg_ctl -w -t, then the stop's
// polls); the server is stopped by the PID in its postmaster.pid, SIGINT (PostgreSQL's fast
// shutdown) then SIGKILL past the bound.
//
// One server serves a whole test binary (or, under ctest, every test of the fixture
// `postgres`: tp_test_postgres starts it and writes its directory to a file, which the
// tests find through $TUNEPLANE_TEST_POSTGRES). Each test takes a database of its own
// (createDatabase). Thread-safety: one owner.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace tuneplane::test {

std::optional<std::filesystem::path> postgresBinDir();

// A role that must give its password (scram-sha-256) where every other role is trusted: for
// the tests of how serve gets the password.
inline constexpr const char* kPasswordRole = "tp_password_user";

class PgCluster {
 public:
  // Starts a new server; on failure nullptr and `error` says why.
  static std::unique_ptr<PgCluster> start(std::string& error);
  // A server started elsewhere (tp_test_postgres) in `dir`; this object does not stop it.
  static std::unique_ptr<PgCluster> attach(const std::filesystem::path& dir);
  ~PgCluster();  // stops the server if this object started it, and removes its directory
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // A libpq URI for database `dbname` on this server, as `user` (its superuser by default).
  std::string uri(const std::string& dbname = "postgres", const std::string& user = "") const;
  // Its Unix socket's path: what a proxy in front of it connects to.
  std::string socketPath() const;
  // A URI for `dbname` as its superuser at `host_port` ("127.0.0.1:PORT"), a proxy that relays
  // to socketPath(): the server sees a local connection, which it trusts.
  std::string uriThrough(const std::string& host_port, const std::string& dbname) const;
  // The postmaster's PID (from postmaster.pid); 0 when it is not running.
  pid_t pid() const;
  // Stops the server by its PID, bounded; true when it is gone.
  bool stop();
  // Gives up ownership: the destructor then neither stops the server nor removes its
  // directory (tp_test_postgres start hands it to the stop step).
  void release() { owned_ = false; }

  // A new empty database with a unique name; "" (and `error`) on failure. With `owner`,
  // that role (made with `password` if it does not exist) owns it.
  std::string createDatabase(std::string& error, const std::string& owner = "",
                             const std::string& password = "") const;
  void dropDatabase(const std::string& name) const;

 private:
  PgCluster(std::filesystem::path dir, bool owned) : dir_(std::move(dir)), owned_(owned) {}

  std::filesystem::path dir_;
  bool owned_;
};

// The shared server of this test binary: the ctest fixture's when $TUNEPLANE_TEST_POSTGRES
// names one, otherwise started on first use and stopped at exit. nullptr when PostgreSQL is
// not installed or would not start (`why` says which).
PgCluster* sharedPostgres(std::string& why);
// True when the tests must not skip for want of PostgreSQL ($TUNEPLANE_REQUIRE_POSTGRES=1,
// which CI sets).
bool postgresRequired();

}  // namespace tuneplane::test
