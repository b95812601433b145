// Decoding of real slurmrestd 26.05.3 answers (tests/data/slurm/transcripts) and of hand-made
// ones into typed records, through both paths of answer_decoder.h: the whole answer in one
// simdjson pass, and record at a time (forced on small answers with whole_answer_limit = 0).
#include "slurm/answer_decoder.h"

#include <string>

#include <gtest/gtest.h>

#include "slurm/slurmdb_jobs.h"
#include "support/fixtures.h"
#include "transcripts.h"

namespace tuneplane::slurm {
namespace {

using transcripts::answer;

// Whole answer; batches; batches so small that they cut records and strings everywhere.
class Decode : public ::testing::TestWithParam<DecodeOptions> {
 protected:
  DecodeOptions options() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Paths, Decode,
                         ::testing::Values(DecodeOptions{}, DecodeOptions{0}, DecodeOptions{0, 37}),
                         [](const auto& info) -> std::string {
                           if (info.param.whole_answer_limit > 0) return "WholeAnswer";
                           return info.param.batch_bytes < 100 ? "TinyBatches" : "Batches";
                         });

// One job record inside a GET /job answer.
std::string jobAnswer(const std::string& record) {
  return R"({"jobs": [)" + record + R"(], "errors": [], "warnings": []})";
}

TEST_P(Decode, NoValNumbersInStructPlainAndMissingForms) {
  auto jobs = decodeJobs(jobAnswer(R"({"job_id": 1,
      "time_limit": {"set": true, "infinite": false, "number": 42},
      "cpus": 7, "end_time": {"set": false, "infinite": false, "number": 0},
      "node_count": {"set": false, "infinite": true, "number": 0}, "start_time": 2.9})"),
                         options());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  const JobRecord& job = jobs->front();
  EXPECT_EQ(job.time_limit, (NoValNumber{true, false, 42}));
  EXPECT_EQ(job.cpus, (NoValNumber{true, false, 7}));
  EXPECT_FALSE(job.end_time.value().has_value());
  EXPECT_TRUE(job.node_count.infinite);
  EXPECT_FALSE(job.node_count.value().has_value());
  EXPECT_EQ(job.start_time.value(), 2);  // a float is truncated
  EXPECT_FALSE(job.submit_time.set);     // missing
}

TEST_P(Decode, EveryGetJobAnswerInTheTranscriptsDecodes) {
  int decoded = 0;
  for (const auto& a : transcripts::all()) {
    // slurmctld's GET /job/ (slurmdbd's /slurmdb/…/job/ answers records of another shape).
    if (a.method != "GET" || a.status != 200 || a.url.find("/job/") == std::string::npos ||
        a.url.find("/slurmdb/") != std::string::npos) {
      continue;
    }
    auto jobs = decodeJobs(a.bytes, options());
    ASSERT_TRUE(jobs.has_value()) << a.file << ": " << jobs.error().describe();
    ASSERT_FALSE(jobs->empty()) << a.file;
    for (const auto& job : *jobs) {
      EXPECT_GT(job.job_id, 0u) << a.file;
      EXPECT_EQ(job.sluid.size(), 14u) << a.file << " " << job.sluid;
      EXPECT_EQ(job.sluid.front(), 's') << a.file;
      EXPECT_FALSE(job.job_state.empty()) << a.file;
      EXPECT_FALSE(job.current_working_directory.empty()) << a.file;
      EXPECT_FALSE(job.user_name.empty()) << a.file;
      ++decoded;
    }
  }
  EXPECT_GE(decoded, 30);
}

TEST_P(Decode, CompletingKeepsBaseStateFirstAndFlagsAfter) {
  auto jobs = decodeJobs(answer("04_get_completing.json", "GET /job/{job_id}"), options());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  const JobRecord& job = jobs->front();
  EXPECT_EQ(job.job_id, 2u);
  EXPECT_EQ(job.sluid, "sCC1M8VPKSJX00");
  EXPECT_EQ(job.job_state, (std::vector<std::string>{"COMPLETED", "COMPLETING"}));
  EXPECT_EQ(job.baseState(), "COMPLETED");
  EXPECT_TRUE(job.hasStateFlag("COMPLETING"));
  EXPECT_FALSE(job.hasStateFlag("COMPLETED"));
}

TEST_P(Decode, FailedJobCarriesExitCodeAndReason) {
  auto jobs = decodeJobs(answer("06_failed.json", "GET /job/{job_id} final"), options());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  const JobRecord& job = jobs->front();
  EXPECT_EQ(job.job_state, std::vector<std::string>{"FAILED"});
  EXPECT_EQ(job.state_reason, "NonZeroExitCode");
  EXPECT_EQ(job.exit_code.status, std::vector<std::string>{"ERROR"});
  EXPECT_EQ(job.exit_code.return_code.value(), 3);
  EXPECT_TRUE(job.requeue);  // this one was submitted without `requeue: false`
  EXPECT_TRUE(job.end_time.value().has_value());
  EXPECT_EQ(job.time_limit.value(), 5);
}

// Issue 47, real 26.05.3 answers (23_preemption.json): a job being preempted stays RUNNING
// with preempt_time = the preemption and end_time = it + GraceTime (30 s); at its end the
// record says PREEMPTED, with exit_code SUCCESS/0 when the program saved and exited 0 in the
// grace time, SIGNALED/KILL when it ran until killed.
TEST_P(Decode, APreemptedJobCarriesPreemptTimeAndEndsPreempted) {
  auto grace = decodeJobs(
      answer("23_preemption.json", "keeps_running: GET the victim in its grace time"), options());
  ASSERT_TRUE(grace.has_value()) << grace.error().describe();
  EXPECT_EQ(grace->front().job_state, std::vector<std::string>{"RUNNING"});
  const int64_t preempted_at = grace->front().preempt_time.value().value_or(0);
  EXPECT_GT(preempted_at, 0);
  EXPECT_EQ(grace->front().end_time.value(), preempted_at + 30);
  auto before = decodeJobs(
      answer("23_preemption.json", "keeps_running: GET the victim RUNNING (before preemption)"),
      options());
  ASSERT_TRUE(before.has_value()) << before.error().describe();
  EXPECT_EQ(before->front().preempt_time.value(), 0);

  auto saved = decodeJobs(answer("23_preemption.json", "saves_exits_0: GET the victim at its end"),
                          options());
  ASSERT_TRUE(saved.has_value()) << saved.error().describe();
  EXPECT_EQ(saved->front().job_state, std::vector<std::string>{"PREEMPTED"});
  EXPECT_EQ(saved->front().exit_code.status, std::vector<std::string>{"SUCCESS"});
  EXPECT_EQ(saved->front().exit_code.return_code.value(), 0);
  EXPECT_GT(saved->front().preempt_time.value().value_or(0), 0);

  auto killed = decodeJobs(answer("23_preemption.json", "keeps_running: GET the victim at its end"),
                           options());
  ASSERT_TRUE(killed.has_value()) << killed.error().describe();
  EXPECT_EQ(killed->front().job_state, std::vector<std::string>{"PREEMPTED"});
  EXPECT_EQ(killed->front().exit_code.signal_name, "KILL");
}

// The same through v0.0.44 (26.05.3 serving it: transcripts-26.05/23_preemption.json), and
// slurmdbd's record of each version: state.current [PREEMPTED].
TEST_P(Decode, APreemptedJobReadsTheSameInV0044AndInSlurmdbd) {
  const auto v44 = test::versionTranscript("v0.0.44", "23_preemption", "transcripts-26.05");
  const auto body = [](const nlohmann::json& t, const std::string& label) {
    for (const auto& e : t["exchanges"]) {
      if (e["label"].get<std::string>().rfind(label, 0) == 0) return e["response"]["body"].dump(2);
    }
    ADD_FAILURE() << "no exchange " << label;
    return std::string();
  };
  auto end = decodeJobs(body(v44, "saves_exits_0: GET the victim at its end"), options());
  ASSERT_TRUE(end.has_value()) << end.error().describe();
  EXPECT_EQ(end->front().job_state, std::vector<std::string>{"PREEMPTED"});
  EXPECT_EQ(end->front().exit_code.return_code.value(), 0);
  EXPECT_GT(end->front().preempt_time.value().value_or(0), 0);
  for (const std::string& text :
       {body(v44, "saves_exits_0: GET the victim from slurmdbd"),
        answer("23_preemption.json", "saves_exits_0: GET the victim from slurmdbd"),
        answer("23_preemption.json", "keeps_running: GET the victim from slurmdbd")}) {
    auto runs = decodeSlurmdbJobs(text);
    ASSERT_TRUE(runs.has_value()) << runs.error().describe();
    ASSERT_FALSE(runs->empty());
    EXPECT_EQ(runs->front().state, std::vector<std::string>{"PREEMPTED"});
    EXPECT_GT(runs->front().end_time, 0);
  }
}

// What a pending job's place in the queue is read from (api/slurm_queue.h): its reason, its
// partition, its priority, and start_time — 0 until Slurm estimates one, a begin time after
// a requeue.
TEST_P(Decode, APendingJobCarriesItsReasonPriorityAndStartEstimate) {
  auto pending = decodeJobs(
      answer("09_gpu_and_pending_resources.json", "GET B PENDING (Resources)"), options());
  ASSERT_TRUE(pending.has_value()) << pending.error().describe();
  EXPECT_EQ(pending->front().baseState(), "PENDING");
  EXPECT_EQ(pending->front().state_reason, "Resources");
  EXPECT_EQ(pending->front().partition, "gpu");
  EXPECT_EQ(pending->front().priority, (NoValNumber{true, false, 1}));
  EXPECT_EQ(pending->front().start_time.value(), 0);
  auto begin = decodeJobs(
      answer("17_requeue_running.json", "GET /job/{id} requeued, pending with a new SLUID"),
      options());
  ASSERT_TRUE(begin.has_value()) << begin.error().describe();
  EXPECT_EQ(begin->front().state_reason, "BeginTime");
  EXPECT_EQ(begin->front().start_time.value(), 1796328683);
  auto held = decodeJobs(
      answer("07_pending_held_then_cancel.json", "GET /job/{job_id} PENDING held"), options());
  ASSERT_TRUE(held.has_value()) << held.error().describe();
  EXPECT_EQ(held->front().priority.value(), 0);
}

TEST_P(Decode, HetLeaderAnswerHasOneRecordPerComponent) {
  auto jobs = decodeJobs(answer("11_hetjob.json", "GET /job/{leader_id} RUNNING"), options());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
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

TEST_P(Decode, UnknownStateStringsAndUnknownFieldsAtEveryLevel) {
  auto jobs = decodeJobs(R"({"future": {"x": [1, {"y": null}]}, "jobs": [
      {"job_id": 5, "new_field": [true, {"deep": "x"}], "step_id": {"sluid": "sAAAAAAAAAAAAA",
       "later": 1}, "job_state": ["WIBBLE", "NEW_FLAG"],
       "exit_code": {"status": ["SIGNALED"], "signal": {"id": 9, "name": "KILL", "extra": 1},
                     "return_code": {"set": true, "number": 137, "more": "x"}}}],
      "errors": [], "warnings": []})",
                         options());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  EXPECT_EQ(jobs->front().job_state, (std::vector<std::string>{"WIBBLE", "NEW_FLAG"}));
  EXPECT_EQ(jobs->front().sluid, "sAAAAAAAAAAAAA");
  EXPECT_EQ(jobs->front().exit_code.signal_name, "KILL");
  EXPECT_EQ(jobs->front().exit_code.signal_id.value(), 9);
  EXPECT_EQ(jobs->front().exit_code.return_code.value(), 137);
}

