// Decoding of real slurmrestd 26.05.3 answers (tests/data/slurm/transcripts) into typed records.
#include "slurm/job_record.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/fixtures.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;

using test::transcript;

// The response body of the exchange whose label starts with `label`.
json body(const std::string& file, const std::string& label) {
  return test::transcriptResponseBody(file, label);
}

TEST(NoValNumber, DecodesStructPlainAndMissingForms) {
  EXPECT_EQ(decodeNoVal(json::parse(R"({"set":true,"infinite":false,"number":42})")),
            (NoValNumber{true, false, 42}));
  EXPECT_EQ(decodeNoVal(json(7)), (NoValNumber{true, false, 7}));
  auto unset = decodeNoVal(json::parse(R"({"set":false,"infinite":false,"number":0})"));
  EXPECT_FALSE(unset.value().has_value());
  auto infinite = decodeNoVal(json::parse(R"({"set":false,"infinite":true,"number":0})"));
  EXPECT_TRUE(infinite.infinite);
  EXPECT_FALSE(infinite.value().has_value());
  EXPECT_FALSE(decodeNoVal(json()).set);
}

TEST(JobRecordDecode, EveryGetJobAnswerInTheTranscriptsDecodes) {
  int decoded = 0;
  for (const char* file :
       {"02_submit_single.json", "03_get_running.json", "04_get_completing.json",
        "05_get_completed.json", "06_failed.json", "07_pending_held_then_cancel.json",
        "08_cancel_running.json", "09_gpu_and_pending_resources.json", "10_timeout.json",
        "11_hetjob.json", "11b_hetjob_variants.json", "14_update_job.json",
        "15_bulk_200_held.json"}) {
    const json doc = transcript(file);
    for (const auto& e : doc["exchanges"]) {
      const auto& request = e["request"];
      if (request["method"] != "GET" || e["response"]["status"] != 200) continue;
      if (request["url"].get<std::string>().find("/job/") == std::string::npos) continue;
      auto jobs = decodeJobs(e["response"]["body"]);
      ASSERT_TRUE(jobs.has_value()) << file << ": " << jobs.error().describe();
      ASSERT_FALSE(jobs->empty()) << file;
      for (const auto& job : *jobs) {
        EXPECT_GT(job.job_id, 0u) << file;
        EXPECT_EQ(job.sluid.size(), 14u) << file << " " << job.sluid;
        EXPECT_EQ(job.sluid.front(), 's') << file;
        EXPECT_FALSE(job.job_state.empty()) << file;
        EXPECT_FALSE(job.current_working_directory.empty()) << file;
        EXPECT_FALSE(job.user_name.empty()) << file;
        ++decoded;
      }
    }
  }
  EXPECT_GE(decoded, 30);
}

TEST(JobRecordDecode, CompletingKeepsBaseStateFirstAndFlagsAfter) {
  auto jobs = decodeJobs(body("04_get_completing.json", "GET /job/{job_id}"));
  ASSERT_TRUE(jobs.has_value());
  const JobRecord& job = jobs->front();
  EXPECT_EQ(job.job_id, 2u);
  EXPECT_EQ(job.sluid, "sCC1M8VPKSJX00");
  EXPECT_EQ(job.job_state, (std::vector<std::string>{"COMPLETED", "COMPLETING"}));
  EXPECT_EQ(job.baseState(), "COMPLETED");
  EXPECT_TRUE(job.hasStateFlag("COMPLETING"));
  EXPECT_FALSE(job.hasStateFlag("COMPLETED"));
}

TEST(JobRecordDecode, FailedJobCarriesExitCodeAndReason) {
  auto jobs = decodeJobs(body("06_failed.json", "GET /job/{job_id} final"));
  ASSERT_TRUE(jobs.has_value());
  const JobRecord& job = jobs->front();
  EXPECT_EQ(job.job_state, std::vector<std::string>{"FAILED"});
  EXPECT_EQ(job.state_reason, "NonZeroExitCode");
  EXPECT_EQ(job.exit_code.status, std::vector<std::string>{"ERROR"});
  EXPECT_EQ(job.exit_code.return_code.value(), 3);
  EXPECT_TRUE(job.requeue);  // this one was submitted without `requeue: false`
  EXPECT_TRUE(job.end_time.value().has_value());
  EXPECT_EQ(job.time_limit.value(), 5);
}

