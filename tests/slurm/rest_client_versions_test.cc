// SlurmRestClient across REST API versions, against a scripted server answering with real
// transcripts: the negotiation of slurm.api_version (auto) and its failures, and what v0.0.44
// changes — reads and cancels by numeric id confirmed by the SLUID the answer carries, a ping
// checked by /licenses/, Slurm 25.11's refusals that come as HTTP 500. No test sleeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scripted_server.h"
#include "slurm/rest_client.h"
#include "support/fixtures.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;
using scripted::Harness;
using scripted::reply;
using scripted::ScriptedServer;
using ::testing::HasSubstr;

// An exchange's answer from the v0.0.44 transcripts (25.11.7, or 26.05.3 serving v0.0.44).
json v44(const std::string& file, const std::string& label,
         const std::string& folder = "transcripts") {
  const json t = test::versionTranscript("v0.0.44", file, folder);
  for (const auto& e : t["exchanges"]) {
    if (e["label"].is_string() && e["label"].get<std::string>().rfind(label, 0) == 0)
      return e["response"]["body"];
  }
  ADD_FAILURE() << "no exchange " << label << " in " << file;
  return json();
}

void text(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "text/plain");
}

std::vector<std::string> paths(ScriptedServer& server) {
  std::vector<std::string> out;
  for (const auto& s : server.seen()) out.push_back(s.method + " " + s.path);
  return out;
}

// --- negotiation -----------------------------------------------------------------------

