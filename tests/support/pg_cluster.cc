#include "support/pg_cluster.h"

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <vector>

#include "support/subprocess.h"
#include "support/wait.h"

namespace tuneplane::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSuperuser = "tuneplane";
constexpr std::chrono::seconds kStartLimit{60};
constexpr std::chrono::seconds kStopLimit{30};

bool hasServer(const fs::path& dir) {
  return fs::exists(dir / "initdb") && fs::exists(dir / "pg_ctl") && fs::exists(dir / "postgres");
}

// When root, the server and initdb run as nobody: the prefix that does that.
std::vector<std::string> asServerUser() {
  if (::geteuid() != 0) return {};
  const struct passwd* pw = ::getpwnam("nobody");
  if (pw == nullptr) return {};
  return {"setpriv", "--reuid=" + std::to_string(pw->pw_uid),
          "--regid=" + std::to_string(pw->pw_gid), "--clear-groups", "--"};
}

std::string socketDir(const fs::path& dir) {
  return (dir / "socket").string();
}

// libpq URI query values: the socket directory is a path, so percent-encode it.
std::string encode(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

// Without running it: runProcess reports a command that cannot start as a test failure.
bool onPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

std::optional<fs::path> fromLibDir();

bool alive(pid_t pid) {
  return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

// Runs one statement on the server's "postgres" database.
bool adminExec(const PgCluster& cluster, const std::string& sql, std::string& error) {
  PGconn* conn = PQconnectdb(cluster.uri().c_str());
  bool done = false;
  if (PQstatus(conn) != CONNECTION_OK) {
    error = PQerrorMessage(conn);
  } else {
    PGresult* result = PQexec(conn, sql.c_str());
    done = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!done) error = PQresultErrorMessage(result);
    PQclear(result);
  }
  PQfinish(conn);
  return done;
}

}  // namespace

std::optional<fs::path> postgresBinDir() {
  if (const char* env = std::getenv("TUNEPLANE_PG_BINDIR"); env != nullptr && *env != '\0') {
    if (hasServer(env)) return fs::path(env);
  }
  std::string scratch = (fs::temp_directory_path() / "tuneplane-pgconfig-XXXXXX").string();
  if (!onPath("pg_config") || ::mkdtemp(scratch.data()) == nullptr) return fromLibDir();
  const ProcessResult config =
      runProcess({"pg_config", "--bindir"}, {.scratch = scratch, .limit = kStartLimit});
  std::error_code removed;
  fs::remove_all(scratch, removed);
  if (config.exit_code == 0) {
    std::string dir = config.out;
    while (!dir.empty() && std::isspace(static_cast<unsigned char>(dir.back()))) dir.pop_back();
    if (hasServer(dir)) return fs::path(dir);
  }
  return fromLibDir();
}

namespace {

std::optional<fs::path> fromLibDir() {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    if (hasServer(entry.path() / "bin")) found.push_back(entry.path() / "bin");
  }
  if (found.empty()) return std::nullopt;
  // Newest major version: compare numerically (9 < 15).
  return *std::max_element(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return std::atoi(a.parent_path().filename().c_str()) <
           std::atoi(b.parent_path().filename().c_str());
  });
}

}  // namespace