TEST(JobRecordDecode, HetLeaderAnswerHasOneRecordPerComponent) {
  auto jobs = decodeJobs(body("11_hetjob.json", "GET /job/{leader_id} RUNNING"));
  ASSERT_TRUE(jobs.has_value());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job_id, 10u);
  EXPECT_EQ((*jobs)[0].sluid, "sCC1M8VPP7X700");
  EXPECT_EQ((*jobs)[0].het_job_offset.value(), 0);
  EXPECT_EQ((*jobs)[0].features, "a100");
  EXPECT_EQ((*jobs)[0].tres_per_node, "gres/gpu:1");
  EXPECT_EQ((*jobs)[0].gres_detail, std::vector<std::string>{"gpu:a100:1(IDX:0)"});
  EXPECT_EQ((*jobs)[1].job_id, 11u);
  EXPECT_EQ((*jobs)[1].sluid, "sCC1M8VPP7X800");
  EXPECT_EQ((*jobs)[1].het_job_id.value(), 10);
  EXPECT_EQ((*jobs)[1].het_job_offset.value(), 1);
  EXPECT_EQ((*jobs)[1].nodes, "cpu1");
  EXPECT_TRUE((*jobs)[1].isHetComponent());
}

TEST(JobRecordDecode, UnknownStateStringsAreKeptVerbatim) {
  auto record = json::parse(R"({"job_id": 5, "step_id": {"sluid": "sAAAAAAAAAAAAA"},
      "job_state": ["WIBBLE", "NEW_FLAG"]})");
  auto job = decodeJobRecord(record);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->job_state, (std::vector<std::string>{"WIBBLE", "NEW_FLAG"}));
}

TEST(JobRecordDecode, RecordWithoutJobIdIsABadResponse) {
  auto job = decodeJobRecord(json::parse(R"({"name": "x"})"));
  ASSERT_FALSE(job.has_value());
  EXPECT_EQ(job.error().code, "slurm.bad_response");
  EXPECT_EQ(job.error().field, "job_id");
}

TEST(JobListingDecode, FullListAndNoChangesAnswer) {
  auto full = decodeJobListing(body("12_jobs_list.json", "GET /jobs/ (no update_time)"));
  ASSERT_TRUE(full.has_value()) << full.error().describe();
  EXPECT_FALSE(full->unchanged);
  EXPECT_GT(full->jobs.size(), 10u);
  EXPECT_TRUE(full->last_update.value().has_value());
  auto none = decodeJobListing(body("12_jobs_list.json", "GET /jobs/?update_time=<last_update f"));
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->unchanged);
  EXPECT_TRUE(none->jobs.empty());
}

TEST(JobStatesDecode, HetComponentIdsAreSplitIntoIdAndOffset) {
  auto states = decodeJobStates(body("12_jobs_list.json", "GET /jobs/state/"));
  ASSERT_TRUE(states.has_value());
  bool saw_het = false;
  for (const auto& s : *states) {
    EXPECT_FALSE(s.state.empty());
    if (s.job_id == "11+1") {
      saw_het = true;
      EXPECT_EQ(s.numeric_id, 11u);
      EXPECT_EQ(s.het_offset, 1u);
    }
  }
  EXPECT_TRUE(saw_het);
  auto two = decodeJobStates(body("12b_jobs_state_query.json", "job_id=1&job_id=2"));
  ASSERT_TRUE(two.has_value());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].numeric_id, 2u);
  EXPECT_FALSE((*two)[1].het_offset.has_value());
  EXPECT_FALSE(parseJobStateId("12x").has_value());
  EXPECT_FALSE(parseJobStateId("12+").has_value());
}

