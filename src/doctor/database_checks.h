// Doctor's judgements of the job store's database (issue 19), pure functions over
// DatabaseFacts:
//   database        the store can be opened, and its schema version is this TunePlane's
//                   (ok), older (warn: serve migrates it on its next start, after which older
//                   TunePlanes cannot read it), none yet (ok: serve creates it), or newer,
//                   damaged or another program's (fail: serve refuses it); a SQLite file that
//                   does not exist yet is ok (serve creates it)
//   database/lease  PostgreSQL only: the leader lease row — held (ok: holder, epoch and
//                   time left by the database's clock), expired or never taken (warn: no
//                   replica runs the control loop now); skipped when the database failed
#pragma once

#include "doctor/check.h"
#include "doctor/facts.h"

namespace tuneplane::doctor {

CheckResult checkDatabase(const DatabaseFacts& facts);
CheckResult checkDatabaseLease(const DatabaseFacts& facts);

}  // namespace tuneplane::doctor
