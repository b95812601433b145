// SlurmRestClient: the SlurmClient over slurmrestd's REST API (JWT auth), in the version
// RestClientOptions::api_version names, or — "auto" — the one it negotiates with the server
// before its first request (api_negotiation.h); what differs between versions is the
// version's SlurmApi (slurm_api.h), never a branch here. It adds the auth headers, refreshes the
// token once when the server refuses it, retries idempotent reads with bounded exponential backoff
// and jitter, never retries a submit, and turns every answer into typed records or a SlurmError
// (see rest_error.h). Time and randomness of the backoff are injected so tests never sleep.
// Thread-safety: all methods may be called from any thread; requests are serialised on the
// transport's one connection.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "catalog/site_config.h"
#include "http/transport.h"
#include "slurm/api_negotiation.h"
#include "slurm/identity_tokens.h"
#include "slurm/slurm_client.h"
#include "slurm/token_provider.h"

namespace tuneplane::slurm {

// Bounded exponential backoff for reads (GET) after a transport failure or a 5xx.
struct RetryPolicy {
  int max_attempts = 4;  // first try included; 1 disables retries
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
};

// The delay before retry number `retry` (0-based): half of min(max, initial·2^retry) plus a
// random share (`random01` in [0,1)) of the other half, so clients that failed together do
// not retry together. Pure.
std::chrono::milliseconds backoffDelay(const RetryPolicy& policy, int retry, double random01);

struct RestClientOptions {
  tuneplane::http::HttpOptions http;
  // A version TunePlane speaks (slurm_api.h), or "auto": negotiated at the first request.
  std::string api_version = "v0.0.45";
  std::string user;  // X-SLURM-USER-NAME; omitted when empty (the token's `sun` decides)
  RetryPolicy retry;
  std::function<double()> random;                        // [0,1); default: seeded PRNG
  std::function<void(std::chrono::milliseconds)> sleep;  // default: this_thread::sleep_for
  // Where as(user) gets each user's tokens (identity_tokens.h); null: this client has its
  // own identity only, and as() returns itself.
  std::shared_ptr<IdentityTokens> identities = nullptr;
};

RestClientOptions restClientOptionsFromSite(const catalog::SlurmSite& site);

class SlurmRestClient : public SlurmClient {
 public:
  SlurmRestClient(RestClientOptions options, std::unique_ptr<http::HttpTransport> transport,
                  std::unique_ptr<TokenProvider> tokens);
  // A client over libcurl. Errors: "slurm.config".
  static Result<std::unique_ptr<SlurmRestClient>> create(RestClientOptions options,
                                                         std::unique_ptr<TokenProvider> tokens);
  // A client for the site: its URL, TLS files, timeouts and token source.
  static Result<std::unique_ptr<SlurmRestClient>> fromSite(const catalog::SlurmSite& site,
                                                           UnixClock clock = systemUnixClock());

  // SlurmClient:
  SlurmResult<PingResult> ping() override;
  SlurmResult<SubmitReceipt> submit(const nlohmann::json& body) override;
  SlurmResult<std::vector<JobRecord>> getJob(const std::string& job) override;
  SlurmResult<JobListing> listJobs(std::optional<int64_t> update_time) override;
  SlurmResult<JobStateList> listJobStates(const std::vector<uint64_t>& job_ids) override;
  SlurmStatus cancel(const std::string& sluid, const std::optional<std::string>& signal) override;
  SlurmResult<std::vector<PartitionInfo>> listPartitions() override;
  SlurmResult<std::vector<NodeInfo>> listNodes() override;
  SlurmResult<ControllerConfig> controllerConfig() override;

  TokenProvider& tokens() { return *tokens_; }

  // A client for `user` (slurm_client.h) over this client's connection: X-SLURM-USER-NAME
  // names the user and the token is options.identities' for the user (SlurmUser's in proxy
  // mode, one minted for the user otherwise). It speaks the version this client negotiated.
  SlurmClient& as(const std::string& user) override;
  SlurmResult<std::vector<AccountingRun>> accountingRuns(uint64_t job_id) override {
    return readSlurmdbJob(*this, job_id);
  }

