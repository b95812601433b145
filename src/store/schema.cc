#include "store/schema.h"
#include "store/error_codes.h"

#include <optional>
#include <string>

namespace tuneplane::store {

namespace {

// Errors met while inspecting say which file and that it was left alone.
Error refusal(Error error, const std::string& path) {
  if (error.code == codes::kCorrupt) {
    error.message = "the database " + path +
                    " is not a SQLite database or is damaged; it was left as it is "
                    "(restore it from a backup, or move it away to start empty). " +
                    error.message;
  }
  error.field = "db";
  return error;
}

// PostgreSQL keeps the version (and TunePlane's mark) in a table of its own, since it has
// no user_version: one row, written in the migration's transaction.
constexpr const char* kPgSchemaTable = "tuneplane_schema";
constexpr const char* kPgCountTablesSql =
    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()";
constexpr const char* kPgHasSchemaTableSql =
    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
    " AND tablename = 'tuneplane_schema'";

Result<int64_t> pgVersion(Connection& connection) {
  auto has = connection.queryInteger(kPgHasSchemaTableSql);
  if (!has) return fail(has.error());
  if (*has == 0) return 0;
  return connection.queryInteger("SELECT version FROM tuneplane_schema WHERE id = 1");
}

Result<int> inspectPostgres(Connection& connection, std::span<const Migration> known) {
  const std::string& where = connection.path();
  auto tables = connection.queryInteger(kPgCountTablesSql);
  if (!tables) return fail(refusal(tables.error(), where));
  if (*tables == 0) return 0;  // new and empty
  auto has = connection.queryInteger(kPgHasSchemaTableSql);
  if (!has) return fail(refusal(has.error(), where));
  std::optional<int64_t> application;
  if (*has != 0) {
    auto id = connection.queryInteger("SELECT application_id FROM tuneplane_schema WHERE id = 1");
    if (!id) return fail(refusal(id.error(), where));
    application = *id;
  }
  if (application != kApplicationId) {
    return fail(codes::kNotTuneplane, "db",
                "the database " + where + " has tables that TunePlane did not make (no " +
                    kPgSchemaTable + " mark); it was left as it is");
  }
  auto version = connection.queryInteger("SELECT version FROM tuneplane_schema WHERE id = 1");
  if (!version) return fail(refusal(version.error(), where));
  const int latest = known.empty() ? 0 : known.back().to_version;
  if (*version > latest) {
    return fail(codes::kNewerVersion, "db",
                "the database " + where + " has schema version " + std::to_string(*version) +
                    ", newer than the newest this TunePlane knows (" + std::to_string(latest) +
                    "); it was left as it is: run the TunePlane that wrote it, or a newer one");
  }
  return static_cast<int>(*version);
}

// Under the write transaction's lock, so replicas starting together migrate once.
Status migratePostgres(Connection& connection, std::span<const Migration> known) {
  auto transaction = Transaction::begin(connection, Transaction::Kind::kWrite);
  if (!transaction) return fail(transaction.error());
  auto version = pgVersion(connection);
  if (!version) return fail(version.error());
  const int latest = known.empty() ? 0 : known.back().to_version;
  if (*version >= latest) return transaction->commit();
  for (const Migration& step : known) {
    if (step.to_version <= *version) continue;
    if (auto applied = step.apply(connection); !applied) {
      Error error = applied.error();
      error.message = "migrating the database to schema version " +
                      std::to_string(step.to_version) + " (" + std::string(step.summary) +
                      ") failed; it was left at version " + std::to_string(*version) + ": " +
                      error.message;
      return fail(std::move(error));
    }
  }
  const std::string mark =
      "CREATE TABLE IF NOT EXISTS tuneplane_schema (id INTEGER PRIMARY KEY CHECK (id = 1),"
      " application_id BIGINT NOT NULL, version INTEGER NOT NULL);"
      " INSERT INTO tuneplane_schema (id, application_id, version) VALUES (1, " +
      std::to_string(kApplicationId) + ", " + std::to_string(latest) +
      ") ON CONFLICT (id) DO UPDATE SET version = excluded.version";
  if (auto set = connection.exec(mark); !set) return fail(set.error());
  return transaction->commit();
}

}  // namespace

Result<int64_t> storedSchemaVersion(Connection& connection) {
  if (connection.dialect() == Dialect::kPostgres) return pgVersion(connection);
  return connection.queryInteger("PRAGMA user_version");
}

int currentSchemaVersion() {
  return knownMigrations().back().to_version;
}

Result<int> inspectDatabase(Connection& connection, std::span<const Migration> known) {
  if (connection.dialect() == Dialect::kPostgres) return inspectPostgres(connection, known);
  const std::string& path = connection.path();
  // The first read parses the file header: garbage fails here with SQLITE_NOTADB.
  auto version = connection.queryInteger("PRAGMA user_version");
  if (!version) return fail(refusal(version.error(), path));
  auto application = connection.queryInteger("PRAGMA application_id");
  if (!application) return fail(refusal(application.error(), path));
  auto objects = connection.queryInteger("SELECT count(*) FROM sqlite_schema");
  if (!objects) return fail(refusal(objects.error(), path));

  if (*version == 0 && *application == 0 && *objects == 0) return 0;  // new and empty
  if (*application != kApplicationId) {
    return fail(codes::kNotTuneplane, "db",
                "the database " + path + " was not made by TunePlane (its application_id is " +
                    std::to_string(*application) + "); it was left as it is");
  }
  const int latest = known.empty() ? 0 : known.back().to_version;
  if (*version > latest) {
    return fail(codes::kNewerVersion, "db",
                "the database " + path + " has schema version " + std::to_string(*version) +
                    ", newer than the newest this TunePlane knows (" + std::to_string(latest) +
                    "); it was left as it is: run the TunePlane that wrote it, or a newer one");
  }
  // Reads every page of every table and index: finds truncation and torn pages before
  // anything is built on them. Linear in the file's size, once per start.
  auto check = connection.queryText("PRAGMA quick_check(1)");
  if (!check) return fail(refusal(check.error(), path));
  if (*check != "ok") {
    return fail(refusal(Error{codes::kCorrupt, "", "quick_check: " + *check}, path));
  }
  return static_cast<int>(*version);
}

Status migrate(Connection& connection, std::span<const Migration> known) {
  if (connection.dialect() == Dialect::kPostgres) return migratePostgres(connection, known);
  auto transaction = Transaction::begin(connection, Transaction::Kind::kWrite);
  if (!transaction) return fail(transaction.error());
  // Read again under the write lock: another process may have migrated meanwhile.
  auto version = connection.queryInteger("PRAGMA user_version");
  if (!version) return fail(version.error());
  const int latest = known.empty() ? 0 : known.back().to_version;
  if (*version >= latest) return transaction->commit();

  for (const Migration& step : known) {
    if (step.to_version <= *version) continue;
    if (auto applied = step.apply(connection); !applied) {
      Error error = applied.error();
      error.message = "migrating the database to schema version " +
                      std::to_string(step.to_version) + " (" + std::string(step.summary) +
                      ") failed; it was left at version " + std::to_string(*version) + ": " +
                      error.message;
      return fail(std::move(error));
    }
  }
  {
    auto violations = connection.query("PRAGMA foreign_key_check");
    if (!violations) return fail(violations.error());
    auto row = violations->step();
    if (!row) return fail(row.error());
    if (*row) {
      return fail(codes::kConstraint, "db",
                  "migrating to schema version " + std::to_string(latest) + " left a row in " +
                      violations->text(0) + " that refers to nothing; nothing was changed");
    }
  }
  // user_version is part of the transaction, so the number moves with the tables.
  if (auto set = connection.exec("PRAGMA user_version = " + std::to_string(latest)); !set) {
    return fail(set.error());
  }
  return transaction->commit();
}

}  // namespace tuneplane::store
