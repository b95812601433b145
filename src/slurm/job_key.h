// The key by which TunePlane follows one Slurm job (one het component): what it stores
// (store::ComponentRecord::sluid, JobRecord::sluid) and hands to every lifecycle call, and how
// a REST API version names that job in a path (slurm_api.h says which way each version goes):
//
//   sCC1M8VPKSJX00        its SLUID, on an API whose paths take SLUIDs (v0.0.45). SLUIDs are
//                         never reused, so an answer by SLUID is about this job.
//   sFK1M94Y5HJ700@17     its SLUID at numeric id 17, on an API whose paths take numeric ids
//                         only (v0.0.44: Slurm 25.11 answers a SLUID in a path with 422).
//                         Numeric ids are reused once a job is purged, so an answer about
//                         id 17 is this job only if it carries this SLUID.
//   17@1796535430/tp-…    a record without a SLUID (a job older than the SLUIDs of its
//                         cluster): id 17 submitted at that Unix second, carrying that
//                         submit token in its comment ("/tp-…" only when it did).
//   17                    a bare numeric id (a submit receipt): nothing to confirm it by;
//                         the reconciler checks the comment itself (control/job_step.h).
//
// Every read and cancel by numeric id of a key that has something to confirm it by is
// confirmed against Slurm's answer first (confirmJob): another SLUID, or another submit time,
// under the same id is Slurm's word that the job the key named is no longer in slurmctld
// (purged and the id reused, or requeued under a new SLUID); an answer that neither proves
// nor disproves it concludes nothing. Pure functions; thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/job_record.h"

namespace tuneplane::slurm {

// How a REST API version's paths (/job/{job_id}) name a job.
enum class JobAddressing {
  kBySluid,      // the SLUID; a bare numeric id too
  kByNumericId,  // the numeric id only; a SLUID is refused (HTTP 422, error 9000)
};

struct JobKey {
  std::string sluid;        // empty when the key has none
  uint64_t job_id = 0;      // 0 when the key has none
  int64_t submit_time = 0;  // the SLUID-less form's; 0 otherwise
  std::string token;        // the SLUID-less form's, when the comment held a submit token
  // Written with its numeric id ("sX@17", "17@T"): answers about that id are confirmed.
  bool numeric_form = false;

  bool operator==(const JobKey&) const = default;
};

// The key as text (the forms above); a bare SLUID or a bare id when only that is set.
std::string formatJobKey(const JobKey& key);
// nullopt when `text` is none of the forms above.
std::optional<JobKey> parseJobKey(std::string_view text);
// Whether `text` has the form of a SLUID ("s" and 13 Crockford base32 digits, any case).
bool looksLikeSluid(std::string_view text);

// The key of `record` as an API that names jobs by `addressing` gives it: its SLUID
// (kBySluid), or its SLUID at its numeric id (kByNumericId); a record without a SLUID gets
// the SLUID-less form either way.
std::string jobKeyOf(JobAddressing addressing, const JobRecord& record);
// The key of `record` in the form `asked` was written in, so that it matches what the caller
// stored: a numeric-form key's answers keep the numeric form, a SLUID key's their SLUIDs
// (even on a version that reads by numeric id: a job followed since before a switch of
// versions); a bare numeric id's get jobKeyOf's.
std::string jobKeyLike(const JobKey& asked, JobAddressing addressing, const JobRecord& record);
// Gives `record` (decoded with the SLUID Slurm reported) its key as jobKeyOf does; leaves it
// untouched when that is its SLUID already.
void keyRecord(JobAddressing addressing, JobRecord& record);
// Whether `key` is followed by numeric id (the numeric forms above): the degraded way.
bool isFollowedByNumericId(std::string_view key);

// What goes in /job/{…} for `key` on an API that names jobs by `addressing`: the SLUID where
// it can, else the numeric id; nullopt when neither can be put in a path (a SLUID-only key on
// a numeric-id API: the caller looks the SLUID up in the job listing).
std::optional<std::string> pathIdFor(JobAddressing addressing, const JobKey& key);
// Whether the answer to a request by that path id must be confirmed (confirmJob) before it is
// taken as the job's: the path held a numeric id and the key has a SLUID or a submit time.
bool needsConfirmation(JobAddressing addressing, const JobKey& key);

enum class Confirmation {
  kSame,      // the record with the key's numeric id is the job the key names
  kGone,      // it is another job (another SLUID, or another submit time): the key's job is
              // not in slurmctld any more — Slurm's word, as its "invalid job id" would be
  kUnproven,  // the answer lacks the id, or what would prove it either way
};
struct Confirmed {
  Confirmation verdict = Confirmation::kUnproven;
  std::string why;  // for people; empty for kSame
};
// Checks `records` (Slurm's answer about key.job_id) against `key`.
// REQUIRES: key.job_id != 0.
Confirmed confirmJob(const JobKey& key, const std::vector<JobRecord>& records);

// Whether a job in `record`'s state can still be stopped by a DELETE: it waits, runs or is
// suspended (a requeue that is still completing is PENDING, and a DELETE ends it). A job
// that ended is left alone: its id may be reused as soon as it is purged.
bool mayStillRun(const JobRecord& record);

}  // namespace tuneplane::slurm
