// The store's schema over time. Its history is a list of migrations, oldest first:
// migration i takes a database from version i to i + 1 (version 0 is a new, empty file),
// and the last one's version is the schema this build writes. Adding version N + 1 is one
// more Migration at the end (migrations.cc); the ones before it never change, because a
// database made by any earlier build still has to reach the current schema through them.
// SQLite: the version lives in PRAGMA user_version and the file is marked as TunePlane's
// with PRAGMA application_id. PostgreSQL: both live in the one row of table
// tuneplane_schema, and the whole migration runs under the write transaction's lock, so
// replicas starting at once migrate once. The same list of versions serves both.
// Thread-safety: functions over one Connection, which the caller uses alone.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/result.h"
#include "store/sql_connection.h"

namespace tuneplane::store {

inline constexpr int64_t kApplicationId = 0x54506C6E;  // "TPln"

struct Migration {
  int to_version;                // == its position in the list + 1
  std::string_view summary;      // what it changes, for messages and docs/developers.md
  Status (*apply)(Connection&);  // runs inside the migration's transaction
};

// Every migration this build knows (migrations.cc), oldest first.
std::span<const Migration> knownMigrations();
int currentSchemaVersion();  // knownMigrations().back().to_version

// Decides, by reading only, whether this build may use the database: refuses a file that
// is not a SQLite database or fails PRAGMA quick_check ("store.corrupt"), a database made
// by another program ("store.not_tuneplane"), or one whose version is newer than the last
// of `known` ("store.newer_version", naming both versions). Nothing is written, so a
// refused file keeps every byte. Returns the version found; 0 is a new, empty database.
Result<int> inspectDatabase(Connection& connection, std::span<const Migration> known);

// The schema version the database says it has (0 for a new one), read without judging it:
// what doctor reports of a database inspectDatabase refused as newer.
Result<int64_t> storedSchemaVersion(Connection& connection);

// Brings the database up to the last of `known`, in one write transaction: every step and
// the new user_version, or nothing. Afterwards PRAGMA foreign_key_check must be clean.
// REQUIRES: inspectDatabase accepted the file; no transaction is open on `connection`.
Status migrate(Connection& connection, std::span<const Migration> known);

}  // namespace tuneplane::store