TEST_P(Decode, FieldsOfAnotherTypeDecodeAsEmptyAndCsvStringsSplit) {
  auto jobs = decodeJobs(jobAnswer(R"({"job_id": 3, "name": 17, "requeue": "yes",
      "job_state": "RUNNING,COMPLETING", "flags": [1, "A", null], "cpus": "8",
      "exit_code": [], "sluid": "sTOPLEVEL00000"})"),
                         options());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  const JobRecord& job = jobs->front();
  EXPECT_EQ(job.name, "");
  EXPECT_FALSE(job.requeue);
  EXPECT_EQ(job.job_state, (std::vector<std::string>{"RUNNING", "COMPLETING"}));
  EXPECT_EQ(job.flags, std::vector<std::string>{"A"});
  EXPECT_FALSE(job.cpus.set);
  EXPECT_EQ(job.sluid, "sTOPLEVEL00000");  // no step_id.sluid: the top-level one
}

TEST_P(Decode, RecordWithoutUsableJobIdIsABadResponseNamingIt) {
  for (const char* record : {R"({"name": "x"})", R"({"job_id": {"set": false}})",
                             R"({"job_id": -4})", R"({"job_id": "7"})"}) {
    auto jobs = decodeJobs(jobAnswer(std::string(R"({"job_id": 1}, )") + record), options());
    ASSERT_FALSE(jobs.has_value()) << record;
    EXPECT_EQ(jobs.error().code, "slurm.bad_response");
    EXPECT_EQ(jobs.error().field, "jobs[1].job_id") << record;
  }
}

