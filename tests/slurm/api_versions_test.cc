// The REST API versions (slurm_api.h), each held to its own real OpenAPI document and real
// transcripts: its vocabulary and submit fields are the document's, every body TunePlane
// builds conforms to every version's schema, the shared decoders read every version's real
// answers, and the negotiation (api_negotiation.h) picks what a real server of each kind
// offers.
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "openapi_schema.h"
#include "slurm/answer_decoder.h"
#include "slurm/api_negotiation.h"
#include "slurm/job_state.h"
#include "slurm/script_renderer.h"
#include "slurm/slurm_api.h"
#include "slurm/submit_body.h"
#include "support/fixtures.h"
#include "support/test_paths.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
namespace fs = std::filesystem;

json openApiOf(const SlurmApi& api) {
  const std::string name(api.name);
  return test::readJsonFixture(test::slurmApiDataDir(name) / ("openapi-" + name + ".json"));
}

// Every transcript exchange of `version` (all its transcripts* folders).
std::vector<json> exchangesOf(const std::string& version) {
  std::vector<json> out;
  for (const auto& entry : fs::directory_iterator(test::slurmApiDataDir(version))) {
    const std::string folder = entry.path().filename().string();
    if (!entry.is_directory() || folder.rfind("transcripts", 0) != 0) continue;
    for (const auto& file : test::fixtureFiles(entry.path(), ".json")) {
      const json transcript = test::readJsonFixture(file);
      for (const auto& e : transcript["exchanges"]) out.push_back(e);
    }
  }
  return out;
}

TEST(SlurmApis, AreTheFoldersInVersionOrderWithUniqueNames) {
  const auto apis = slurmApis();
  ASSERT_GE(apis.size(), 2u);
  std::set<std::string_view> names;
  for (const SlurmApi* api : apis) EXPECT_TRUE(names.insert(api->name).second) << api->name;
  EXPECT_EQ(findSlurmApi("v0.0.44"), apis[0]);
  EXPECT_EQ(findSlurmApi("v0.0.45"), apis[1]);
  EXPECT_EQ(findSlurmApi("v0.0.43"), nullptr);
  EXPECT_EQ(slurmApiNames(), "v0.0.44, v0.0.45");
  EXPECT_TRUE(isKnownApiVersion("auto"));
  EXPECT_FALSE(isKnownApiVersion("v0.0.46"));
  EXPECT_EQ(apis[0]->route("/job/17"), "/slurm/v0.0.44/job/17");
}

TEST(SlurmApis, VocabularyAndSubmitFieldsAreTheirOpenApiDocuments) {
  for (const SlurmApi* api : slurmApis()) {
    SCOPED_TRACE(std::string(api->name));
    const json doc = openApiOf(*api);
    const std::string prefix = std::string(api->name) + "_";
    const json& schemas = doc["components"]["schemas"];
    std::vector<std::string> states;
    for (const auto& s : schemas[prefix + "job_info"]["properties"]["job_state"]["items"]["enum"])
      states.push_back(s);
    EXPECT_EQ(states, std::vector<std::string>(api->job_states.begin(), api->job_states.end()));
    std::set<std::string> fields;
    for (const auto& [field, _] : schemas[prefix + "job_desc_msg"]["properties"].items())
      fields.insert(field);
    EXPECT_EQ(fields, std::set<std::string>(api->submit_fields.begin(), api->submit_fields.end()));
    // One table of states for everyone (job_state.h): it knows every version's names.
    for (std::string_view name : api->job_states) {
      EXPECT_TRUE(parseJobBaseState(name) || parseJobStateFlag(name)) << name;
    }
    // Every route the client uses is in the document.
    for (const char* route : {"/ping/", "/job/submit", "/job/{job_id}", "/jobs/", "/jobs/state/",
                              "/partitions/", "/nodes/"}) {
      EXPECT_TRUE(doc["paths"].contains(api->route(route))) << route;
    }
    if (!api->ping_names_refusal) {
      EXPECT_TRUE(doc["paths"].contains(api->route(std::string(api->auth_probe))));
    }
  }
}

