// The schema's history. Each entry is frozen once released: a database written by any
// earlier build reaches today's schema by running the entries after its version, in order.
// To change the schema, append a migration (and a row in tests/store/migrations_test.cc
// that builds a database of the version before it and checks it survives).
#include <array>

#include "store/schema.h"

namespace tuneplane::store {
namespace {

// Version 1. Tables:
//   jobs        one row per job: the spec as submitted, the phase the reconciler last set,
//               the cancel request (written only by requestCancel)
//   job_labels  metadata.labels, one row per key, for the label=key=value filter
//   attempts    one row per attempt; submit_token is UNIQUE (the lost-receipt search key);
//               the abandon_* columns are written only by requestAbandon
//   components  one row per het component of an attempt, as Slurm last reported it
//               (state: Slurm's job_state list as a JSON array)
//   events      the transition log; seq is AUTOINCREMENT, so it only ever grows
// Indexes: listing newest first (alone, or by owner, phase or name), active jobs (a partial
// index over the non-terminal phases), label pairs, events by job.
// Each version has one text per dialect where the DDL must differ (SQLite's STRICT tables
// know only INTEGER; PostgreSQL's INTEGER is 32 bits, so it gets BIGINT, an identity column
// for seq, and COLLATE "C" so text sorts and compares byte for byte as in SQLite); the two
// texts define the same tables, columns, keys and indexes.
constexpr const char* kVersion1Sqlite = R"sql(
CREATE TABLE jobs (
  id                  TEXT NOT NULL PRIMARY KEY,
  name                TEXT NOT NULL,
  owner               TEXT NOT NULL,
  spec                TEXT NOT NULL,
  phase               TEXT NOT NULL,
  reason              TEXT NOT NULL,
  created_ms          INTEGER NOT NULL,
  updated_ms          INTEGER NOT NULL,
  next_attempt_ms     INTEGER NOT NULL,
  cancel_requested    INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  cancel_requested_by TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX jobs_newest ON jobs (created_ms, id);
CREATE INDEX jobs_by_owner ON jobs (owner, created_ms, id);
CREATE INDEX jobs_by_phase ON jobs (phase, created_ms, id);
CREATE INDEX jobs_by_name ON jobs (name, created_ms, id);
CREATE INDEX jobs_active ON jobs (created_ms, id)
  WHERE phase NOT IN ('Succeeded', 'Failed', 'Cancelled');

CREATE TABLE job_labels (
  job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (job_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX job_labels_by_pair ON job_labels (key, value);

CREATE TABLE attempts (
  job_id            TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  number            INTEGER NOT NULL CHECK (number >= 1),
  phase             TEXT NOT NULL,
  reason            TEXT NOT NULL,
  cause             TEXT NOT NULL,
  submit_token      TEXT NOT NULL UNIQUE CHECK (submit_token <> ''),
  staging_dir       TEXT NOT NULL,
  slurm_job_id      INTEGER NOT NULL,
  created_ms        INTEGER NOT NULL,
  submitted_ms      INTEGER NOT NULL,
  ended_ms          INTEGER NOT NULL,
  lookups           INTEGER NOT NULL,
  next_lookup_ms    INTEGER NOT NULL,
  missing_polls     INTEGER NOT NULL,
  abandon_requested INTEGER NOT NULL DEFAULT 0 CHECK (abandon_requested IN (0, 1)),
  abandoned_by      TEXT NOT NULL DEFAULT '',
  abandon_reason    TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, number)
) STRICT, WITHOUT ROWID;

CREATE TABLE components (
  job_id       TEXT NOT NULL,
  attempt      INTEGER NOT NULL,
  idx          INTEGER NOT NULL CHECK (idx >= 0),
  pool         TEXT NOT NULL,
  slurm_job_id INTEGER NOT NULL,
  sluid        TEXT NOT NULL,
  state        TEXT NOT NULL,
  reason       TEXT NOT NULL,
  exit_code    INTEGER,
  signal       INTEGER,
  nodes        TEXT NOT NULL,
  start_time   INTEGER NOT NULL,
  end_time     INTEGER NOT NULL,
  PRIMARY KEY (job_id, attempt, idx),
  FOREIGN KEY (job_id, attempt) REFERENCES attempts (job_id, number) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

CREATE TABLE events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id     TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  attempt    INTEGER NOT NULL,
  time_ms    INTEGER NOT NULL,
  from_phase TEXT NOT NULL,
  to_phase   TEXT NOT NULL,
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL
) STRICT;
CREATE INDEX events_by_job ON events (job_id, seq);

PRAGMA application_id = 1414556782;
)sql";

constexpr const char* kVersion1Postgres = R"sql(
CREATE TABLE jobs (
  id                  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  name                TEXT COLLATE "C" NOT NULL,
  owner               TEXT COLLATE "C" NOT NULL,
  spec                TEXT NOT NULL,
  phase               TEXT COLLATE "C" NOT NULL,
  reason              TEXT NOT NULL,
  created_ms          BIGINT NOT NULL,
  updated_ms          BIGINT NOT NULL,
  next_attempt_ms     BIGINT NOT NULL,
  cancel_requested    BIGINT NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  cancel_requested_by TEXT NOT NULL DEFAULT ''
);
CREATE INDEX jobs_newest ON jobs (created_ms, id);
CREATE INDEX jobs_by_owner ON jobs (owner, created_ms, id);
CREATE INDEX jobs_by_phase ON jobs (phase, created_ms, id);
CREATE INDEX jobs_by_name ON jobs (name, created_ms, id);
CREATE INDEX jobs_active ON jobs (created_ms, id)
  WHERE phase NOT IN ('Succeeded', 'Failed', 'Cancelled');

CREATE TABLE job_labels (
  job_id TEXT COLLATE "C" NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  key    TEXT COLLATE "C" NOT NULL,
  value  TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (job_id, key)
);
CREATE INDEX job_labels_by_pair ON job_labels (key, value);

CREATE TABLE attempts (
  job_id            TEXT COLLATE "C" NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  number            BIGINT NOT NULL CHECK (number >= 1),
  phase             TEXT COLLATE "C" NOT NULL,
  reason            TEXT NOT NULL,
  cause             TEXT COLLATE "C" NOT NULL,
  submit_token      TEXT COLLATE "C" NOT NULL UNIQUE CHECK (submit_token <> ''),
  staging_dir       TEXT NOT NULL,
  slurm_job_id      BIGINT NOT NULL,
  created_ms        BIGINT NOT NULL,
  submitted_ms      BIGINT NOT NULL,
  ended_ms          BIGINT NOT NULL,
  lookups           BIGINT NOT NULL,
  next_lookup_ms    BIGINT NOT NULL,
  missing_polls     BIGINT NOT NULL,
  abandon_requested BIGINT NOT NULL DEFAULT 0 CHECK (abandon_requested IN (0, 1)),
  abandoned_by      TEXT NOT NULL DEFAULT '',
  abandon_reason    TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, number)
);

CREATE TABLE components (
  job_id       TEXT COLLATE "C" NOT NULL,
  attempt      BIGINT NOT NULL,
  idx          BIGINT NOT NULL CHECK (idx >= 0),
  pool         TEXT NOT NULL,
  slurm_job_id BIGINT NOT NULL,
  sluid        TEXT NOT NULL,
  state        TEXT NOT NULL,
  reason       TEXT NOT NULL,
  exit_code    BIGINT,
  signal       BIGINT,
  nodes        TEXT NOT NULL,
  start_time   BIGINT NOT NULL,
  end_time     BIGINT NOT NULL,
  PRIMARY KEY (job_id, attempt, idx),
  FOREIGN KEY (job_id, attempt) REFERENCES attempts (job_id, number) ON DELETE CASCADE
);

CREATE TABLE events (
  seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id     TEXT COLLATE "C" NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  attempt    BIGINT NOT NULL,
  time_ms    BIGINT NOT NULL,
  from_phase TEXT NOT NULL,
  to_phase   TEXT NOT NULL,
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL
);
CREATE INDEX events_by_job ON events (job_id, seq);
)sql";

Status toVersion1(Connection& connection) {
  return connection.exec(connection.dialect() == Dialect::kPostgres ? kVersion1Postgres
                                                                    : kVersion1Sqlite);
}

// Version 2. leader_lease: the one row naming the replica that runs the control loop and
// its fencing epoch (leader_lease.h); expires_ms is the database server's clock. SQLite
// (one serve process) keeps the table empty; it exists so both schemas stay one.
constexpr const char* kVersion2Sqlite = R"sql(
CREATE TABLE leader_lease (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  epoch      INTEGER NOT NULL,
  holder     TEXT NOT NULL,
  holder_pid INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL
) STRICT;
)sql";

