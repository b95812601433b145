// Decoding cost of slurmrestd answers at scale: a `GET /jobs/` answer of 10,000 jobs built
// from the real v0.0.45 records in tests/data/slurm/transcripts/12_jobs_list.json (ids and
// SLUIDs varied), and a `GET /jobs/state/` answer of 10,000 jobs, both compact JSON. Each is
// read from a temp file into a padded buffer (as the transport leaves it) and decoded into
// the client's typed records (answer_decoder.h); python3's json.loads of the same bytes, in
// the same run, is the baseline (read + parse, best and median of the runs). Peak memory:
// VmHWM of a fresh process that reads and decodes once, minus that of the same program doing
// nothing; what the decoded records keep resident is measured too, so the rest can be told
// apart.
// Goals (issue 6): each answer >= 10x faster than python, peak rise <= 1.5x the answer.
// Run: build/bench/slurm_decode_bench
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/answer_decoder.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kJobs = 10000;
constexpr int kRepeats = 9;          // ours: cheap, so more runs
constexpr int kPythonRepeats = 5;    // python's /jobs/ run takes seconds
constexpr double kSpeedGoal = 10;    // python time / ours, at least
constexpr double kMemoryGoal = 1.5;  // peak rise / answer size, at most

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

std::string buildJobsAnswer(const std::string& data_dir) {
  json transcript = json::parse(readFile(data_dir + "/slurm/transcripts/12_jobs_list.json"));
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

// The file in a buffer with the decoder's padding after it, read with one copy (as the
// transport leaves a response body).
std::string readPadded(const std::string& path) {
  std::string bytes;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return bytes;
  size_t size = std::filesystem::file_size(path);
  bytes.reserve(size + tuneplane::slurm::kJsonPadding);
  bytes.resize(size);
  size_t got = std::fread(bytes.data(), 1, size, file);
  std::fclose(file);
  bytes.resize(got);
  return bytes;
}

// Resident memory of this process now, in bytes.
size_t residentBytes() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0;
  size_t resident = 0;
  in >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

struct Decoded {
  size_t records = 0;
  size_t retained = 0;  // resident bytes added by decoding: the records, and the parser
                        // buffers the decoder keeps per thread for the next answer
  // The records themselves, handed back so that the caller's clock stops before they are
  // freed: python's `del d` is outside its timing too.
  std::optional<tuneplane::slurm::JobListing> listing;
  std::optional<std::vector<tuneplane::slurm::JobStateEntry>> states;
};

// Reads the file and decodes it; the count keeps it honest.
Decoded decodeFile(const std::string& path, bool states) {
  std::string bytes = readPadded(path);
  size_t before = residentBytes();
  Decoded out;
  if (states) {
    auto decoded = tuneplane::slurm::decodeJobStates(bytes);
    if (decoded) out.states = std::move(*decoded);
    out.records = out.states ? out.states->size() : 0;
  } else {
    auto decoded = tuneplane::slurm::decodeJobListing(bytes);
    if (decoded) out.listing = std::move(*decoded);
    out.records = out.listing ? out.listing->jobs.size() : 0;
  }
  out.retained = residentBytes() - before;
  if (out.records == 0) std::fprintf(stderr, "%s did not decode\n", path.c_str());
  return out;
}

struct Figures {
  double ms = 0;          // best run
  double median_ms = 0;   // median run
  double peak_mb = 0;     // VmHWM rise of a fresh process
  double records_mb = 0;  // of it, what the decoded records hold (ours only)
};

double median(std::vector<double> runs) {
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

std::string self_path;

// What a fresh process running `argv` prints on stdout: its VmHWM (KiB) first. VmHWM belongs
// to the process's own address space, so unlike ru_maxrss it does not inherit the parent's
// peak.
std::string runFresh(const std::vector<std::string>& argv) {
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
  return out;
}

long maxRssKb(const std::vector<std::string>& argv) {
  return std::strtol(runFresh(argv).c_str(), nullptr, 10);
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
  std::vector<double> runs;
  for (int r = 0; r < kRepeats; ++r) {
    auto start = Clock::now();
    Decoded decoded = decodeFile(path, states);
    runs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    // `decoded` is freed here, after the clock.
    if (decoded.records != static_cast<size_t>(kJobs)) {
      std::fprintf(stderr, "decoded %zu records!\n", decoded.records);
    }
  }
  f.ms = *std::min_element(runs.begin(), runs.end());
  f.median_ms = median(runs);
  std::string fresh = runFresh({self_path, "--decode", path, states ? "states" : "jobs"});
  long hwm_kb = 0;
  unsigned long long retained = 0;
  std::sscanf(fresh.c_str(), "%ld %llu", &hwm_kb, &retained);
  f.peak_mb = static_cast<double>(hwm_kb - maxRssKb({self_path, "--noop"})) / 1024.0;
  f.records_mb = static_cast<double>(retained) / (1024.0 * 1024.0);
  return f;
}

const std::string kPyHwm =
    "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])";

Figures measurePython(const std::string& path) {
  std::string script =
      "import json,sys,time\n"
      "best=1e18\n"
      "runs=[]\n"
      "for _ in range(" +
      std::to_string(kPythonRepeats) +
      "):\n"
      "    t=time.perf_counter(); d=json.loads(open(sys.argv[1],'rb').read()); "
      "runs.append(time.perf_counter()-t); del d\n"
      "runs.sort()\n"
      "print(runs[0]*1000, runs[len(runs)//2]*1000)\n";
  std::string cmd = "python3 -c \"$TP_BENCH_PY\" '" + path + "'";
  setenv("TP_BENCH_PY", script.c_str(), 1);
  Figures f;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return f;
  if (std::fscanf(p, "%lf %lf", &f.ms, &f.median_ms) != 2) f.ms = f.median_ms = -1;
  pclose(p);
  f.peak_mb =
      peakRiseMb({"python3", "-c",
                  "import json,sys; d=json.loads(open(sys.argv[1],'rb').read()); " + kPyHwm, path},
                 {"python3", "-c", "import json,sys; " + kPyHwm});
  return f;
}

double loadAverage() {
  double load = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

bool report(const char* what, const std::string& path, bool states) {
  double mb = static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0);
  Figures ours = measureOurs(path, states);
  Figures py = measurePython(path);
  double speedup = py.ms / ours.ms;
  double memory = ours.peak_mb / mb;
  bool fast = speedup >= kSpeedGoal;
  bool lean = memory <= kMemoryGoal;
  std::printf("%s: %d jobs, %.2f MB\n", what, kJobs, mb);
  std::printf("  tuneplane read+decode:   best %8.2f ms (%7.1f MB/s), median %8.2f ms\n", ours.ms,
              mb / (ours.ms / 1000.0), ours.median_ms);
  std::printf("  python3 read+json.loads: best %8.2f ms (%7.1f MB/s), median %8.2f ms\n", py.ms,
              mb / (py.ms / 1000.0), py.median_ms);
  std::printf("  speed-up (python / tuneplane): best %.1fx, median %.1fx   goal >= %.0fx: %s\n",
              speedup, py.median_ms / ours.median_ms, kSpeedGoal, fast ? "MET" : "NOT MET");
  std::printf(
      "  peak memory rise: tuneplane +%.1f MB = %.2fx the answer (python +%.1f MB = %.1fx)"
      "   goal <= %.1fx: %s\n",
      ours.peak_mb, memory, py.peak_mb, py.peak_mb / mb, kMemoryGoal, lean ? "MET" : "NOT MET");
  std::printf(
      "    of which: the answer itself %.1f MB; kept after decoding (the records and the"
      " parser's reusable buffers) %.1f MB = %.2fx the answer; transient %.1f MB\n",
      mb, ours.records_mb, ours.records_mb / mb, ours.peak_mb - mb - ours.records_mb);
  return fast && lean;
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
    Decoded decoded = decodeFile(argv[2], std::string(argv[3]) == "states");
    std::printf("%ld %zu\n", selfHwmKb(), decoded.retained);
    return decoded.records > 0 ? 0 : 1;
  }
  fs::path dir = fs::temp_directory_path() / ("tp-decode-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string jobs_path = (dir / "jobs.json").string();
  std::string states_path = (dir / "states.json").string();
  std::ofstream(jobs_path, std::ios::binary) << buildJobsAnswer(TUNEPLANE_TEST_DATA_DIR);
  std::ofstream(states_path, std::ios::binary) << buildStatesAnswer();
  std::printf("load average (1 min) at start: %.2f on %ld cores\n", loadAverage(),
              sysconf(_SC_NPROCESSORS_ONLN));
  bool jobs_ok = report("GET /jobs/", jobs_path, false);
  bool states_ok = report("GET /jobs/state/", states_path, true);
  std::printf("load average (1 min) at end: %.2f\n", loadAverage());
  std::printf("goals: %s\n", jobs_ok && states_ok ? "all met" : "not all met");
  fs::remove_all(dir);
  return 0;
}