TEST_P(Decode, JobStateListsComeBackAsSentEvenWhenSlurmWouldNotSendThem) {
  using Names = std::vector<std::string>;
  auto states = decodeJobStates(R"({"jobs": [
      {"job_id": "1", "state": ["RUNNING"]},
      {"state": ["COMPLETED", "COMPLETING"], "job_id": "2+1"},
      {"job_id": "3", "state": ["FUTURE_STATE", "COMPLETING"]},
      {"job_id": "4", "state": ["COMPLETED", "STAGE_OUT", "COMPLETING"]},
      {"job_id": "5", "state": ["RUN\u004eING", "A\"B", "", 7, null]},
      {"job_id": "6", "state": "PENDING,REQUEUED"},
      {"job_id": "7", "state": ["FAILED"], "state": ["TIMEOUT"], "job_id": "07"},
      {"job_id": 8, "state": ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10"]},
      {"job_id": "9", "state": {"not": "a list"}, "other": [1, "x"]}
    ]})",
                                options());
  ASSERT_TRUE(states.has_value()) << states.error().describe();
  const std::vector<std::pair<std::string, Names>> expected = {
      {"1", {"RUNNING"}},
      {"2+1", {"COMPLETED", "COMPLETING"}},
      {"3", {"FUTURE_STATE", "COMPLETING"}},
      {"4", {"COMPLETED", "STAGE_OUT", "COMPLETING"}},
      {"5", {"RUNNING", "A\"B", ""}},
      {"6", {"PENDING", "REQUEUED"}},
      {"07", {"TIMEOUT"}},
      {"8", {"P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10"}},
      {"9", {}},
  };
  ASSERT_EQ(states->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(states->jobId(i), expected[i].first) << i;
    EXPECT_EQ(states->stateNames(i), expected[i].second) << i;
  }
  EXPECT_EQ((*states)[1].hetOffset(), 1u);
  EXPECT_EQ((*states)[6].numericId(), 7u);
  EXPECT_TRUE((*states)[0].hasCompactState());
  EXPECT_FALSE((*states)[2].hasCompactState());
}

