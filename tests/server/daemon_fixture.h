// DaemonFixture: the Daemon (what `tuneplane serve` runs: reconciler on its loop, API server,
// readiness probe) against the in-process slurmrestd simulator (SimFixture), over a hermetic
// site (tests/pipeline/site_fixture.h) and SQLite in memory, polling every 100 ms; its HTTP
// client checks every answer against docs/openapi.json. A test starts it (startDaemon) with
// its own callers and logs; the helpers call as `caller_`. Jobs run for real in the
// simulator, so every wait is a bounded poll.
#pragma once

#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>

#include "../api/api_fixture.h"
#include "../pipeline/site_fixture.h"
#include "../sim/sim_test_support.h"
#include "server/daemon.h"
#include "store/sqlite_job_store.h"

namespace tuneplane::server::testing {

using namespace tuneplane::api::testing;  // the callers' tokens, json, cpuSpec, SiteDir

class DaemonFixture : public sim::testing::SimFixture {
 protected:
  // The site, the store, and the Daemon with `options` (the callers, the logs; the poll
  // interval is set here); the client on its port.
  void startDaemon(DaemonOptions options) {
    site_ = std::make_unique<SiteDir>(sim_->baseUrl());
    context_ = site_->context();
    auto opened = store::SqliteJobStore::open(store::SqliteJobStore::kInMemory);
    ASSERT_TRUE(opened);
    store_ = std::move(*opened);
    options.poll_interval = std::chrono::milliseconds(100);
    auto started = Daemon::start(context_, *store_, std::move(options));
    ASSERT_TRUE(started) << started.error().describe();
    daemon_ = std::move(*started);
    api_ = checkedClient(daemon_->port());
  }
  void TearDown() override {
    daemon_.reset();
    sim_.reset();  // kills the jobs before their attempt dirs go
  }

  static httplib::Headers as(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }
  json getJson(const std::string& path) { return getJson(path, caller_); }
  json getJson(const std::string& path, const std::string& token) {
    auto res = api_->Get(path.c_str(), as(token));
    return res ? json::parse(res->body, nullptr, false) : json();
  }
  // POST /v1/jobs of `spec`; the new job's id ("" and a failure when it is not accepted).
  std::string submit(const std::string& spec) {
    auto res = api_->Post("/v1/jobs", as(caller_), spec, "application/yaml");
    EXPECT_TRUE(res && res->status == 201) << (res ? res->body : "no answer");
    return res ? json::parse(res->body, nullptr, false).value("id", "") : "";
  }
  // Job `id`'s phase; "" when no job came back.
  std::string phase(const std::string& id) {
    const json job = getJson("/v1/jobs/" + id);
    return job.is_object() ? job.value("phase", "") : "";
  }
  bool waitForPhase(const std::string& id, const std::string& wanted,
                    std::chrono::milliseconds limit = std::chrono::seconds(30)) {
    const bool reached = tuneplane::test::waitUntil([&] { return phase(id) == wanted; }, limit);
    if (!reached) {
      ADD_FAILURE() << "job " << id << " is " << getJson("/v1/jobs/" + id).dump() << ", not "
                    << wanted;
    }
    return reached;
  }

  std::string caller_ = kAliceToken;  // whom the helpers call as
  std::unique_ptr<SiteDir> site_;
  pipeline::SiteContext context_;
  std::unique_ptr<store::SqliteJobStore> store_;
  std::unique_ptr<Daemon> daemon_;
  std::unique_ptr<httplib::Client> api_;
};

}  // namespace tuneplane::server::testing
