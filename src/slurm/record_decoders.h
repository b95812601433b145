// One record of a slurmrestd answer — an element of `jobs[]`, `pings[]`, `errors[]`, … — from
// a simdjson On-Demand object into its typed value (job_record.h), reading each field once in
// document order and ignoring the rest. Every decoder iterates its object to the closing
// brace (no find_field): record_batches.h relies on that to know a record was whole. Errors:
// "slurm.bad_response" with `field` relative to the record ("exit_code", "job_id");
// answer_decoder.cc prefixes where the record sits
// ("jobs[3]."). Internal to the slurm module (it exposes simdjson). Thread-safety: stateless.
//
// The decoders return a Failure, not a Status: a Status that holds no error still clears its
// 100-byte union (tl::expected value-initialises it, ~14 ns), and on this path, a few times
// per record of a 10,000-record answer, that cost more than decoding the record.
#pragma once

#include <simdjson.h>

#include <optional>
#include <vector>

#include "common/result.h"
#include "slurm/job_record.h"

namespace tuneplane::slurm::records {

namespace ondemand = simdjson::ondemand;

// Nothing when a record decoded, else why not.
using Failure = std::optional<Error>;

// "slurm.bad_response" for a simdjson error met while reading `field`.
Error malformed(std::string field, simdjson::error_code code);

// "slurm.bad_response" at `field`: an answer that parsed but is not what slurmrestd sends.
tl::unexpected<Error> badResponse(std::string field, std::string message);

// REQUIRES: every `out` record is default-constructed.
// A job record needs a `job_id` that is a set, non-negative number.
Failure decodeJobRecord(ondemand::object& object, JobRecord& out);
// `job_id` is a string ("10", "10+1"); a number is accepted too. Appends the entry to `out`
// when it decodes, nothing otherwise.
Failure decodeJobStateEntry(ondemand::object& object, JobStateList& out);
// An `errors[]` / `warnings[]` entry.
Failure decodeMessage(ondemand::object& object, SlurmMessage& out);
// A DELETE answer's `status[]` entry, {error: {code, string, message}, step_id}; `refused`
// tells whether it carries a non-zero code.
Failure decodeCancelEntry(ondemand::object& object, SlurmMessage& out, bool& refused);
Failure decodeControllerPing(ondemand::object& object, ControllerPing& out);
Failure decodePartitionInfo(ondemand::object& object, PartitionInfo& out);
Failure decodeNodeInfo(ondemand::object& object, NodeInfo& out);

// An array of messages inside an answer (a receipt's `warnings`): items that are not
// objects are skipped; a value that is not an array gives none.
Failure readMessages(ondemand::value& value, std::vector<SlurmMessage>& out);

}  // namespace tuneplane::slurm::records
