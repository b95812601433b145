// Who acts and what a job is charged to, as pure rules (sim/identity.h, sim/accounting.h),
// the cluster file's `users:` and `accounting:` sections, SLURM_UMASK, and the submit checks
// that use them (sim/submit_request.h). Cases from transcripts 19_identity and 20_associations.
#include <gtest/gtest.h>

#include "sim/accounting.h"
#include "sim/batch_env.h"
#include "sim/cluster.h"
#include "sim/identity.h"
#include "sim/submit_request.h"

namespace tuneplane::sim {
namespace {

using nlohmann::json;

TEST(ActingUser, OnlySlurmUserAndRootMayNameAnotherUser) {
  struct Row {
    const char* name;
    const char* token_user;
    const char* header_user;
    std::optional<std::string> acting;
  };
  const Row rows[] = {
      {"no header: the token's user", "bob", "", "bob"},
      {"the header names the token's own user", "tpuser", "tpuser", "tpuser"},
      {"SlurmUser's token names alice (proxy mode)", "slurm", "alice", "alice"},
      {"root's token names alice", "root", "alice", "alice"},
      {"tpuser's token names alice (19: 511)", "tpuser", "alice", std::nullopt},
      {"tpuser's token names root (13a: 511)", "tpuser", "root", std::nullopt},
      {"alice's token names bob", "alice", "bob", std::nullopt},
  };
  for (const Row& row : rows)
    EXPECT_EQ(actingUser(row.token_user, row.header_user, "slurm"), row.acting) << row.name;
  // SlurmUser is the site's: another name takes the power from "slurm".
  EXPECT_EQ(actingUser("svc", "alice", "svc"), "alice");
  EXPECT_EQ(actingUser("slurm", "alice", "svc"), std::nullopt);
  EXPECT_TRUE(isOperator("root", "svc"));
  EXPECT_TRUE(isOperator("svc", "svc"));
  EXPECT_FALSE(isOperator("slurm", "svc"));
  EXPECT_FALSE(isOperator("", ""));
}

TEST(LookupUnixUser, TheListComesBeforeTheHostAndUnknownUsersAreNobodys) {
  const std::vector<UnixUser> listed = {{"alice", 1002, 1002, "alice"}, {"root", 5, 6, "wheel"}};
  const auto alice = lookupUnixUser(listed, "alice");
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->uid, 1002u);
  const auto listed_root = lookupUnixUser(listed, "root");
  ASSERT_TRUE(listed_root);
  EXPECT_EQ(listed_root->uid, 5u);
  EXPECT_EQ(listed_root->group, "wheel");
  const auto host_root = lookupUnixUser({}, "root");  // every host has root
  ASSERT_TRUE(host_root);
  EXPECT_EQ(host_root->uid, 0u);
  EXPECT_EQ(host_root->gid, 0u);
  EXPECT_EQ(host_root->group, "root");
  EXPECT_FALSE(lookupUnixUser(listed, "tp-no-such-user-44"));
  EXPECT_FALSE(lookupUnixUser(listed, ""));
}

AccountingConfig issue44Associations() {
  AccountingConfig a;
  a.accounts = {"general", "team-a", "team-b"};
  a.qos = {"normal", "high"};
  a.users = {{"tpuser", {"general", "team-a", "team-b"}, "team-b", {"normal", "high"}, "normal"},
             {"alice", {"team-a"}, "", {"normal"}, "normal"},
             {"bob", {"team-b"}, "", {"normal"}, "normal"}};
  return a;
}

TEST(ChargeJob, AssociationsDecideTheAccountAndQos) {
  struct Row {
    const char* name;
    const char* user;
    const char* account;
    const char* qos;
    int error;
    const char* charged_account;
    const char* charged_qos;
    uint32_t association_id;
  };
  const Row rows[] = {
      {"alice names team-a", "alice", "team-a", "", 0, "team-a", "normal", 4},
      {"alice names none: her default", "alice", "", "", 0, "team-a", "normal", 4},
      {"tpuser names none: default_account", "tpuser", "", "", 0, "team-b", "normal", 3},
      {"tpuser names general", "tpuser", "general", "high", 0, "general", "high", 1},
      {"bob asks for team-a (20)", "bob", "team-a", "", kErrInvalidAccount, "", "", 0},
      {"an account that does not exist (20)", "alice", "team-z", "", kErrInvalidAccount, "", "", 0},
      {"a user with no association", "carol", "", "", kErrInvalidAccount, "", "", 0},
      {"a QoS that does not exist (20)", "alice", "team-a", "nosuchqos", kErrInvalidQos, "", "", 0},
      {"a QoS the user may not use (20)", "alice", "team-a", "high", kErrInvalidQos, "", "", 0},
  };
  const AccountingConfig a = issue44Associations();
  for (const Row& row : rows) {
    Charge charge;
    EXPECT_EQ(chargeJob(a, row.user, row.account, row.qos, &charge), row.error) << row.name;
    if (row.error != 0) continue;
    EXPECT_EQ(charge.account, row.charged_account) << row.name;
    EXPECT_EQ(charge.qos, row.charged_qos) << row.name;
    EXPECT_EQ(charge.association_id, row.association_id) << row.name;
    EXPECT_EQ(charge.default_account, std::string(row.account).empty()) << row.name;
    EXPECT_EQ(charge.default_qos, std::string(row.qos).empty()) << row.name;
  }
  const Charge open = unenforcedCharge("anything", "");
  EXPECT_EQ(open.account, "anything");
  EXPECT_EQ(open.qos, "");
  EXPECT_EQ(open.association_id, 0u);
  EXPECT_FALSE(open.default_account);
  EXPECT_TRUE(open.default_qos);
}

constexpr const char* kIssue44ClusterYaml = R"(
nodes: [{name: c1}]
partitions: [{name: cpu, nodes: [c1]}]
users:
  - {name: alice, uid: 1002}
  - {name: bob, uid: 1003, gid: 100, group: users}
accounting:
  accounts: [general, team-a]
  qos: [normal, high]
  users:
    - {name: alice, accounts: [team-a]}
    - {name: tpuser, accounts: [general, team-a], default_account: team-a, qos: [normal, high],
       default_qos: high}
)";