TEST_P(Decode, AnswerWithoutRecordsArrayOrWithNonObjectRecords) {
  auto missing = decodeJobs(R"({"errors": []})", options());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().field, "jobs");
  EXPECT_EQ(missing.error().message, "missing array");
  auto not_array = decodeJobs(R"({"jobs": {"job_id": 1}})", options());
  ASSERT_FALSE(not_array.has_value());
  EXPECT_EQ(not_array.error().field, "jobs");
  auto element = decodeJobStates(R"({"jobs": [{"job_id": "1", "state": []}, 5]})", options());
  ASSERT_FALSE(element.has_value());
  EXPECT_EQ(element.error().field, "jobs[1]");
  auto not_object = decodeJobs("[1, 2]", options());
  ASSERT_FALSE(not_object.has_value());
  EXPECT_EQ(not_object.error().code, "slurm.bad_response");
}

TEST_P(Decode, MalformedJsonIsAClearErrorNamingWhereItBroke) {
  struct Case {
    const char* text;
    const char* field;
  };
  for (const Case& c : {
           Case{R"({"jobs": [{"job_id": 1, "name": "x"}])", "jobs"},
           Case{R"({"jobs": [{"job_id": 1, "name": tru}]})", "jobs[0].name"},
           Case{R"({"jobs": [{"job_id": 1, "cpus": 12x}]})", "jobs[0].cpus"},
           Case{R"({"jobs": [{"job_id": 1 "name": "x"}]})", "jobs[0]"},
           Case{R"({"jobs": [{"job_id": 1}]} trailing)", "jobs"},
           Case{R"({"jobs": [{"job_id": 1, "name": "\q"}]})", "jobs[0].name"},
           Case{R"({"jobs": [{"job_id": 1}], "warnings": [{"description": nul}]})",
                "warnings[0].description"},
           Case{"", "jobs"},
           Case{"Authentication failure", "jobs"},
       }) {
    auto listing = decodeJobListing(c.text, options());
    ASSERT_FALSE(listing.has_value()) << c.text;
    EXPECT_EQ(listing.error().code, "slurm.bad_response") << c.text;
    EXPECT_EQ(listing.error().field.rfind(c.field, 0), 0u)
        << c.text << " → " << listing.error().describe();
    EXPECT_NE(listing.error().message.find("JSON"), std::string::npos)
        << listing.error().describe();
  }
}