std::unique_ptr<PgCluster> PgCluster::start(std::string& error) {
  const auto bin = postgresBinDir();
  if (!bin) {
    error = "PostgreSQL's server binaries (initdb, pg_ctl, postgres) are not installed";
    return nullptr;
  }
  std::string pattern = (fs::temp_directory_path() / "tuneplane-pg-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    error = "mkdtemp failed";
    return nullptr;
  }
  auto cluster = std::unique_ptr<PgCluster>(new PgCluster(pattern, true));
  const fs::path dir = cluster->dir_;
  fs::create_directory(dir / "socket");
  const std::vector<std::string> as = asServerUser();
  if (::geteuid() == 0) {
    if (as.empty()) {
      error = "running as root and there is no user nobody to run PostgreSQL as";
      return nullptr;
    }
    const struct passwd* pw = ::getpwnam("nobody");
    for (const fs::path& p : {dir, dir / "socket"}) {
      if (::chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        error = "chown " + p.string() + " to nobody failed";
        return nullptr;
      }
    }
  }
  const ProcessOptions options{.scratch = dir, .limit = kStartLimit};
  std::vector<std::string> initdb = as;
  for (const std::string& arg :
       {(*bin / "initdb").string(), std::string("-D"), (dir / "data").string(), std::string("-U"),
        std::string(kSuperuser), std::string("-A"), std::string("trust"), std::string("-E"),
        std::string("UTF8"), std::string("--no-locale"), std::string("--no-sync")}) {
    initdb.push_back(arg);
  }
  const ProcessResult made = runProcess(initdb, options);
  if (made.exit_code != 0) {
    error = "initdb failed (exit " + std::to_string(made.exit_code) + "): " + made.err + made.out;
    return nullptr;
  }
  {
    // kPasswordRole must authenticate; the first matching line wins, so it goes on top.
    const fs::path hba = dir / "data" / "pg_hba.conf";
    std::ifstream in(hba);
    const std::string rest((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(hba, std::ios::trunc) << "local all " << kPasswordRole << " scram-sha-256\n"
                                        << rest;
  }
  {
    std::ofstream conf(dir / "data" / "postgresql.conf", std::ios::app);
    conf << "\nlisten_addresses = ''\nunix_socket_directories = '" << socketDir(dir)
         << "'\nfsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            "max_connections = 300\nshared_buffers = 16MB\n";
  }
  std::vector<std::string> pg_ctl = as;
  for (const std::string& arg :
       {(*bin / "pg_ctl").string(), std::string("start"), std::string("-w"), std::string("-t"),
        std::to_string(kStartLimit.count()), std::string("-D"), (dir / "data").string(),
        std::string("-l"), (dir / "server.log").string()}) {
    pg_ctl.push_back(arg);
  }
  const ProcessResult started = runProcess(pg_ctl, options);
  if (started.exit_code != 0 || cluster->pid() == 0) {
    std::ifstream log(dir / "server.log");
    const std::string server_log((std::istreambuf_iterator<char>(log)), {});
    error = "pg_ctl start failed (exit " + std::to_string(started.exit_code) + "): " + started.err +
            started.out + server_log;
    cluster->stop();
    return nullptr;
  }
  return cluster;
}

std::unique_ptr<PgCluster> PgCluster::attach(const fs::path& dir) {
  return std::unique_ptr<PgCluster>(new PgCluster(dir, false));
}

PgCluster::~PgCluster() {
  if (!owned_) return;
  stop();
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PgCluster::uri(const std::string& dbname, const std::string& user) const {
  return "postgresql:///" + dbname + "?host=" + encode(socketDir(dir_)) +
         "&user=" + (user.empty() ? std::string(kSuperuser) : user);
}

std::string PgCluster::socketPath() const {
  return socketDir(dir_) + "/.s.PGSQL.5432";  // the default port: the server is given none
}

std::string PgCluster::uriThrough(const std::string& host_port, const std::string& dbname) const {
  return "postgresql://" + std::string(kSuperuser) + "@" + host_port + "/" + dbname;
}

pid_t PgCluster::pid() const {
  std::ifstream in(dir_ / "data" / "postmaster.pid");
  long pid = 0;
  if (!(in >> pid)) return 0;
  return alive(static_cast<pid_t>(pid)) ? static_cast<pid_t>(pid) : 0;
}

bool PgCluster::stop() {
  const pid_t server = pid();
  if (server == 0) return true;
  ::kill(server, SIGINT);  // fast shutdown: disconnects clients, no checkpoint wait
  if (waitUntil([&] { return !alive(server); }, kStopLimit)) return true;
  ::kill(server, SIGKILL);
  return false;
}

std::string PgCluster::createDatabase(std::string& error, const std::string& owner,
                                      const std::string& password) const {
  static std::atomic<int> counter{0};
  const std::string name =
      "tp_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  if (!owner.empty()) {
    // Tests running at once may both create it: the loser's error is no error.
    const std::string role = "DO $$BEGIN CREATE ROLE " + owner + " LOGIN PASSWORD '" + password +
                             "'; EXCEPTION WHEN duplicate_object OR unique_violation THEN "
                             "NULL; END$$";
    if (!adminExec(*this, role, error)) return "";
  }
  const std::string create = "CREATE DATABASE " + name + (owner.empty() ? "" : " OWNER " + owner);
  if (!adminExec(*this, create, error)) return "";
  return name;
}

void PgCluster::dropDatabase(const std::string& name) const {
  std::string ignored;
  adminExec(*this, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", ignored);
}

PgCluster* sharedPostgres(std::string& why) {
  static std::string failure;
  static std::unique_ptr<PgCluster> cluster = [] {
    if (const char* state = std::getenv("TUNEPLANE_TEST_POSTGRES"); state != nullptr && *state) {
      std::ifstream in(state);
      std::string dir;
      if (!std::getline(in, dir)) {
        failure = "the ctest fixture started no PostgreSQL (see the test postgres.start)";
        return std::unique_ptr<PgCluster>();
      }
      auto attached = PgCluster::attach(dir);
      if (attached->pid() != 0) return attached;
      failure = "the fixture's PostgreSQL in " + dir + " is not running";
      return std::unique_ptr<PgCluster>();
    }
    return PgCluster::start(failure);
  }();
  why = failure;
  return cluster.get();
}

bool postgresRequired() {
  const char* env = std::getenv("TUNEPLANE_REQUIRE_POSTGRES");
  return env != nullptr && std::string(env) == "1";
}

}  // namespace tuneplane::test
