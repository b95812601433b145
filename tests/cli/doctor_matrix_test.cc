// Issue 8's failure matrix for `tuneplane doctor`, through the built binary against the
// in-process simulator: a healthy site, then one thing broken at a time — the token (wrong
// key, expired by the server, past its exp), a missing partition, a constraint no node has,
// a GRES type no node has, a tampered artifact, a missing or unwritable staging root. Each
// row names the checks that are not ok (with a piece of their reason and of their fix);
// every other check must still be ok. Each row runs doctor twice, as text and as `-o json`,
// and both must exit the same way and carry the same verdicts, reasons and fixes. No token
// may appear in either, nor on stderr.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/jwt.h"
#include "doctor_fixture.h"
#include "support/subprocess.h"

extern char** environ;

namespace tuneplane::cli {
namespace {

using nlohmann::json;
using testing::RunResult;
using testing::SiteParts;

// The uid and gid of "nobody" on Debian; a root test process runs doctor as this user to
// see a staging root it cannot write (root writes anywhere).
constexpr uid_t kNobody = 65534;

struct Expect {
  std::string status;  // "fail", "skip", "warn"
  std::string says;    // a piece of the message
  std::string fix;     // a piece of the fix ("" for a skip)
};

class DoctorMatrixTest;

struct Case {
  std::string name;
  // Breaks one thing: changes the site's parts, the files or the simulator.
  std::function<void(DoctorMatrixTest&, SiteParts&)> arrange;
  std::map<std::string, Expect> not_ok;  // every check not listed must be ok
};

std::ostream& operator<<(std::ostream& out, const Case& c) {
  return out << c.name;
}

// One check as the text report prints it.
struct TextCheck {
  std::string status;
  std::string message;
  std::string fix;
};

// Reads the text report back: "  <status>  <name padded>  <message>", then "fix: …" under it.
std::map<std::string, TextCheck> parseText(const std::string& text, std::string* summary) {
  static const std::regex kCheck(R"(^  (ok|warn|fail|skip) +(\S+) +(.*)$)");
  static const std::regex kFix(R"(^ +fix: (.*)$)");
  std::map<std::string, TextCheck> out;
  std::string last;
  std::istringstream lines(text);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, m, kFix) && !last.empty()) {
      out[last].fix = m[1];
    } else if (std::regex_match(line, m, kCheck)) {
      last = m[2];
      out[last] = {m[1], m[3], ""};
    } else if (line.find(" checks: ") != std::string::npos) {
      *summary = line;
    }
  }
  return out;
}

// The two runs are a moment apart: times and durations in a message may differ between them.
std::string withoutTimes(const std::string& message) {
  static const std::regex kUtc(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");
  static const std::regex kDuration(R"(\b\d+[dhms]( \d+[dhms])?\b)");
  return std::regex_replace(std::regex_replace(message, kUtc, "<time>"), kDuration, "<duration>");
}

class DoctorMatrixTest : public testing::DoctorFixture, public ::testing::WithParamInterface<Case> {
 public:
  void mintWithAnotherKey(SiteParts& parts) {
    testing::writeSecret(dir_ + "/other.key", testing::kOtherKey);
    parts.auth = "  jwt_key_file: other.key\n";
  }
  void useTokenFile(SiteParts& parts, int64_t issued_at, int64_t expires_at) {
    token_ = jwt::mintHs256({parts.user, issued_at, expires_at}, testing::kDoctorKey);
    testing::writeSecret(dir_ + "/doctor.jwt", token_ + "\n");
    parts.auth = "  token_file: doctor.jwt\n";
  }
  void expireTokensInTheSimulator(SiteParts& parts) {
    // A token issued a minute ago, valid for a day, that the server no longer accepts.
    useTokenFile(parts, now() - 60, now() + 86400);
    sim_->expireTokens();
  }
  void tamperArtifact() { testing::writeFile(sif_, "tampered after the registry pinned it\n"); }
  // A staging root the doctor process cannot write: 0555 when the test runs as another user
  // than root; as root (who writes anywhere) doctor itself runs as nobody, who is then also
  // the job user, and the root stays root's 0755.
  void makeStagingUnwritable(SiteParts& parts) {
    const std::string root = dir_ + "/" + parts.staging;
    if (::geteuid() != 0) {
      ASSERT_EQ(::chmod(root.c_str(), 0555), 0);
      return;
    }
    ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);  // mkdtemp's 0700 would stop nobody above it
    parts.user = "nobody";
    // The key is the user serve runs as's alone: nobody's now (credential/slurm.jwt_key_file).
    ASSERT_EQ(::chown((dir_ + "/jwt.key").c_str(), kNobody, kNobody), 0);
    as_ = {"setpriv", "--reuid=" + std::to_string(kNobody), "--regid=" + std::to_string(kNobody),
           "--clear-groups"};
  }

  static int64_t now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

 protected:
  // The built binary, run as `as_` when a row set it, with TUNEPLANE_* cleared from the env.
  RunResult doctorAs(const std::string& site, std::vector<std::string> extra) const {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e)
      if (!std::string_view(*e).starts_with("TUNEPLANE_")) env.emplace_back(*e);
    std::vector<std::string> argv = as_;
    argv.insert(argv.end(), {testing::tuneplaneBinary(), "doctor", "--site", site});
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto child = test::runProcess(argv, {.scratch = dir_, .env = env});
    return {child.exit_code, child.out, child.err};
  }

  void expectNoToken(const RunResult& r, const std::string& form) const {
    SCOPED_TRACE(form);
    // Every JWT starts with the base64 of `{"`: eyJ.
    for (const std::string& out : {r.out, r.err}) {
      EXPECT_EQ(out.find("eyJ"), std::string::npos) << out;
      if (!token_.empty()) {
        EXPECT_EQ(out.find(token_.substr(token_.rfind('.') + 1)), std::string::npos) << out;
      }
    }
  }

  std::vector<std::string> as_;  // a command prefix that runs doctor as another user
  std::string token_;            // the token a row wrote into the token file, if any
};