  // GET `path` (absolute, e.g. "/slurmdb/v0.0.45/jobs/?users=alice") with this client's auth,
  // retries and error handling, for readers of routes outside SlurmClient (slurmdbd's). The
  // answer's body as received (JSON text); HTTP errors and Slurm's `errors[]` are SlurmErrors
  // as for every other read. The REST API version is negotiated first (api() is then set).
  SlurmResult<std::string> readPath(const char* op, const std::string& path);

  // The REST API version this client speaks: the configured one, or with "auto" the one it
  // negotiates now (GET /openapi/v3, else a ping per version), once; a failed negotiation is
  // tried again by the next call. Errors: kErrNoCommonApi (the server speaks none of
  // TunePlane's; the message names what it offers), "slurm.config", or the request's error.
  SlurmResult<ApiChoice> negotiate();
  // The version chosen so far; nullptr until negotiate() succeeded.
  const SlurmApi* api() const { return api_.load(); }
  // The choice, once made (never changed after): nullptr before, and while negotiating.
  const ApiChoice* choice() const { return api_.load() != nullptr ? &choice_ : nullptr; }

  // Ids per /jobs/state/ request; longer lists are split (URL length).
  static constexpr size_t kMaxIdsPerStateQuery = 256;

 private:
  enum class RetryMode {
    kReads,        // GET: retry not_sent, unknown and 5xx
    kNotSentOnly,  // DELETE: a cancel that may have arrived is not repeated blindly
    kNever,        // submit: a second submit could start a second job
  };
  struct Exchange {
    http::HttpResponse response;  // the body as received; decoded in place (answer_decoder.h)
    std::string token;            // the one that was accepted; only to scrub it from errors
  };

  SlurmResult<Exchange> call(const char* op, const std::string& method, const std::string& path,
                             const std::string& body, RetryMode mode);
  // The version to speak, negotiated first when it is not yet; a failure is the calling
  // operation's, and says its request was never sent.
  SlurmResult<const SlurmApi*> ensureApi(const char* op);
  // The numeric id of the job whose SLUID is `sluid`, from the job listing: for a SLUID-only
  // key on a version whose paths take no SLUID. kErrJobNotFound when the listing lacks it.
  SlurmResult<uint64_t> numericIdOf(const SlurmApi& api, const char* op, const std::string& sluid);
  // GET <suffix> of `api`, retried as a read, its answer decoded by `decode` (an answer it
  // refuses is the operation's kRejected error). Defined in rest_operations.cc, its only user.
  template <typename Decode>
  auto readDecoded(const SlurmApi& api, const char* op, std::string_view suffix, Decode decode)
      -> SlurmResult<typename std::invoke_result_t<Decode, const std::string&>::value_type>;
  // GET /job/{path_id} decoded; the records keep the SLUIDs Slurm gave them.
  SlurmResult<std::vector<JobRecord>> readJob(const SlurmApi& api, const char* op,
                                              const std::string& path_id);

  // A view for as(): another identity on `transport`, sharing this client's version choice.
  SlurmRestClient(RestClientOptions options, std::shared_ptr<http::HttpTransport> transport,
                  std::unique_ptr<TokenProvider> tokens, const SlurmRestClient& parent);

  RestClientOptions options_;
  std::shared_ptr<http::HttpTransport> transport_;  // shared with the views as() made
  std::unique_ptr<TokenProvider> tokens_;
  // Set once, after choice_ is written (so a reader that sees it may read choice_ unlocked).
  std::atomic<const SlurmApi*> api_{nullptr};
  std::mutex negotiate_mu_;  // one negotiation at a time; guards choice_ until api_ is set
  ApiChoice choice_;
  std::mutex views_mu_;
  std::map<std::string, std::unique_ptr<SlurmRestClient>> views_;  // as(): one per user
};

}  // namespace tuneplane::slurm
