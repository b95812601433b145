// The end-to-end harness (see serve_harness.h).
#include "support/serve_harness.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "catalog/site_loader.h"
#include "slurm/rest_client.h"
#include "support/openapi_validator.h"
#include "support/test_paths.h"

extern char** environ;

namespace tuneplane::test {
namespace {

using namespace std::chrono_literals;

// How long a server gets to stop after SIGTERM before it is killed (and the test fails).
constexpr auto kStopLimit = 30s;

}  // namespace

std::string tuneplaneBinary() {
  return (binaryDir() / "src/cli/tuneplane").string();
}
std::string slurmsimBinary() {
  return (binaryDir() / "src/sim/tuneplane-slurmsim").string();
}

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

std::unique_ptr<SlurmSimProcess> SlurmSimProcess::start(
    const std::filesystem::path& dir, const std::string& jwt_key_file,
    const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {slurmsimBinary(), "--listen", "127.0.0.1:0",         "--jwt-key",
                                   jwt_key_file,     "--state",  (dir / "sim").string()};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  auto process = ChildProcess::start(argv, {.scratch = dir}, "slurmsim");
  if (!process) return nullptr;
  // It prints its URL on a line of its own on stdout when it is up (sim/main.cc).
  const std::string url = process->firstLine(kServerStartLimit);
  if (url.rfind("http://127.0.0.1:", 0) != 0) {
    ADD_FAILURE() << "tuneplane-slurmsim did not start (stdout '" << process->out() << "'):\n"
                  << process->err();
    return nullptr;
  }
  return std::unique_ptr<SlurmSimProcess>(new SlurmSimProcess(std::move(process), url));
}

SlurmSimProcess::~SlurmSimProcess() {
  process_->signal(SIGTERM);
  process_->waitExit(kStopLimit);
}

int SlurmSimProcess::setFaults(const nlohmann::json& body) {
  httplib::Client client(url_);
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(10, 0);
  auto answer = client.Post("/sim/admin/faults", body.dump(), "application/json");
  return answer ? answer->status : 0;
}

ServeProcess::ServeProcess(std::unique_ptr<ChildProcess> process, int port)
    : process_(std::move(process)), port_(port), url_("http://127.0.0.1:" + std::to_string(port)) {}

std::unique_ptr<ServeProcess> ServeProcess::start(const std::string& site_file,
                                                  const std::string& db,
                                                  const std::filesystem::path& dir, int port,
                                                  const std::vector<std::string>& env,
                                                  std::optional<int>* exited) {
  // A picked port may be taken by another process before serve binds it: serve then exits
  // (1, api.listen) and another port is tried. A given port is tried once.
  const int tries = port == 0 ? 3 : 1;
  for (int attempt = 1; attempt <= tries; ++attempt) {
    const int chosen = port == 0 ? freeLoopbackPort() : port;
    auto process = ChildProcess::start(
        {tuneplaneBinary(), "serve", "--site", site_file, "--db", db, "--listen",
         "127.0.0.1:" + std::to_string(chosen)},
        {.scratch = dir, .env = env.empty() ? std::nullopt : std::optional(environmentWith(env))},
        "serve");
    if (!process) return nullptr;
    httplib::Client probe("127.0.0.1", chosen);
    probe.set_connection_timeout(1, 0);
    probe.set_read_timeout(5, 0);
    bool ready = false;
    waitUntil(
        [&] {
          if (!process->running()) return true;
          auto answer = probe.Get("/healthz");
          ready = answer && answer->status == 200;
          return ready;
        },
        kServerStartLimit, 50ms);
    if (ready && process->running()) {
      return std::unique_ptr<ServeProcess>(new ServeProcess(std::move(process), chosen));
    }
    if (!process->running() && attempt == tries && exited != nullptr) {
      *exited = process->waitExit();
      return nullptr;
    }
    if (process->running() || attempt == tries) {
      ADD_FAILURE() << "tuneplane serve did not become ready on port " << chosen << ":\n"
                    << process->err();
      return nullptr;
    }
  }
  return nullptr;
}

std::optional<int> ServeProcess::stop() {
  process_->signal(SIGTERM);
  return process_->waitExit(kStopLimit);
}

void ServeProcess::crash() {
  process_->signal(SIGKILL);
  process_->waitExit(kStopLimit);
}

std::string checkAccessLog(const std::string& text) {
  std::string problems;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json entry = nlohmann::json::parse(line, nullptr, false);
    if (!entry.is_object() || !entry.contains("status") || !entry.contains("path")) continue;
    const std::string problem = OpenApiValidator::repository().checkStatus(
        entry.value("method", ""), entry.value("path", ""), entry.value("status", 0));
    if (!problem.empty()) problems += problem + "\n";
  }
  return problems;
}