TEST(ClusterFile, UsersAndAccountingSections) {
  auto c = parseCluster(kIssue44ClusterYaml);
  ASSERT_TRUE(c) << c.error().describe();
  ASSERT_EQ(c->users.size(), 2u);
  EXPECT_EQ(c->users[0].gid, 1002u);  // gid defaults to the uid, group to the name
  EXPECT_EQ(c->users[0].group, "alice");
  EXPECT_EQ(c->users[1].gid, 100u);
  EXPECT_EQ(c->users[1].group, "users");
  ASSERT_TRUE(c->accounting);
  EXPECT_EQ(c->accounting->accounts, (std::vector<std::string>{"general", "team-a"}));
  ASSERT_EQ(c->accounting->users.size(), 2u);
  EXPECT_EQ(c->accounting->users[0].qos, std::vector<std::string>{"normal"});  // default
  EXPECT_EQ(c->accounting->users[0].default_qos, "normal");
  EXPECT_EQ(c->accounting->users[1].default_account, "team-a");
  EXPECT_EQ(c->accounting->users[1].default_qos, "high");
}

TEST(ClusterFile, WithoutSectionsNoUsersAndNoAccountingButTheDefaultHasTheTestClusters) {
  auto c = parseCluster("nodes: [{name: c1}]\npartitions: [{name: p, nodes: [c1]}]\n");
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_TRUE(c->users.empty());
  EXPECT_FALSE(c->accounting);
  const ClusterConfig d = defaultCluster();
  EXPECT_FALSE(d.accounting);
  ASSERT_TRUE(lookupUnixUser(d.users, "tpuser"));
  EXPECT_EQ(lookupUnixUser(d.users, "tpuser")->uid, 1001u);
  EXPECT_EQ(lookupUnixUser(d.users, "alice")->uid, 1002u);
  EXPECT_EQ(lookupUnixUser(d.users, "bob")->uid, 1003u);
}

TEST(ClusterFile, AccountingMistakesAreRefusedNamingTheUser) {
  const std::string base = "nodes: [{name: c1}]\npartitions: [{name: p, nodes: [c1]}]\n";
  const char* bad[] = {
      "accounting: {accounts: [a], users: [{name: u, accounts: [b]}]}",
      "accounting: {accounts: [a, b], users: [{name: u, accounts: [a], default_account: b}]}",
      "accounting: {accounts: [a], users: [{name: u, accounts: [a], qos: [gold]}]}",
      "accounting: [a]",
  };
  for (const char* section : bad) {
    auto c = parseCluster(base + section + "\n");
    ASSERT_FALSE(c) << section;
    EXPECT_EQ(c.error().code, "sim.cluster") << section;
  }
  auto c = parseCluster(base + bad[0] + "\n");
  EXPECT_EQ(c.error().field, "accounting.users.u");
}