TEST_P(DoctorMatrixTest, EachBrokenThingIsReportedAndTheRestStillOk) {
  const Case& row = GetParam();
  SiteParts parts = healthy();
  row.arrange(*this, parts);
  if (HasFatalFailure()) return;
  const std::string site = writeSite(parts);
  const bool should_pass = row.not_ok.empty();

  const RunResult as_json = doctorAs(site, {"-o", "json"});
  const RunResult as_text = doctorAs(site, {});
  expectNoToken(as_json, "-o json");
  expectNoToken(as_text, "text");
  const int exit_code = should_pass ? kExitOk : kExitFailure;
  EXPECT_EQ(as_json.exit_code, exit_code) << as_json.out << as_json.err;
  EXPECT_EQ(as_text.exit_code, exit_code) << as_text.out << as_text.err;
  EXPECT_EQ(as_text.err, "");  // no progress bar or log line into a pipe

  const json doc = json::parse(as_json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << as_json.out;
  EXPECT_EQ(doc["passed"], should_pass);
  std::string summary;
  const auto text = parseText(as_text.out, &summary);
  EXPECT_EQ(text.size(), doc["checks"].size()) << as_text.out;

  std::map<std::string, int> counts;
  for (const auto& c : doc["checks"]) {
    const std::string name = c["name"];
    const std::string status = c["status"];
    SCOPED_TRACE(name);
    ++counts[status];
    // The text report says the same as the JSON document.
    const auto t = text.find(name);
    if (t == text.end()) {
      ADD_FAILURE() << "not in the text report:\n" << as_text.out;
    } else {
      EXPECT_EQ(t->second.status, status);
      EXPECT_EQ(withoutTimes(t->second.message), withoutTimes(c["message"]));
      EXPECT_EQ(t->second.fix, status == "ok" ? "" : c["fix"].get<std::string>());
    }
    const auto expected = row.not_ok.find(name);
    if (expected == row.not_ok.end()) {
      // A staging root under /tmp may be on a local disk, which doctor rightly warns about.
      if (name == "staging/filesystem" && status == "warn") continue;
      EXPECT_EQ(status, "ok") << c.dump(2);
      continue;
    }
    EXPECT_EQ(status, expected->second.status) << c.dump(2);
    EXPECT_NE(c["message"].get<std::string>().find(expected->second.says), std::string::npos)
        << c.dump(2);
    if (expected->second.status != "skip") {
      EXPECT_NE(c["fix"].get<std::string>().find(expected->second.fix), std::string::npos)
          << c.dump(2);
    }
  }
  for (const auto& [name, expected] : row.not_ok) {
    EXPECT_NE(text.find(name), text.end()) << "no check " << name << " in\n" << as_text.out;
  }
  const json& s = doc["summary"];
  EXPECT_EQ(s["fail"], counts["fail"]);
  EXPECT_EQ(s["skip"], counts["skip"]);
  const std::string expected_summary =
      std::to_string(doc["checks"].size()) + " checks: " + std::to_string(counts["ok"]) + " ok, " +
      std::to_string(counts["warn"]) + " warn, " + std::to_string(counts["fail"]) + " fail, " +
      std::to_string(counts["skip"]) + " skipped — " + (should_pass ? "passed" : "FAILED");
  EXPECT_EQ(summary.rfind(expected_summary, 0), 0u) << summary;
  EXPECT_EQ(sim_->jobCount(), 0u);  // doctor never submits
}

// What depends on slurmrestd accepting the token: skipped, naming the token check.
std::map<std::string, Expect> refusedToken(const std::string& says, const std::string& fix) {
  std::map<std::string, Expect> out = {{"token", {"fail", says, fix}}};
  for (const char* name : {"slurmctld", "api_version", "partition/gpu", "partition/cpu",
                           "gpu_series/h100", "gpu_series/any"}) {
    out[name] = {"skip", "slurmrestd refused the token (see token)", ""};
  }
  return out;
}

const Case kCases[] = {
    {"AllOk", [](DoctorMatrixTest&, SiteParts&) {}, {}},
    {"TokenSignedWithAnotherKey",
     [](DoctorMatrixTest& t, SiteParts& p) { t.mintWithAnotherKey(p); },
     refusedToken("slurmrestd refused the token minted from", "AuthAltParameters=jwt_key")},
    {"TokenExpiredByTheServer",
     [](DoctorMatrixTest& t, SiteParts& p) { t.expireTokensInTheSimulator(p); },
     refusedToken("although its exp is", "scontrol token username=")},
    {"TokenPastItsExp",
     [](DoctorMatrixTest& t, SiteParts& p) {
       t.useTokenFile(p, DoctorMatrixTest::now() - 7200, DoctorMatrixTest::now() - 3600);
     },
     refusedToken("expired 1h", "scontrol token username=")},
    {"MissingPartition",
     [](DoctorMatrixTest&, SiteParts& p) { p.cpu_partition = "batch"; },
     {{"partition/batch",
       {"fail",
        "partition 'batch' (named by partitions.cpu) does not exist on lab; it has: gpu, cpu",
        "set partitions.cpu to an existing partition, or create 'batch'"}}}},
    {"ConstraintNoNodeHas",
     [](DoctorMatrixTest&, SiteParts& p) {
       p.series += "  - {name: v100, slurm_constraint: \"v100&ib\", gpus_per_node: 2}\n";
     },
     {{"gpu_series/v100",
       {"fail", "names a feature no node has (v100)",
        "use features the nodes have (a100, h100, ib)"}}}},
    {"GresTypeNoNodeHas",
     [](DoctorMatrixTest&, SiteParts& p) {
       p.series += "  - {name: b200, slurm_constraint: h100, gpus_per_node: 2, gres_type: b200}\n";
     },
     {{"gpu_series/b200",
       {"fail", "none of the nodes that satisfy 'h100' has GRES gpu:b200: gpu1 (gpu:h100:2)",
        "set gres_type of series 'b200' to the GPU type those nodes declare"}}}},
    {"TamperedArtifact",
     [](DoctorMatrixTest& t, SiteParts&) { t.tamperArtifact(); },
     {{"artifact/custom-doctor",
       {"fail", "[artifact.sha256_mismatch]", "set sha256 of runtime 'custom-doctor' to"}}}},
    {"StagingRootMissing",
     [](DoctorMatrixTest&, SiteParts& p) { p.staging = "no-such-dir"; },
     {{"staging/root", {"fail", "does not exist", "mkdir -p"}},
      {"staging/filesystem", {"skip", "see staging/root", ""}}}},
    {"StagingRootNotWritable",
     [](DoctorMatrixTest& t, SiteParts& p) { t.makeStagingUnwritable(p); },
     {{"staging/root", {"fail", "cannot create and remove a file in staging_root", "chown"}}}},
};

INSTANTIATE_TEST_SUITE_P(Doctor, DoctorMatrixTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tuneplane::cli
