// Truncated answers: every prefix of a few real answers, through every decoder and both
// paths. Nothing may crash or read out of bounds (run it under ASan+UBSan: `make test-asan`),
// and a truncated answer is always an error. Corrupted answers are the fuzz target's
// (fuzz/slurm_answers_fuzz.cc: libFuzzer under `make fuzz`, its corpus replayed by the ctest
// test fuzz.slurm_answers), which also checks that the two paths agree where both accept.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "slurm/answer_decoder.h"
#include "transcripts.h"

namespace tuneplane::slurm {
namespace {

constexpr DecodeOptions kWhole{size_t{1} << 30};
constexpr DecodeOptions kByRecord{0, 53};  // small batches: cuts inside records and strings

// The bytes in a buffer with the decoder's padding, as the transport hands them over.
std::string padded(std::string_view text) {
  std::string out;
  out.reserve(text.size() + kJsonPadding);
  out.assign(text);
  return out;
}

// A digest of what a decoder accepted, so that the two paths can be compared.
std::string summary(const std::vector<JobRecord>& jobs) {
  std::string out = std::to_string(jobs.size());
  for (const auto& j : jobs) out += " " + std::to_string(j.job_id) + j.name + j.sluid;
  return out;
}
std::string summary(const JobListing& listing) {
  return summary(listing.jobs);
}
std::string summary(const SubmitReceipt& receipt) {
  return std::to_string(receipt.job_id);
}
std::string summary(const PingResult& ping) {
  return ping.release + ping.cluster;
}
template <typename T>
std::string summary(const std::vector<T>& records) {
  return std::to_string(records.size());
}
std::string summary(const JobStateList& states) {
  return std::to_string(states.size());
}

// What every decoder makes of `bytes` under `options`, one line each: "ok" and a digest of
// the records, or the error's code, flagged when the error names no field or says nothing.
std::vector<std::string> decodeAll(const std::string& bytes, const DecodeOptions& options) {
  std::vector<std::string> out;
  auto note = [&](const auto& result) {
    if (result) {
      out.push_back("ok " + summary(*result));
      return;
    }
    const Error& error = result.error();
    out.push_back(error.code + (error.field.empty() ? " naming no field" : "") +
                  (error.message.empty() ? " without a message" : ""));
  };
  note(decodeJobs(bytes, options));
  note(decodeJobListing(bytes, options));
  note(decodeJobStates(bytes, options));
  note(decodeSubmitReceipt(bytes, options));
  note(decodePing(bytes, options));
  note(decodePartitions(bytes, options));
  note(decodeNodes(bytes, options));
  note(decodeMessages(bytes, "errors", options));
  note(decodeCancelStatus(bytes, options));
  return out;
}

struct Sample {
  const char* file;
  const char* label;
  bool pretty;
};

const Sample kSamples[] = {
    {"04_get_completing.json", "GET /job/{job_id}", false},
    {"12_jobs_list.json", "GET /jobs/state/", true},
    {"02_submit_single.json", "submit", true},
    {"01_ping.json", "ping without", true},
    {"13e_delete_unknown_sluid.json", "DELETE", true},
    {"13b_job_lookup_errors.json", "unknown numeric", false},
};

TEST(DecoderFuzz, EveryTruncationIsAnErrorOnBothPaths) {
  size_t prefixes = 0;
  for (const Sample& sample : kSamples) {
    const std::string full = transcripts::answer(sample.file, sample.label, sample.pretty);
    ASSERT_FALSE(full.empty()) << sample.file;
    for (size_t n = 0; n < full.size(); ++n) {
      const std::string prefix = padded(std::string_view(full).substr(0, n));
      for (const DecodeOptions& options : {kWhole, kByRecord}) {
        for (const std::string& outcome : decodeAll(prefix, options)) {
          ASSERT_EQ(outcome, "slurm.bad_response")
              << sample.file << " cut at " << n << " of " << full.size();
        }
      }
      ++prefixes;
    }
  }
  EXPECT_GT(prefixes, 8000u);
}

// An answer cut inside its records array is refused naming the record it cut, on both paths:
// the field says where the answer stopped making sense, not just that it did.
TEST(DecoderFuzz, ACutInsideARecordNamesThatRecord) {
  const std::string full =
      transcripts::answer("12_jobs_list.json", "GET /jobs/ (no update_time)", false);
  ASSERT_FALSE(full.empty());
  const size_t second = full.find("},{\"account\"");
  const size_t third = full.find("},{\"account\"", second + 1);
  ASSERT_NE(third, std::string::npos) << "the answer's third record";
  for (size_t cut : {second + 40, (second + third) / 2, third - 5}) {
    const std::string prefix = padded(std::string_view(full).substr(0, cut));
    for (const DecodeOptions& options : {kWhole, kByRecord}) {
      auto listing = decodeJobListing(prefix, options);
      ASSERT_FALSE(listing.has_value()) << "cut at " << cut;
      EXPECT_EQ(listing.error().code, "slurm.bad_response");
      EXPECT_EQ(listing.error().field.rfind("jobs[1]", 0), 0u)
          << "cut at " << cut << ": " << listing.error().describe();
    }
  }
}

}  // namespace
}  // namespace tuneplane::slurm
