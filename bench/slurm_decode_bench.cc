// Decoding cost of slurmrestd answers at scale: a `GET /jobs/` answer of 10,000 jobs built
// from the real v0.0.45 records in tests/data/slurm/transcripts/12_jobs_list.json (ids and
// SLUIDs varied), and a `GET /jobs/state/` answer of 10,000 jobs, both compact JSON. Each is
// read from a temp file into a padded buffer (as the transport leaves it) and decoded into
// the client's typed records (answer_decoder.h); python3's json.loads of the same bytes, in
// the same run, is the baseline (read + parse, best and median of the runs). Peak memory:
// VmHWM of a fresh process that reads and decodes once, minus that of the same program doing
// nothing; what the decoded records keep resident is measured too, and the rise of the same
// process decoding a 10-job answer (the part that does not grow with the answer: code pages,
// parser and allocator set-up), so the rest can be told apart.
// Goals (issue 6): GET /jobs/ >= 10x faster than python, GET /jobs/state/ >= 4x (decided after
// the compact state list: docs/developers.md, "Decode benchmark"), peak rise <= 1.5x the answer.
// Run: build/bench/slurm_decode_bench. Profile: TUNEPLANE_BENCH_DIR=/tmp/d slurm_decode_bench,
// then perf record slurm_decode_bench --loop /tmp/d/states.json states 1000.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_dir.h"
#include "bench_measure.h"
#include "slurm/answer_decoder.h"
#include "support/test_paths.h"

