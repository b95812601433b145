#include "doctor/database_checks.h"

#include <fmt/format.h>

#include "store/error_codes.h"
#include "store/open_store.h"

namespace tuneplane::doctor {
namespace {

using nlohmann::json;

json databaseJson(const DatabaseFacts& f) {
  json details = {{"db", f.db}, {"backend", f.postgres ? "postgresql" : "sqlite"}};
  if (f.probe) {
    details["schema_version"] = f.probe->version;
    details["current_schema_version"] = f.probe->current_version;
  }
  return details;
}

// The version that added the leader_lease table (store/migrations.cc).
constexpr int64_t kLeaseSchemaVersion = 2;

}  // namespace

CheckResult checkDatabase(const DatabaseFacts& f) {
  const std::string name = "database";
  json details = databaseJson(f);
  if (f.unavailable) {
    const Error& e = *f.unavailable;
    details["code"] = e.code;
    std::string fix;
    if (e.field == store::kDbPasswordField) {
      fix =
          "make server.db_password_file a file only its owner can read (chmod 600) that "
          "holds the password";
    } else if (f.postgres) {
      fix =
          "check server.db (host, port, database, user), that PostgreSQL 15 or later runs "
          "and accepts this host, and the password (server.db_password_file or PGPASSFILE)";
    } else {
      fix =
          "check server.db and that the user TunePlane runs as can read the file and its "
          "directory";
    }
    return failCheck(name,
                     fmt::format("cannot open the database {}: {} [{}]", f.db, e.message, e.code),
                     fix, details);
  }
  if (!f.exists) {
    return okCheck(name,
                   fmt::format("the SQLite file {} does not exist yet; serve creates it on its "
                               "first start",
                               f.db),
                   details);
  }
  if (!f.probe) return skipCheck(name, "the database was not looked at");
  const store::StoreProbe& p = *f.probe;
  if (p.refusal) {
    const Error& e = *p.refusal;
    details["code"] = e.code;
    if (e.code == store::codes::kNewerVersion) {
      return failCheck(name,
                       fmt::format("the database {} has schema version {}, newer than this "
                                   "TunePlane's ({}): serve refuses it [{}]",
                                   f.db, p.version, p.current_version, e.code),
                       "run the TunePlane that wrote it (or a newer one) here too", details);
    }
    if (e.code == store::codes::kNotTuneplane) {
      return failCheck(name, fmt::format("{} [{}]", e.message, e.code),
                       "point server.db at TunePlane's own database (or an empty one)", details);
    }
    return failCheck(name, fmt::format("{} [{}]", e.message, e.code),
                     "restore the database from a backup (docs/operators.md), or move it away "
                     "to start empty",
                     details);
  }
  if (p.version == 0) {
    return okCheck(name,
                   fmt::format("the database {} is empty; serve creates schema version {} on "
                               "its first start",
                               f.db, p.current_version),
                   details);
  }
  if (p.version < p.current_version) {
    return warnCheck(
        name,
        fmt::format("the database {} has schema version {}, older than this TunePlane's ({}): "
                    "serve migrates it on its next start, and older TunePlanes cannot open it "
                    "afterwards",
                    f.db, p.version, p.current_version),
        "back the database up before starting this TunePlane's serve (docs/operators.md)", details);
  }
  return okCheck(name,
                 fmt::format("the database {} opens, schema version {} (current)", f.db, p.version),
                 details);
}

CheckResult checkDatabaseLease(const DatabaseFacts& f) {
  const std::string name = "database/lease";
  if (f.unavailable || !f.probe || f.probe->refusal) {
    return skipCheck(name, "the database could not be read (see the database check)");
  }
  const store::StoreProbe& p = *f.probe;
  json details = {{"db", f.db}};
  const std::string start_fix =
      "start `tuneplane serve` with this server.db (one replica or more); if it runs, check "
      "its log for the lease and that it reaches the database";
  if (p.version < kLeaseSchemaVersion || !p.lease) {
    details["held"] = false;
    return warnCheck(name,
                     fmt::format("no replica has taken the leader lease of {}: no serve runs "
                                 "the control loop on it",
                                 f.db),
                     start_fix, details);
  }
  const store::LeaseRow& lease = *p.lease;
  const int64_t left_ms = lease.expires_ms - p.now_ms;
  details["epoch"] = lease.epoch;
  details["holder"] = lease.holder;
  details["holder_pid"] = lease.holder_pid;
  details["expires_ms"] = lease.expires_ms;
  details["database_now_ms"] = p.now_ms;
  details["held"] = left_ms > 0;
  if (left_ms <= 0) {
    return warnCheck(name,
                     fmt::format("the leader lease (epoch {}, held by {}) expired {:.1f} s ago: "
                                 "no replica runs the control loop now (a standby takes over "
                                 "within server.lease_seconds)",
                                 lease.epoch, lease.holder, static_cast<double>(-left_ms) / 1000),
                     start_fix, details);
  }
  return okCheck(name,
                 fmt::format("the leader lease is held by {} (epoch {}), for {:.1f} s more by "
                             "the database's clock",
                             lease.holder, lease.epoch, static_cast<double>(left_ms) / 1000),
                 details);
}

}  // namespace tuneplane::doctor
