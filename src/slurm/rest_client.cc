// SlurmRestClient's making: its options from the site, the client and the views as() makes
// for other users, and the REST API version it speaks (configured, or negotiated once). One
// request is rest_call.cc's; the SlurmClient operations are rest_operations.cc's.
#include "slurm/rest_client.h"

#include <random>
#include <thread>

#include <spdlog/spdlog.h>

#include "slurm/answer_decoder.h"
#include "slurm/client_factory.h"

namespace tuneplane::slurm {

RestClientOptions restClientOptionsFromSite(const catalog::SlurmSite& site) {
  RestClientOptions options;
  options.http.base_url = site.url;
  options.http.ca_file = site.ca_file;
  options.http.client_cert = site.client_cert;
  options.http.client_key = site.client_key;
  options.http.connect_timeout = site.connect_timeout;
  options.http.request_timeout = site.request_timeout;
  options.api_version = site.api_version;
  options.user = site.user;
  return options;
}

SlurmRestClient::SlurmRestClient(RestClientOptions options,
                                 std::unique_ptr<http::HttpTransport> transport,
                                 std::unique_ptr<TokenProvider> tokens)
    : options_(std::move(options)), transport_(std::move(transport)), tokens_(std::move(tokens)) {
  if (!options_.random) {
    auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
    auto mu = std::make_shared<std::mutex>();
    options_.random = [engine, mu] {
      std::lock_guard lock(*mu);
      return std::uniform_real_distribution<double>(0.0, 1.0)(*engine);
    };
  }
  if (!options_.sleep) {
    options_.sleep = [](std::chrono::milliseconds d) { std::this_thread::sleep_for(d); };
  }
  if (options_.retry.max_attempts < 1) options_.retry.max_attempts = 1;
  if (options_.api_version != kAutoApiVersion) {
    const SlurmApi* api = findSlurmApi(options_.api_version);
    if (api != nullptr) {
      choice_ = ApiChoice{api, options_.api_version, {}, "", "slurm.api_version"};
      api_ = api;
    }
  }
}

SlurmRestClient::SlurmRestClient(RestClientOptions options,
                                 std::shared_ptr<http::HttpTransport> transport,
                                 std::unique_ptr<TokenProvider> tokens,
                                 const SlurmRestClient& parent)
    : options_(std::move(options)), transport_(std::move(transport)), tokens_(std::move(tokens)) {
  // The parent's version, once chosen; else the view negotiates as the parent would.
  if (const SlurmApi* api = parent.api_.load()) {
    choice_ = parent.choice_;
    api_ = api;
  }
}

SlurmClient& SlurmRestClient::as(const std::string& user) {
  if (user.empty() || !options_.identities || user == options_.user) return *this;
  std::lock_guard<std::mutex> lock(views_mu_);
  auto& slot = views_[user];
  if (!slot) {
    RestClientOptions view = options_;
    view.user = user;
    view.identities = nullptr;
    if (const SlurmApi* api = api_.load()) view.api_version = std::string(api->name);
    slot.reset(new SlurmRestClient(std::move(view), transport_,
                                   std::make_unique<BorrowedTokenProvider>(
                                       options_.identities->forUser(user), options_.identities),
                                   *this));
  }
  return *slot;
}

Result<std::unique_ptr<SlurmRestClient>> SlurmRestClient::create(
    RestClientOptions options, std::unique_ptr<TokenProvider> tokens) {
  auto transport = http::CurlHttpTransport::create(options.http);
  if (!transport) return fail(std::string(kErrConfig), "slurm.url", transport.error().message);
  return std::make_unique<SlurmRestClient>(std::move(options), std::move(*transport),
                                           std::move(tokens));
}

Result<std::unique_ptr<SlurmRestClient>> SlurmRestClient::fromSite(const catalog::SlurmSite& site,
                                                                   UnixClock clock) {
  auto factory = SlurmClientFactory::fromSite(site, std::move(clock));
  if (!factory) return tl::unexpected(factory.error());
  return factory->make();
}

SlurmResult<ApiChoice> SlurmRestClient::negotiate() {
  std::lock_guard lock(negotiate_mu_);
  if (api_.load() != nullptr) return choice_;
  if (options_.api_version != kAutoApiVersion) {
    auto chosen = chooseSlurmApi(options_.api_version, {options_.api_version});
    return slurmFail(makeSlurmError(chosen.error().code, chosen.error().field,
                                    chosen.error().message, TransportClass::kNotSent));
  }
  ApiChoice choice;
  choice.configured = options_.api_version;
  auto document = call("negotiate", "GET", "/openapi/v3", "", RetryMode::kReads);
  if (document) {
    auto offered = offeredApis(document->response.body);
    if (offered) {
      choice.offered = std::move(offered->versions);
      choice.release = std::move(offered->release);
      choice.how = "GET /openapi/v3";
    }
  } else if (document.error().http_status == 0 || document.error().error.code == kErrAuthFailed) {
    return slurmFail(document.error());  // nothing answered, or the token was refused
  }
  if (choice.offered.empty()) {
    // No OpenAPI document (an older slurmrestd, a proxy that hides it): a version's ping
    // route exists only when slurmrestd loaded its data parser.
    for (const SlurmApi* api : slurmApis()) {
      auto ping = call("negotiate", "GET", api->route("/ping/"), "", RetryMode::kReads);
      if (ping) {
        if (auto pinged = decodePing(ping->response.body)) {
          choice.offered.push_back(std::string(api->name));
          if (choice.release.empty()) choice.release = pinged->release;
        }
      } else if (ping.error().http_status != 404) {
        return slurmFail(ping.error());
      }
    }
    choice.how = "a ping per version";
  }
  auto chosen = chooseSlurmApi(choice.configured, choice.offered);
  if (!chosen) {
    SlurmError e =
        makeSlurmError(chosen.error().code, chosen.error().field,
                       "slurmrestd at " + options_.http.base_url + ": " + chosen.error().message,
                       TransportClass::kNotSent);
    spdlog::error("slurm: {}", e.error.message);
    return slurmFail(std::move(e));
  }
  choice.api = *chosen;
  choice_ = std::move(choice);
  api_ = choice_.api;
  spdlog::info("slurm: speaking {}", describeChoice(choice_));
  for (const Degradation& d : choice_.api->degradations) {
    spdlog::warn("slurm: REST API {}: {}: {}", choice_.api->name, d.what, d.instead);
  }
  return choice_;
}

SlurmResult<const SlurmApi*> SlurmRestClient::ensureApi(const char* op) {
  if (const SlurmApi* api = api_.load()) return api;
  auto chosen = negotiate();
  if (chosen) return chosen->api;
  // Whatever went wrong, this operation's own request was never sent.
  SlurmError e = chosen.error();
  e.transport = TransportClass::kNotSent;
  if (e.error.code != kErrAuthFailed && e.error.code != kErrTokenUnavailable &&
      e.error.code != kErrNoCommonApi && e.error.code != kErrConfig) {
    e.error.code = std::string(kErrNotSent);
  }
  e.error.field = op;
  e.error.message = "not sent: the REST API version is not negotiated yet: " + e.error.message;
  return slurmFail(std::move(e));
}

}  // namespace tuneplane::slurm
