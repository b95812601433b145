// The end-to-end harness: TunePlane's real binaries run the way a user runs them — the
// slurmrestd simulator (`tuneplane-slurmsim`) and `tuneplane serve` as processes of their
// own on loopback, and the `tuneplane` CLI as a child per command. Used by the CLI's
// end-to-end tests (against the simulator) and by the live suite (against a real
// slurmrestd). Nothing here reads a server's log text: serve gets a port chosen here and
// is ready when /healthz answers; the simulator prints its URL on stdout by contract.
// Every wait is bounded. Thread-safety: each object belongs to one test thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/job_record.h"
#include "support/subprocess.h"
#include "support/wait.h"

namespace tuneplane::test {

std::string tuneplaneBinary();  // <build>/src/cli/tuneplane
std::string slurmsimBinary();   // <build>/src/sim/tuneplane-slurmsim

// How long a server may take to start answering on a loaded machine under sanitizers (a
// bound on a hang, not a timing assertion).
inline constexpr std::chrono::seconds kServerStartLimit{30};

// A loopback port that was free a moment ago (bound to port 0, then closed). The caller
// must cope with losing it to another process before it binds (ServeProcess retries).
int freeLoopbackPort();

// `tuneplane-slurmsim --listen 127.0.0.1:0 --jwt-key KEY --state DIR/sim …`, its output in
// DIR/slurmsim.out|.err.
class SlurmSimProcess {
 public:
  // nullptr (reported as a failure) when it does not start or print its URL in time.
  static std::unique_ptr<SlurmSimProcess> start(const std::filesystem::path& dir,
                                                const std::string& jwt_key_file,
                                                const std::vector<std::string>& extra_args = {});
  ~SlurmSimProcess();  // SIGTERM (it kills its jobs), bounded wait, then SIGKILL

  const std::string& url() const { return url_; }
  pid_t pid() const { return process_->pid(); }
  // POST /sim/admin/faults with `body` (simulator.h lists the faults); the HTTP status,
  // 0 when no answer came.
  int setFaults(const nlohmann::json& body);

 private:
  SlurmSimProcess(std::unique_ptr<ChildProcess> process, std::string url)
      : process_(std::move(process)), url_(std::move(url)) {}
  std::unique_ptr<ChildProcess> process_;
  std::string url_;
};

// `tuneplane serve --site SITE --db DB --listen 127.0.0.1:PORT`, its output appended to
// DIR/serve.out|.err (one log across restarts).
class ServeProcess {
 public:
  // Starts serve and waits until GET /healthz answers 200. `port` 0 picks a free one (and
  // tries again with another if serve could not bind it); a given port is used as is (a
  // restart on the address the CLI knows). nullptr (reported, with serve's stderr) on failure.
  // `env`: entries added to our environment for it (environmentWith). With `exited`, a serve
  // that exits before it is ready (e.g. its store busy at start, which systemd's
  // Restart=on-failure would start again) is not reported: its exit code goes there instead;
  // one still not ready within the bound is reported as ever.
  static std::unique_ptr<ServeProcess> start(const std::string& site_file, const std::string& db,
                                             const std::filesystem::path& dir, int port = 0,
                                             const std::vector<std::string>& env = {},
                                             std::optional<int>* exited = nullptr);

  const std::string& url() const { return url_; }
  int port() const { return port_; }
  ChildProcess& process() { return *process_; }
  // SIGTERM and its exit code (nullopt if it did not stop in time: killed and reported).
  std::optional<int> stop();
  // SIGKILL, as a crash or an OOM kill would end it; waits until it is gone.
  void crash();

 private:
  ServeProcess(std::unique_ptr<ChildProcess> process, int port);
  std::unique_ptr<ChildProcess> process_;
  int port_;
  std::string url_;
};

// Whether what `tuneplane ARGS` printed on stdout is as docs/openapi.json describes it: the
// CLI prints the server's objects verbatim with -o json (get, submit, cancel, events, whoami,
// describe's job and events, validate, capabilities, ls), so the end-to-end tests check every
// one they receive; "" when it is (or ARGS asked for no JSON).
std::string checkCliJson(const std::vector<std::string>& args, const std::string& out);

// Every answer serve's access log (its stdout: one JSON line per request, with method, path
// and status) records, checked against docs/openapi.json's statuses for that operation; ""
// when all are documented, else one line per answer that is not.
std::string checkAccessLog(const std::string& text);

// The `tuneplane` CLI as a user runs it against a server: TUNEPLANE_SERVER and
// TUNEPLANE_TOKEN set, every other TUNEPLANE_* variable cleared, HOME in `dir` (so no
// config file of the machine's user is read). Outputs are captured under `dir`. run() checks
// every -o json output against docs/openapi.json (checkCliJson; a mismatch fails the test).
class CliRunner {
 public:
  CliRunner(std::string server, std::string token, std::filesystem::path dir);

  ProcessResult run(const std::vector<std::string>& args) const;
  // For a command the test interrupts (Ctrl-C) or follows: it runs beside the test.
  std::unique_ptr<ChildProcess> start(const std::vector<std::string>& args,
                                      const std::string& name) const;
  // `get ID -o json`, parsed; a discarded value when the command failed.
  nlohmann::json job(const std::string& id) const;
  // `get -o json`: the user's jobs ({"items": [...]}), parsed as printed; a discarded value
  // when that is not JSON.
  nlohmann::json jobs() const;
  // Polls `get ID -o json` until `accept(job)`; the last job seen (reported when never).
  nlohmann::json waitJob(const std::string& id,
                         const std::function<bool(const nlohmann::json&)>& accept,
                         const std::string& what, std::chrono::milliseconds limit) const;

  std::vector<std::string> environment() const;

 private:
  std::string server_, token_;
  std::filesystem::path dir_, home_;
};

// The value of the metric line `line` ("tuneplane_leader", or a name with its labels) in
// `url`'s /metrics; nullopt when it did not answer (bounded: 2 s to connect, 5 s to read)
// or has no such line.
std::optional<double> metricValue(const std::string& url, const std::string& line);

// Every Slurm job (single jobs and het leaders) in the full listing of the slurmrestd named
// in `site_file`, finished ones included until they are purged. Reported as a failure when
// the listing fails.
std::vector<slurm::JobRecord> slurmJobs(const std::string& site_file);

// The Slurm jobs (single jobs and het leaders) whose comment is `submit_token`, from the
// full listing of the slurmrestd named in `site_file`: how a test proves "exactly one Slurm
// job for this attempt" and sees its state. Reported as a failure when the listing fails.
std::vector<slurm::JobRecord> slurmJobsWithComment(const std::string& site_file,
                                                   const std::string& submit_token);

}  // namespace tuneplane::test
