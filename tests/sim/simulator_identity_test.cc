// The simulator acting out Slurm's identity and accounting rules through HTTP (issue 44;
// transcripts 19_identity, 20_associations): who a request acts as, whose jobs are whose, who
// may cancel them, the associations of a cluster file's `accounting:`, and SLURM_UMASK.
#include <sys/stat.h>

#include "sim/api_error.h"
#include "sim_test_support.h"

namespace tuneplane::sim::testing {
namespace {

// A cluster with the test cluster's users and associations (users need not exist on this
// machine: the cluster file lists them), and SlurmUser `slurm_user_`.
class IdentitySimTest : public SimFixture {
 protected:
  void tune(SimulatorOptions& options) override {
    const std::string file = dir_.path() + "/cluster-identity.yaml";
    std::ofstream(file) << R"(nodes: [{name: cpu1, cpus: 4}]
partitions: [{name: cpu, nodes: [cpu1], default: true}]
users:
  - {name: alice, uid: 1002}
  - {name: bob, uid: 1003, gid: 1100, group: team}
  - {name: carol, uid: 1004}
accounting:
  accounts: [general, team-a, team-b]
  qos: [normal, high]
  users:
    - {name: alice, accounts: [team-a]}
    - {name: bob, accounts: [team-b, general], default_account: general, qos: [normal, high]}
)";
    options.cluster_file = file;
    options.slurm_user = slurm_user_;
  }

  // As `token_user`'s token, naming `as` in X-SLURM-USER-NAME when given.
  httplib::Headers as(const std::string& token_user, const std::string& as = "") const {
    httplib::Headers h{{"X-SLURM-USER-TOKEN", token(token_user)}};
    if (!as.empty()) h.emplace("X-SLURM-USER-NAME", as);
    return h;
  }
  httplib::Result submitAs(const httplib::Headers& headers, const json& body) {
    return client_->Post((api_ + "/job/submit").c_str(), headers, body.dump(), "application/json");
  }
  // Submits (200 expected) and returns the job's id.
  std::string submittedAs(const httplib::Headers& headers, const json& body) {
    auto res = submitAs(headers, body);
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no response");
    if (!res || res->status != 200) return "0";
    return std::to_string(json::parse(res->body)["job_id"].get<int>());
  }
  json cancelAs(const httplib::Headers& headers, const std::string& id) {
    auto res = client_->Delete((api_ + "/job/" + id).c_str(), headers);
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no response");
    return res ? json::parse(res->body, nullptr, false) : json();
  }
  static int firstError(const json& body, const char* list = "errors") {
    if (!body.is_object() || !body.contains(list) || body[list].empty()) return 0;
    const json& e = body[list][0];
    return e.contains("error_number") ? e["error_number"].get<int>()
                                      : e["error"]["code"].get<int>();
  }

  std::string slurm_user_ = "slurm";
};

TEST_F(IdentitySimTest, JobsCarryTheActingUsersIdentityInProxyAndMintedModes) {
  const std::string script =
      "echo \"$SLURM_JOB_USER $SLURM_JOB_UID $SLURM_JOB_GID $SLURM_JOB_ACCOUNT $SLURM_JOB_QOS\"";
  const std::string alice =
      submittedAs(as("slurm", "alice"), jobBody(script, {{"account", "team-a"}}));
  const std::string bob = submittedAs(as("bob"), jobBody(script, {{"name", "b"}}));
  ASSERT_TRUE(waitState(alice, {"COMPLETED"}));
  ASSERT_TRUE(waitState(bob, {"COMPLETED"}));
  const json a = job(alice)[0];
  EXPECT_EQ(a["user_name"], "alice");
  EXPECT_EQ(a["user_id"], 1002);
  EXPECT_EQ(a["group_id"], 1002);  // gid and group default to the uid and the name
  EXPECT_EQ(a["group_name"], "alice");
  EXPECT_EQ(a["mail_user"], "alice");
  EXPECT_EQ(a["account"], "team-a");
  EXPECT_EQ(a["qos"], "normal");
  EXPECT_GT(a["association_id"].get<int>(), 0);
  EXPECT_EQ(a["flags"], json::array({"USING_DEFAULT_QOS", "USING_DEFAULT_WCKEY"}));
  const json b = job(bob)[0];
  EXPECT_EQ(b["user_name"], "bob");
  EXPECT_EQ(b["user_id"], 1003);
  EXPECT_EQ(b["group_id"], 1100);
  EXPECT_EQ(b["group_name"], "team");
  EXPECT_EQ(b["account"], "general");  // bob's default account
  EXPECT_EQ(b["flags"],
            json::array({"USING_DEFAULT_ACCOUNT", "USING_DEFAULT_QOS", "USING_DEFAULT_WCKEY"}));
  // The script ran as the simulator's own user, but its environment names the job's.
  EXPECT_EQ(readFile(jobs_dir_ + "/t-" + alice + ".out"), "alice 1002 1002 team-a normal\n");
  EXPECT_EQ(readFile(jobs_dir_ + "/b-" + bob + ".out"), "bob 1003 1100 general normal\n");
  // The answers say the accounting is slurmdbd's, and nothing is missing from it.
  auto parts = client_->Get((api_ + "/partitions/").c_str(), as("slurm"));
  ASSERT_TRUE(parts);
  const json p = json::parse(parts->body);
  EXPECT_EQ(p["meta"]["plugin"]["accounting_storage"], "accounting_storage/slurmdbd");
  EXPECT_TRUE(p["warnings"].empty()) << p["warnings"].dump();
}

TEST_F(IdentitySimTest, AUserNoHostKnowsIsRefused6010AndNothingIsMade) {
  for (const auto& headers : {as("slurm", "tp-nosuchuser"), as("tp-nosuchuser")}) {
    auto res = submitAs(headers, jobBody("true"));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 500);
    EXPECT_EQ(firstError(json::parse(res->body)), kErrUserUnknown);
  }
  EXPECT_EQ(sim_->jobCount(), 0u);
}