launch::LaunchRequest fullRequest(int pools) {
  launch::LaunchRequest r;
  r.job_name = "sft";
  r.identity = {"job-7", 2, "tp-0123456789abcdef0123456789abcdef"};
  r.container_runtime = catalog::ContainerRuntime::kPyxis;
  r.artifact = {"/r/image.sqsh", catalog::ArtifactFormat::kSqsh, std::string(64, 'a')};
  r.attempt_dir = "/s/jobs/job-7/attempts/2";
  r.logs_dir = r.attempt_dir + "/logs";
  r.scheduler_environment = {{"PATH", "/usr/bin:/bin"}};
  r.command = {"python3"};
  r.uses_gpus = true;
  r.account = "a";
  r.qos = "q";
  r.preemption_warning = catalog::PreemptionWarning{};  // kill_warning_* on every version
  r.ray.port = 6379;
  for (int i = 0; i < pools; ++i) {
    launch::Component c;
    c.pool_name = "pool" + std::to_string(i);
    c.partition = "gpu";
    c.constraint = "h100";
    c.nodes = 1;
    c.gpus_per_node = 2;
    c.cpus_per_node = 4;
    c.memory_mb = 1024;
    c.scratch_mb = 10;
    c.time_limit = std::chrono::minutes(30);
    r.components.push_back(c);
  }
  return r;
}

TEST(SlurmApis, EverySubmitBodyConformsToEveryVersion) {
  for (const SlurmApi* api : slurmApis()) {
    SCOPED_TRACE(std::string(api->name));
    const openapi::SchemaChecker checker(openApiOf(*api));
    for (int pools : {1, 2}) {
      const launch::LaunchRequest r = fullRequest(pools);
      const json body = buildSubmitBody(r, renderBatchScript(r));
      EXPECT_THAT(checker.check(body, std::string(api->name) + "_job_submit_req"), IsEmpty());
      auto versioned = submitBodyFor(*api, body);
      ASSERT_TRUE(versioned) << versioned.error().describe();
      EXPECT_EQ(*versioned, body);
    }
  }
}

TEST(SlurmApis, ABodyFieldAVersionLacksIsRefusedBeforeItIsSent) {
  const SlurmApi& v44 = *findSlurmApi("v0.0.44");
  const SlurmApi& v45 = *findSlurmApi("v0.0.45");
  // container_type is new in v0.0.45 (tests/data/slurm: its job_desc_msg; v0.0.44's lacks it).
  json body = {{"script", "s"},
               {"jobs", json::array({{{"name", "a"}}, {{"container_type", "x"}}})}};
  EXPECT_TRUE(submitBodyFor(v45, body));
  auto refused = submitBodyFor(v44, body);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "slurm.config");
  EXPECT_EQ(refused.error().field, "jobs[1].container_type");
  EXPECT_THAT(refused.error().message, HasSubstr("v0.0.44"));
}

// The decoders are shared: every real answer of every version decodes, job records with the
// SLUID Slurm reports (v0.0.44's records carry one too, in step_id.sluid).
TEST(SlurmApis, TheSharedDecodersReadEveryVersionsRealAnswers) {
  for (const SlurmApi* api : slurmApis()) {
    const std::string version(api->name);
    SCOPED_TRACE(version);
    int records = 0;
    int pings = 0;
    for (const json& e : exchangesOf(version)) {
      const json& body = e["response"]["body"];
      const std::string url = e["request"]["url"];
      if (!body.is_object() || e["response"]["status"] != 200) continue;
      if (url.find("/slurmdb/") != std::string::npos) continue;  // slurmdbd's, another shape
      const std::string text = body.dump(2);
      if (url.find("/ping") != std::string::npos) {
        auto ping = decodePing(text);
        ASSERT_TRUE(ping) << ping.error().describe();
        const size_t at = url.find("/slurm/") + 7;
        EXPECT_EQ(ping->data_parser, "data_parser/" + url.substr(at, url.find('/', at) - at));
        ++pings;
      } else if (e["request"]["method"] == "GET" && url.find("/job/") != std::string::npos) {
        auto jobs = decodeJobs(text);
        ASSERT_TRUE(jobs) << e["label"] << ": " << jobs.error().describe();
        for (const auto& job : *jobs) {
          EXPECT_TRUE(looksLikeSluid(job.sluid)) << e["label"] << ": " << job.sluid;
          EXPECT_TRUE(job.submit_time.value()) << e["label"];
          ++records;
        }
      }
    }
    EXPECT_GE(records, 20);
    EXPECT_GE(pings, 2);
  }
}

json discovery(const std::string& folder) {
  return test::versionTranscript("v0.0.44", "18_version_discovery", folder);
}

