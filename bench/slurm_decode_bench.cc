// Decoding cost of slurmrestd answers at scale: a `GET /jobs/` answer of 10,000 jobs built
// from the real v0.0.45 records in shared/slurm/transcripts/12_jobs_list.json (ids and SLUIDs
// varied), and a `GET /jobs/state/` answer of 10,000 jobs. Each is read from a temp file and
// decoded into the client's typed records; python3's json.loads of the same bytes, in the
// same run, is the baseline. Peak memory: VmHWM of a fresh process that decodes once, minus
// that of the same program doing nothing. Run: build/bench/slurm_decode_bench
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/job_record.h"
#include "support/test_paths.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kJobs = 10000;
constexpr int kRepeats = 5;

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string crockfordSluid(uint64_t n) {
  static const char* kDigits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::string out(13, '0');
  for (int i = 12; i >= 0; --i, n >>= 5) out[i] = kDigits[n & 31];
  return "s" + out;
}

std::string buildJobsAnswer(const std::string& shared_dir) {
  json transcript = json::parse(readFile(shared_dir + "/slurm/transcripts/12_jobs_list.json"));
  json answer = transcript["exchanges"][0]["response"]["body"];
  json templates = answer["jobs"];
  json jobs = json::array();
  for (int i = 0; i < kJobs; ++i) {
    json job = templates[i % templates.size()];
    job["job_id"] = 1000 + i;
    job["step_id"]["sluid"] = crockfordSluid(0xCC1000000000000ULL + static_cast<uint64_t>(i));
    job["step_id"]["job_id"]["number"] = 1000 + i;
    job["name"] = "tp-bench-" + std::to_string(i);
    jobs.push_back(std::move(job));
  }
  answer["jobs"] = std::move(jobs);
  return answer.dump();
}

std::string buildStatesAnswer() {
  json jobs = json::array();
  const char* states[] = {"PENDING", "RUNNING", "COMPLETED", "FAILED"};
  for (int i = 0; i < kJobs; ++i) {
    json entry = {
        {"job_id", i % 50 == 1 ? std::to_string(1000 + i) + "+1" : std::to_string(1000 + i)},
        {"state", json::array({states[i % 4]})}};
    if (i % 7 == 0) entry["state"].push_back("COMPLETING");
    jobs.push_back(std::move(entry));
  }
  return json{{"jobs", jobs},
              {"meta", json::object()},
              {"errors", json::array()},
              {"warnings", json::array()}}
      .dump();
}

// Reads the file, parses and decodes; returns the number of records (to keep it honest).
size_t decodeFile(const std::string& path, bool states) {
  std::string bytes = readFile(path);
  json body = json::parse(bytes);
  if (states) {
    auto decoded = tuneplane::slurm::decodeJobStates(body);
    return decoded ? decoded->size() : 0;
  }
  auto decoded = tuneplane::slurm::decodeJobListing(body);
  return decoded ? decoded->jobs.size() : 0;
}

struct Figures {
  double ms = 0;
  double peak_mb = 0;
};

std::string self_path;

// The VmHWM (KiB) that a fresh process running `argv` prints on stdout. VmHWM belongs to the
// process's own address space, so unlike ru_maxrss it does not inherit the parent's peak.
long maxRssKb(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return 0;
  pid_t child = fork();
  if (child == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  waitpid(child, nullptr, 0);
  return std::strtol(out.c_str(), nullptr, 10);
}

long selfHwmKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// Peak memory of `work` above that of `baseline` (the same program doing nothing), in MB.
double peakRiseMb(const std::vector<std::string>& work, const std::vector<std::string>& baseline) {
  return static_cast<double>(maxRssKb(work) - maxRssKb(baseline)) / 1024.0;
}

Figures measureOurs(const std::string& path, bool states) {
  Figures f;
  f.ms = 1e18;
  for (int r = 0; r < kRepeats; ++r) {
    auto start = Clock::now();
    size_t n = decodeFile(path, states);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (n != static_cast<size_t>(kJobs)) std::fprintf(stderr, "decoded %zu records!\n", n);
    f.ms = std::min(f.ms, ms);
  }
  f.peak_mb =
      peakRiseMb({self_path, "--decode", path, states ? "states" : "jobs"}, {self_path, "--noop"});
  return f;
}

const std::string kPyHwm =
    "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])";

Figures measurePython(const std::string& path) {
  std::string script =
      "import json,sys,time\n"
      "best=1e18\n"
      "for _ in range(" +
      std::to_string(kRepeats) +
      "):\n"
      "    t=time.perf_counter(); d=json.loads(open(sys.argv[1],'rb').read()); "
      "best=min(best,time.perf_counter()-t); del d\n"
      "print(best*1000)\n";
  std::string cmd = "python3 -c \"$TP_BENCH_PY\" '" + path + "'";
  setenv("TP_BENCH_PY", script.c_str(), 1);
  Figures f;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return f;
  if (std::fscanf(p, "%lf", &f.ms) != 1) f.ms = -1;
  pclose(p);
  f.peak_mb =
      peakRiseMb({"python3", "-c",
                  "import json,sys; d=json.loads(open(sys.argv[1],'rb').read()); " + kPyHwm, path},
                 {"python3", "-c", "import json,sys; " + kPyHwm});
  return f;
}

void report(const char* what, const std::string& path, bool states) {
  double mb = static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0);
  Figures ours = measureOurs(path, states);
  Figures py = measurePython(path);
  std::printf("%s: %d jobs, %.2f MB\n", what, kJobs, mb);
  std::printf("  tuneplane read+parse+decode: %8.1f ms  %7.1f MB/s  peak +%.1f MB\n", ours.ms,
              mb / (ours.ms / 1000.0), ours.peak_mb);
  std::printf("  python3 json.loads (read+parse): %8.1f ms  %7.1f MB/s  peak +%.1f MB\n", py.ms,
              mb / (py.ms / 1000.0), py.peak_mb);
  std::printf("  ratio time tuneplane/python: %.2f   ratio peak memory: %.2f\n", ours.ms / py.ms,
              py.peak_mb > 0 ? ours.peak_mb / py.peak_mb : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  self_path = fs::canonical("/proc/self/exe").string();
  if (argc >= 2 && std::string(argv[1]) == "--noop") {
    std::printf("%ld\n", selfHwmKb());
    return 0;
  }
  if (argc >= 4 && std::string(argv[1]) == "--decode") {
    size_t n = decodeFile(argv[2], std::string(argv[3]) == "states");
    std::printf("%ld\n", selfHwmKb());
    return n > 0 ? 0 : 1;
  }
  fs::path dir = fs::temp_directory_path() / ("tp-decode-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string jobs_path = (dir / "jobs.json").string();
  std::string states_path = (dir / "states.json").string();
  std::ofstream(jobs_path, std::ios::binary)
      << buildJobsAnswer(tuneplane::test::testDataDir().string());
  std::ofstream(states_path, std::ios::binary) << buildStatesAnswer();
  report("GET /jobs/", jobs_path, false);
  report("GET /jobs/state/", states_path, true);
  fs::remove_all(dir);
  return 0;
}
