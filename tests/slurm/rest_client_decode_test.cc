// The client decodes answers where the transport left them: CurlHttpTransport keeps the
// padding simdjson needs after every body (sized from Content-Length or grown chunk by
// chunk), a large listing goes through the record-at-a-time path, and an unreadable 200
// answer is a clear error.
#include <string>

#include <gtest/gtest.h>

#include "http/transport.h"
#include "scripted_server.h"
#include "slurm/answer_decoder.h"
#include "support/fixtures.h"

namespace tuneplane::slurm {
namespace {

using nlohmann::json;
using scripted::Harness;
using scripted::reply;
using scripted::ScriptedServer;
using test::transcriptResponseBody;

http::HttpResponse fetch(const std::string& url, const std::string& target) {
  http::HttpOptions options;
  options.base_url = url;
  auto transport = http::CurlHttpTransport::create(options);
  EXPECT_TRUE(transport.has_value());
  auto response = (*transport)->perform({"GET", target, {}, ""});
  EXPECT_TRUE(response.has_value()) << response.error().message;
  // Moved, not copied: a copy of a std::string keeps its bytes but not its spare capacity.
  return response ? std::move(*response) : http::HttpResponse{};
}

TEST(CurlHttpTransport, EveryBodyKeepsPaddingForTheDecoder) {
  const std::string big(3 << 20, 'x');
  ScriptedServer server([&big](const httplib::Request& req, httplib::Response& res, int) {
    if (req.path == "/sized") {
      res.set_content(big, "text/plain");  // Content-Length
    } else if (req.path == "/chunked") {
      res.set_chunked_content_provider(
          "text/plain", [&big](size_t offset, httplib::DataSink& sink) {
            if (offset < big.size()) {
              sink.write(big.data() + offset, std::min<size_t>(100000, big.size() - offset));
            } else {
              sink.done();
            }
            return true;
          });
    } else {
      res.status = 204;
    }
  });
  for (const char* target : {"/sized", "/chunked", "/empty"}) {
    http::HttpResponse response = fetch(server.url(), target);
    EXPECT_EQ(response.body.size(), std::string(target) == "/empty" ? 0u : big.size()) << target;
    EXPECT_GE(response.body.capacity(), response.body.size() + http::kBodyPadding) << target;
    EXPECT_TRUE(AnswerBytes(response.body).padded()) << target;
  }
}

TEST(SlurmRestClient, LargeListingIsDecodedRecordAtATime) {
  json answer = transcriptResponseBody("12_jobs_list.json", "GET /jobs/ (no update_time)");
  const json templates = answer["jobs"];
  json jobs = json::array();
  // The size of jobs.dump(), kept as records are added (dumping the whole array each time
  // made this test quadratic: minutes under ASan).
  std::size_t dumped = 2;  // "[]"
  while (dumped <= DecodeOptions{}.whole_answer_limit) {
    json job = templates[jobs.size() % templates.size()];
    job["job_id"] = 5000 + jobs.size();
    dumped += job.dump().size() + (jobs.empty() ? 0 : 1);  // the record and its comma
    jobs.push_back(std::move(job));
  }
  ASSERT_EQ(jobs.dump().size(), dumped);
  answer["jobs"] = jobs;
  ScriptedServer server([&answer](auto&, auto& res, int) { reply(res, 200, answer); });
  Harness h(server.url());
  auto listing = h.client->listJobs(std::nullopt);
  ASSERT_TRUE(listing.has_value()) << listing.error().describe();
  ASSERT_EQ(listing->jobs.size(), jobs.size());
  EXPECT_EQ(listing->jobs.back().job_id, 5000 + jobs.size() - 1);
  EXPECT_EQ(listing->jobs.back().sluid,
            templates[(jobs.size() - 1) % templates.size()]["step_id"]["sluid"].get<std::string>());
  EXPECT_TRUE(listing->last_update.value().has_value());
}

TEST(SlurmRestClient, UnreadableSuccessAnswersAreBadResponses) {
  ScriptedServer server([](auto&, httplib::Response& res, int) {
    res.status = 200;
    res.set_content(R"({"status": [{"error": {"code": 2017, "string": "Invalid)",
                    "application/json");  // cut short
  });
  Harness h(server.url());
  auto cancel = h.client->cancel("sCC1M8VPG9ZZZZ", std::nullopt);
  ASSERT_FALSE(cancel.has_value());
  EXPECT_EQ(cancel.error().error.code, "slurm.bad_response");
  // The job may or may not have been cancelled: the answer does not say.
  EXPECT_EQ(cancel.error().transport, TransportClass::kUnknown);
  auto jobs = h.client->listJobs(std::nullopt);
  ASSERT_FALSE(jobs.has_value());
  EXPECT_EQ(jobs.error().error.code, "slurm.bad_response");
  EXPECT_NE(jobs.error().error.message.find("malformed JSON"), std::string::npos)
      << jobs.error().describe();
}

}  // namespace
}  // namespace tuneplane::slurm