TEST(SubmittedUmask, OctalAsSlurmReadsIt) {
  using Env = std::vector<std::string>;
  EXPECT_EQ(submittedUmask(Env{"PATH=/bin", "SLURM_UMASK=0077"}), mode_t{077});
  EXPECT_EQ(submittedUmask(Env{"SLURM_UMASK=22"}), mode_t{022});
  EXPECT_EQ(submittedUmask(Env{"SLURM_UMASK=0077", "SLURM_UMASK=0022"}), mode_t{022});
  EXPECT_FALSE(submittedUmask(Env{"PATH=/bin"}));
  EXPECT_FALSE(submittedUmask(Env{"SLURM_UMASK="}));
  EXPECT_FALSE(submittedUmask(Env{"SLURM_UMASK=0099"}));
  EXPECT_FALSE(submittedUmask(Env{"SLURM_UMASK=u=rwx"}));
  EXPECT_FALSE(submittedUmask(Env{"XSLURM_UMASK=0077"}));
}

json identityJob(json extra = json::object()) {
  json j = {{"partition", "cpu"},
            {"current_working_directory", "/tmp"},
            {"environment", {"PATH=/bin"}},
            {"script", "#!/bin/bash\ntrue\n"}};
  for (auto& [k, v] : extra.items()) j[k] = v;
  return {{"job", j}};
}

TEST(PlanSubmitAs, AUserNoHostKnowsIsRefused6010AfterTheBodyIsParsed) {
  const ClusterConfig c = defaultCluster();
  const SimApi& api = *findSimApi("v0.0.45");
  auto nobody = planSubmit(identityJob(), c, api, api.release, Submitter{"nosuchuser", false});
  ASSERT_FALSE(nobody.accepted);
  EXPECT_EQ(nobody.rejection.error.http_status, 500);
  EXPECT_EQ(nobody.rejection.error.error_number, kErrUserUnknown);
  EXPECT_EQ(nobody.rejection.leftover, Leftover::kNone);
  // slurmrestd's own checks of the body come first.
  json no_script = identityJob();
  no_script["job"].erase("script");
  auto first = planSubmit(no_script, c, api, api.release, Submitter{"nosuchuser", false});
  EXPECT_EQ(first.rejection.error.error_number, kErrRestInvalidQuery);
}

TEST(PlanSubmitAs, AssociationsAreCheckedPerComponentInTheReleasesStatus) {
  ClusterConfig c = defaultCluster();
  c.accounting = issue44Associations();
  const SimApi& v45 = *findSimApi("v0.0.45");
  const SimApi& v44 = *findSimApi("v0.0.44");
  auto bob =
      planSubmit(identityJob({{"account", "team-a"}}), c, v45, v45.release, Submitter{"bob", true});
  ASSERT_FALSE(bob.accepted);
  EXPECT_EQ(bob.rejection.error.http_status, 422);
  EXPECT_EQ(bob.rejection.error.error_number, kErrInvalidAccount);
  auto on_2511 =
      planSubmit(identityJob({{"qos", "high"}}), c, v44, v44.release, Submitter{"alice", true});
  ASSERT_FALSE(on_2511.accepted);
  EXPECT_EQ(on_2511.rejection.error.http_status, 500);  // 25.11 answers refusals with 500
  EXPECT_EQ(on_2511.rejection.error.error_number, kErrInvalidQos);
  auto alice = planSubmit(identityJob(), c, v45, v45.release, Submitter{"alice", true});
  ASSERT_TRUE(alice.accepted);
  EXPECT_EQ(alice.plan.components[0].charge.account, "team-a");
  EXPECT_EQ(alice.plan.components[0].charge.qos, "normal");
  // A het job whose second component names an account bob may not use leaves its leader.
  json het = {{"jobs", {identityJob()["job"], identityJob({{"account", "team-a"}})["job"]}}};
  auto het_bob = planSubmit(het, c, v45, v45.release, Submitter{"bob", true});
  ASSERT_FALSE(het_bob.accepted);
  EXPECT_EQ(het_bob.rejection.error.error_number, kErrInvalidAccount);
  EXPECT_EQ(het_bob.rejection.leftover, Leftover::kCancelledLeader);
}

}  // namespace
}  // namespace tuneplane::sim