TEST(ApiNegotiation, ReadsWhatARealServerOffersFromItsOpenApiDocument) {
  auto body = [](const json& t) { return t["exchanges"][0]["response"]["body"].dump(); };
  auto on2511 = offeredApis(body(discovery("transcripts")));
  ASSERT_TRUE(on2511) << on2511.error().describe();
  EXPECT_EQ(on2511->versions, std::vector<std::string>{"v0.0.44"});
  EXPECT_EQ(on2511->release, "25.11.7");
  auto on2605 = offeredApis(body(discovery("transcripts-26.05")));
  ASSERT_TRUE(on2605);
  EXPECT_EQ(on2605->versions, (std::vector<std::string>{"v0.0.44", "v0.0.45"}));
  EXPECT_EQ(on2605->release, "26.05.3");
  auto v45_only = offeredApis(
      test::readJsonFixture(test::slurmApiDataDir("v0.0.45") / "openapi-v0.0.45.json").dump());
  ASSERT_TRUE(v45_only);
  EXPECT_EQ(v45_only->versions, std::vector<std::string>{"v0.0.45"});
  // No paths (a trimmed or foreign document): info.x-slurm.data_parsers says it.
  auto parsers_only = offeredApis(
      R"({"openapi": "3.0.3", "info": {"x-slurm": {"data_parsers": [{"plugin": "v0.0.43"}]}}})");
  ASSERT_TRUE(parsers_only);
  EXPECT_EQ(parsers_only->versions, std::vector<std::string>{"v0.0.43"});
  auto not_openapi = offeredApis("Unable to find requested URL endpoint.");
  ASSERT_FALSE(not_openapi);
  EXPECT_EQ(not_openapi.error().code, "slurm.bad_response");
}

TEST(ApiNegotiation, PicksTheNewestCommonVersionOrNamesWhatTheServerOffers) {
  struct Row {
    const char* configured;
    std::vector<std::string> offered;
    const char* chosen;  // nullptr: refused
    const char* code;
    std::vector<std::string> message_has;
  };
  const std::vector<Row> rows = {
      {"auto", {"v0.0.44"}, "v0.0.44", "", {}},
      {"auto", {"v0.0.44", "v0.0.45"}, "v0.0.45", "", {}},
      {"auto", {"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45", "v0.0.46"}, "v0.0.45", "", {}},
      {"v0.0.44", {"v0.0.44", "v0.0.45"}, "v0.0.44", "", {}},
      {"auto",
       {"v0.0.41", "v0.0.42", "v0.0.43"},
       nullptr,
       "slurm.no_common_api",
       {"serves REST API v0.0.41, v0.0.42, v0.0.43", "TunePlane speaks v0.0.44, v0.0.45"}},
      {"auto", {}, nullptr, "slurm.no_common_api", {"serves REST API none"}},
      {"v0.0.45",
       {"v0.0.44"},
       nullptr,
       "slurm.no_common_api",
       {"does not serve REST API v0.0.45", "it serves v0.0.44", "slurm.api_version to auto"}},
      {"v0.0.43", {"v0.0.43"}, nullptr, "slurm.config", {"does not speak REST API 'v0.0.43'"}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.configured) + " against " + ::testing::PrintToString(row.offered));
    auto chosen = chooseSlurmApi(row.configured, row.offered);
    if (row.chosen != nullptr) {
      ASSERT_TRUE(chosen) << chosen.error().describe();
      EXPECT_EQ((*chosen)->name, row.chosen);
      continue;
    }
    ASSERT_FALSE(chosen);
    EXPECT_EQ(chosen.error().code, row.code);
    EXPECT_EQ(chosen.error().field, "slurm.api_version");
    for (const auto& part : row.message_has) {
      EXPECT_THAT(chosen.error().message, ::testing::HasSubstr(part));
    }
  }
}

TEST(ApiNegotiation, TheChoiceIsDescribedWithWhatItCostsOnThatVersion) {
  ApiChoice choice{findSlurmApi("v0.0.44"), "auto", {"v0.0.44"}, "25.11.7", "GET /openapi/v3"};
  EXPECT_EQ(describeChoice(choice),
            "REST API v0.0.44 (slurm.api_version: auto; slurmrestd serves v0.0.44, Slurm "
            "25.11.7, from GET /openapi/v3; TunePlane speaks v0.0.44, v0.0.45)");
  const json j = choiceJson("auto", &choice);
  EXPECT_EQ(j["version"], "v0.0.44");
  EXPECT_EQ(j["negotiated"], true);
  EXPECT_EQ(j["release"], "25.11.7");
  ASSERT_EQ(j["degradations"].size(), 3u);
  EXPECT_THAT(j["degradations"][0]["what"].get<std::string>(), HasSubstr("no SLUID in paths"));
  const json none = choiceJson("auto", nullptr);
  EXPECT_TRUE(none["version"].is_null());
  EXPECT_EQ(none["negotiated"], false);
  ApiChoice v45{findSlurmApi("v0.0.45"), "v0.0.45", {}, "", "slurm.api_version"};
  EXPECT_TRUE(choiceJson("v0.0.45", &v45)["degradations"].empty());
}

}  // namespace
}  // namespace tuneplane::slurm
