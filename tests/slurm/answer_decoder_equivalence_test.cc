// The simdjson decoder gives the same records as the nlohmann decoder it replaced
// (reference_decoder.h) on every real answer of the transcripts: every decoder applied to
// every answer, pretty-printed (as slurmrestd sends them) and compact, through both paths (the
// batch path also with batches so small that they cut records and strings everywhere).
#include <cctype>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference_decoder.h"
#include "slurm/answer_decoder.h"
#include "transcripts.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;

// The new decoder names where a record sits: "jobs[3].job_id" where the old one said
// "job_id" or "jobs[].job_id".
bool sameField(const std::string& before, const std::string& after) {
  std::string general;
  for (size_t i = 0; i < after.size(); ++i) {
    general += after[i];
    if (after[i] == '[') {
      while (i + 1 < after.size() && std::isdigit(static_cast<unsigned char>(after[i + 1]))) ++i;
    }
  }
  if (general == before) return true;
  return general.size() > before.size() &&
         general.compare(general.size() - before.size() - 1, std::string::npos, "." + before) == 0;
}

// Both succeed with equal values, or both fail with the same code and field.
template <typename T>
void expectSame(const Result<T>& before, const Result<T>& after, const std::string& what) {
  ASSERT_EQ(before.has_value(), after.has_value())
      << what << ": " << (before ? after.error().describe() : before.error().describe());
  if (before) {
    EXPECT_TRUE(*before == *after) << what;
  } else {
    EXPECT_EQ(before.error().code, after.error().code) << what;
    EXPECT_TRUE(sameField(before.error().field, after.error().field))
        << what << ": " << before.error().field << " vs " << after.error().field;
  }
}

// The old decoders for messages had no error: a body that was not JSON gave none.
void expectSameMessages(const std::vector<SlurmMessage>& before,
                        const Result<std::vector<SlurmMessage>>& after, bool is_json,
                        const std::string& what) {
  if (!is_json) {
    EXPECT_TRUE(before.empty()) << what;
    EXPECT_FALSE(after.has_value()) << what;
    return;
  }
  ASSERT_TRUE(after.has_value()) << what << ": " << after.error().describe();
  EXPECT_TRUE(before == *after) << what;
}

TEST(DecoderEquivalence, EveryTranscriptAnswerDecodesAsBefore) {
  int compared = 0;
  int records = 0;
  for (bool pretty : {true, false}) {
    for (const auto& a : transcripts::all(pretty)) {
      const json body = a.is_json ? a.body : json(nullptr);  // what the old client parsed
      for (const DecodeOptions& options :
           {DecodeOptions{}, DecodeOptions{0}, DecodeOptions{0, 61}}) {
        const std::string what =
            a.file + " / " + a.label + (pretty ? " pretty" : " compact") +
            (options.whole_answer_limit > 0 ? " whole"
                                            : " batches of " + std::to_string(options.batch_bytes));
        auto jobs = decodeJobs(a.bytes, options);
        expectSame(reference::decodeJobs(body), jobs, what + " jobs");
        if (jobs) records += static_cast<int>(jobs->size());
        expectSame(reference::decodeJobListing(body), decodeJobListing(a.bytes, options),
                   what + " listing");
        expectSame(reference::decodeJobStates(body),
                   reference::plain(decodeJobStates(a.bytes, options)), what + " states");
        expectSame(reference::decodeSubmitReceipt(body), decodeSubmitReceipt(a.bytes, options),
                   what + " receipt");
        expectSame(reference::decodePing(body), decodePing(a.bytes, options), what + " ping");
        expectSame(reference::decodePartitions(body), decodePartitions(a.bytes, options),
                   what + " partitions");
        expectSame(reference::decodeNodes(body), decodeNodes(a.bytes, options), what + " nodes");
        for (const char* key : {"errors", "warnings"}) {
          expectSameMessages(reference::decodeMessages(body, key),
                             decodeMessages(a.bytes, key, options), a.is_json, what + " " + key);
        }
        expectSameMessages(reference::decodeCancelStatus(body),
                           decodeCancelStatus(a.bytes, options), a.is_json, what + " cancel");
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 6 * 100);  // every exchange, twice formatted, three ways
  EXPECT_GE(records, 6 * 90);    // job records among them
}

// Partitions and nodes have no transcript; the simulator's shapes (from the OpenAPI document)
// stand in.
TEST(DecoderEquivalence, PartitionsAndNodesAsBefore) {
  const json answer = json::parse(R"({
    "partitions": [{"name": "gpu", "nodes": {"configured": "gpu[1-2]", "total": 2},
                    "cpus": {"total": 8}, "partition": {"state": ["UP", "DRAIN"]},
                    "grace_time": 30, "preempt_mode": ["REQUEUE"]},
                   {"name": "cpu", "nodes": "odd", "cpus": {"total": {"set": true, "number": 4}}}],
    "nodes": [{"name": "gpu1", "state": ["IDLE", "RESERVED"], "features": "h100,nvlink",
               "active_features": ["h100"], "partitions": ["gpu"], "gres": "gpu:h100:2",
               "cpus": 4, "real_memory": {"set": true, "infinite": false, "number": 2000},
               "reason": "maintenance"}]})");
  for (const DecodeOptions& options : {DecodeOptions{}, DecodeOptions{0}, DecodeOptions{0, 7}}) {
    expectSame(reference::decodePartitions(answer), decodePartitions(answer.dump(2), options),
               "partitions");
    expectSame(reference::decodeNodes(answer), decodeNodes(answer.dump(), options), "nodes");
  }
}

}  // namespace
}  // namespace tuneplane::slurm
