// The ctest fixture's PostgreSQL (pg_cluster.h): `tp_test_postgres start STATE` starts a
// server and writes its directory to the file STATE; `tp_test_postgres stop STATE` stops it
// by its PID and removes the directory. Where PostgreSQL is not installed, start says so
// loudly and succeeds without a server, and the tests report themselves skipped (unless
// TUNEPLANE_REQUIRE_POSTGRES=1, when start fails).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/pg_cluster.h"

int main(int argc, char** argv) {
  using tuneplane::test::PgCluster;
  if (argc != 3) {
    std::fprintf(stderr, "usage: tp_test_postgres start|stop STATE\n");
    return 2;
  }
  const std::string command = argv[1];
  const std::filesystem::path state = argv[2];
  if (command == "start") {
    std::filesystem::remove(state);
    std::string error;
    auto cluster = PgCluster::start(error);
    if (!cluster) {
      std::fprintf(stderr, "*** PostgreSQL tests will be SKIPPED: %s\n", error.c_str());
      return tuneplane::test::postgresRequired() ? 1 : 0;
    }
    std::ofstream(state) << cluster->dir().string();
    std::printf("PostgreSQL (pid %d) in %s\n", static_cast<int>(cluster->pid()),
                cluster->dir().c_str());
    cluster->release();
    return 0;
  }
  if (command == "stop") {
    std::ifstream in(state);
    std::string dir;
    if (!std::getline(in, dir)) return 0;  // nothing was started
    auto cluster = PgCluster::attach(dir);
    const bool stopped = cluster->stop();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::filesystem::remove(state, ec);
    return stopped ? 0 : 1;
  }
  std::fprintf(stderr, "tp_test_postgres: unknown command %s\n", command.c_str());
  return 2;
}