TEST_P(Decode, JobListingFullAndNoChangesAnswer) {
  auto full =
      decodeJobListing(answer("12_jobs_list.json", "GET /jobs/ (no update_time)"), options());
  ASSERT_TRUE(full.has_value()) << full.error().describe();
  EXPECT_FALSE(full->unchanged);
  EXPECT_GT(full->jobs.size(), 10u);
  EXPECT_TRUE(full->last_update.value().has_value());
  auto none = decodeJobListing(answer("12_jobs_list.json", "GET /jobs/?update_time=<last_update f"),
                               options());
  ASSERT_TRUE(none.has_value()) << none.error().describe();
  EXPECT_TRUE(none->unchanged);
  EXPECT_TRUE(none->jobs.empty());
}

TEST_P(Decode, JobStateIdsAreStringsSplitIntoIdAndHetOffset) {
  auto states = decodeJobStates(answer("12_jobs_list.json", "GET /jobs/state/"), options());
  ASSERT_TRUE(states.has_value()) << states.error().describe();
  bool saw_het = false;
  for (size_t i = 0; i < states->size(); ++i) {
    EXPECT_FALSE(states->stateNames(i).empty());
    if (states->jobId(i) == "11+1") {
      saw_het = true;
      EXPECT_EQ((*states)[i].numericId(), 11u);
      EXPECT_EQ((*states)[i].hetOffset(), 1u);
    }
  }
  EXPECT_TRUE(saw_het);
  auto two = decodeJobStates(answer("12b_jobs_state_query.json", "job_id=1&job_id=2"), options());
  ASSERT_TRUE(two.has_value()) << two.error().describe();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].numericId(), 2u);
  EXPECT_FALSE((*two)[1].hetOffset().has_value());
  auto numeric = decodeJobStates(R"({"jobs": [{"job_id": 12, "state": ["PENDING"]}]})", options());
  ASSERT_TRUE(numeric.has_value()) << numeric.error().describe();
  EXPECT_EQ(numeric->jobId(0), "12");
  auto bad_id = decodeJobStates(R"({"jobs": [{"job_id": "12+", "state": []}]})", options());
  ASSERT_FALSE(bad_id.has_value());
  EXPECT_EQ(bad_id.error().field, "jobs[0].job_id");
}

