// Decoders of slurmrestd v0.0.45 answers: the answer's bytes in, typed records (job_record.h)
// out, with simdjson's On-Demand parser and no document tree in between.
//
//   bytes ─► answer ≤ DecodeOptions::whole_answer_limit: one simdjson pass over the answer
//         └► larger: json_spans walks the top level; the records array goes to simdjson in
//            batches of ~256 KiB (record_batches.h), each record then parsed on its own, so
//            the parser's index covers a batch, not 50 MB; the other top-level members are
//            parsed together as a small envelope
//
// Both paths decode through the same per-record code, so they give the same records (a test
// proves it on every transcript answer). The rules, the same for every decoder:
//  - unknown fields are ignored, at every level; a known field of another type than expected
//    decodes as its empty value, as a missing one does (slurmrestd omits what is unset);
//  - unknown enum strings (job states, flags) are kept verbatim;
//  - `{set, infinite, number}` and plain numbers both decode to NoValNumber;
//  - SLUIDs and `/jobs/state/` job ids stay strings ("10+1" for a het component);
//  - keys are compared as written: a key spelt with escapes is an unknown key;
//  - malformed JSON (including truncation and trailing content) is an error.
// Errors: Error{code "slurm.bad_response", field = where it went wrong ("jobs[3].exit_code",
// "jobs" for a missing records array), message}. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "slurm/controller_config.h"
#include "slurm/job_record.h"
#include "slurm/job_state_list.h"

namespace tuneplane::slurm {

// simdjson reads up to this many bytes past the end of its input (whole 64-byte blocks).
inline constexpr size_t kJsonPadding = 64;

// The bytes of one answer. Bytes followed by at least kJsonPadding readable bytes are parsed
// where they are; others are copied once into a padded buffer first. A std::string counts
// its spare capacity: CurlHttpTransport leaves that much after every response body, so the
// client never copies an answer.
class AnswerBytes {
 public:
  AnswerBytes(const std::string& text)  // NOLINT: implicit by design
      : text_(text), padded_(text.capacity() - text.size() >= kJsonPadding) {}
  AnswerBytes(std::string_view text) : text_(text) {}  // NOLINT
  AnswerBytes(const char* text) : text_(text) {}       // NOLINT
  // REQUIRES: kJsonPadding bytes after `text` may be read (their values do not matter).
  static AnswerBytes withPadding(std::string_view text) {
    AnswerBytes bytes(text);
    bytes.padded_ = true;
    return bytes;
  }

  std::string_view text() const { return text_; }
  bool padded() const { return padded_; }

 private:
  std::string_view text_;
  bool padded_ = false;
};

struct DecodeOptions {
  // Answers up to this size are parsed in one pass (the parser's index, ~4 bytes per token,
  // stays under a few MB); larger ones a batch of records at a time. Tests set 0 to force
  // the batch path on small answers.
  size_t whole_answer_limit = 4 << 20;
  // Bytes of the answer a batch starts with (it grows for a record that does not fit). Tests
  // set a few dozen bytes to cut records and strings everywhere.
  size_t batch_bytes = 256 << 10;
};

// GET /job/{id}: `jobs[]`, one record per het component. A record without a usable `job_id`
// is an error.
Result<std::vector<JobRecord>> decodeJobs(AnswerBytes answer, const DecodeOptions& options = {});
// GET /jobs/[?update_time=T]: records, `last_update`, and `unchanged` when a warning says
// "No job changes".
Result<JobListing> decodeJobListing(AnswerBytes answer, const DecodeOptions& options = {});
// GET /jobs/state/: `jobs[]` of {job_id (a string), state[]}, in their compact form.
Result<JobStateList> decodeJobStates(AnswerBytes answer, const DecodeOptions& options = {});
// POST /job/submit: `job_id` (a number, a NoValNumber or a numeric string) must be positive.
Result<SubmitReceipt> decodeSubmitReceipt(AnswerBytes answer, const DecodeOptions& options = {});
// GET /ping/: `pings[]` and meta.slurm.{release,cluster}, meta.plugin.data_parser.
Result<PingResult> decodePing(AnswerBytes answer, const DecodeOptions& options = {});
Result<std::vector<PartitionInfo>> decodePartitions(AnswerBytes answer,
                                                    const DecodeOptions& options = {});
Result<std::vector<NodeInfo>> decodeNodes(AnswerBytes answer, const DecodeOptions& options = {});
// GET /conf (v0.0.45): slurm_conf's PreemptType, PreemptMode and PreemptParameters; every
// other setting is skipped. An answer without `slurm_conf` is an error.
Result<ControllerConfig> decodeControllerConfig(AnswerBytes answer,
                                                const DecodeOptions& options = {});
// `errors[]` or `warnings[]` (`key`) of any answer; none when the key is absent.
Result<std::vector<SlurmMessage>> decodeMessages(AnswerBytes answer, std::string_view key,
                                                 const DecodeOptions& options = {});
// DELETE /job/{id}: the refusals Slurm reports inside `status[]` (it answers 200 even then);
// entries whose error code is 0 are not refusals.
Result<std::vector<SlurmMessage>> decodeCancelStatus(AnswerBytes answer,
                                                     const DecodeOptions& options = {});

}  // namespace tuneplane::slurm
