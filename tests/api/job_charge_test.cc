// Teams and fair share (api/job_charge.h): a spec's choice of Slurm account and QOS checked
// against the user's token; the user's default written into the stored spec's text — block
// and flow YAML, JSON — with nothing else changed; then through the routes: the stored spec,
// the job's "scheduling", /v1/validate and whoami.
#include "api/job_charge.h"

#include "api_fixture.h"
#include "spec/spec_parser.h"

namespace tuneplane::api::testing {
namespace {

Principal alice() {
  return Principal{.user = "alice",
                   .admin = false,
                   .slurm_accounts = {"team-a", "shared"},
                   .qos = {"normal", "high"}};
}

spec::Scheduling schedulingOf(const std::string& text) {
  const spec::PartialSpec parsed = spec::parsePartialJobSpec(text);
  EXPECT_TRUE(parsed.complete()) << (parsed.complete() ? "" : parsed.errors.front().describe());
  return parsed.spec.scheduling;
}

TEST(JobChargeTest, AChoiceAmongTheUsersIsKeptAsSent) {
  const std::string spec = cpuSpec("echo x", "  scheduling:\n    account: shared\n    qos: high\n");
  auto charged = chargeSpec(spec, alice());
  ASSERT_TRUE(charged) << charged.error().front().describe();
  EXPECT_EQ(*charged, spec);
}

TEST(JobChargeTest, AChoiceTheUserMayNotMakeIsRefusedNamingWhatTheyMay) {
  auto charged = chargeSpec(
      cpuSpec("echo x", "  scheduling:\n    account: team-b\n    qos: urgent\n"), alice());
  ASSERT_FALSE(charged);
  ASSERT_EQ(charged.error().size(), 2u);
  EXPECT_EQ(charged.error()[0].code, "api.account_not_allowed");
  EXPECT_EQ(charged.error()[0].field, "spec.scheduling.account");
  EXPECT_NE(charged.error()[0].message.find("team-a, shared"), std::string::npos);
  EXPECT_EQ(charged.error()[1].code, "api.qos_not_allowed");
  EXPECT_EQ(charged.error()[1].field, "spec.scheduling.qos");
  // A user whose token names no account may not choose one: the site's default applies.
  auto none = chargeSpec(cpuSpec("echo x", "  scheduling:\n    account: team-a\n"),
                         Principal{.user = "bob"});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error()[0].code, "api.account_not_allowed");
  EXPECT_NE(none.error()[0].message.find("no choice of account"), std::string::npos);
}

TEST(JobChargeTest, TheDefaultsAreWrittenIntoTheTextAndNothingElseChanges) {
  // Block style, with a comment that must survive.
  const std::string block = cpuSpec("echo x") + "# the end of alice's spec\n";
  auto charged = chargeSpec(block, alice());
  ASSERT_TRUE(charged) << charged.error().front().describe();
  EXPECT_NE(charged->find("# the end of alice's spec"), std::string::npos);
  EXPECT_EQ(schedulingOf(*charged), (spec::Scheduling{"team-a", "normal"}));
  spec::JobSpec before = spec::parsePartialJobSpec(block).spec;
  spec::JobSpec after = spec::parsePartialJobSpec(*charged).spec;
  after.scheduling = {};
  EXPECT_EQ(after, before);
  // Only the missing one is added beside the user's choice.
  auto half = chargeSpec(cpuSpec("echo x", "  scheduling:\n    qos: high\n"), alice());
  ASSERT_TRUE(half);
  EXPECT_EQ(schedulingOf(*half), (spec::Scheduling{"team-a", "high"}));
  auto flow = chargeSpec(cpuSpec("echo x", "  scheduling: {qos: high}\n"), alice());
  ASSERT_TRUE(flow);
  EXPECT_EQ(schedulingOf(*flow), (spec::Scheduling{"team-a", "high"}));
}

TEST(JobChargeTest, AJsonSpecStaysJson) {
  const std::string spec =
      R"({"apiVersion": "tuneplane.io/v1", "kind": "TrainingJob", "metadata": {"name": "j"},
 "spec": {"framework": {"name": "custom", "task": "custom", "runtime_id": "custom-demo",
          "command": ["echo", "hi"]},
          "resources": {"pools": [{"name": "main", "nodes": 1, "gpus_per_node": 0,
                                   "cpus": 1, "memory_gb": 1}]}}})";
  auto charged = chargeSpec(spec, alice());
  ASSERT_TRUE(charged) << charged.error().front().describe();
  const auto parsed = nlohmann::json::parse(*charged, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << *charged;
  EXPECT_EQ(parsed["spec"]["scheduling"]["account"], "team-a");
  EXPECT_EQ(parsed["spec"]["scheduling"]["qos"], "normal");
}

TEST(JobChargeTest, AnAnchoredSpecIsRefusedRatherThanGuessed) {
  std::string spec = cpuSpec("echo x");
  spec.replace(spec.find("spec:\n"), 6, "spec: &s\n");
  auto charged = chargeSpec(spec, alice());
  ASSERT_FALSE(charged);
  EXPECT_EQ(charged.error().front().code, "api.charge_not_added");
  EXPECT_NE(charged.error().front().message.find("name spec.scheduling.account yourself"),
            std::string::npos);
}

