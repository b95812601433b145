// FakeSlurmClient: a SlurmClient that holds Slurm's jobs as plain records the test edits
// (state, reason, a requeue's new SLUID, a purge), answers every call from them, records
// every call, and fails the calls a test scripts (a lost submit answer that still made
// the job, a DELETE that times out, …). With a FakeClock it drives the real Reconciler's
// tick() with no simulator, no threads and no sleeps (reconciler_fake_fixture.h).
// Not thread-safe: one test thread calls it, as the reconciler's one thread does.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slurm/sluid.h"
#include "slurm/slurm_client.h"
#include "support/os_user.h"

namespace tuneplane::control::testing {

class FakeSlurmClient final : public slurm::SlurmClient {
 public:
  enum class Op {
    kPing,
    kSubmit,
    kGetJob,
    kListJobs,
    kListJobStates,
    kCancel,
    kPartitions,
    kNodes
  };
  struct Call {
    Op op;
    std::string arg;   // the id or SLUID asked for, or the submit token sent
    std::string user;  // who asked: "" the client itself, else the user of as(user)
  };

  // A failure of the next call(s) of `op`. For a submit, `acted` means the job(s) are made
  // anyway (the answer was lost on its way back).
  struct Failure {
    slurm::SlurmError error;
    bool acted = false;
  };

  static slurm::SlurmError error(std::string_view code, slurm::TransportClass transport) {
    return slurm::makeSlurmError(code, "fake", "scripted failure", transport);
  }
  static slurm::SlurmError timeout() {
    return error(slurm::kErrOutcomeUnknown, slurm::TransportClass::kUnknown);
  }

  // --- Slurm's side, as the test sets it ---

  // A new Slurm job carrying `token` in its comment, one record per het component
  // (`components` > 1: a het job whose leader is the first record). Returns the leader's
  // SLUID. Submit times increase with every job made unless `submit_time` is given.
  std::string addJob(const std::string& token, int components = 1,
                     std::vector<std::string> state = {"PENDING"},
                     const std::string& reason = "None",
                     std::optional<int64_t> submit_time = std::nullopt) {
    const uint64_t leader = next_id_;
    const int64_t submitted = submit_time.value_or(next_submit_time_++);
    for (int i = 0; i < components; ++i) {
      slurm::JobRecord r;
      r.job_id = next_id_++;
      r.sluid = newSluid();
      r.comment = token;
      r.user_name = acting_.empty() ? owner_ : acting_;
      r.job_state = state;
      r.state_reason = reason;
      r.submit_time = {true, false, submitted};
      if (components > 1) {
        r.het_job_id = {true, false, static_cast<int64_t>(leader)};
        r.het_job_offset = {true, false, i};
      }
      jobs_.push_back(r);
    }
    return jobs_[jobs_.size() - static_cast<size_t>(components)].sluid;
  }

  // The Slurm user the next jobs made belong to: the site's (what TunePlane's JWT names, the
  // test's own OS user), unless a test makes another user's job.
  void ownJobsAs(std::string user) { owner_ = std::move(user); }
  // The bulk state poll answers as if Slurm held none of the jobs (a stale or misrouted read).
  void hideFromStateList(bool hide) { hide_states_ = hide; }
  // What GET /nodes/ answers; a record's `nodes` is set by the test (setNodes).
  void setNodeList(std::vector<slurm::NodeInfo> nodes) { node_list_ = std::move(nodes); }
  void setNodes(const std::string& sluid, const std::string& nodes) { record(sluid).nodes = nodes; }
  // Every submit body sent, in order.
  const std::vector<nlohmann::json>& submitBodies() const { return submit_bodies_; }

