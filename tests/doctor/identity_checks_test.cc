// Doctor on whom Slurm runs the jobs as (doctor/identity_checks.h): the mode and mechanism,
// then per mapped user, from a table of facts — refused by slurmrestd (fix named for the
// mechanism), unknown to slurmdbd, no association, accounting unavailable, known with its
// accounts — and the gathering against real slurmdbd answers (transcript 21_slurmdb_jobs).
#include "doctor/identity_checks.h"

#include <gtest/gtest.h>

#include "doctor/doctor.h"
#include "fixtures.h"
#include "support/fixtures.h"

namespace tuneplane::doctor {
namespace {

using testing::CheckRow;
using testing::expectCheckRows;
using Accounting = UserIdentityFacts::Accounting;

UserIdentityFacts facts(std::function<void(UserIdentityFacts&)> change = {}) {
  UserIdentityFacts f;
  f.user = "alice";
  f.asked = true;
  f.accounting = Accounting::kKnown;
  f.accounts = {"team-a"};
  if (change) change(f);
  return f;
}

TEST(IdentityChecksTest, EachMappedUserIsJudgedWithItsFix) {
  const slurm::SlurmError refused = slurm::makeSlurmError(
      slurm::kErrAuthFailed, "list_partitions", "HTTP 511", slurm::TransportClass::kRejected);
  const std::vector<CheckRow<UserIdentityFacts>> rows = {
      {"known, with an association", facts(), CheckStatus::kOk,
       "slurmdbd associates them with team-a", ""},
      {"proxy token not SlurmUser's", facts([&](auto& f) { f.acting = refused; }),
       CheckStatus::kFail, "slurmrestd refused a request as alice", "SlurmUser or root"},
      {"minted token refused", facts([&](auto& f) {
         f.acting = refused;
         f.mechanism = slurm::IdentityMechanism::kMintedToken;
       }),
       CheckStatus::kFail, "refused a request as alice", "the cluster's hosts must know alice"},
      {"unknown to slurmdbd", facts([](auto& f) { f.accounting = Accounting::kUnknownUser; }),
       CheckStatus::kFail, "slurmdbd does not know alice", "sacctmgr add user alice"},
      {"no association", facts([](auto& f) { f.accounts.clear(); }), CheckStatus::kFail,
       "has no association", "sacctmgr add user alice"},
      {"no slurmdbd", facts([](auto& f) { f.accounting = Accounting::kUnavailable; }),
       CheckStatus::kOk, "accounting is not available", ""},
      {"slurmdbd failed", facts([](auto& f) {
         f.accounting = Accounting::kError;
         f.accounting_error = "HTTP 500";
       }),
       CheckStatus::kWarn, "slurmdbd could not be asked: HTTP 500", "openapi/slurmdbd"},
      {"no client", facts([](auto& f) { f.asked = false; }), CheckStatus::kSkip,
       "could not be asked", ""},
  };
  expectCheckRows(rows, checkUserIdentity);
}

TEST(IdentityChecksTest, TheModeAndMechanismAreSaidWithTheirPower) {
  catalog::SiteConfig site;
  site.slurm.user = "tpuser";
  const CheckResult shared = checkIdentity(site, slurm::IdentityMechanism::kMintedToken);
  EXPECT_EQ(shared.status, CheckStatus::kOk);
  EXPECT_TRUE(testing::contains(shared.message, "every job runs as tpuser")) << shared.message;
  site.slurm.identity = catalog::IdentityMode::kPerUser;
  const CheckResult proxy = checkIdentity(site, slurm::IdentityMechanism::kProxyHeader);
  EXPECT_TRUE(testing::contains(proxy.message, "X-SLURM-USER-NAME")) << proxy.message;
  EXPECT_TRUE(testing::contains(proxy.message, "can act as any Slurm user")) << proxy.message;
  EXPECT_EQ(proxy.details["mechanism"], "proxy_header");
  EXPECT_EQ(checkIdentity(site, std::nullopt).status, CheckStatus::kFail);
}

// A client whose every read succeeds; slurmdbd's answers are the real ones.
class PartitionsOnly final : public slurm::SlurmClient {
 public:
  slurm::SlurmResult<slurm::PingResult> ping() override { return slurm::PingResult{}; }
  slurm::SlurmResult<slurm::SubmitReceipt> submit(const nlohmann::json&) override {
    return slurm::slurmFail(
        slurm::makeSlurmError(slurm::kErrConfig, "", "", slurm::TransportClass::kNotSent));
  }
  slurm::SlurmResult<std::vector<slurm::JobRecord>> getJob(const std::string&) override {
    return std::vector<slurm::JobRecord>{};
  }
  slurm::SlurmResult<slurm::JobListing> listJobs(std::optional<int64_t>) override {
    return slurm::JobListing{};
  }
  slurm::SlurmResult<slurm::JobStateList> listJobStates(const std::vector<uint64_t>&) override {
    return slurm::JobStateList{};
  }
  slurm::SlurmStatus cancel(const std::string&, const std::optional<std::string>&) override {
    return {};
  }
  slurm::SlurmResult<std::vector<slurm::PartitionInfo>> listPartitions() override {
    return std::vector<slurm::PartitionInfo>{};
  }
  slurm::SlurmResult<std::vector<slurm::NodeInfo>> listNodes() override {
    return std::vector<slurm::NodeInfo>{};
  }
};

TEST(IdentityChecksTest, GatheredFromSlurmdbdsRealAnswers) {
  PartitionsOnly client;
  std::vector<std::string> asked;
  SlurmAccess access;
  access.client = &client;
  access.mechanism = slurm::IdentityMechanism::kProxyHeader;
  access.negotiate = [] {
    slurm::ApiChoice choice;
    choice.api = slurm::findSlurmApi("v0.0.45");
    return slurm::SlurmResult<slurm::ApiChoice>(choice);
  };
  access.read_path = [&](const std::string& path) -> slurm::SlurmResult<std::string> {
    asked.push_back(path);
    if (path.find("/user/alice") != std::string::npos) {
      return test::transcriptResponseBody("21_slurmdb_jobs.json", "the user alice").dump();
    }
    if (path.find("/user/") != std::string::npos) {
      return test::transcriptResponseBody("21_slurmdb_jobs.json", "a user slurmdbd does not")
          .dump();
    }
    return test::transcriptResponseBody("21_slurmdb_jobs.json", "alice's associations").dump();
  };
  const UserIdentityFacts alice = gatherUserIdentityFacts(access, "alice");
  EXPECT_EQ(alice.accounting, Accounting::kKnown);
  EXPECT_EQ(alice.accounts, std::vector<std::string>({"team-a"}));
  EXPECT_EQ(asked, std::vector<std::string>({"/slurmdb/v0.0.45/user/alice",
                                             "/slurmdb/v0.0.45/associations/?user=alice"}));
  EXPECT_EQ(gatherUserIdentityFacts(access, "carol").accounting, Accounting::kUnknownUser);
  // No /slurmdb/ routes: a 404.
  access.read_path = [](const std::string&) -> slurm::SlurmResult<std::string> {
    slurm::SlurmError e = slurm::makeSlurmError(slurm::kErrRejected, "doctor", "HTTP 404",
                                                slurm::TransportClass::kRejected);
    e.http_status = 404;
    return slurm::slurmFail(e);
  };
  EXPECT_EQ(gatherUserIdentityFacts(access, "alice").accounting, Accounting::kUnavailable);
}

}  // namespace
}  // namespace tuneplane::doctor