TEST(SubmitReceiptDecode, ReceiptHasNumericIdAndNoSluid) {
  auto receipt = decodeSubmitReceipt(body("02_submit_single.json", "submit"));
  ASSERT_TRUE(receipt.has_value());
  EXPECT_EQ(receipt->job_id, 2u);
  EXPECT_EQ(receipt->step_id, "batch");
  EXPECT_TRUE(receipt->errors.empty());
  auto warned = decodeSubmitReceipt(body("13c_submit_errors.json", "unknown field"));
  ASSERT_TRUE(warned.has_value());
  EXPECT_FALSE(warned->warnings.empty());
  auto rejected = decodeSubmitReceipt(body("13c_submit_errors.json", "unknown partition"));
  EXPECT_FALSE(rejected.has_value() && rejected->errors.empty());
}

TEST(CancelStatusDecode, RefusalsInsideStatusArray) {
  auto unknown = decodeCancelStatus(body("13e_delete_unknown_sluid.json", "DELETE"));
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].error_number, 2017);
  auto again =
      decodeCancelStatus(body("07_pending_held_then_cancel.json", "DELETE /job/{sluid} again"));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].error_number, 2021);
  EXPECT_TRUE(
      decodeCancelStatus(body("07_pending_held_then_cancel.json", "DELETE /job/{sluid}")).empty());
}

TEST(PingDecode, ResponderReleaseAndAuthRefusal) {
  auto ping = decodePing(body("01_ping.json", "ping without"));
  ASSERT_TRUE(ping.has_value());
  EXPECT_TRUE(ping->anyResponding());
  EXPECT_EQ(ping->release, "26.05.3");
  EXPECT_EQ(ping->cluster, "tp");
  EXPECT_EQ(ping->data_parser, "data_parser/v0.0.45");
  auto refused = decodePing(body("13a_auth_errors.json", "garbage token"));
  ASSERT_TRUE(refused.has_value());
  EXPECT_FALSE(refused->anyResponding());
  EXPECT_EQ(refused->controllers[0].status, "Protocol authentication error");
}

TEST(ErrorsDecode, AuthAndLookupErrorsCarryNumbers) {
  auto auth =
      decodeMessages(body("13d_auth_errors_other_endpoints.json", "GET /jobs/ garbage"), "errors");
  ASSERT_EQ(auth.size(), 1u);
  EXPECT_EQ(auth[0].error_number, 1007);
  auto lookup = decodeMessages(body("13b_job_lookup_errors.json", "unknown numeric"), "errors");
  ASSERT_EQ(lookup.size(), 1u);
  EXPECT_EQ(lookup[0].error_number, 2017);
}

TEST(NodesAndPartitionsDecode, OpenApiShapes) {
  auto nodes = decodeNodes(json::parse(R"({"nodes": [{"name": "gpu1", "state": ["IDLE"],
      "features": ["h100"], "active_features": ["h100"], "partitions": ["gpu"],
      "gres": "gpu:h100:2", "cpus": 4, "real_memory": 2000}]})"));
  ASSERT_TRUE(nodes.has_value());
  EXPECT_EQ(nodes->at(0).features, std::vector<std::string>{"h100"});
  EXPECT_EQ(nodes->at(0).real_memory_mb, 2000);
  auto csv = decodeNodes(json::parse(R"({"nodes": [{"name": "n", "features": "a,b"}]})"));
  ASSERT_TRUE(csv.has_value());
  EXPECT_EQ(csv->at(0).features, (std::vector<std::string>{"a", "b"}));
  auto parts = decodePartitions(json::parse(R"({"partitions": [{"name": "gpu",
      "nodes": {"configured": "gpu[1-2]", "total": 2}, "cpus": {"total": 8},
      "partition": {"state": ["UP"]}}]})"));
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->at(0).nodes, "gpu[1-2]");
  EXPECT_EQ(parts->at(0).state, std::vector<std::string>{"UP"});
  EXPECT_FALSE(decodeNodes(json::parse(R"({"x": 1})")).has_value());
}

}  // namespace
}  // namespace tuneplane::slurm