constexpr const char* kVersion2Postgres = R"sql(
CREATE TABLE leader_lease (
  id         BIGINT PRIMARY KEY CHECK (id = 1),
  epoch      BIGINT NOT NULL,
  holder     TEXT NOT NULL,
  holder_pid BIGINT NOT NULL,
  expires_ms BIGINT NOT NULL
);
)sql";

Status toVersion2(Connection& connection) {
  return connection.exec(connection.dialect() == Dialect::kPostgres ? kVersion2Postgres
                                                                    : kVersion2Sqlite);
}

// Version 3. jobs.version: bumped by every reconciler commit of the job, which carries the
// version it was built from and is refused when the row moved on since (the fence by the
// read: a leader that read before another one wrote changes nothing). jobs.change_seq: the
// store's change sequence at the job's last write of any kind (commits and the API's
// requests), so the control loop reads only the jobs that changed since its last cycle.
constexpr const char* kVersion3 = R"sql(
ALTER TABLE jobs ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_change ON jobs (change_seq);
)sql";

// SQLite's STRICT tables know INTEGER, not BIGINT (the same 64 bits).
constexpr const char* kVersion3Sqlite = R"sql(
ALTER TABLE jobs ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_by_change ON jobs (change_seq);
)sql";

Status toVersion3(Connection& connection) {
  return connection.exec(connection.dialect() == Dialect::kPostgres ? kVersion3 : kVersion3Sqlite);
}