  slurm::JobRecord* find(const std::string& sluid) {
    for (auto& r : jobs_) {
      if (sameSluid(r.sluid, sluid)) return &r;
    }
    return nullptr;
  }
  slurm::JobRecord& record(const std::string& sluid) {
    slurm::JobRecord* r = find(sluid);
    if (r == nullptr) throw std::runtime_error("no fake Slurm job " + sluid);
    return *r;
  }
  // The job's components, leader first.
  std::vector<slurm::JobRecord*> components(const std::string& leader_sluid) {
    const slurm::JobRecord& lead = record(leader_sluid);
    std::vector<slurm::JobRecord*> out;
    for (auto& r : jobs_) {
      if (r.sluid == lead.sluid ||
          (lead.isHetComponent() && r.het_job_id == lead.het_job_id && r.isHetComponent())) {
        out.push_back(&r);
      }
    }
    return out;
  }
  void setState(const std::string& sluid, std::vector<std::string> state,
                const std::string& reason = "None", std::optional<int> exit_code = std::nullopt) {
    slurm::JobRecord& r = record(sluid);
    r.job_state = std::move(state);
    r.state_reason = reason;
    if (exit_code) r.exit_code.return_code = {true, false, *exit_code};
  }
  // Slurm forgets the job (MinJobAge passed).
  void purge(const std::string& sluid) {
    jobs_.erase(
        std::remove_if(jobs_.begin(), jobs_.end(),
                       [&](const slurm::JobRecord& r) { return sameSluid(r.sluid, sluid); }),
        jobs_.end());
  }
  // A requeue completed: the same numeric id and token under a NEW SLUID, in `state`.
  // Returns the new SLUID.
  std::string requeue(const std::string& sluid, std::vector<std::string> state,
                      const std::string& reason = "JobHeldAdmin") {
    slurm::JobRecord& r = record(sluid);
    r.sluid = newSluid();
    ++r.restart_cnt;  // as Slurm counts every requeue (transcript 17)
    r.job_state = std::move(state);
    r.state_reason = reason;
    return r.sluid;
  }
  const std::vector<slurm::JobRecord>& jobs() const { return jobs_; }
  std::vector<const slurm::JobRecord*> jobsWithToken(const std::string& token) const {
    std::vector<const slurm::JobRecord*> out;
    for (const auto& r : jobs_) {
      if (r.comment == token) out.push_back(&r);
    }
    return out;
  }

  // One POST makes `copies` jobs (2: a proxy that sent the submit twice).
  void setSubmitCopies(int copies) { submit_copies_ = copies; }
  // The state and reason of the jobs a POST makes (Slurm sets a pending reason at once).
  void setSubmitState(std::vector<std::string> state, const std::string& reason) {
    submit_state_ = std::move(state);
    submit_reason_ = reason;
  }
  // What a DELETE does to a job that has not ended (Slurm's real answer varies).
  void setCancelState(std::vector<std::string> state) { cancel_state_ = std::move(state); }
  void failNext(Op op, slurm::SlurmError error, int count = 1, bool acted = false) {
    for (int i = 0; i < count; ++i) failures_[op].push_back({error, acted});
  }

  // --- what the reconciler asked ---
  const std::vector<Call>& calls() const { return calls_; }
  int count(Op op) const {
    return static_cast<int>(
        std::count_if(calls_.begin(), calls_.end(), [op](const Call& c) { return c.op == op; }));
  }
  std::vector<std::string> args(Op op) const {
    std::vector<std::string> out;
    for (const auto& c : calls_) {
      if (c.op == op) out.push_back(c.arg);
    }
    return out;
  }
  void clearCalls() { calls_.clear(); }

  // --- slurm::SlurmClient ---
  slurm::SlurmResult<slurm::PingResult> ping() override {
    calls_.push_back({Op::kPing, "", acting_});
    if (auto f = scripted(Op::kPing)) return slurm::slurmFail(f->error);
    return slurm::PingResult{};
  }

  slurm::SlurmResult<slurm::SubmitReceipt> submit(const nlohmann::json& body) override {
    const bool het = body.contains("jobs");
    const nlohmann::json& first = het ? body["jobs"][0] : body["job"];
    const std::string token = first.value("comment", "");
    calls_.push_back({Op::kSubmit, token, acting_});
    submit_bodies_.push_back(body);
    auto f = scripted(Op::kSubmit);
    if (f && !f->acted) return slurm::slurmFail(f->error);
    std::string leader;
    for (int i = 0; i < submit_copies_; ++i) {
      const std::string made = addJob(token, het ? static_cast<int>(body["jobs"].size()) : 1,
                                      submit_state_, submit_reason_);
      if (i == 0) leader = made;
    }
    if (f) return slurm::slurmFail(f->error);
    slurm::SubmitReceipt receipt;
    receipt.job_id = record(leader).job_id;
    return receipt;
  }

