// slurmdbd's job records (slurm/slurmdb_jobs.h) from the real answers of slurmrestd 26.05.3:
// /slurmdb/v0.0.45/jobs/ and v0.0.44's (transcripts 21_slurmdb_jobs), the 404 of a slurmrestd
// without openapi/slurmdbd (22_no_slurmdbd), and the query's path.
#include "slurm/slurmdb_jobs.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "scripted_server.h"
#include "support/fixtures.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;
using scripted::Harness;
using scripted::ScriptedServer;

constexpr const char* kWindowLabel = "every job in the window";

std::string windowAnswer(const std::string& version = "") {
  const json t = version.empty()
                     ? test::transcript("21_slurmdb_jobs")
                     : test::versionTranscript(version, "21_slurmdb_jobs", "transcripts-26.05");
  for (const auto& e : t["exchanges"]) {
    if (e["label"].get<std::string>().rfind(kWindowLabel, 0) == 0) {
      return e["response"]["body"].dump(1);
    }
  }
  ADD_FAILURE() << "no exchange " << kWindowLabel;
  return "";
}

TEST(SlurmdbJobs, DecodesEveryRunOfTheWindowV0045) {
  auto runs = decodeSlurmdbJobs(windowAnswer());
  ASSERT_TRUE(runs) << runs.error().describe();
  ASSERT_EQ(runs->size(), 4u);
  // The requeued job's first run is a record of its own, state REQUEUED, restart_cnt 0.
  const AccountingRun& first = (*runs)[0];
  EXPECT_EQ(first.job_id, 9u);
  EXPECT_EQ(first.sluid, "s4JXM98E14NE00");
  EXPECT_EQ(first.cluster, "tp");
  EXPECT_EQ(first.user, "alice");
  EXPECT_EQ(first.account, "team-a");
  EXPECT_EQ(first.partition, "cpu");
  EXPECT_EQ(first.name, "acct-requeue");
  EXPECT_EQ(first.state, (std::vector<std::string>{"PENDING", "REQUEUED"}));
  EXPECT_EQ(first.restart_count, 0);
  EXPECT_EQ(first.start_time, 1796653224);
  EXPECT_EQ(first.end_time, 1796653228);
  EXPECT_EQ(first.elapsed, 4);
  EXPECT_EQ(first.suspended, 0);
  EXPECT_EQ(first.cpus, 1);
  EXPECT_EQ(first.gpus, 0);
  EXPECT_EQ(first.working_directory, "/shared/rec44/alice");
  // alice's 2-CPU job: tres.allocated cpu 2.
  EXPECT_EQ((*runs)[1].job_id, 7u);
  EXPECT_EQ((*runs)[1].cpus, 2);
  EXPECT_EQ((*runs)[1].state, std::vector<std::string>{"COMPLETED"});
  // bob's GPU job: gres/gpu 1 (AccountingStorageTRES=gres/gpu).
  EXPECT_EQ((*runs)[2].user, "bob");
  EXPECT_EQ((*runs)[2].account, "team-b");
  EXPECT_EQ((*runs)[2].gpus, 1);
  EXPECT_EQ((*runs)[2].cpus, 1);
  // The requeued job's second run: same id, its own SLUID, restart_cnt 1, its own times.
  const AccountingRun& second = (*runs)[3];
  EXPECT_EQ(second.job_id, 9u);
  EXPECT_NE(second.sluid, first.sluid);
  EXPECT_EQ(second.restart_count, 1);
  EXPECT_EQ(second.submit_time, 1796653233);
  EXPECT_EQ(second.start_time, 1796653392);
  EXPECT_EQ(second.end_time, 1796653400);
  EXPECT_EQ(second.elapsed, 8);
  // Each record's elapsed is its end minus its start (no suspension): the figure sacct's
  // CPUTimeRAW multiplies by the CPUs.
  for (const auto& run : *runs) EXPECT_EQ(run.elapsed, run.end_time - run.start_time);
}

