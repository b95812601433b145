#include "store/open_store.h"

#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include "store/error_codes.h"
#include "store/pg_connection.h"
#include "store/postgres_job_store.h"
#include "store/sqlite_job_store.h"

namespace tuneplane::store {
namespace {

constexpr const char* kPasswordField = "server.db_password_file";

Result<std::string> readPassword(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return fail(codes::kInvalid, kPasswordField, "cannot read the password file " + path);
  }
  // Like libpq's ~/.pgpass: a secret others can read is refused, not used.
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return fail(
        codes::kInvalid, kPasswordField,
        "the password file " + path + " is readable by others than its owner; chmod 600 it");
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  if (!in.good() && !in.eof()) {
    return fail(codes::kInvalid, kPasswordField, "cannot read the password file " + path);
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) {
    return fail(codes::kInvalid, kPasswordField, "the password file " + path + " is empty");
  }
  return text;
}

}  // namespace

std::string describeDb(const std::string& db) {
  return PostgresJobStore::isUri(db) ? redactUri(db) : db;
}

Result<std::unique_ptr<JobStore>> openJobStore(const std::string& db,
                                               const std::optional<std::string>& password_file) {
  if (!PostgresJobStore::isUri(db)) {
    if (password_file) {
      return fail(codes::kInvalid, kPasswordField,
                  "a password file is for a PostgreSQL server.db (postgresql://…), not a "
                  "SQLite file");
    }
    auto store = SqliteJobStore::open(db);
    if (!store) return fail(store.error());
    return std::unique_ptr<JobStore>(std::move(*store));
  }
  PostgresJobStoreOptions options;
  if (password_file) {
    auto password = readPassword(*password_file);
    if (!password) return fail(password.error());
    options.password = std::move(*password);
  }
  auto store = PostgresJobStore::open(db, options);
  if (!store) return fail(store.error());
  return std::unique_ptr<JobStore>(std::move(*store));
}

}  // namespace tuneplane::store
