// The simulator's scheduler: Slurm's backfill estimate of a pending job's start, from held
// allocations and their ends (the node choice is exercised through the simulator's tests).
#include "sim/scheduler.h"

#include <gtest/gtest.h>

namespace tuneplane::sim {
namespace {

JobRequest h100Job(int gpus) {
  JobRequest r;
  r.partition = "gpu";
  r.constraints = "h100";
  r.gpus_per_node = gpus;
  r.gpu_type = "h100";
  return r;
}

Allocation h100Held(int gpus) {
  return Allocation{{"gpu1"}, 1, 100, gpus};
}

// Slurm's backfill estimate, as the simulator gives a pending job's start_time: the first
// end after which the job fits, every job running to its time limit.
TEST(StartEstimate, IsTheEndAfterWhichTheJobFits) {
  const ClusterConfig cluster = defaultCluster();
  const JobRequest two = h100Job(2);
  const int64_t now = 1'000;
  // gpu1's two GPUs held until 1600 and 2200, one each: both must end.
  auto estimate = estimateStart({&two}, cluster, {{h100Held(1), 2200}, {h100Held(1), 1600}}, now);
  EXPECT_EQ(estimate.start, 2200);
  ASSERT_EQ(estimate.allocations.size(), 1u);
  EXPECT_EQ(estimate.allocations[0].nodes, std::vector<std::string>{"gpu1"});
  // One GPU is enough once the first ends.
  const JobRequest one = h100Job(1);
  EXPECT_EQ(estimateStart({&one}, cluster, {{h100Held(1), 2200}, {h100Held(1), 1600}}, now).start,
            1600);
  // A job without a time limit never releases its share: no estimate.
  EXPECT_EQ(estimateStart({&two}, cluster, {{h100Held(2), 0}}, now).start, 0);
  // An allocation past its end (the epilog runs) is released a second from now.
  EXPECT_EQ(estimateStart({&two}, cluster, {{h100Held(2), 900}}, now).start, 1001);
  // A request no node can ever hold: no estimate.
  const JobRequest three = h100Job(3);
  EXPECT_EQ(estimateStart({&three}, cluster, {{h100Held(2), 1500}}, now).start, 0);
}

// Slurm's excluded_nodes: an excluded node is never allocated, even when it is the only one
// free; the job then waits.
TEST(Allocate, NeverGivesAnExcludedNode) {
  const ClusterConfig c = defaultCluster();
  JobRequest r;
  r.partition = "cpu";
  r.cpus_per_task = 1;
  auto free = allocate(r, c, {});
  ASSERT_TRUE(free);
  ASSERT_EQ(free->nodes.size(), 1u);
  const std::string only = free->nodes.front();
  r.excluded_nodes = {only};
  EXPECT_FALSE(allocate(r, c, {}).has_value()) << "the cpu partition has one node";
  JobRequest gpu = h100Job(1);
  auto first = allocate(gpu, c, {});
  ASSERT_TRUE(first);
  gpu.excluded_nodes = first->nodes;
  EXPECT_FALSE(allocate(gpu, c, {}).has_value()) << "gpu1 is the only h100 node";
}

}  // namespace
}  // namespace tuneplane::sim
