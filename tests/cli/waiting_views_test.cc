// How `get` and `describe` say why a job waits in Slurm's queue and until when, from the
// API's `waiting` member: on a terminal, ages ("in 12m"); for a pipe, the RFC 3339 times;
// the place, the reason in words, and what is shown when Slurm has no estimate or the queue
// was not read. Pure views (job_views.h), from JSON as the server sends it.
#include <gtest/gtest.h>

#include "client/api_objects.h"
#include "client_cli/job_views.h"

namespace tuneplane::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kWaitNow = 1'796'274'000'000;  // 2026-12-03T05:00:00Z

client::JobView queued(Json waiting) {
  Json job = {{"id", "train-1a2b3c4d"},
              {"name", "train"},
              {"owner", "alice"},
              {"phase", "Queued"},
              {"reason", "queued in Slurm (Priority)"},
              {"created", "2026-12-03T04:55:00.000Z"},
              {"attempt_count", 1},
              {"waiting", std::move(waiting)}};
  auto view = client::jobFromJson(job);
  EXPECT_TRUE(view.has_value());
  return *view;
}

Json fromQueue() {
  return {{"attempt", 1},
          {"as_of", "2026-12-03T04:59:50.000Z"},
          {"components",
           {{{"pool", "main"},
             {"reason", "Priority"},
             {"reason_text", "jobs of higher priority are ahead of it in the partition's queue"},
             {"partition", "gpu"},
             {"estimated_start", "2026-12-03T05:12:00.000Z"},
             {"position", 3},
             {"pending_in_partition", 7}}}}};
}

TEST(WaitingViewsTest, GetShowsTheReasonThePlaceAndTheEstimate) {
  const client::JobView job = queued(fromQueue());
  EXPECT_EQ(waitingLine(job, {kWaitNow, true}), "Priority: #3 of 7 in gpu, est. start in 12m");
  EXPECT_EQ(waitingLine(job, {kWaitNow, false}),
            "Priority: #3 of 7 in gpu, est. start 2026-12-03T05:12:00.000Z");
  const std::string table = jobsTable({job}, {kWaitNow, false});
  EXPECT_NE(table.find("\tQueued\t1\t2026-12-03T04:55:00.000Z\tPriority: #3 of 7 in gpu"),
            std::string::npos)
      << table;
}

TEST(WaitingViewsTest, DescribeSaysItInWordsPerComponent) {
  const std::string page = describeJob(queued(fromQueue()), {}, {kWaitNow, true});
  for (const std::string line :
       {"Waiting:       attempt 1 in Slurm's queue (the queue as read 10s ago", "  Pool main:\n",
        "    Reason:        Priority (jobs of higher priority are ahead of it in the partition's "
        "queue)\n",
        "    Queue place:   #3 of 7 in gpu (pending jobs ahead of it, by Slurm's priority)\n",
        "    Start:         in 12m (2026-12-03T05:12:00.000Z), Slurm's estimate\n"}) {
    EXPECT_NE(page.find(line), std::string::npos) << line << "\n" << page;
  }
}

TEST(WaitingViewsTest, WithoutAnEstimateOrAPlaceItSaysSo) {
  Json stored = {{"attempt", 2},
                 {"as_of", nullptr},
                 {"components",
                  {{{"pool", "main"},
                    {"reason", "Resources"},
                    {"reason_text", nullptr},
                    {"partition", nullptr},
                    {"estimated_start", nullptr},
                    {"position", nullptr},
                    {"pending_in_partition", nullptr}}}}};
  const client::JobView job = queued(stored);
  EXPECT_EQ(waitingLine(job, {kWaitNow, true}), "Resources: no start estimate yet");
  const std::string page = describeJob(job, {}, {kWaitNow, true});
  EXPECT_NE(page.find("as the control loop last saw it; the queue was not read"), std::string::npos)
      << page;
  EXPECT_NE(page.find("Slurm has no estimate yet"), std::string::npos) << page;
  // Not waiting: the job's own reason, and no Waiting block.
  const client::JobView running = queued(nullptr);
  EXPECT_EQ(waitingLine(running, {kWaitNow, true}), "");
  EXPECT_EQ(describeJob(running, {}, {kWaitNow, true}).find("Waiting:"), std::string::npos);
}

}  // namespace
}  // namespace tuneplane::cli
