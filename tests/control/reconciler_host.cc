// A test-only host for the reconciler, so a test can kill a real process at a named step of
// the submit protocol and restart it (tests/control/reconciler_restart_test.cc):
//   control_reconciler_host --db FILE --site FILE --submit SPEC       prints the job id
//   control_reconciler_host --db FILE --site FILE [--kill-at STEP] [--ticks N] [--tick-ms M]
// The second form ticks until every job has ended or N ticks have run (exit 0 either way);
// with --kill-at it SIGKILLs itself right after STEP (reconciler.h, SubmitStep names).
// An alarm bounds the whole run, so a test can never hang on it.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

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
    auto job = service.submit(text.str(), "restart-test");
    if (!job) return usage(job.error().front().describe().c_str());
    std::cout << job->id << "\n";
    return 0;
  }

  auto client = slurm::SlurmRestClient::fromSite(context->site.slurm);
  if (!client) return usage(client.error().describe().c_str());
  control::ReconcilerOptions options;
  options.poll_interval = std::chrono::milliseconds(tick_ms);
  if (kill_at) {
    options.step_hook = [step = *kill_at](control::SubmitStep at, const std::string&, int) {
      if (at == step) ::kill(::getpid(), SIGKILL);
    };
  }
  control::Reconciler reconciler(**store, **client, launcher, clock, options);
  for (int i = 0; i < ticks; ++i) {
    reconciler.tick();
    auto active = (*store)->activeJobs();
    if (active && active->empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(tick_ms));
  }
  return 0;
}