TEST(ApiNegotiationClient, AutoReadsTheOpenApiDocumentOnceAndSpeaksTheNewestCommonVersion) {
  ScriptedServer server([](const httplib::Request& req, httplib::Response& res, int) {
    if (req.path == "/openapi/v3") {
      return reply(res, 200, v44("18_version_discovery", "GET /openapi/v3", "transcripts-26.05"));
    }
    reply(res, 200, test::transcriptResponseBody("01_ping.json", "ping without"));
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "auto");
  EXPECT_EQ(h.client->api(), nullptr);
  ASSERT_TRUE(h.client->ping());
  ASSERT_TRUE(h.client->ping());
  EXPECT_EQ(paths(server), (std::vector<std::string>{"GET /openapi/v3", "GET /slurm/v0.0.45/ping/",
                                                     "GET /slurm/v0.0.45/ping/"}));
  auto choice = h.client->negotiate();
  ASSERT_TRUE(choice);
  EXPECT_EQ(choice->api->name, "v0.0.45");
  EXPECT_EQ(choice->offered, (std::vector<std::string>{"v0.0.44", "v0.0.45"}));
  EXPECT_EQ(choice->release, "26.05.3");
  EXPECT_EQ(scripted::header(server.seen()[0], "X-SLURM-USER-TOKEN"), "tok-0");  // authenticated
}

TEST(ApiNegotiationClient, OnSlurm2511AutoPicksV0044) {
  ScriptedServer server([](const httplib::Request& req, httplib::Response& res, int) {
    if (req.path == "/openapi/v3") {
      return reply(res, 200, v44("18_version_discovery", "GET /openapi/v3"));
    }
    reply(res, 200, v44("01_ping", "ping with trailing slash"));
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "auto");
  auto ping = h.client->ping();
  ASSERT_TRUE(ping) << ping.error().describe();
  EXPECT_EQ(ping->release, "25.11.7");
  ASSERT_NE(h.client->api(), nullptr);
  EXPECT_EQ(h.client->api()->name, "v0.0.44");
  EXPECT_EQ(server.seen().back().path, "/slurm/v0.0.44/ping/");
}

TEST(ApiNegotiationClient, WithoutTheDocumentAPingPerVersionDecides) {
  ScriptedServer server([](const httplib::Request& req, httplib::Response& res, int) {
    if (req.path == "/slurm/v0.0.44/ping/") return reply(res, 200, v44("01_ping", "ping with"));
    // slurmrestd's answer to a route it does not serve (18_version_discovery).
    text(res, 404, v44("18_version_discovery", "ping v0.0.45").get<std::string>());
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "auto");
  auto choice = h.client->negotiate();
  ASSERT_TRUE(choice) << choice.error().describe();
  EXPECT_EQ(choice->api->name, "v0.0.44");
  EXPECT_EQ(choice->offered, std::vector<std::string>{"v0.0.44"});
  EXPECT_EQ(choice->release, "25.11.7");
  EXPECT_EQ(choice->how, "a ping per version");
  EXPECT_EQ(paths(server), (std::vector<std::string>{"GET /openapi/v3", "GET /slurm/v0.0.44/ping/",
                                                     "GET /slurm/v0.0.45/ping/"}));
}

TEST(ApiNegotiationClient, AServerThatSpeaksNoneIsAClearErrorAndNothingIsSent) {
  ScriptedServer server([](const httplib::Request& req, httplib::Response& res, int) {
    if (req.path == "/openapi/v3") {
      return reply(res, 200,
                   {{"openapi", "3.0.3"},
                    {"info", {{"x-slurm", {{"release", "24.05.8"}}}}},
                    {"paths",
                     {{"/slurm/v0.0.40/job/submit", json::object()},
                      {"/slurm/v0.0.41/job/submit", json::object()}}}});
    }
    reply(res, 200, json::object());
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "auto");
  auto receipt = h.client->submit({{"script", "s"}, {"job", {{"name", "x"}}}});
  ASSERT_FALSE(receipt);
  EXPECT_EQ(receipt.error().error.code, kErrNoCommonApi);
  EXPECT_EQ(receipt.error().transport, TransportClass::kNotSent);  // safe to submit again
  EXPECT_THAT(receipt.error().error.message, HasSubstr("serves REST API v0.0.40, v0.0.41"));
  EXPECT_THAT(receipt.error().error.message, HasSubstr("TunePlane speaks v0.0.44, v0.0.45"));
  EXPECT_EQ(paths(server), std::vector<std::string>{"GET /openapi/v3"});  // no submit went out
  // Not remembered: the next call asks again (the server may have been upgraded meanwhile).
  EXPECT_FALSE(h.client->ping());
  EXPECT_EQ(server.seen().size(), 2u);
}

TEST(ApiNegotiationClient, AnUnreachableServerMakesASubmitNotSentNeverUnknown) {
  ScriptedServer server([](const httplib::Request&, httplib::Response& res, int) {
    reply(res, 503, json::object());
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "auto");
  auto receipt = h.client->submit({{"script", "s"}, {"job", {{"name", "x"}}}});
  ASSERT_FALSE(receipt);
  EXPECT_EQ(receipt.error().transport, TransportClass::kNotSent);
  EXPECT_EQ(receipt.error().error.code, kErrNotSent);
  for (const auto& seen : server.seen()) EXPECT_NE(seen.method, "POST");
}

TEST(ApiNegotiationClient, ANamedVersionIsSpokenWithoutAsking) {
  ScriptedServer server([](const httplib::Request&, httplib::Response& res, int) {
    reply(res, 200, v44("01_ping", "ping with"));
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  ASSERT_NE(h.client->api(), nullptr);
  ASSERT_TRUE(h.client->ping());
  EXPECT_EQ(paths(server), std::vector<std::string>{"GET /slurm/v0.0.44/ping/"});
  Harness unknown(server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.43");
  auto ping = unknown.client->ping();
  ASSERT_FALSE(ping);
  EXPECT_EQ(ping.error().error.code, "slurm.config");
  EXPECT_EQ(server.seen().size(), 1u);
}

// --- v0.0.44: by numeric id, confirmed ---------------------------------------------------

// 25.11.7's answers about job 4 (02-05), keyed by what the test puts in `job4`.
struct Job4Server {
  json job4 = v44("03_get_running", "GET /job/{job_id} while RUNNING");
  std::string sluid() const { return job4["jobs"][0]["step_id"]["sluid"]; }
  ScriptedServer server{[this](const httplib::Request& req, httplib::Response& res, int) {
    if (req.method == "GET" && req.path == "/slurm/v0.0.44/job/4") return reply(res, 200, job4);
    if (req.method == "GET" && req.path == "/slurm/v0.0.44/jobs/") {
      return reply(res, 200, {{"jobs", job4["jobs"]}, {"errors", json::array()}});
    }
    if (req.method == "DELETE")
      return reply(res, 200, v44("08_cancel_running", "DELETE /job/{job_id}"));
    reply(res, 422, v44("03_get_running", "GET /job/{sluid} while RUNNING"));  // 25.11's 422
  }};
};

TEST(V0044Client, ReadsByNumericIdAndKeysRecordsWithSluidAtId) {
  Job4Server s;
  Harness h(s.server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto receipt = h.client->getJob("4");  // the receipt's bare id
  ASSERT_TRUE(receipt) << receipt.error().describe();
  ASSERT_EQ(receipt->size(), 1u);
  EXPECT_EQ((*receipt)[0].sluid, s.sluid() + "@4");
  auto read = h.client->getJob(s.sluid() + "@4");
  ASSERT_TRUE(read) << read.error().describe();
  EXPECT_EQ((*read)[0].sluid, s.sluid() + "@4");
  for (const auto& seen : s.server.seen()) EXPECT_EQ(seen.path, "/slurm/v0.0.44/job/4");
  auto listing = h.client->listJobs(std::nullopt);
  ASSERT_TRUE(listing);
  EXPECT_EQ(listing->jobs[0].sluid, s.sluid() + "@4");
}

TEST(V0044Client, AnIdThatNowNamesAnotherJobIsGoneAndIsNeverCancelled) {
  Job4Server s;
  const std::string old_key = "sFK1M94Y0000H0@4";  // the job that had id 4 before a purge
  Harness h(s.server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto read = h.client->getJob(old_key);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().error.code, kErrJobNotFound);
  EXPECT_THAT(read.error().error.message, HasSubstr("now names the job with SLUID " + s.sluid()));
  auto cancel = h.client->cancel(old_key, std::nullopt);
  ASSERT_FALSE(cancel);
  EXPECT_EQ(cancel.error().error.code, kErrJobNotFound);
  for (const auto& seen : s.server.seen()) EXPECT_NE(seen.method, "DELETE");
}

TEST(V0044Client, CancelConfirmsTheJobFirstThenDeletesByNumericId) {
  Job4Server s;
  Harness h(s.server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  ASSERT_TRUE(h.client->cancel(s.sluid() + "@4", std::nullopt));
  EXPECT_EQ(paths(s.server),
            (std::vector<std::string>{"GET /slurm/v0.0.44/job/4", "DELETE /slurm/v0.0.44/job/4"}));
}

TEST(V0044Client, AJobThatEndedIsNotSignalledItsIdMayBeReusedAnyMoment) {
  Job4Server s;
  s.job4 = v44("05_get_completed", "GET /job/{job_id} COMPLETED");
  Harness h(s.server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto cancel = h.client->cancel(s.sluid() + "@4", std::nullopt);
  ASSERT_FALSE(cancel);
  EXPECT_EQ(cancel.error().error.code, kErrAlreadyCompleting);
  EXPECT_EQ(paths(s.server), std::vector<std::string>{"GET /slurm/v0.0.44/job/4"});
}

TEST(V0044Client, AnAnswerThatProvesNothingConcludesNothing) {
  Job4Server s;
  const std::string key = s.sluid() + "@4";
  s.job4["jobs"][0]["step_id"].erase("sluid");  // a record without its SLUID
  Harness h(s.server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto read = h.client->getJob(key);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().error.code, kErrBadResponse);  // not "not found"
  auto cancel = h.client->cancel(key, std::nullopt);
  ASSERT_FALSE(cancel);
  EXPECT_EQ(cancel.error().error.code, kErrBadResponse);
  for (const auto& seen : s.server.seen()) EXPECT_NE(seen.method, "DELETE");
}

TEST(V0044Client, ASluidKeyIsFoundInTheListingAndKeepsItsForm) {
  Job4Server s;
  Harness h(s.server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto read = h.client->getJob(s.sluid());  // followed since v0.0.45 was spoken
  ASSERT_TRUE(read) << read.error().describe();
  EXPECT_EQ((*read)[0].sluid, s.sluid());
  ASSERT_TRUE(h.client->cancel(s.sluid(), std::nullopt));
  EXPECT_EQ(paths(s.server),
            (std::vector<std::string>{"GET /slurm/v0.0.44/jobs/", "GET /slurm/v0.0.44/job/4",
                                      "GET /slurm/v0.0.44/jobs/", "GET /slurm/v0.0.44/job/4",
                                      "DELETE /slurm/v0.0.44/job/4"}));
  auto absent = h.client->getJob("sFK1M94Y0000H0");
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().error.code, kErrJobNotFound);  // the listing succeeded without it
}

TEST(V0044Client, UnknownIdIsSlurmsNotFound) {
  ScriptedServer server([](const httplib::Request&, httplib::Response& res, int) {
    reply(res, 404, v44("13b_job_lookup_errors", "unknown numeric job id"));
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto read = h.client->getJob("sFK1M94Y5HJ700@999999");
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().error.code, kErrJobNotFound);
  EXPECT_EQ(read.error().slurm_error_number, 2017);
}

TEST(V0044Client, Slurm2511RefusesASubmitWithHttp500AndItIsStillARefusal) {
  ScriptedServer server([](const httplib::Request&, httplib::Response& res, int) {
    reply(res, 500, v44("13c_submit_errors", "constraint no node has"));
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto receipt = h.client->submit({{"script", "s"}, {"job", {{"name", "x"}}}});
  ASSERT_FALSE(receipt);
  EXPECT_EQ(receipt.error().error.code, kErrRejected);  // not server_error: Slurm said no
  EXPECT_EQ(receipt.error().transport, TransportClass::kRejected);
  EXPECT_EQ(receipt.error().slurm_error_number, 2029);
  EXPECT_EQ(server.seen().size(), 1u);
}

// --- v0.0.44: the ping ------------------------------------------------------------------

TEST(V0044Client, APingOfNoControllerIsCheckedAndARefusedTokenRefreshed) {
  ScriptedServer server([](const httplib::Request& req, httplib::Response& res, int) {
    const bool good = req.get_header_value("X-SLURM-USER-TOKEN") == "tok-1";
    if (req.path == "/slurm/v0.0.44/ping/") {
      return reply(res, 200,
                   good ? v44("01_ping", "ping with") : v44("13a_auth_errors", "garbage"));
    }
    if (good) return reply(res, 200, v44("13f_auth_probe", "GET /licenses/ valid"));
    reply(res, 511, v44("13f_auth_probe", "GET /licenses/ garbage"));
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto ping = h.client->ping();
  ASSERT_TRUE(ping) << ping.error().describe();
  EXPECT_TRUE(ping->anyResponding());
  EXPECT_EQ(h.tokens->generation_, 1);
  EXPECT_EQ(paths(server),
            (std::vector<std::string>{"GET /slurm/v0.0.44/ping/", "GET /slurm/v0.0.44/licenses/",
                                      "GET /slurm/v0.0.44/licenses/", "GET /slurm/v0.0.44/ping/"}));
}

TEST(V0044Client, ATokenRefusedEvenAfterARefreshIsTheAuthError) {
  ScriptedServer server([](const httplib::Request& req, httplib::Response& res, int) {
    if (req.path == "/slurm/v0.0.44/ping/")
      return reply(res, 200, v44("13a_auth_errors", "garbage"));
    reply(res, 511, v44("13f_auth_probe", "GET /licenses/ garbage"));
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto ping = h.client->ping();
  ASSERT_FALSE(ping);
  EXPECT_EQ(ping.error().error.code, kErrAuthFailed);
}

TEST(V0044Client, AControllerThatIsDownStaysAPingAnswer) {
  ScriptedServer server([](const httplib::Request& req, httplib::Response& res, int) {
    if (req.path == "/slurm/v0.0.44/ping/")
      return reply(res, 200, v44("13a_auth_errors", "garbage"));
    // slurmrestd's own "Unable to contact slurm controller (connect failure)".
    reply(res, 500,
          {{"errors", json::array({{{"error_number", 1800},
                                    {"error", "Unable to contact slurm controller"},
                                    {"description", "licenses"},
                                    {"source", "op_handler_licenses"}}})}});
  });
  Harness h(server.url(), "tok-", std::chrono::milliseconds(5000), "v0.0.44");
  auto ping = h.client->ping();
  ASSERT_TRUE(ping) << ping.error().describe();
  EXPECT_FALSE(ping->anyResponding());
  EXPECT_EQ(h.tokens->generation_, 0);
}

}  // namespace
}  // namespace tuneplane::slurm