// Version 4. jobs.run_as: the Unix user Slurm runs the job as under slurm.identity per_user,
// fixed when the job is accepted (the token's unix_user then), so a later change of tokens
// never moves a job in flight to another user; '' is the site's slurm.user (shared).
constexpr const char* kVersion4 = R"sql(
ALTER TABLE jobs ADD COLUMN run_as TEXT NOT NULL DEFAULT '';
)sql";

Status toVersion4(Connection& connection) {
  return connection.exec(kVersion4);
}

// Version 5. idempotency_keys: the Idempotency-Key of a POST /v1/jobs, per owner, bound to
// the job its first request created and the SHA-256 of that request's body
// (idempotency_keys.h). Written only in the transaction that creates the job, so a refused
// request binds no key; rows older than the retention are pruned by later keyed submits
// (created_ms's index makes that a seek).
constexpr const char* kVersion5Sqlite = R"sql(
CREATE TABLE idempotency_keys (
  owner          TEXT NOT NULL,
  key            TEXT NOT NULL,
  request_sha256 TEXT NOT NULL,
  job_id         TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  created_ms     INTEGER NOT NULL,
  PRIMARY KEY (owner, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_ms);
)sql";

constexpr const char* kVersion5Postgres = R"sql(
CREATE TABLE idempotency_keys (
  owner          TEXT COLLATE "C" NOT NULL,
  key            TEXT COLLATE "C" NOT NULL,
  request_sha256 TEXT COLLATE "C" NOT NULL,
  job_id         TEXT COLLATE "C" NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  created_ms     BIGINT NOT NULL,
  PRIMARY KEY (owner, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_ms);
)sql";

Status toVersion5(Connection& connection) {
  return connection.exec(connection.dialect() == Dialect::kPostgres ? kVersion5Postgres
                                                                    : kVersion5Sqlite);
}

// Version 6. components.preempt_time: when Slurm chose to preempt the component's job (Unix
// seconds; 0 when it has not), so `describe` can say a running job is being preempted and
// by when Slurm ends it (its end_time). Rows written before it read 0: not preempted.
constexpr const char* kVersion6 = R"sql(
ALTER TABLE components ADD COLUMN preempt_time BIGINT NOT NULL DEFAULT 0;
)sql";

// SQLite's STRICT tables know INTEGER, not BIGINT (the same 64 bits).
constexpr const char* kVersion6Sqlite = R"sql(
ALTER TABLE components ADD COLUMN preempt_time INTEGER NOT NULL DEFAULT 0;
)sql";

Status toVersion6(Connection& connection) {
  return connection.exec(connection.dialect() == Dialect::kPostgres ? kVersion6 : kVersion6Sqlite);
}

constexpr std::array<Migration, 6> kMigrations{{
    {1, "jobs, labels, attempts, components, events", &toVersion1},
    {2, "leader lease", &toVersion2},
    {3, "job versions and change sequence", &toVersion3},
    {4, "the Unix user a job runs as", &toVersion4},
    {5, "idempotency keys of submits", &toVersion5},
    {6, "when Slurm chose to preempt a component", &toVersion6},
}};

}  // namespace

std::span<const Migration> knownMigrations() {
  return kMigrations;
}

}  // namespace tuneplane::store