// Issue 45, item 1: the choice is read from the parsed spec, so a key spelled with an escape
// (YAML's \x65, JSON's \u0065) is the key it decodes to, checked and reported as such.
TEST(JobChargeTest, AnEscapedSchedulingKeyIsCheckedAsTheKeyItDecodesTo) {
  const std::string yaml_escaped =
      cpuSpec("echo x", "  \"sch\\x65duling\": {account: team-b, qos: high}\n");
  std::string json_escaped = R"({"apiVersion": "tuneplane.io/v1", "kind": "TrainingJob",
 "metadata": {"name": "j"},
 "spec": {"framework": {"name": "custom", "task": "custom", "runtime_id": "custom-demo",
          "command": ["echo", "hi"]},
          "sch\u0065duling": {"account": "team-b"},
          "resources": {"pools": [{"name": "main", "nodes": 1, "gpus_per_node": 0,
                                   "cpus": 1, "memory_gb": 1}]}}})";
  for (const std::string& spec : {yaml_escaped, json_escaped}) {
    ASSERT_EQ(schedulingOf(spec).account, "team-b") << spec;
    // A user with no choice of account, and one whose accounts do not include team-b.
    for (const Principal& who : {Principal{.user = "bob"}, alice()}) {
      auto charged = chargeSpec(spec, who);
      ASSERT_FALSE(charged) << who.user << ": " << spec;
      EXPECT_EQ(charged.error().front().code, "api.account_not_allowed");
    }
    // What a stored job with that text is charged to is what it chose, not the site's.
    catalog::SlurmSite site;
    site.account = "general";
    EXPECT_EQ(chargeOf(spec, site).account, "team-b") << spec;
  }
}

TEST(JobChargeTest, NoDefaultsAndNoChoiceCostNoParse) {
  const std::string spec = cpuSpec("echo x");
  auto charged = chargeSpec(spec, Principal{.user = "bob"});
  ASSERT_TRUE(charged);
  EXPECT_EQ(*charged, spec);
  // A spec that cannot be read is left for the validator to report.
  EXPECT_EQ(*chargeSpec("not: [yaml", alice()), "not: [yaml");
}

TEST(JobChargeTest, WhatAStoredJobIsChargedToFallsBackToTheSite) {
  catalog::SlurmSite site;
  site.account = "ml-research";
  EXPECT_EQ(chargeOf(cpuSpec("echo x"), site), (JobCharge{"ml-research", std::nullopt}));
  EXPECT_EQ(chargeOf(cpuSpec("echo x", "  scheduling:\n    qos: high\n"), site),
            (JobCharge{"ml-research", "high"}));
}

class JobChargeRoutesTest : public ApiFixture {
 protected:
  void tune(ApiDependencies&, HttpServerOptions&) override {
    tokens_[0].slurm_accounts = {"team-a", "shared"};  // alice
    tokens_[0].qos = {"normal"};
  }
};

TEST_F(JobChargeRoutesTest, TheJobIsStoredWithItsChargeAndShowsIt) {
  auto res = post("/v1/jobs", cpuSpec("echo x"));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const json job = body(res);
  EXPECT_EQ(job["scheduling"], json({{"account", "team-a"}, {"qos", "normal"}}));
  EXPECT_NE(job["spec"].get<std::string>().find("\"account\": \"team-a\""), std::string::npos);
  const json again = body(get("/v1/jobs/" + job["id"].get<std::string>()));
  EXPECT_EQ(again["scheduling"], job["scheduling"]);
  // bob's token carries nothing: the site's default (none here) applies.
  const json bobs = body(post("/v1/jobs", cpuSpec("echo x", "", "bobs"), kBobToken));
  EXPECT_EQ(bobs["scheduling"], json({{"account", nullptr}, {"qos", nullptr}}));
}

TEST_F(JobChargeRoutesTest, ARefusedChoiceIs422AndNothingIsStored) {
  for (const char* route : {"/v1/jobs", "/v1/validate"}) {
    auto res = post(route, cpuSpec("echo x", "  scheduling:\n    account: team-b\n"));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 422) << route;
    EXPECT_EQ(code(res), "api.account_not_allowed") << route;
  }
  auto page = store_->listJobs({});
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->jobs.empty());
  auto valid = post("/v1/validate", cpuSpec("echo x", "  scheduling:\n    account: shared\n"));
  ASSERT_TRUE(valid);
  EXPECT_EQ(valid->status, 200) << valid->body;
  EXPECT_EQ(body(valid)["scheduling"], json({{"account", "shared"}, {"qos", "normal"}}));
}

TEST_F(JobChargeRoutesTest, AnEscapedKeyCannotChargeAnotherTeam) {
  const std::string escaped =
      cpuSpec("echo x", "  \"sch\\x65duling\": {account: team-b, qos: high}\n");
  for (const char* token : {kAliceToken, kBobToken}) {
    for (const char* route : {"/v1/jobs", "/v1/validate"}) {
      auto res = post(route, escaped, token);
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, 422) << route << ": " << res->body;
      EXPECT_EQ(code(res), "api.account_not_allowed") << route;
    }
  }
  auto page = store_->listJobs({});
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->jobs.empty());
  // A choice alice may make, spelled the same way, is reported as what was submitted.
  const json job =
      body(post("/v1/jobs", cpuSpec("echo x", "  \"sch\\x65duling\": {account: shared}\n")));
  EXPECT_EQ(job["scheduling"], json({{"account", "shared"}, {"qos", "normal"}}));
  EXPECT_EQ(body(get("/v1/jobs/" + job["id"].get<std::string>()))["scheduling"], job["scheduling"]);
}

TEST_F(JobChargeRoutesTest, WhoamiListsWhatTheUserMayBeChargedTo) {
  const json me = body(get("/v1/whoami"));
  EXPECT_EQ(me["slurm_accounts"], json({"team-a", "shared"}));
  EXPECT_EQ(me["qos"], json({"normal"}));
}

}  // namespace
}  // namespace tuneplane::api::testing
