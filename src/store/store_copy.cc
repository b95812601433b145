#include "store/store_copy.h"

#include <memory>
#include <utility>
#include <vector>

#include "store/error_codes.h"
#include "store/job_reads.h"
#include "store/job_writes.h"
#include "store/open_store.h"
#include "store/pg_connection.h"
#include "store/postgres_job_store.h"
#include "store/schema.h"
#include "store/store_probe.h"

namespace tuneplane::store {
namespace {

constexpr const char* kSqliteScheme = "sqlite:";

Result<CopyCounts> countRows(Connection& connection) {
  CopyCounts counts;
  const std::pair<const char*, int64_t*> tables[] = {
      {"SELECT count(*) FROM jobs", &counts.jobs},
      {"SELECT count(*) FROM attempts", &counts.attempts},
      {"SELECT count(*) FROM components", &counts.components},
      {"SELECT count(*) FROM events", &counts.events},
  };
  for (const auto& [sql, count] : tables) {
    auto n = connection.queryInteger(sql);
    if (!n) return fail(n.error());
    *count = *n;
  }
  return counts;
}

Status refuseIfHoldsJobs(Connection& target) {
  auto jobs = target.queryInteger("SELECT count(*) FROM jobs");
  if (!jobs) return fail(jobs.error());
  if (*jobs == 0) return ok();
  return fail(codes::kTargetNotEmpty, "to",
              "the target database " + target.path() + " already holds " + std::to_string(*jobs) +
                  " jobs; store copy fills only an empty one (nothing was written)");
}

// Oldest first, so the target's rows go in in the order the source made them.
Result<std::vector<std::string>> jobIds(Connection& source) {
  std::vector<std::string> ids;
  auto q = source.query("SELECT id FROM jobs ORDER BY created_ms, id");
  if (!q) return fail(q.error());
  auto each = q->forEachRow([&](const Query& row) -> Status {
    ids.push_back(row.text(0));
    return ok();
  });
  if (!each) return fail(each.error());
  return ids;
}

}  // namespace

Result<CopyCounts> copyJobs(Connection& source, Connection& target) {
  auto reading = Transaction::begin(source, Transaction::Kind::kRead);
  if (!reading) return fail(reading.error());
  auto expected = countRows(source);
  if (!expected) return fail(expected.error());
  auto ids = jobIds(source);
  if (!ids) return fail(ids.error());

  auto writing = Transaction::begin(target, Transaction::Kind::kWrite);
  if (!writing) return fail(writing.error());
  // Again under the writers' lock: a replica may have started on the target meanwhile.
  if (auto empty = refuseIfHoldsJobs(target); !empty) return fail(empty.error());

  CopyCounts copied;
  for (const std::string& id : *ids) {
    auto view = readJobView(source, id);
    if (!view) return fail(view.error());
    if (!*view) continue;  // cannot happen in one snapshot; the counts below would say so
    auto events = readEvents(source, id);
    if (!events) return fail(events.error());
    if (auto done = insertCopiedJob(target, **view, *events); !done) return fail(done.error());
    copied.jobs += 1;
    copied.attempts += static_cast<int64_t>((*view)->attempts.size());
    for (const AttemptRecord& a : (*view)->attempts) {
      copied.components += static_cast<int64_t>(a.components.size());
    }
    copied.events += static_cast<int64_t>(events->size());
  }
  if (copied != *expected) {
    return fail(codes::kCorrupt, "from",
                "the source " + source.path() + " has rows that belong to no job (" +
                    std::to_string(expected->attempts - copied.attempts) + " attempts, " +
                    std::to_string(expected->components - copied.components) + " components, " +
                    std::to_string(expected->events - copied.events) +
                    " events); nothing was written");
  }
  if (auto moved = continueEventSequence(target); !moved) return fail(moved.error());
  if (auto committed = writing->commit(); !committed) return fail(committed.error());
  return copied;
}

Result<CopyCounts> copyStore(const CopyRequest& request) {
  std::string from = request.from;
  if (from.starts_with(kSqliteScheme)) from.erase(0, std::char_traits<char>::length(kSqliteScheme));
  if (from.empty() || PostgresJobStore::isUri(from)) {
    return fail(codes::kInvalid, "from",
                "--from names the SQLite file to copy (sqlite:PATH or PATH)");
  }
  if (!PostgresJobStore::isUri(request.to)) {
    return fail(codes::kInvalid, "to",
                "--to names the PostgreSQL database to fill (postgresql://…)");
  }

  auto source = openReadOnly(from, std::nullopt, request.password_field);
  if (!source) return fail(source.error());
  auto source_version = inspectDatabase(**source, knownMigrations());
  if (!source_version) return fail(source_version.error());
  if (*source_version == 0) {
    return fail(codes::kInvalid, "from",
                "the source " + from +
                    " has no TunePlane schema (an empty database): nothing "
                    "to copy");
  }

  PgConnectionOptions options;
  if (request.password_file) {
    auto password = readPasswordFile(*request.password_file, request.password_field);
    if (!password) return fail(password.error());
    options.password = std::move(*password);
  }
  auto target = PgConnection::open(request.to, options);
  if (!target) return fail(target.error());
  auto target_version = inspectDatabase(**target, knownMigrations());
  if (!target_version) return fail(target_version.error());
  // Refused before the migration writes anything to it.
  if (*target_version > 0) {
    if (auto empty = refuseIfHoldsJobs(**target); !empty) return fail(empty.error());
  }
  if (auto migrated = migrate(**target, knownMigrations()); !migrated) {
    return fail(migrated.error());
  }
  return copyJobs(**source, **target);
}

}  // namespace tuneplane::store