TEST(SlurmdbJobs, DecodesV0044RecordsWhichHaveNoSluid) {
  auto runs = decodeSlurmdbJobs(windowAnswer("v0.0.44"));
  ASSERT_TRUE(runs) << runs.error().describe();
  ASSERT_EQ(runs->size(), 5u);
  EXPECT_EQ((*runs)[0].job_id, 15u);
  EXPECT_EQ((*runs)[0].state, (std::vector<std::string>{"PENDING", "REQUEUED"}));
  EXPECT_EQ((*runs)[4].job_id, 15u);
  EXPECT_EQ((*runs)[4].restart_count, 1);
  EXPECT_EQ((*runs)[4].elapsed, 8);
  EXPECT_EQ((*runs)[3].user, "bob");
  EXPECT_EQ((*runs)[3].gpus, 1);
  EXPECT_EQ((*runs)[2].cpus, 2);
  for (const auto& run : *runs) {
    EXPECT_EQ(run.sluid, "");
    EXPECT_EQ(run.working_directory,
              run.user == "bob" ? "/shared/rec44/bob" : "/shared/rec44/alice");
  }
}

TEST(SlurmdbJobs, EveryRecordedAnswerDecodesTheSameInTinyBatches) {
  for (const std::string& version : {std::string(), std::string("v0.0.44")}) {
    const json t = version.empty()
                       ? test::transcript("21_slurmdb_jobs")
                       : test::versionTranscript(version, "21_slurmdb_jobs", "transcripts-26.05");
    for (const auto& e : t["exchanges"]) {
      const json& body = e["response"]["body"];
      if (!body.is_object() || !body.contains("jobs")) continue;
      SCOPED_TRACE(version + " " + e["label"].get<std::string>());
      auto whole = decodeSlurmdbJobs(body.dump(1));
      auto batched =
          decodeSlurmdbJobs(body.dump(), DecodeOptions{.whole_answer_limit = 0, .batch_bytes = 64});
      ASSERT_TRUE(whole) << whole.error().describe();
      ASSERT_TRUE(batched) << batched.error().describe();
      EXPECT_EQ(*whole, *batched);
      EXPECT_EQ(whole->size(), body["jobs"].size());
    }
  }
}

TEST(SlurmdbJobs, AnUnknownIdIsNoRecordNotAnError) {
  auto runs = decodeSlurmdbJobs(
      test::transcriptResponseBody("21_slurmdb_jobs", "an id slurmdbd never saw").dump());
  ASSERT_TRUE(runs) << runs.error().describe();
  EXPECT_TRUE(runs->empty());
}

TEST(SlurmdbJobs, GpusAreThePlainGpuTresElseTheSumOfTypedOnes) {
  auto answer = [](const json& tres) {
    return json{{"jobs", json::array({{{"job_id", 5}, {"tres", {{"allocated", tres}}}}})}}.dump();
  };
  const json typed = json::array({{{"type", "cpu"}, {"name", ""}, {"count", 8}},
                                  {{"type", "gres"}, {"name", "gpu:h100"}, {"count", 2}},
                                  {{"type", "gres"}, {"name", "gpu:a100"}, {"count", 1}}});
  auto only_typed = decodeSlurmdbJobs(answer(typed));
  ASSERT_TRUE(only_typed) << only_typed.error().describe();
  EXPECT_EQ((*only_typed)[0].gpus, 3);
  EXPECT_EQ((*only_typed)[0].cpus, 8);
  json both = typed;
  both.push_back({{"type", "gres"}, {"name", "gpu"}, {"count", 3}});
  auto plain = decodeSlurmdbJobs(answer(both));
  ASSERT_TRUE(plain);
  EXPECT_EQ((*plain)[0].gpus, 3);  // not 6: the typed ones are part of the plain count
  auto none =
      decodeSlurmdbJobs(answer(json::array({{{"type", "gres"}, {"name", "gpumem"}, {"count", 80}},
                                            {{"type", "energy"}, {"name", ""}, {"count", -2}}})));
  ASSERT_TRUE(none);
  EXPECT_EQ((*none)[0].gpus, 0);
}

TEST(SlurmdbJobs, RefusesWhatIsNotSlurmdbdsAnswer) {
  struct Case {
    const char* name;
    std::string body;
    std::string code;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"no jobs array", R"({"meta": {}, "errors": [], "warnings": []})", "slurm.bad_response",
       "jobs"},
      {"a record without job_id", R"({"jobs": [{"user": "alice"}]})", "slurm.bad_response",
       "jobs[0].job_id"},
      {"a record that is not an object", R"({"jobs": [1]})", "slurm.bad_response", "jobs[0]"},
      {"truncated", R"({"jobs": [{"job_id": 1, "user": "ali)", "slurm.bad_response", ""},
      {"Slurm's error in a 200 answer",
       R"({"jobs": [], "errors": [{"error": "Unable to connect to database", "error_number": 7000, "description": "", "source": ""}]})",
       "slurm.rejected", "errors[0]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto runs = decodeSlurmdbJobs(c.body);
    ASSERT_FALSE(runs);
    EXPECT_EQ(runs.error().code, c.code);
    if (!c.field.empty()) {
      EXPECT_EQ(runs.error().field, c.field);
    }
  }
}