TEST_P(Decode, SubmitReceiptHasNumericIdAndNoSluid) {
  auto receipt = decodeSubmitReceipt(answer("02_submit_single.json", "submit"), options());
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  EXPECT_EQ(receipt->job_id, 2u);
  EXPECT_EQ(receipt->step_id, "batch");
  EXPECT_TRUE(receipt->errors.empty());
  auto warned = decodeSubmitReceipt(answer("13c_submit_errors.json", "unknown field"), options());
  ASSERT_TRUE(warned.has_value()) << warned.error().describe();
  EXPECT_FALSE(warned->warnings.empty());
  auto rejected =
      decodeSubmitReceipt(answer("13c_submit_errors.json", "unknown partition"), options());
  EXPECT_FALSE(rejected.has_value() && rejected->errors.empty());
  auto text_id = decodeSubmitReceipt(R"({"job_id": "41", "step_id": 3})", options());
  ASSERT_TRUE(text_id.has_value()) << text_id.error().describe();
  EXPECT_EQ(text_id->job_id, 41u);
  EXPECT_EQ(text_id->step_id, "3");
  auto zero = decodeSubmitReceipt(R"({"job_id": 0})", options());
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().field, "job_id");
  auto missing = decodeSubmitReceipt(R"({"errors": []})", options());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "missing from the receipt");
}

TEST_P(Decode, CancelRefusalsInsideStatusArray) {
  auto unknown = decodeCancelStatus(answer("13e_delete_unknown_sluid.json", "DELETE"), options());
  ASSERT_TRUE(unknown.has_value()) << unknown.error().describe();
  ASSERT_EQ(unknown->size(), 1u);
  EXPECT_EQ((*unknown)[0].error_number, 2017);
  auto again = decodeCancelStatus(
      answer("07_pending_held_then_cancel.json", "DELETE /job/{sluid} again"), options());
  ASSERT_TRUE(again.has_value());
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ((*again)[0].error_number, 2021);
  auto done = decodeCancelStatus(answer("07_pending_held_then_cancel.json", "DELETE /job/{sluid}"),
                                 options());
  ASSERT_TRUE(done.has_value());
  EXPECT_TRUE(done->empty());
}

