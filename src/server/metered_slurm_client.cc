// See metered_slurm_client.h.
#include "server/metered_slurm_client.h"

#include <chrono>

namespace tuneplane::server {

template <typename Call>
auto MeteredSlurmClient::timed(const char* operation, Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  auto result = call();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  metrics_.observeSlurm(operation, result.has_value(), took.count());
  if (!result && log_ != nullptr) log_->slurmError(operation, result.error());
  return result;
}

slurm::SlurmResult<slurm::PingResult> MeteredSlurmClient::ping() {
  return timed("ping", [&] { return inner_.ping(); });
}
slurm::SlurmResult<slurm::SubmitReceipt> MeteredSlurmClient::submit(const nlohmann::json& body) {
  return timed("submit", [&] { return inner_.submit(body); });
}
slurm::SlurmResult<std::vector<slurm::JobRecord>> MeteredSlurmClient::getJob(
    const std::string& job) {
  return timed("get_job", [&] { return inner_.getJob(job); });
}
slurm::SlurmResult<slurm::JobListing> MeteredSlurmClient::listJobs(
    std::optional<int64_t> update_time) {
  return timed("list_jobs", [&] { return inner_.listJobs(update_time); });
}
slurm::SlurmResult<slurm::JobStateList> MeteredSlurmClient::listJobStates(
    const std::vector<uint64_t>& job_ids) {
  return timed("list_job_states", [&] { return inner_.listJobStates(job_ids); });
}
slurm::SlurmStatus MeteredSlurmClient::cancel(const std::string& sluid,
                                              const std::optional<std::string>& signal) {
  return timed("cancel", [&] { return inner_.cancel(sluid, signal); });
}
slurm::SlurmResult<std::vector<slurm::PartitionInfo>> MeteredSlurmClient::listPartitions() {
  return timed("list_partitions", [&] { return inner_.listPartitions(); });
}
slurm::SlurmResult<std::vector<slurm::NodeInfo>> MeteredSlurmClient::listNodes() {
  return timed("list_nodes", [&] { return inner_.listNodes(); });
}
slurm::SlurmResult<std::vector<slurm::AccountingRun>> MeteredSlurmClient::accountingRuns(
    uint64_t job_id) {
  return timed("slurmdb_job", [&] { return inner_.accountingRuns(job_id); });
}
slurm::SlurmResult<slurm::ControllerConfig> MeteredSlurmClient::controllerConfig() {
  return timed("controller_config", [&] { return inner_.controllerConfig(); });
}

}  // namespace tuneplane::server
