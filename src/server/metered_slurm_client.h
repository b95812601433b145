// MeteredSlurmClient: a SlurmClient decorator that times every call to slurmrestd and
// counts it by operation and outcome in Metrics (GET /metrics), and writes every failed call
// to the EventLog (one slurm_error record). `tuneplane serve` hands it to the reconciler in
// place of the real client. Thread-safety: as the wrapped client's; Metrics is thread-safe.
#pragma once

#include "api/metrics.h"
#include "server/event_log.h"
#include "slurm/client_views.h"
#include "slurm/slurm_client.h"

namespace tuneplane::server {

class MeteredSlurmClient final : public slurm::SlurmClient {
 public:
  // REQUIRES: `inner`, `metrics` and `log` (may be null: errors not logged) outlive the
  // decorator.
  MeteredSlurmClient(slurm::SlurmClient& inner, api::Metrics& metrics,
                     const EventLog* log = nullptr)
      : inner_(inner), metrics_(metrics), log_(log) {}

  // slurm::SlurmClient:
  slurm::SlurmResult<slurm::PingResult> ping() override;
  slurm::SlurmResult<slurm::SubmitReceipt> submit(const nlohmann::json& body) override;
  slurm::SlurmResult<std::vector<slurm::JobRecord>> getJob(const std::string& job) override;
  slurm::SlurmResult<slurm::JobListing> listJobs(std::optional<int64_t> update_time) override;
  slurm::SlurmResult<slurm::JobStateList> listJobStates(
      const std::vector<uint64_t>& job_ids) override;
  slurm::SlurmStatus cancel(const std::string& sluid,
                            const std::optional<std::string>& signal) override;
  slurm::SlurmResult<std::vector<slurm::PartitionInfo>> listPartitions() override;
  slurm::SlurmResult<std::vector<slurm::NodeInfo>> listNodes() override;
  slurm::SlurmResult<std::vector<slurm::AccountingRun>> accountingRuns(uint64_t job_id) override;
  slurm::SlurmResult<slurm::ControllerConfig> controllerConfig() override;
  // The inner client's view for `user`, metered the same way.
  slurm::SlurmClient& as(const std::string& user) override {
    return views_.of(*this, inner_, user, [this](slurm::SlurmClient& inner_view) {
      return std::make_unique<MeteredSlurmClient>(inner_view, metrics_, log_);
    });
  }

 private:
  template <typename Call>
  auto timed(const char* operation, Call&& call);

  slurm::SlurmClient& inner_;
  api::Metrics& metrics_;
  const EventLog* log_;
  slurm::ClientViews views_;
};

}  // namespace tuneplane::server