TEST_P(Decode, ASkippedElementWhoseBracketsDoNotMatchIsMalformed) {
  // Found by fuzz/slurm_answers_fuzz.cc: the record path accepted what the whole pass refused.
  for (const char* text : {
           R"({"status":[3,[,bme[a":{sl"li[b2,meta"!{sl#l_jIN"]}}], "warnings"]})",
           R"({"status":[3,[1}, 2]})",
           R"({"status":[[1}], "x": 1})",
       }) {
    auto refusals = decodeCancelStatus(text, options());
    ASSERT_FALSE(refusals.has_value()) << text;
    EXPECT_EQ(refusals.error().code, "slurm.bad_response") << text;
  }
}

TEST_P(Decode, ABytesNoJsonValueHoldsIsMalformedWhereverItIsSkipped) {
  // Found by fuzz/slurm_answers_fuzz.cc: a NUL and a form feed as a value the decoder skips.
  using namespace std::string_literals;
  const std::string found = "{\"\":\0\x0c}"s;
  EXPECT_FALSE(decodeMessages(found, "errors", options()).has_value());
  // The record path refuses such a byte anywhere it walks. The whole pass leaves a value it
  // skips to simdjson, which lets some through (the documented leniency: the record path is
  // never the more lenient one).
  if (options().whole_answer_limit != 0) return;
  for (const std::string& text : {
           "{\"errors\": [], \"x\": \x01}"s,
           "{\"errors\": [], \"x\": [1, \x01]}"s,
           "{\"errors\": [], \"x\": {\"y\": \x7f}}"s,
           "{\"errors\": [], \"x\": [@]}"s,
       }) {
    EXPECT_FALSE(decodeMessages(text, "errors", options()).has_value()) << text;
  }
}

TEST_P(Decode, PingResponderReleaseAndAuthRefusal) {
  auto ping = decodePing(answer("01_ping.json", "ping without"), options());
  ASSERT_TRUE(ping.has_value()) << ping.error().describe();
  EXPECT_TRUE(ping->anyResponding());
  EXPECT_EQ(ping->release, "26.05.3");
  EXPECT_EQ(ping->cluster, "tp");
  EXPECT_EQ(ping->data_parser, "data_parser/v0.0.45");
  auto refused = decodePing(answer("13a_auth_errors.json", "garbage token"), options());
  ASSERT_TRUE(refused.has_value()) << refused.error().describe();
  EXPECT_FALSE(refused->anyResponding());
  EXPECT_EQ(refused->controllers[0].status, "Protocol authentication error");
}

TEST_P(Decode, ErrorsCarryNumbersAndNonObjectItemsAreSkipped) {
  auto auth = decodeMessages(answer("13d_auth_errors_other_endpoints.json", "GET /jobs/ garbage"),
                             "errors", options());
  ASSERT_TRUE(auth.has_value()) << auth.error().describe();
  ASSERT_EQ(auth->size(), 1u);
  EXPECT_EQ((*auth)[0].error_number, 1007);
  auto lookup =
      decodeMessages(answer("13b_job_lookup_errors.json", "unknown numeric"), "errors", options());
  ASSERT_TRUE(lookup.has_value());
  ASSERT_EQ(lookup->size(), 1u);
  EXPECT_EQ((*lookup)[0].error_number, 2017);
  auto mixed = decodeMessages(R"({"errors": ["x", {"error_number": 5, "error": "e"}, 3]})",
                              "errors", options());
  ASSERT_TRUE(mixed.has_value()) << mixed.error().describe();
  ASSERT_EQ(mixed->size(), 1u);
  EXPECT_EQ((*mixed)[0].error, "e");
  auto none = decodeMessages(R"({"jobs": []})", "errors", options());
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(decodeMessages("Authentication failure", "errors", options()).has_value());
}

TEST_P(Decode, NodesAndPartitionsInTheOpenApiShapes) {
  auto nodes = decodeNodes(R"({"nodes": [{"name": "gpu1", "state": ["IDLE"],
      "features": ["h100"], "active_features": ["h100"], "partitions": ["gpu"],
      "gres": "gpu:h100:2", "cpus": 4, "real_memory": 2000}]})",
                           options());
  ASSERT_TRUE(nodes.has_value()) << nodes.error().describe();
  EXPECT_EQ(nodes->at(0).features, std::vector<std::string>{"h100"});
  EXPECT_EQ(nodes->at(0).real_memory_mb, 2000);
  auto csv = decodeNodes(R"({"nodes": [{"name": "n", "features": "a,b"}]})", options());
  ASSERT_TRUE(csv.has_value());
  EXPECT_EQ(csv->at(0).features, (std::vector<std::string>{"a", "b"}));
  auto parts = decodePartitions(R"({"partitions": [{"name": "gpu",
      "nodes": {"configured": "gpu[1-2]", "total": 2}, "cpus": {"total": 8},
      "partition": {"state": ["UP"]}}]})",
                                options());
  ASSERT_TRUE(parts.has_value()) << parts.error().describe();
  EXPECT_EQ(parts->at(0).nodes, "gpu[1-2]");
  EXPECT_EQ(parts->at(0).total_cpus, 8);
  EXPECT_EQ(parts->at(0).state, std::vector<std::string>{"UP"});
  EXPECT_EQ(parts->at(0).grace_time, std::nullopt);  // not in the record: not known
  EXPECT_EQ(parts->at(0).preempt_mode, std::nullopt);
  // Preemption: grace_time in both versions, preempt_mode in v0.0.45 only.
  auto preempting = decodePartitions(
      R"({"partitions": [{"name": "cpu", "grace_time": 30, "preempt_mode": ["CANCEL"]},
                         {"name": "old", "grace_time": 0}]})",
      options());
  ASSERT_TRUE(preempting.has_value()) << preempting.error().describe();
  EXPECT_EQ(preempting->at(0).grace_time, 30);
  EXPECT_EQ(preempting->at(0).preempt_mode, std::vector<std::string>{"CANCEL"});
  EXPECT_EQ(preempting->at(1).grace_time, 0);
  EXPECT_EQ(preempting->at(1).preempt_mode, std::nullopt);
  EXPECT_FALSE(decodeNodes(R"({"x": 1})", options()).has_value());
}