TEST_F(IdentitySimTest, OnlySlurmUserAndRootMayActForAnother) {
  // tpuser's token naming alice (19) and alice's naming bob: 511, error 1007.
  for (const auto& headers : {as("tpuser", "alice"), as("alice", "bob")}) {
    auto res = submitAs(headers, jobBody("true", {{"account", "team-a"}}));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 511);
    EXPECT_EQ(firstError(json::parse(res->body)), kErrAuth);
  }
  const std::string by_root = submittedAs(as("root", "alice"), jobBody("true", {{"hold", true}}));
  EXPECT_EQ(job(by_root)[0]["user_name"], "alice");
}

class IdentitySimOtherSlurmUserTest : public IdentitySimTest {
 protected:
  void tune(SimulatorOptions& options) override {
    slurm_user_ = "svc";
    IdentitySimTest::tune(options);
  }
};

TEST_F(IdentitySimOtherSlurmUserTest, TheSlurmUserOptionDecidesWhoMayProxy) {
  const std::string id = submittedAs(as("svc", "alice"), jobBody("true", {{"hold", true}}));
  EXPECT_EQ(job(id)[0]["user_name"], "alice");
  auto slurm = submitAs(as("slurm", "alice"), jobBody("true"));
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->status, 511);
  EXPECT_EQ(firstError(cancelAs(as("svc"), id), "status"), 0);  // and cancel any job
  EXPECT_TRUE(waitState(id, {"CANCELLED"}));
}

TEST_F(IdentitySimTest, AnotherUsersJobIsNotCancelled2002ButItsOwnerAndSlurmUserMay) {
  const std::string alices = submittedAs(as("alice"), jobBody("true", {{"hold", true}}));
  // Bob, with his token or through proxy mode: 200, the refusal in status[] (19).
  for (const auto& headers : {as("bob"), as("slurm", "bob")}) {
    const json refused = cancelAs(headers, alices);
    EXPECT_EQ(firstError(refused, "status"), kErrAccessDenied) << refused.dump();
    EXPECT_EQ(refused["status"][0]["error"]["message"], "Access/permission denied");
    EXPECT_EQ(refused["status"][0]["step_id"], alices);
    EXPECT_EQ(refused["status"][0]["job_id"]["number"], std::stoi(alices));
  }
  // A bulk DELETE leaves it too, saying so.
  auto bulk = client_->Delete((api_ + "/jobs/").c_str(), as("bob"), json{{"jobs", {alices}}}.dump(),
                              "application/json");
  ASSERT_TRUE(bulk);
  EXPECT_EQ(firstError(json::parse(bulk->body), "status"), kErrAccessDenied);
  EXPECT_EQ(state(alices), json::array({"PENDING"}));
  // Its owner may; so may SlurmUser (a job of bob's).
  EXPECT_EQ(firstError(cancelAs(as("slurm", "alice"), alices), "status"), 0);
  EXPECT_TRUE(waitState(alices, {"CANCELLED"}));
  const std::string bobs = submittedAs(as("bob"), jobBody("true", {{"hold", true}}));
  EXPECT_EQ(firstError(cancelAs(as("slurm"), bobs), "status"), 0);
  EXPECT_TRUE(waitState(bobs, {"CANCELLED"}));
}

