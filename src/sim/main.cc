// tuneplane-slurmsim: a slurmrestd SIMULATOR for tests and the quick start (REST API v0.0.45
// as Slurm 26.05, v0.0.44 as Slurm 25.11, or both). It is not Slurm: it speaks the same REST
// API with the same JSON shapes, checks JWTs like the real server and runs batch scripts as
// local processes.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "sim/simulator.h"

namespace {

constexpr const char* kBanner =
    "tuneplane-slurmsim: a SIMULATOR of slurmrestd (NOT Slurm). Jobs run as local "
    "processes; for tests and the quick start only.";

}  // namespace

int main(int argc, char** argv) {
  using tuneplane::sim::Simulator;
  using tuneplane::sim::SimulatorOptions;
  CLI::App app{kBanner, "tuneplane-slurmsim"};
  SimulatorOptions options;
  std::string cluster_file, state_dir;
  int64_t epilog_ms = options.epilog.count();
  int64_t min_job_age = options.min_job_age.count();
  int64_t latency_ms = 0;
  double minute_seconds = 60;
  int64_t kill_wait_ms = options.kill_wait.count();
  app.add_option("--listen", options.listen, "127.0.0.1:PORT (0 = any free port) or unix:PATH")
      ->required();
  app.add_option("--jwt-key", options.jwt_key_file, "HS256 key file (like jwt_key=)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--cluster", cluster_file, "cluster file (YAML or JSON); default: testcluster")
      ->check(CLI::ExistingFile);
  app.add_option("--state", state_dir, "state directory (default: a fresh temporary one)");
  app.add_option("--cluster-name", options.cluster_name, "cluster name")->capture_default_str();
  app.add_option("--epilog-ms", epilog_ms, "how long jobs stay COMPLETING")->capture_default_str();
  app.add_option("--min-job-age", min_job_age, "seconds before finished jobs are purged")
      ->capture_default_str();
  app.add_option("--fail-submits", options.fail_submits,
                 "drop the HTTP response of the first N submits (after the job is created)");
  app.add_option("--duplicate-submits", options.duplicate_submits,
                 "carry out each of the first N submits twice (two jobs, one comment)");
  int64_t requeue_delay_ms = options.requeue_delay.count();
  app.add_option("--requeue-delay-ms", requeue_delay_ms,
                 "how long a requeued job pends on BeginTime before it may run again")
      ->capture_default_str();
  app.add_option("--latency-ms", latency_ms, "delay added to every request");
  app.add_option("--kill-wait-ms", kill_wait_ms, "SIGTERM→SIGKILL grace on cancel/timeout")
      ->capture_default_str();
  std::string api_versions = "v0.0.45";
  app.add_option("--api-versions", api_versions,
                 "REST API versions served, comma-separated (v0.0.44, v0.0.45): v0.0.45 acts "
                 "as Slurm 26.05.3, v0.0.44 alone as 25.11.7")
      ->capture_default_str();
  app.add_option("--slurm-user", options.slurm_user,
                 "SlurmUser: its tokens (and root's) may act for any user (X-SLURM-USER-NAME)")
      ->capture_default_str();
  app.add_flag("--accounting", options.accounting,
               "serve slurmdbd's job records under /slurmdb/ (one per run); without it "
               "/slurmdb/ answers 404, as a site without slurmdbd");
  // Hidden: tests shrink a "minute" of time_limit to see TIMEOUT quickly.
  app.add_option("--minute-seconds", minute_seconds, "")->group("");
  CLI11_PARSE(app, argc, argv);

  options.epilog = std::chrono::milliseconds(epilog_ms);
  options.min_job_age = std::chrono::seconds(min_job_age);
  options.latency = std::chrono::milliseconds(latency_ms);
  options.kill_wait = std::chrono::milliseconds(kill_wait_ms);
  options.requeue_delay = std::chrono::milliseconds(requeue_delay_ms);
  options.minute = std::chrono::milliseconds(static_cast<int64_t>(minute_seconds * 1000));
  if (!cluster_file.empty()) options.cluster_file = cluster_file;
  options.api_versions.clear();
  for (size_t at = 0; at <= api_versions.size();) {
    const size_t comma = std::min(api_versions.find(',', at), api_versions.size());
    if (comma > at) options.api_versions.push_back(api_versions.substr(at, comma - at));
    at = comma + 1;
  }
  if (!state_dir.empty()) options.state_dir = state_dir;

  // Block the stop signals before any thread starts, then wait for one synchronously.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::cerr << kBanner << "\n";
  auto sim = Simulator::start(options);
  if (!sim) {
    std::cerr << "tuneplane-slurmsim: " << sim.error().describe() << "\n";
    return 1;
  }
  // The URL on a line of its own on stdout, so scripts can read it.
  std::cout << (*sim)->baseUrl() << std::endl;
  std::cerr << "tuneplane-slurmsim: serving REST API " << api_versions << "; listening on "
            << (*sim)->baseUrl() << " (state: " << (*sim)->stateDir() << ")\n";
  int sig = 0;
  sigwait(&stop, &sig);
  std::cerr << "tuneplane-slurmsim: stopping (signal " << sig << ")\n";
  sim->reset();
  return 0;
}