namespace {

using tuneplane::bench::loadAverage;
using tuneplane::bench::statusKiB;
using tuneplane::bench::threadCpuSeconds;

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kJobs = 10000;
constexpr int kSmallJobs = 10;  // the answer that tells the fixed part of our memory apart
constexpr int kJobsRounds = 7;  // python's /jobs/ run takes over a second
constexpr int kStatesRounds = 41;
constexpr double kSpeedGoal = 10;       // python time / ours, at least: GET /jobs/
constexpr double kStatesSpeedGoal = 4;  // the same for GET /jobs/state/
constexpr double kMemoryGoal = 1.5;     // peak rise / answer size, at most

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

std::string buildJobsAnswer(const std::string& data_dir, int count) {
  json transcript = json::parse(readFile(data_dir + "/slurm/transcripts/12_jobs_list.json"));
  json answer = transcript["exchanges"][0]["response"]["body"];
  json templates = answer["jobs"];
  json jobs = json::array();
  for (int i = 0; i < count; ++i) {
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

std::string buildStatesAnswer(int count) {
  json jobs = json::array();
  const char* states[] = {"PENDING", "RUNNING", "COMPLETED", "FAILED"};
  for (int i = 0; i < count; ++i) {
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
  std::optional<tuneplane::slurm::JobStateList> states;
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
  double fixed_mb = 0;    // of it, what decoding at all costs (ours only)
  double records_mb = 0;  // of it, what the decoded records hold (ours only)
};

// One timed run: wall clock, and the CPU time the process used (what the machine's load
// changes least: a run that is preempted loses wall time, not CPU time).
struct Run {
  double wall_ms = 0;
  double cpu_ms = 0;
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
  if (pipe(fds) != 0) return "";
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
  const long kb = statusKiB("VmHWM");
  return kb < 0 ? 0 : kb;
}

// Peak memory of `work` above that of `baseline` (the same program doing nothing), in MB.
double peakRiseMb(const std::vector<std::string>& work, const std::vector<std::string>& baseline) {
  return static_cast<double>(maxRssKb(work) - maxRssKb(baseline)) / 1024.0;
}

const std::string kPyHwm =
    "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])";

// A python3 that stays up for the whole run and times one json.loads of a file (read
// included) each time it is asked, so that its runs can alternate with ours: under a load
// that changes during the run, both sides of each ratio then see the same machine.
class PythonBaseline {
 public:
  PythonBaseline() {
    static const char* kScript =
        "import json,sys,time\n"
        "for path in sys.stdin:\n"
        "    t=time.perf_counter(); c=time.process_time()\n"
        "    d=json.loads(open(path.strip(),'rb').read())\n"
        "    c=time.process_time()-c; t=time.perf_counter()-t; del d\n"
        "    print(t*1000, c*1000, flush=True)\n";
    int to_child[2];
    int from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) return;
    child_ = fork();
    if (child_ == 0) {
      dup2(to_child[0], STDIN_FILENO);
      dup2(from_child[1], STDOUT_FILENO);
      close(to_child[1]);
      close(from_child[0]);
      execlp("python3", "python3", "-c", kScript, static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    to_ = fdopen(to_child[1], "w");
    from_ = fdopen(from_child[0], "r");
  }
  ~PythonBaseline() {
    if (to_ != nullptr) std::fclose(to_);
    if (from_ != nullptr) std::fclose(from_);
    if (child_ > 0) waitpid(child_, nullptr, 0);
  }
  // One read + json.loads of `path`; -1 ms when python did not answer.
  Run time(const std::string& path) {
    Run run{-1, -1};
    if (to_ == nullptr || from_ == nullptr) return run;
    std::fprintf(to_, "%s\n", path.c_str());
    std::fflush(to_);
    if (std::fscanf(from_, "%lf %lf", &run.wall_ms, &run.cpu_ms) != 2) run = {-1, -1};
    return run;
  }

 private:
  pid_t child_ = -1;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

double cpuMs() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

Run oursOnce(const std::string& path, bool states) {
  auto start = Clock::now();
  double cpu_start = cpuMs();
  Decoded decoded = decodeFile(path, states);
  Run run{std::chrono::duration<double, std::milli>(Clock::now() - start).count(),
          cpuMs() - cpu_start};
  // `decoded` is freed here, after the clocks.
  if (decoded.records != static_cast<size_t>(kJobs)) {
    std::fprintf(stderr, "decoded %zu records!\n", decoded.records);
  }
  return run;
}

// Runs ours and python's alternately, one each a round, `rounds` times, and reports the best
// and median of each and of the per-round ratios, in CPU time and in wall time.
// `small_path`: an answer of the same kind with a few records, whose peak rise is the part of
// ours that does not grow with the answer (code pages faulted in, the parser and allocator set
// up), shown apart.
bool report(const char* what, const std::string& path, const std::string& small_path, bool states,
            PythonBaseline& python, int rounds) {
  double mb = static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0);
  Figures ours;
  Figures py;
  std::vector<double> our_cpu, py_cpu, our_wall, py_wall, cpu_ratios, wall_ratios;
  oursOnce(path, states);  // warm the page cache and the per-thread parsers
  python.time(path);
  for (int r = 0; r < rounds; ++r) {
    // Who goes first alternates too, so neither side always runs on a warmer cache.
    Run mine;
    Run theirs;
    if (r % 2 == 0) {
      mine = oursOnce(path, states);
      theirs = python.time(path);
    } else {
      theirs = python.time(path);
      mine = oursOnce(path, states);
    }
    our_cpu.push_back(mine.cpu_ms);
    py_cpu.push_back(theirs.cpu_ms);
    our_wall.push_back(mine.wall_ms);
    py_wall.push_back(theirs.wall_ms);
    cpu_ratios.push_back(theirs.cpu_ms / mine.cpu_ms);
    wall_ratios.push_back(theirs.wall_ms / mine.wall_ms);
  }
  auto best = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  ours.ms = best(our_cpu);
  ours.median_ms = median(our_cpu);
  py.ms = best(py_cpu);
  py.median_ms = median(py_cpu);

  std::string fresh = runFresh({self_path, "--decode", path, states ? "states" : "jobs"});
  long hwm_kb = 0;
  unsigned long long retained = 0;
  std::sscanf(fresh.c_str(), "%ld %llu", &hwm_kb, &retained);
  const long noop_kb = maxRssKb({self_path, "--noop"});
  ours.peak_mb = static_cast<double>(hwm_kb - noop_kb) / 1024.0;
  const long small_kb = maxRssKb({self_path, "--decode", small_path, states ? "states" : "jobs"});
  ours.fixed_mb = static_cast<double>(small_kb - noop_kb) / 1024.0;
  ours.records_mb = static_cast<double>(retained) / (1024.0 * 1024.0);
  py.peak_mb =
      peakRiseMb({"python3", "-c",
                  "import json,sys; d=json.loads(open(sys.argv[1],'rb').read()); " + kPyHwm, path},
                 {"python3", "-c", "import json,sys; " + kPyHwm});

  double speedup = median(cpu_ratios);
  double memory = ours.peak_mb / mb;
  const double speed_goal = states ? kStatesSpeedGoal : kSpeedGoal;
  bool fast = speedup >= speed_goal;
  bool lean = memory <= kMemoryGoal;
  std::printf("%s: %d jobs, %.2f MB, %d alternating rounds\n", what, kJobs, mb, rounds);
  std::printf("  tuneplane read+decode:   CPU best %8.2f ms (%7.1f MB/s), median %8.2f ms\n",
              ours.ms, mb / (ours.ms / 1000.0), ours.median_ms);
  std::printf("  python3 read+json.loads: CPU best %8.2f ms (%7.1f MB/s), median %8.2f ms\n", py.ms,
              mb / (py.ms / 1000.0), py.median_ms);
  std::printf(
      "  speed-up in CPU time (python / tuneplane, same round): median %.1fx"
      " (rounds %.1fx..%.1fx, best/best %.1fx)   goal >= %.0fx: %s\n",
      speedup, best(cpu_ratios), *std::max_element(cpu_ratios.begin(), cpu_ratios.end()),
      py.ms / ours.ms, speed_goal, fast ? "MET" : "NOT MET");
  std::printf(
      "  in wall time: tuneplane best %.2f ms, python best %.2f ms; same-round median %.1fx,"
      " best/best %.1fx\n",
      best(our_wall), best(py_wall), median(wall_ratios), best(py_wall) / best(our_wall));
  std::printf(
      "  peak memory rise: tuneplane +%.1f MB = %.2fx the answer (python +%.1f MB = %.1fx)"
      "   goal <= %.1fx: %s\n",
      ours.peak_mb, memory, py.peak_mb, py.peak_mb / mb, kMemoryGoal, lean ? "MET" : "NOT MET");
  std::printf(
      "    of which: the answer itself %.2f MB; kept after decoding (the records and the"
      " parser's reusable buffers) %.2f MB = %.2fx the answer; transient %.2f MB\n",
      mb, ours.records_mb, ours.records_mb / mb, ours.peak_mb - mb - ours.records_mb);
  std::printf(
      "    the same process decoding a %d-job answer rises %.2f MB (code, parser and allocator"
      " set-up); the rest, what grows with the answer: +%.2f MB = %.2fx the answer\n",
      kSmallJobs, ours.fixed_mb, ours.peak_mb - ours.fixed_mb, (ours.peak_mb - ours.fixed_mb) / mb);
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
  if (argc >= 5 && std::string(argv[1]) == "--loop") {  // for perf: decode N times
    long total = 0;
    for (long i = std::strtol(argv[4], nullptr, 10); i > 0; --i) {
      total += static_cast<long>(decodeFile(argv[2], std::string(argv[3]) == "states").records);
    }
    std::printf("%ld records\n", total);
    return 0;
  }
  if (argc >= 4 && std::string(argv[1]) == "--decode") {
    Decoded decoded = decodeFile(argv[2], std::string(argv[3]) == "states");
    std::printf("%ld %zu\n", selfHwmKb(), decoded.retained);
    return decoded.records > 0 ? 0 : 1;
  }
  const tuneplane::bench::BenchDir dir;  // TUNEPLANE_BENCH_DIR keeps the answers, for --loop
  if (!dir.ok()) return 1;
  std::string jobs_path = dir.path() + "/jobs.json";
  std::string states_path = dir.path() + "/states.json";
  std::string small_jobs_path = dir.path() + "/jobs_small.json";
  std::string small_states_path = dir.path() + "/states_small.json";
  const std::string data_dir = tuneplane::test::testDataDir().string();
  std::ofstream(jobs_path, std::ios::binary) << buildJobsAnswer(data_dir, kJobs);
  std::ofstream(states_path, std::ios::binary) << buildStatesAnswer(kJobs);
  std::ofstream(small_jobs_path, std::ios::binary) << buildJobsAnswer(data_dir, kSmallJobs);
  std::ofstream(small_states_path, std::ios::binary) << buildStatesAnswer(kSmallJobs);
  std::printf("load average (1 min) at start: %.2f on %ld cores\n", loadAverage(),
              sysconf(_SC_NPROCESSORS_ONLN));
  PythonBaseline python;
  bool jobs_ok = report("GET /jobs/", jobs_path, small_jobs_path, false, python, kJobsRounds);
  bool states_ok =
      report("GET /jobs/state/", states_path, small_states_path, true, python, kStatesRounds);
  std::printf("load average (1 min) at end: %.2f\n", loadAverage());
  std::printf("goals: %s\n", jobs_ok && states_ok ? "all met" : "not all met");
  return 0;
}
