// Retries that learn (issue 38): a node an attempt failed on (NODE_FAIL, the batch script's
// node trouble) is kept out of the job's next attempts — Slurm's excluded_nodes in the submit
// body — unless the pool would no longer fit; slurm.failed_node_quarantine keeps it out of
// every job for a while. Through the real Reconciler against FakeSlurmClient and a FakeClock.
#include "reconciler_fake_fixture.h"

namespace tuneplane::control::testing {
namespace {

using phase::JobPhase;

slurm::NodeInfo cpuNode(const std::string& name) {
  slurm::NodeInfo n;
  n.name = name;
  n.partitions = {"cpu"};
  n.cpus = 8;
  return n;
}

std::vector<std::string> excludedIn(const nlohmann::json& body) {
  const nlohmann::json& job = body.contains("jobs") ? body["jobs"][0] : body["job"];
  if (!job.contains("excluded_nodes")) return {};
  return job["excluded_nodes"].get<std::vector<std::string>>();
}

const std::string kRetryTwice = retryBlock(2, 0, "infrastructure");

// Attempt 1 ends NODE_FAIL on cpu1; attempt 2 is submitted with cpu1 excluded, and says so.
TEST_F(FakeReconcilerTest, ANodeThatFailedAnAttemptIsExcludedFromTheNext) {
  slurm_.setNodeList({cpuNode("cpu1"), cpuNode("cpu2")});
  const std::string id = running(cpuSpec("echo hi", kRetryTwice));
  slurm_.setNodes(sluid(id), "cpu1");
  slurm_.setState(sluid(id), {"NODE_FAIL"});
  next();
  ASSERT_EQ(phase(id), JobPhase::kRetrying) << view(id).job.reason;
  next();
  ASSERT_EQ(slurm_.submitBodies().size(), 2u);
  EXPECT_TRUE(excludedIn(slurm_.submitBodies()[0]).empty());
  EXPECT_EQ(excludedIn(slurm_.submitBodies()[1]), std::vector<std::string>{"cpu1"});
  EXPECT_TRUE(anyEventSays(id, "pool main excludes cpu1 (cpu1: NODE_FAIL in attempt 1)"));
}

// Never so many that the pool cannot fit: with cpu1 the partition's only node, attempt 2 runs
// without the exclusion, and the event says why.
TEST_F(FakeReconcilerTest, AnExclusionThatLeavesThePoolNoRoomIsDropped) {
  slurm_.setNodeList({cpuNode("cpu1")});
  const std::string id = running(cpuSpec("echo hi", kRetryTwice));
  slurm_.setNodes(sluid(id), "cpu1");
  slurm_.setState(sluid(id), {"NODE_FAIL"});
  next();
  next();
  ASSERT_EQ(slurm_.submitBodies().size(), 2u);
  EXPECT_TRUE(excludedIn(slurm_.submitBodies()[1]).empty());
  EXPECT_TRUE(anyEventSays(id, "pool main keeps cpu1"));
  EXPECT_TRUE(anyEventSays(id, "only 0 node(s) of partition cpu could run it"));
}

// A user's failure names no node; Slurm's node list is not even read then.
TEST_F(FakeReconcilerTest, AUsersFailureExcludesNothing) {
  slurm_.setNodeList({cpuNode("cpu1"), cpuNode("cpu2")});
  const std::string id = running(cpuSpec("exit 3", retryBlock(2, 0, "any")));
  slurm_.setNodes(sluid(id), "cpu1");
  slurm_.setState(sluid(id), {"FAILED"}, "NonZeroExitCode", 3);
  next();
  next();
  ASSERT_EQ(slurm_.submitBodies().size(), 2u);
  EXPECT_TRUE(excludedIn(slurm_.submitBodies()[1]).empty());
  EXPECT_EQ(slurm_.count(Op::kNodes), 0);
}

class QuarantineTest : public FakeReconcilerTest {
 protected:
  void SetUp() override {
    FakeReconcilerTest::SetUp();
    // The same site with failed nodes kept out of every job for ten minutes.
    context_.site.slurm.failed_node_quarantine = std::chrono::minutes(10);
  }
};

// slurm.failed_node_quarantine: another job's first attempt avoids the node too, until the
// quarantine ends.
TEST_F(QuarantineTest, AFailedNodeIsKeptOutOfEveryJobForAWhile) {
  slurm_.setNodeList({cpuNode("cpu1"), cpuNode("cpu2")});
  const std::string first = running(cpuSpec("echo hi", kRetryTwice));
  slurm_.setNodes(sluid(first), "cpu1");
  slurm_.setState(sluid(first), {"NODE_FAIL"});
  next();
  const std::string other = submit();
  tick();
  ASSERT_FALSE(slurm_.submitBodies().empty());
  EXPECT_EQ(excludedIn(slurm_.submitBodies().back()), std::vector<std::string>{"cpu1"});
  EXPECT_TRUE(anyEventSays(other, "kept out of every job for a while"));
  clock_.advance(std::chrono::minutes(11));
  submit();
  tick();
  EXPECT_TRUE(excludedIn(slurm_.submitBodies().back()).empty());
}

}  // namespace
}  // namespace tuneplane::control::testing
