// checkCliJson (support/serve_harness.h): the end-to-end tests' check that what the CLI prints
// with -o json is the server's object as docs/openapi.json describes it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/serve_harness.h"

namespace tuneplane::test {
namespace {

TEST(CliJsonCheck, AcceptsTheDocumentedShapesAndNamesWhatDiffers) {
  EXPECT_EQ(checkCliJson({"whoami", "-o", "json"},
                         R"({"user": "alice", "admin": false, "slurm_accounts": [], "qos": []})"),
            "");
  EXPECT_EQ(checkCliJson({"get", "-o", "json"}, R"({"items": [], "continue": ""})"), "");
  EXPECT_EQ(checkCliJson({"events", "x", "-o", "json"}, R"({"items": []})"), "");
  EXPECT_EQ(checkCliJson({"get", "x"}, "not json: text output is not checked"), "");

  const std::string missing = checkCliJson({"whoami", "-o", "json"}, R"({"user": "alice"})");
  EXPECT_NE(missing.find("no 'admin'"), std::string::npos) << missing;
  const std::string extra =
      checkCliJson({"whoami", "-o", "json"},
                   R"({"user": "a", "admin": true, "slurm_accounts": [], "qos": [], "x": 1})");
  EXPECT_NE(extra.find("$.x"), std::string::npos) << extra;
  const std::string job = checkCliJson({"get", "x", "-o", "json"}, R"({"id": "x"})");
  EXPECT_NE(job.find("required"), std::string::npos) << job;
  EXPECT_NE(checkCliJson({"get", "-o", "json"}, "no json"), "");
}

TEST(CliJsonCheck, AccessLogStatusesAreCheckedAgainstTheDocument) {
  EXPECT_EQ(
      checkAccessLog(R"({"method":"GET","path":"/v1/jobs/x","route":"/v1/jobs/{id}","status":404}
not json: skipped
{"method":"POST","path":"/v1/jobs","status":201}
{"method":"DELETE","path":"/v1/jobs","status":405})"),
      "");
  const std::string wrong = checkAccessLog(R"({"method":"GET","path":"/v1/jobs/x","status":418}
{"method":"GET","path":"/nowhere","status":200})");
  EXPECT_NE(wrong.find("GET /v1/jobs/x → 418"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("GET /nowhere → 200"), std::string::npos) << wrong;
}

}  // namespace
}  // namespace tuneplane::test