  slurm::SlurmResult<std::vector<slurm::JobRecord>> getJob(const std::string& job) override {
    calls_.push_back({Op::kGetJob, job, acting_});
    if (auto f = scripted(Op::kGetJob)) return slurm::slurmFail(f->error);
    const bool numeric = !job.empty() && std::all_of(job.begin(), job.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c));
    });
    const slurm::JobRecord* lead = nullptr;
    for (const auto& r : jobs_) {
      if (numeric ? std::to_string(r.job_id) == job : sameSluid(r.sluid, job)) lead = &r;
    }
    if (lead == nullptr) return slurm::slurmFail(notFound());
    std::vector<slurm::JobRecord> out;
    for (auto* r : components(lead->sluid)) out.push_back(*r);
    return out;
  }

  slurm::SlurmResult<slurm::JobListing> listJobs(std::optional<int64_t>) override {
    calls_.push_back({Op::kListJobs, "", acting_});
    if (auto f = scripted(Op::kListJobs)) return slurm::slurmFail(f->error);
    slurm::JobListing listing;
    listing.jobs = jobs_;
    return listing;
  }

  slurm::SlurmResult<slurm::JobStateList> listJobStates(
      const std::vector<uint64_t>& job_ids) override {
    calls_.push_back({Op::kListJobStates, std::to_string(job_ids.size()), acting_});
    if (auto f = scripted(Op::kListJobStates)) return slurm::slurmFail(f->error);
    slurm::JobStateList list;
    if (hide_states_) return list;
    for (const auto& r : jobs_) {
      if (job_ids.empty() || std::find(job_ids.begin(), job_ids.end(), r.job_id) != job_ids.end()) {
        (void)list.add(std::to_string(r.job_id), r.job_state);
      }
    }
    return list;
  }

  slurm::SlurmStatus cancel(const std::string& sluid, const std::optional<std::string>&) override {
    calls_.push_back({Op::kCancel, sluid, acting_});
    if (auto f = scripted(Op::kCancel)) return slurm::slurmFail(f->error);
    slurm::JobRecord* r = find(sluid);
    if (r == nullptr) return slurm::slurmFail(notFound());
    // Another user's job: Slurm's 2002 "Access/permission denied" (transcript 19_identity).
    if (!acting_.empty() && r->user_name != acting_) {
      slurm::SlurmError denied = error(slurm::kErrRejected, slurm::TransportClass::kRejected);
      denied.slurm_error_number = 2002;
      return slurm::slurmFail(denied);
    }
    static const std::vector<std::string> kEnded = {"COMPLETED", "CANCELLED", "FAILED",
                                                    "TIMEOUT",   "NODE_FAIL", "PREEMPTED",
                                                    "BOOT_FAIL", "DEADLINE",  "OUT_OF_MEMORY"};
    if (!r->job_state.empty() &&
        std::find(kEnded.begin(), kEnded.end(), r->job_state.front()) != kEnded.end()) {
      return slurm::slurmFail(
          error(slurm::kErrAlreadyCompleting, slurm::TransportClass::kRejected));
    }
    r->job_state = cancel_state_;
    r->state_reason = "None";
    return {};
  }

  slurm::SlurmResult<std::vector<slurm::PartitionInfo>> listPartitions() override {
    calls_.push_back({Op::kPartitions, "", acting_});
    return std::vector<slurm::PartitionInfo>{};
  }
  slurm::SlurmResult<std::vector<slurm::NodeInfo>> listNodes() override {
    calls_.push_back({Op::kNodes, "", acting_});
    if (auto f = scripted(Op::kNodes)) return slurm::slurmFail(f->error);
    return node_list_;
  }

  // The same fake, each call recorded (and each job made) as `user`'s.
  slurm::SlurmClient& as(const std::string& user) override {
    if (user.empty()) return *this;
    auto& view = views_[user];
    if (!view) view = std::make_unique<AsUser>(*this, user);
    return *view;
  }
  // Who asked each call of `op`, in order.
  std::vector<std::string> users(Op op) const {
    std::vector<std::string> out;
    for (const auto& c : calls_) {
      if (c.op == op) out.push_back(c.user);
    }
    return out;
  }

 private:
  static bool sameSluid(const std::string& a, const std::string& b) {
    return slurm::Sluid(a) == slurm::Sluid(b);
  }
  static slurm::SlurmError notFound() {
    slurm::SlurmError e = error(slurm::kErrJobNotFound, slurm::TransportClass::kRejected);
    e.slurm_error_number = slurm::kSlurmInvalidJobId;
    return e;
  }
  std::string newSluid() {
    // Slurm's SLUIDs: "s" and 13 Crockford base32 characters.
    std::string digits = std::to_string(next_sluid_++);
    return "sFAKE" + std::string(9 - digits.size(), '0') + digits;
  }
  std::optional<Failure> scripted(Op op) {
    auto it = failures_.find(op);
    if (it == failures_.end() || it->second.empty()) return std::nullopt;
    Failure f = it->second.front();
    it->second.pop_front();
    return f;
  }

  // as(user): every call goes to the fake with acting_ set for its duration.
  class AsUser final : public slurm::SlurmClient {
   public:
    AsUser(FakeSlurmClient& fake, std::string user) : fake_(fake), user_(std::move(user)) {}
    template <typename F>
    auto acting(F&& call) -> decltype(call()) {
      fake_.acting_ = user_;
      auto result = call();
      fake_.acting_.clear();
      return result;
    }
    slurm::SlurmResult<slurm::PingResult> ping() override {
      return acting([&] { return fake_.ping(); });
    }
    slurm::SlurmResult<slurm::SubmitReceipt> submit(const nlohmann::json& body) override {
      return acting([&] { return fake_.submit(body); });
    }
    slurm::SlurmResult<std::vector<slurm::JobRecord>> getJob(const std::string& job) override {
      return acting([&] { return fake_.getJob(job); });
    }
    slurm::SlurmResult<slurm::JobListing> listJobs(std::optional<int64_t> t) override {
      return acting([&] { return fake_.listJobs(t); });
    }
    slurm::SlurmResult<slurm::JobStateList> listJobStates(
        const std::vector<uint64_t>& ids) override {
      return acting([&] { return fake_.listJobStates(ids); });
    }
    slurm::SlurmStatus cancel(const std::string& sluid,
                              const std::optional<std::string>& signal) override {
      return acting([&] { return fake_.cancel(sluid, signal); });
    }
    slurm::SlurmResult<std::vector<slurm::PartitionInfo>> listPartitions() override {
      return acting([&] { return fake_.listPartitions(); });
    }
    slurm::SlurmResult<std::vector<slurm::NodeInfo>> listNodes() override {
      return acting([&] { return fake_.listNodes(); });
    }

   private:
    FakeSlurmClient& fake_;
    std::string user_;
  };

  std::string acting_;  // the user of the view a call came through; "" the fake itself
  std::map<std::string, std::unique_ptr<AsUser>> views_;
  std::vector<slurm::JobRecord> jobs_;
  std::vector<Call> calls_;
  std::map<Op, std::deque<Failure>> failures_;
  std::vector<std::string> cancel_state_ = {"CANCELLED"};
  uint64_t next_id_ = 100;
  std::string owner_ = test::currentUser();
  bool hide_states_ = false;
  std::vector<slurm::NodeInfo> node_list_;
  std::vector<nlohmann::json> submit_bodies_;
  uint64_t next_sluid_ = 1;
  int64_t next_submit_time_ = 1'700'000'000;
  int submit_copies_ = 1;
  std::vector<std::string> submit_state_ = {"PENDING"};
  std::string submit_reason_ = "None";
};

}  // namespace tuneplane::control::testing