std::string checkCliJson(const std::vector<std::string>& args, const std::string& out) {
  bool json_output = false;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    json_output =
        json_output || ((args[i] == "-o" || args[i] == "--output") && args[i + 1] == "json");
  }
  if (!json_output || args.empty()) return "";
  const nlohmann::json value = nlohmann::json::parse(out, nullptr, false);
  if (value.is_discarded()) return "`" + args[0] + " -o json` printed no JSON document";
  const OpenApiValidator& api = OpenApiValidator::repository();
  const auto schema = [](const char* name) {
    return nlohmann::json{{"$ref", std::string("#/components/schemas/") + name}};
  };
  const std::string& verb = args[0];
  std::string problem;
  if (verb == "get") {  // the list answer, or one job
    problem = api.validate(value, schema(value.contains("items") ? "JobList" : "Job"));
  } else if (verb == "submit" || verb == "cancel") {
    problem = api.validate(value, schema("Job"));
  } else if (verb == "events") {
    problem = api.validate(value, schema("EventList"));
  } else if (verb == "whoami") {
    problem = api.validate(value, schema("Whoami"));
  } else if (verb == "usage") {
    problem = api.validate(value, schema("UsageReport"));
  } else if (verb == "validate") {
    problem = api.validate(value, schema("ValidationSummary"));
  } else if (verb == "capabilities") {
    problem = api.validate(value, schema("Capabilities"));
  } else if (verb == "ls") {
    problem = api.validate(value, schema("FileList"));
  } else if (verb == "describe") {  // {"job": the job answer, "events": the events' items}
    problem = api.validate(value.value("job", nlohmann::json()), schema("Job"));
    if (problem.empty()) {
      problem =
          api.validate({{"items", value.value("events", nlohmann::json())}}, schema("EventList"));
    }
  }
  return problem.empty() ? "" : "`tuneplane " + verb + " -o json`: " + problem;
}

CliRunner::CliRunner(std::string server, std::string token, std::filesystem::path dir)
    : server_(std::move(server)),
      token_(std::move(token)),
      dir_(std::move(dir)),
      home_(dir_ / "home") {
  std::filesystem::create_directories(home_);
}

std::vector<std::string> CliRunner::environment() const {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("TUNEPLANE_") || entry.starts_with("HOME=")) continue;
    env.emplace_back(entry);
  }
  env.push_back("HOME=" + home_.string());
  env.push_back("TUNEPLANE_SERVER=" + server_);
  env.push_back("TUNEPLANE_TOKEN=" + token_);
  return env;
}

ProcessResult CliRunner::run(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {tuneplaneBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = runProcess(argv, {.scratch = dir_, .env = environment()});
  if (result.exit_code == 0) {
    const std::string problem = checkCliJson(args, result.out);
    if (!problem.empty()) ADD_FAILURE() << "not as docs/openapi.json describes it: " << problem;
  }
  return result;
}

std::unique_ptr<ChildProcess> CliRunner::start(const std::vector<std::string>& args,
                                               const std::string& name) const {
  std::vector<std::string> argv = {tuneplaneBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return ChildProcess::start(argv, {.scratch = dir_, .env = environment()}, name);
}

nlohmann::json CliRunner::job(const std::string& id) const {
  const ProcessResult got = run({"get", id, "-o", "json"});
  if (got.exit_code != 0) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(got.out, nullptr, false);
}

nlohmann::json CliRunner::jobs() const {
  return nlohmann::json::parse(run({"get", "-o", "json"}).out, nullptr, false);
}

nlohmann::json CliRunner::waitJob(const std::string& id,
                                  const std::function<bool(const nlohmann::json&)>& accept,
                                  const std::string& what, std::chrono::milliseconds limit) const {
  nlohmann::json last;
  const bool reached = waitUntil(
      [&] {
        last = job(id);
        return !last.is_discarded() && accept(last);
      },
      limit, 150ms);
  if (!reached)
    ADD_FAILURE() << "job " << id << " never " << what << "; last seen:\n" << last.dump(2);
  return last;
}

std::optional<double> metricValue(const std::string& url, const std::string& line) {
  httplib::Client client(url);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) return std::nullopt;
  const std::string key = "\n" + line + " ";
  const auto at = res->body.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::stod(res->body.substr(at + key.size()));
}

std::vector<slurm::JobRecord> slurmJobs(const std::string& site_file) {
  auto site = catalog::loadSiteConfigFile(site_file);
  if (!site) {
    ADD_FAILURE() << site_file << ": " << site.error().front().describe();
    return {};
  }
  auto client = slurm::SlurmRestClient::fromSite(site->slurm);
  if (!client) {
    ADD_FAILURE() << client.error().describe();
    return {};
  }
  auto listing = (*client)->listJobs(std::nullopt);
  if (!listing) {
    ADD_FAILURE() << "listing Slurm's jobs: " << listing.error().describe();
    return {};
  }
  std::vector<slurm::JobRecord> found;
  for (auto& record : listing->jobs) {
    const bool leader = !record.het_job_offset.set || record.het_job_offset.number == 0;
    if (leader) found.push_back(std::move(record));
  }
  return found;
}

std::vector<slurm::JobRecord> slurmJobsWithComment(const std::string& site_file,
                                                   const std::string& submit_token) {
  std::vector<slurm::JobRecord> found;
  for (auto& record : slurmJobs(site_file)) {
    if (record.comment == submit_token) found.push_back(std::move(record));
  }
  return found;
}

}  // namespace tuneplane::test
