// A test-only host for the reconciler, so a test can kill a real process at a named step of
// the submit protocol and restart it (tests/control/reconciler_restart_test.cc):
//   control_reconciler_host --db FILE --site FILE --submit SPEC [--copies K]
//       submits K jobs (default 1) and prints their ids, one a line
//   control_reconciler_host --db FILE --site FILE [--kill-at STEP [--kill-on K]] [--ticks N]
//       [--tick-ms M] [--submit-concurrency C]
// The second form ticks until every job has ended or N ticks have run (exit 0 either way),
// launching up to C attempts at once (the launch stage, one connection each; default 1);
// with --kill-at it SIGKILLs itself right after the K-th time (default 1st) any attempt
// reaches STEP (reconciler.h, SubmitStep names) — with C > 1 other attempts are then at
// other steps of the protocol.
// An alarm bounds the whole run, so a test can never hang on it.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/wait.h"
#include "catalog/artifact_verifier.h"
#include "common/clock.h"
#include "control/job_service.h"
#include "control/reconciler.h"
#include "launch/attempt_identity.h"
#include "pipeline/attempt_launcher.h"
#include "pipeline/launch_pipeline.h"
#include "slurm/rest_client.h"
#include "staging/staging_fs.h"
#include "store/sqlite_job_store.h"

namespace {

using namespace tuneplane;

constexpr unsigned kAlarmSeconds = 120;

int usage(const char* why) {
  std::cerr << "control_reconciler_host: " << why << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  ::alarm(kAlarmSeconds);
  std::string db, site_file, submit_file;
  std::optional<control::SubmitStep> kill_at;
  int ticks = 200;
  int tick_ms = 50;
  int copies = 1;
  int kill_on = 1;
  int submit_concurrency = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--db") {
      db = value;
    } else if (flag == "--site") {
      site_file = value;
    } else if (flag == "--submit") {
      submit_file = value;
    } else if (flag == "--kill-at") {
      kill_at = control::parseSubmitStep(value);
      if (!kill_at) return usage("unknown step");
    } else if (flag == "--copies") {
      copies = std::stoi(value);
    } else if (flag == "--kill-on") {
      kill_on = std::stoi(value);
    } else if (flag == "--submit-concurrency") {
      submit_concurrency = std::stoi(value);
    } else if (flag == "--ticks") {
      ticks = std::stoi(value);
    } else if (flag == "--tick-ms") {
      tick_ms = std::stoi(value);
    } else {
      return usage("unknown flag");
    }
  }
  if (db.empty() || site_file.empty()) return usage("--db and --site are required");

  auto store = store::SqliteJobStore::open(db);
  if (!store) return usage(store.error().describe().c_str());
  auto context = pipeline::loadSiteContext(site_file, pipeline::SiteEnvironment{});
  if (!context) return usage(context.error().front().describe().c_str());
  catalog::ArtifactVerifier verifier;
  launch::OpenSslRandomSource random;
  staging::PosixStagingFs fs;
  SystemClock clock;
  pipeline::AttemptLauncher launcher(*context, verifier, random, fs);

  if (!submit_file.empty()) {
    std::ifstream in(submit_file);
    std::stringstream text;
    text << in.rdbuf();
    control::JobService service(**store, launcher, clock);
    for (int i = 0; i < copies; ++i) {
      auto job = service.submit(text.str(), "restart-test");
      if (!job) return usage(job.error().front().describe().c_str());
      std::cout << job->id << "\n";
    }
    return 0;
  }

  auto client = slurm::SlurmRestClient::fromSite(context->site.slurm);
  if (!client) return usage(client.error().describe().c_str());
  (void)(*client)->negotiate();  // as serve does at start; a failure is retried at first use
  control::ReconcilerOptions options;
  options.poll_interval = std::chrono::milliseconds(tick_ms);
  std::vector<std::unique_ptr<slurm::SlurmRestClient>> launch_clients;
  for (int i = 0; submit_concurrency > 1 && i < submit_concurrency; ++i) {
    auto launch_client = slurm::SlurmRestClient::fromSite(context->site.slurm);
    if (!launch_client) return usage(launch_client.error().describe().c_str());
    (void)(*launch_client)->negotiate();
    launch_clients.push_back(std::move(*launch_client));
    options.launch_clients.push_back(launch_clients.back().get());
  }
  std::atomic<int> reached{0};
  if (kill_at) {
    options.step_hook = [step = *kill_at, kill_on, &reached](control::SubmitStep at,
                                                             const std::string&, int) {
      if (at == step && ++reached >= kill_on) ::kill(::getpid(), SIGKILL);
    };
  }
  control::Reconciler reconciler(**store, **client, launcher, clock, options);
  // A tick every tick_ms of real time (the simulator it asks is a real process on the real
  // clock), until no job is active or `ticks` ticks have run; the alarm bounds it anyway.
  int ticked = 0;
  tuneplane::test::waitUntil(
      [&] {
        if (ticked == ticks) return true;
        ++ticked;
        reconciler.tick();
        auto active = (*store)->activeJobs();
        return active && active->empty();
      },
      {.limit = std::chrono::seconds(kAlarmSeconds),
       .interval = std::chrono::milliseconds(tick_ms)});
  return 0;
}