TEST_F(IdentitySimTest, AssociationsRefuseAccountsAndQosTheUserHasNot) {
  struct Row {
    const char* name;
    const char* user;
    json extra;
    int error;
  };
  const Row rows[] = {
      {"bob asks for team-a", "bob", {{"account", "team-a"}}, 2045},
      {"an account that does not exist", "alice", {{"account", "team-z"}}, 2045},
      {"a user with no association", "carol", json::object(), 2045},
      {"a QoS that does not exist", "alice", {{"qos", "nosuchqos"}}, 2066},
      {"a QoS alice may not use", "alice", {{"account", "team-a"}, {"qos", "high"}}, 2066},
  };
  for (const Row& row : rows) {
    auto res = submitAs(as("slurm", row.user), jobBody("true", row.extra));
    ASSERT_TRUE(res) << row.name;
    EXPECT_EQ(res->status, 422) << row.name;
    const json body = json::parse(res->body);
    EXPECT_EQ(firstError(body), row.error) << row.name;
    EXPECT_EQ(body["errors"][0]["description"], "Batch job submission failed") << row.name;
  }
  EXPECT_EQ(sim_->jobCount(), 0u);
  const std::string high =
      submittedAs(as("slurm", "bob"), jobBody("true", {{"qos", "high"}, {"hold", true}}));
  EXPECT_EQ(job(high)[0]["qos"], "high");
  EXPECT_EQ(job(high)[0]["flags"], json::array({"USING_DEFAULT_ACCOUNT", "USING_DEFAULT_WCKEY"}));
}

TEST_F(IdentitySimTest, SlurmUmaskGovernsTheOutputFilesAndWhatTheScriptMakes) {
  const std::string tight =
      submittedAs(as("alice"), jobBody("touch made; echo out; echo err >&2",
                                       {{"name", "tight"},
                                        {"environment", {"PATH=/usr/bin:/bin", "SLURM_UMASK=0077"}},
                                        {"standard_error", jobs_dir_ + "/%x-%j.err"}}));
  const std::string plain = submittedAs(as("alice"), jobBody("echo out", {{"name", "plain"}}));
  ASSERT_TRUE(waitState(tight, {"COMPLETED"}));
  ASSERT_TRUE(waitState(plain, {"COMPLETED"}));
  auto mode = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
  };
  EXPECT_EQ(mode(jobs_dir_ + "/tight-" + tight + ".out"), 0600);
  EXPECT_EQ(mode(jobs_dir_ + "/tight-" + tight + ".err"), 0600);
  EXPECT_EQ(mode(jobs_dir_ + "/made"), 0600);
  EXPECT_EQ(mode(jobs_dir_ + "/plain-" + plain + ".out"), 0644);  // no SLURM_UMASK: as before
}

// Without an `accounting:` section (the default cluster): nothing enforced, no slurmdbd
// (/slurmdb/ without --accounting: slurmdb_test.cc).
class NoAccountingSimTest : public SimFixture {};

TEST_F(NoAccountingSimTest, AccountsAreRecordedAsNamedAndNothingIsEnforced) {
  const int id = submit(jobBody("true", {{"account", "anything"}, {"qos", "x"}, {"hold", true}}));
  const json rec = job(std::to_string(id))[0];
  EXPECT_EQ(rec["account"], "anything");
  EXPECT_EQ(rec["qos"], "");
  EXPECT_EQ(rec["association_id"], 0);
  EXPECT_EQ(rec["user_id"], 1001);  // tpuser, as on the test cluster, whatever this host has
  EXPECT_EQ(rec["flags"], json::array({"USING_DEFAULT_WCKEY"}));
  const json plain = job(std::to_string(submit(jobBody("true", {{"hold", true}}))))[0];
  EXPECT_EQ(plain["account"], "");
  EXPECT_EQ(plain["flags"],
            json::array({"USING_DEFAULT_ACCOUNT", "USING_DEFAULT_QOS", "USING_DEFAULT_WCKEY"}));
  EXPECT_EQ(json::parse(get("/ping/")->body)["meta"]["plugin"]["accounting_storage"], "");
}

}  // namespace
}  // namespace tuneplane::sim::testing
