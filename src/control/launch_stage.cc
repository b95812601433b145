// See launch_stage.h.
#include "control/launch_stage.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "control/decisions.h"
#include "control/retry_policy.h"
#include "slurm/client_views.h"

namespace tuneplane::control {
namespace {

constexpr int kServiceUnavailable = 503;

}  // namespace

// A slot's connection: every call goes to the slot's client; submits are timed and reported
// to the stage, which widens or narrows the window from them.
class LaunchStage::TimedClient final : public slurm::SlurmClient {
 public:
  TimedClient(LaunchStage& stage, slurm::SlurmClient& inner) : stage_(stage), inner_(inner) {}

  // slurm::SlurmClient:
  slurm::SlurmResult<slurm::PingResult> ping() override { return inner_.ping(); }
  slurm::SlurmResult<slurm::SubmitReceipt> submit(const nlohmann::json& body) override {
    const int64_t start = stage_.clock_.steadyMs();
    auto answer = inner_.submit(body);
    stage_.noteSubmit(answer, stage_.clock_.steadyMs() - start);
    return answer;
  }
  slurm::SlurmResult<std::vector<slurm::JobRecord>> getJob(const std::string& job) override {
    return inner_.getJob(job);
  }
  slurm::SlurmResult<slurm::JobListing> listJobs(std::optional<int64_t> update_time) override {
    return inner_.listJobs(update_time);
  }
  slurm::SlurmResult<slurm::JobStateList> listJobStates(
      const std::vector<uint64_t>& job_ids) override {
    return inner_.listJobStates(job_ids);
  }
  slurm::SlurmStatus cancel(const std::string& sluid,
                            const std::optional<std::string>& signal) override {
    return inner_.cancel(sluid, signal);
  }
  slurm::SlurmResult<std::vector<slurm::PartitionInfo>> listPartitions() override {
    return inner_.listPartitions();
  }
  slurm::SlurmResult<std::vector<slurm::NodeInfo>> listNodes() override {
    return inner_.listNodes();
  }
  slurm::SlurmResult<std::vector<slurm::AccountingRun>> accountingRuns(uint64_t job_id) override {
    return inner_.accountingRuns(job_id);
  }
  // The slot's connection as `user`, its submits timed the same way.
  slurm::SlurmClient& as(const std::string& user) override {
    return views_.of(*this, inner_, user, [this](slurm::SlurmClient& inner_view) {
      return std::make_unique<TimedClient>(stage_, inner_view);
    });
  }

 private:
  LaunchStage& stage_;
  slurm::SlurmClient& inner_;
  slurm::ClientViews views_;
};

LaunchStage::LaunchStage(std::vector<slurm::SlurmClient*> clients, const Clock& clock,
                         LaunchStageOptions options)
    : clock_(clock),
      options_(options),
      clients_(std::move(clients)),
      window_(static_cast<int>(clients_.size())) {
  for (slurm::SlurmClient* client : clients_) {
    timed_.push_back(std::make_unique<TimedClient>(*this, *client));
  }
}

LaunchStage::~LaunchStage() = default;

int LaunchStage::window() const {
  std::lock_guard<std::mutex> lock(mu_);
  return window_;
}

int64_t LaunchStage::pausedUntilMs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return paused_until_ms_;
}

int LaunchStage::maxInFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return max_in_flight_;
}

int64_t LaunchStage::overloads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return overloads_;
}

bool LaunchStage::pausedLocked() const {
  return paused_until_ms_ > clock_.steadyMs();
}

void LaunchStage::noteSubmit(const slurm::SlurmResult<slurm::SubmitReceipt>& answer,
                             int64_t took_ms) {
  const int status = answer ? 200 : answer.error().http_status;
  const bool overloaded = status == kHttpTooManyRequests || status == kServiceUnavailable ||
                          took_ms >= options_.slow_submit.count();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t now = clock_.steadyMs();
    const int64_t sent = now - took_ms;
    if (overloaded) {
      ++overloads_;
      if (!last_backoff_ms_ || sent > *last_backoff_ms_) {  // not an answer of the last burst
        last_backoff_ms_ = now;
        ++overloads_in_a_row_;
        window_ = std::max(1, window_ / 2);
        paused_until_ms_ =
            std::max(paused_until_ms_, now + resendDelay(overloads_in_a_row_).count());
      }
    } else if (answer) {
      overloads_in_a_row_ = 0;
      window_ = std::min(concurrency(), window_ + 1);
    }
  }
  cv_.notify_all();
}

size_t LaunchStage::run(std::vector<Task>& tasks, std::stop_token stop) {
  size_t next = 0;
  // Whether the next task may start; REQUIRES mu_ held.
  auto mayStart = [&] { return next < tasks.size() && !stop.stop_requested() && !pausedLocked(); };
  if (clients_.size() == 1) {
    // One connection: in order, on this thread (no thread, no reordering).
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!mayStart()) break;
        max_in_flight_ = std::max(max_in_flight_, 1);
      }
      tasks[next++](*timed_.front());
    }
    return next;
  }
  auto slot = [&](TimedClient& client) {
    for (;;) {
      size_t mine = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return in_flight_ < window_ || !mayStart(); });
        if (!mayStart()) return;
        mine = next++;
        ++in_flight_;
        max_in_flight_ = std::max(max_in_flight_, in_flight_);
      }
      tasks[mine](client);
      {
        std::lock_guard<std::mutex> lock(mu_);
        --in_flight_;
      }
      cv_.notify_all();
    }
  };
  {
    const size_t slots = std::min(timed_.size(), tasks.size());
    std::vector<std::jthread> threads;
    threads.reserve(slots);
    for (size_t i = 0; i < slots; ++i) threads.emplace_back([&, i] { slot(*timed_[i]); });
  }  // joined: every task started has finished
  return next;
}

}  // namespace tuneplane::control