TEST_P(Decode, KeysSpeltWithEscapesAreUnknownKeys) {
  auto jobs = decodeJobs(jobAnswer(R"({"job_id": 1, "na\u006de": "x", "comment": "a\"b\u00e9"})"),
                         options());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().describe();
  EXPECT_EQ(jobs->front().name, "");
  EXPECT_EQ(jobs->front().comment, "a\"b\xc3\xa9");  // values are unescaped
}

// Every batch size, from one byte up: the cut falls inside keys, strings full of brackets and
// escaped quotes, numbers and nested records, and the records come out the same.
TEST(DecodeBatches, CutsAnywhereGiveTheSameRecords) {
  const std::string answer = R"({"meta": {"x": "]"}, "jobs": [
      {"job_id": 1, "name": "a]\"}{[,b\\", "comment": "\u00e9\"]", "flags": ["]", "}"],
       "exit_code": {"status": ["x"], "signal": {"id": 9, "name": "]}"}}},
      {"job_id": {"set": true, "number": 22}, "job_state": ["RUNNING"], "nested": [[{}], {"a": []}]},
      {"job_id": 333, "name": "", "step_id": {"sluid": "s0000000000333"}}
    ], "last_update": 5, "warnings": [{"description": "No job changes ]"}, 7, "x"]})";
  auto whole = decodeJobListing(answer);
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  ASSERT_EQ(whole->jobs.size(), 3u);
  EXPECT_EQ(whole->jobs[0].name, "a]\"}{[,b\\");
  EXPECT_TRUE(whole->unchanged);
  for (size_t batch = 1; batch <= answer.size(); ++batch) {
    auto cut = decodeJobListing(answer, DecodeOptions{0, batch});
    ASSERT_TRUE(cut.has_value()) << batch << ": " << cut.error().describe();
    EXPECT_TRUE(*cut == *whole) << "batches of " << batch;
    auto messages = decodeMessages(answer, "warnings", DecodeOptions{0, batch});
    ASSERT_TRUE(messages.has_value()) << batch << ": " << messages.error().describe();
    EXPECT_EQ(messages->size(), 1u) << batch;
  }
}

TEST(AnswerBytes, StringsWithSpareCapacityAreParsedInPlace) {
  std::string padded = R"({"jobs": []})";
  padded.reserve(padded.size() + kJsonPadding);
  EXPECT_TRUE(AnswerBytes(padded).padded());
  std::string tight(200, ' ');
  tight.shrink_to_fit();
  EXPECT_FALSE(AnswerBytes(tight).padded());
  EXPECT_FALSE(AnswerBytes(std::string_view(padded)).padded());
  // An unpadded view is copied first and decodes all the same.
  std::string bytes = answer("02_submit_single.json", "submit");
  auto receipt = decodeSubmitReceipt(std::string_view(bytes));
  ASSERT_TRUE(receipt.has_value()) << receipt.error().describe();
  EXPECT_EQ(receipt->job_id, 2u);
}

TEST(SplitJobStateId, SplitsIdAndHetOffset) {
  uint64_t id = 0;
  std::optional<uint32_t> het;
  EXPECT_EQ(splitJobStateId("10+1", id, het), nullptr);
  EXPECT_EQ(id, 10u);
  EXPECT_EQ(het, 1u);
  EXPECT_EQ(splitJobStateId("12", id, het), nullptr);
  EXPECT_EQ(id, 12u);
  EXPECT_FALSE(het.has_value());
  for (const char* bad : {"12x", "12+", "+1", "", "-3", "1+99999999999"}) {
    EXPECT_NE(splitJobStateId(bad, id, het), nullptr) << bad;
  }
}

}  // namespace
}  // namespace tuneplane::slurm