TEST(SlurmdbJobs, PathRepeatsUsersAndAsksForEveryRunWithoutSteps) {
  EXPECT_EQ(slurmdbJobsPath("v0.0.45", {{"alice", "bob"}, 1796653219, 1796653416}),
            "/slurmdb/v0.0.45/jobs/?users=alice&users=bob&start_time=1796653219&end_time="
            "1796653416&show_duplicates=true&skip_steps=true");
  EXPECT_EQ(slurmdbJobsPath("v0.0.44", {{}, 1, 2}),
            "/slurmdb/v0.0.44/jobs/?start_time=1&end_time=2&show_duplicates=true&skip_steps=true");
  EXPECT_EQ(slurmdbJobsPath("v0.0.45", {{"a b&c"}, 1, 2}).substr(0, 38),
            "/slurmdb/v0.0.45/jobs/?users=a%20b%26c");
}

TEST(SlurmdbJobs, ReadsThroughTheClientWithRepeatedUsers) {
  const std::string answer = windowAnswer();
  ScriptedServer server([&](const httplib::Request&, httplib::Response& res, int) {
    res.status = 200;
    res.set_content(answer, "application/json");
  });
  Harness h(server.url());
  auto runs = readSlurmdbJobs(*h.client, {{"alice", "bob"}, 1796653219, 1796653416});
  ASSERT_TRUE(runs) << runs.error().describe();
  EXPECT_EQ(runs->size(), 4u);
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/slurmdb/v0.0.45/jobs/");
  std::vector<std::string> users;
  for (auto [it, end] = seen[0].params.equal_range("users"); it != end; ++it) {
    users.push_back(it->second);
  }
  EXPECT_EQ(users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(scripted::header(seen[0], "X-SLURM-USER-TOKEN"), "tok-0");
}

TEST(SlurmdbJobs, ASlurmrestdWithoutSlurmdbdIsAccountingUnavailable) {
  for (const std::string& version : {std::string("v0.0.45"), std::string("v0.0.44")}) {
    SCOPED_TRACE(version);
    const json t = version == "v0.0.45"
                       ? test::transcript("22_no_slurmdbd")
                       : test::versionTranscript(version, "22_no_slurmdbd", "transcripts-26.05");
    const json& recorded = t["exchanges"][0]["response"];
    ASSERT_EQ(recorded["status"], 404);
    ScriptedServer server([&](const httplib::Request&, httplib::Response& res, int) {
      res.status = 404;
      res.set_content(recorded["body"].get<std::string>(), "text/plain");
    });
    Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), version);
    auto runs = readSlurmdbJobs(*h.client, {{"alice"}, 1, 2});
    ASSERT_FALSE(runs);
    EXPECT_EQ(runs.error().error.code, kErrAccountingUnavailable);
    EXPECT_NE(runs.error().error.message.find("/slurmdb/" + version + "/"), std::string::npos)
        << runs.error().error.message;
    EXPECT_EQ(server.seen().size(), 1u);  // a 404 is not retried
  }
}

TEST(SlurmdbJobs, ACommaListsFiveHundredIsAServerErrorNotMissingAccounting) {
  ScriptedServer server([](const httplib::Request&, httplib::Response& res, int) {
    res.status = 500;
    res.set_content("Unspecified error", "text/plain");
  });
  Harness h(server.url());
  auto runs = readSlurmdbJobs(*h.client, {{"alice"}, 1, 2});
  ASSERT_FALSE(runs);
  EXPECT_EQ(runs.error().error.code, kErrServerError);
  EXPECT_FALSE(isMissingRoute(runs.error()));
}

TEST(SlurmdbJobs, ABare404WithSlurmsErrorIsNotAMissingRoute) {
  SlurmError with_number;
  with_number.http_status = 404;
  with_number.slurm_error_number = 2017;
  EXPECT_FALSE(isMissingRoute(with_number));
  SlurmError text_only;
  text_only.http_status = 404;
  EXPECT_TRUE(isMissingRoute(text_only));
}

}  // namespace
}  // namespace tuneplane::slurm
