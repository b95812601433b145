#include "catalog/site_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_paths.h"
#include "support/yaml_aliases.h"
#include "temp_dir.h"

namespace tuneplane::catalog {
namespace {

using ::testing::HasSubstr;
using tuneplane::testing::TempDir;

constexpr const char* kMinimalSite = R"(slurm:
  url: http://127.0.0.1:6820
  user: tp
  token_file: /etc/tp/token
container_runtime: pyxis
staging_root: /shared/attempts
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "test bug: '" << from << "' not in the base text";
    return text;
  }
  return text.replace(at, from.size(), to);
}

std::string examples(const std::string& name) {
  return (test::sourceDir() / "examples" / name).string();
}

TEST(SiteLoader, ReadsThePyxisExampleCompletely) {
  const auto site = loadSiteConfigFile(examples("site.yaml"));
  ASSERT_TRUE(site.has_value()) << site.error().front().describe();
  EXPECT_EQ(site->slurm.url, "https://slurm-rest.example.org:6820");
  EXPECT_EQ(site->slurm.api_version, "auto");
  EXPECT_EQ(site->slurm.user, "tuneplane");
  // A token for slurm.user on serve's host, not the cluster's key on the shared filesystem.
  EXPECT_EQ(site->slurm.token_file, "/etc/tuneplane/slurm.jwt");
  EXPECT_EQ(site->slurm.jwt_key_file, std::nullopt);
  EXPECT_FALSE(site->slurm.accept_exposed_credentials);
  EXPECT_EQ(site->slurm.account, "ml-research");
  EXPECT_EQ(site->slurm.qos, "normal");
  EXPECT_EQ(site->slurm.job_environment.at("PATH"), "/usr/local/bin:/usr/bin:/bin");
  EXPECT_EQ(site->slurm.connect_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(site->slurm.request_timeout, std::chrono::milliseconds(30000));
  EXPECT_EQ(site->partitions.gpu, "gpu");
  EXPECT_EQ(site->partitions.cpu, "cpu");
  ASSERT_EQ(site->gpu_series.size(), 3u);
  EXPECT_EQ(site->gpu_series[1].slurm_constraint, "a100&ib");
  EXPECT_EQ(site->gpu_series[1].gpus_per_node, 4);
  EXPECT_EQ(site->gpu_series[1].gres_type, "a100");
  EXPECT_EQ(site->gpu_series[2].slurm_constraint, std::nullopt);  // legal here
  EXPECT_EQ(site->container_runtime, ContainerRuntime::kPyxis);
  EXPECT_EQ(site->staging_root, "/shared/tuneplane/attempts");
  ASSERT_EQ(site->mounts.size(), 2u);
  EXPECT_EQ(site->mounts[0].source, "/shared/datasets");
  EXPECT_EQ(site->mounts[0].target, "/datasets");
  EXPECT_TRUE(site->mounts[0].read_only);
  // Relative to the site file's directory, not the working directory.
  EXPECT_EQ(site->runtime_registry_file, examples("runtimes.yaml"));
  EXPECT_FALSE(site->ray.pinsPorts());  // the example pins no Ray port: jobs may share nodes
  EXPECT_FALSE(site->ray.dashboard);
  EXPECT_EQ(site->ray.join_timeout_seconds, 300);
  ASSERT_NE(site->findGpuSeries("h100"), nullptr);
  EXPECT_EQ(site->findGpuSeries("h100")->slurm_constraint, "h100");
  EXPECT_EQ(site->findGpuSeries("v100"), nullptr);
}

TEST(SiteLoader, ReadsTheApptainerExample) {
  const auto site = loadSiteConfigFile(examples("site-apptainer.yaml"));
  ASSERT_TRUE(site.has_value()) << site.error().front().describe();
  EXPECT_EQ(site->container_runtime, ContainerRuntime::kApptainer);
  EXPECT_EQ(site->slurm.url, "unix:///run/slurmrestd/slurmrestd.socket");
  EXPECT_EQ(site->slurm.token_file, "/etc/tuneplane/slurm.jwt");
  EXPECT_EQ(site->partitions.cpu, "batch");
  EXPECT_TRUE(site->slurm.job_environment.empty());
}

TEST(SiteLoader, AcceptingExposedCredentialsIsAnExplicitBoolean) {
  const std::string with =
      replaced(kMinimalSite, "token_file: /etc/tp/token",
               "token_file: /etc/tp/token\n  accept_exposed_credentials: true");
  const auto accepted = parseSiteConfig(with);
  ASSERT_TRUE(accepted) << accepted.error().front().describe();
  EXPECT_TRUE(accepted->slurm.accept_exposed_credentials);
  const auto bad = parseSiteConfig(
      replaced(with, "accept_exposed_credentials: true", "accept_exposed_credentials: please"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().front().field, "slurm.accept_exposed_credentials");
}

TEST(SiteLoader, PreemptionWarningIsOnByDefaultAndCanBeTurnedOffOrSet) {
  const auto defaults = parseSiteConfig(kMinimalSite);
  ASSERT_TRUE(defaults);
  EXPECT_TRUE(defaults->slurm.preemption_warning.enabled);
  EXPECT_EQ(defaults->slurm.preemption_warning.signal, "USR2");
  EXPECT_EQ(defaults->slurm.preemption_warning.before_end, std::chrono::seconds(120));
  const auto with = [](const std::string& value) {
    return parseSiteConfig(replaced(kMinimalSite, "token_file: /etc/tp/token",
                                    "token_file: /etc/tp/token\n  preemption_warning: " + value));
  };
  const auto set = with("{signal: HUP, before_end: 5m}");
  ASSERT_TRUE(set) << set.error().front().describe();
  EXPECT_TRUE(set->slurm.preemption_warning.enabled);
  EXPECT_EQ(set->slurm.preemption_warning.signal, "HUP");
  EXPECT_EQ(set->slurm.preemption_warning.before_end, std::chrono::seconds(300));
  const auto seconds = with("{before_end: 45}");
  ASSERT_TRUE(seconds);
  EXPECT_TRUE(seconds->slurm.preemption_warning.enabled);
  EXPECT_EQ(seconds->slurm.preemption_warning.signal, "USR2");
  EXPECT_EQ(seconds->slurm.preemption_warning.before_end, std::chrono::seconds(45));
  const auto on = with("on");
  ASSERT_TRUE(on);
  EXPECT_TRUE(on->slurm.preemption_warning.enabled);
  EXPECT_EQ(on->slurm.preemption_warning.signal, "USR2");
  EXPECT_EQ(on->slurm.preemption_warning.before_end, std::chrono::seconds(120));
  const auto off = with("off");
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->slurm.preemption_warning.enabled);
}

TEST(SiteLoader, IdentityIsSharedUnlessTheSiteSaysPerUser) {
  const auto shared = parseSiteConfig(kMinimalSite);
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->slurm.identity, IdentityMode::kShared);
  const std::string per_user = replaced(kMinimalSite, "token_file: /etc/tp/token",
                                        "token_file: /etc/tp/token\n  identity: per_user");
  const auto parsed = parseSiteConfig(per_user);
  ASSERT_TRUE(parsed) << parsed.error().front().describe();
  EXPECT_EQ(parsed->slurm.identity, IdentityMode::kPerUser);
  const auto bad = parseSiteConfig(replaced(per_user, "per_user", "everyone"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().front().field, "slurm.identity");
  EXPECT_NE(bad.error().front().message.find("shared"), std::string::npos);
}

TEST(SiteLoader, DefaultsForOptionalSections) {
  const auto site = parseSiteConfig(kMinimalSite);
  ASSERT_TRUE(site.has_value()) << site.error().front().describe();
  EXPECT_EQ(site->partitions.gpu, "gpu");
  EXPECT_FALSE(site->ray.port.has_value());  // chosen free at run time
  EXPECT_FALSE(site->ray.pinsPorts());
  EXPECT_FALSE(site->ray.dashboard);
  EXPECT_TRUE(site->gpu_series.empty());
  EXPECT_EQ(site->slurm.token_lifespan, std::chrono::seconds(1800));
  EXPECT_EQ(site->default_time_limit, std::nullopt);  // the partition's default applies
}

TEST(SiteLoader, AllowedPartitionsAreOptionalAndListTheNamesAPoolMayGive) {
  const auto unlisted = parseSiteConfig(kMinimalSite);
  ASSERT_TRUE(unlisted.has_value());
  EXPECT_EQ(unlisted->partitions.allowed, std::nullopt);
  EXPECT_TRUE(unlisted->partitions.accepts("anything"));  // left to Slurm
  EXPECT_TRUE(unlisted->partitions.known().empty());

  const auto listed = parseSiteConfig(std::string(kMinimalSite) +
                                      "partitions:\n  gpu: gpu\n  cpu: batch\n"
                                      "  allowed: [gpu-large, debug, debug]\n");
  ASSERT_TRUE(listed.has_value()) << listed.error().front().describe();
  EXPECT_EQ(listed->partitions.allowed, (std::vector<std::string>{"gpu-large", "debug"}));
  EXPECT_TRUE(listed->partitions.accepts("batch"));  // a default is always allowed
  EXPECT_TRUE(listed->partitions.accepts("debug"));
  EXPECT_FALSE(listed->partitions.accepts("gpu-larg"));
  EXPECT_EQ(listed->partitions.known(),
            (std::vector<std::string>{"gpu", "batch", "gpu-large", "debug"}));

  const auto wrong =
      parseSiteConfig(std::string(kMinimalSite) + "partitions:\n  allowed: gpu-large\n");
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().front().field, "partitions.allowed");
}

TEST(SiteLoader, DefaultTimeLimitIsADurationLikeTheSpecs) {
  for (const auto& [text, minutes] : std::vector<std::pair<std::string, int>>{
           {"90m", 90}, {"4h", 240}, {"1d", 1440}, {"1h30m", 90}}) {
    SCOPED_TRACE(text);
    const auto site = parseSiteConfig(std::string(kMinimalSite) + "default_time_limit: " + text);
    ASSERT_TRUE(site.has_value()) << site.error().front().describe();
    EXPECT_EQ(site->default_time_limit, std::chrono::minutes(minutes));
  }
  const auto unset = parseSiteConfig(std::string(kMinimalSite) + "default_time_limit: ~\n");
  ASSERT_TRUE(unset.has_value());
  EXPECT_EQ(unset->default_time_limit, std::nullopt);
}

TEST(SiteLoader, RelativePathsResolveAgainstTheSiteFilesDirectory) {
  TempDir dir;
  const std::string text = replaced(kMinimalSite, "token_file: /etc/tp/token",
                                    "token_file: secrets/token\n  ca_file: ../ca.pem") +
                           "runtime_registry_file: runtimes.json\n";
  const auto site = loadSiteConfigFile(dir.write("site.yaml", text));
  ASSERT_TRUE(site.has_value()) << site.error().front().describe();
  EXPECT_EQ(site->slurm.token_file, dir.path() + "/secrets/token");
  EXPECT_EQ(site->slurm.ca_file,
            std::filesystem::path(dir.path()).parent_path().string() + "/ca.pem");
  EXPECT_EQ(site->runtime_registry_file, dir.path() + "/runtimes.json");
  // Without a file there is no directory to resolve against: refused, not guessed.
  const auto from_text = parseSiteConfig(text);
  ASSERT_FALSE(from_text.has_value());
  EXPECT_EQ(from_text.error()[0].code, "site.invalid_path");
}

TEST(SiteLoader, TokenLifespanTakesSecondsOrADuration) {
  auto seconds = parseSiteConfig(replaced(kMinimalSite, "token_file: /etc/tp/token",
                                          "jwt_key_file: /k\n  token_lifespan: 600"));
  ASSERT_TRUE(seconds.has_value());
  EXPECT_EQ(seconds->slurm.token_lifespan, std::chrono::seconds(600));
  auto text = parseSiteConfig(replaced(kMinimalSite, "token_file: /etc/tp/token",
                                       "jwt_key_file: /k\n  token_lifespan: 1h"));
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->slurm.token_lifespan, std::chrono::seconds(3600));
}

struct SiteRow {
  const char* rule;
  std::string text;
  const char* code;
  const char* field;
};

std::vector<SiteRow> siteRows() {
  const std::string m = kMinimalSite;
  auto r = [&](const std::string& from, const std::string& to) { return replaced(m, from, to); };
  return {
      {"not yaml", "slurm: {", "site.parse_error", ""},
      {"unknown key", m + "colour: blue\n", "site.unknown_field", "colour"},
      {"missing slurm",
       r("slurm:\n  url: http://127.0.0.1:6820\n  user: tp\n  token_file: /etc/tp/token\n", ""),
       "site.missing_field", "slurm"},
      {"missing url", r("  url: http://127.0.0.1:6820\n", ""), "site.missing_field", "slurm.url"},
      {"bad url", r("http://127.0.0.1:6820", "ftp://x"), "site.invalid_url", "slurm.url"},
      {"api version of another form", r("  user: tp", "  user: tp\n  api_version: latest"),
       "site.unsupported_api_version", "slurm.api_version"},
      {"both token sources", r("  user: tp", "  user: tp\n  jwt_key_file: /k"),
       "site.conflicting_fields", "slurm.jwt_key_file"},
      {"no token source", r("  token_file: /etc/tp/token\n", ""), "site.missing_field",
       "slurm.token_file"},
      {"bad lifespan", r("  user: tp", "  user: tp\n  token_lifespan: soon"),
       "site.invalid_duration", "slurm.token_lifespan"},
      {"zero timeout", r("  user: tp", "  user: tp\n  connect_timeout: 0"), "site.invalid_duration",
       "slurm.connect_timeout"},
      {"cert without key", r("  user: tp", "  user: tp\n  client_cert: /c"), "site.missing_field",
       "slurm.client_key"},
      {"bad job_environment name", r("  user: tp", "  user: tp\n  job_environment: {A-B: x}"),
       "site.invalid_name", "slurm.job_environment.A-B"},
      {"missing container_runtime", r("container_runtime: pyxis\n", ""), "site.missing_field",
       "container_runtime"},
      {"other container runtime", r("runtime: pyxis", "runtime: docker"), "site.invalid_value",
       "container_runtime"},
      {"relative staging root", r("/shared/attempts", "shared/attempts"), "site.invalid_path",
       "staging_root"},
      {"mount source relative", m + "mounts: [{source: data, target: /data}]\n",
       "site.invalid_path", "mounts[0].source"},
      {"mount with comma", m + "mounts: [{source: '/a,b', target: /data}]\n", "site.invalid_path",
       "mounts[0].source"},
      {"mount with colon", m + "mounts: [{source: /a, target: /d:ro}]\n", "site.invalid_path",
       "mounts[0].target"},
      {"mount with ..", m + "mounts: [{source: /a/../etc, target: /d}]\n", "site.invalid_path",
       "mounts[0].source"},
      {"mount read_only not bool", m + "mounts: [{source: /a, target: /d, read_only: maybe}]\n",
       "site.wrong_type", "mounts[0].read_only"},
      {"series without gpus_per_node", m + "gpu_series: [{name: h100, slurm_constraint: h100}]\n",
       "site.missing_field", "gpu_series[0].gpus_per_node"},
      {"series zero gpus", m + "gpu_series: [{name: h100, gpus_per_node: 0}]\n",
       "site.non_positive", "gpu_series[0].gpus_per_node"},
      {"series named twice",
       m + "gpu_series: [{name: h100, gpus_per_node: 8}, {name: h100, gpus_per_node: 4}]\n",
       "site.duplicate_name", "gpu_series[1].name"},
      {"empty constraint",
       m + "gpu_series: [{name: h100, gpus_per_node: 8, slurm_constraint: ''}]\n",
       "site.invalid_value", "gpu_series[0].slurm_constraint"},
      {"gres type with colon",
       m + "gpu_series: [{name: h100, gpus_per_node: 8, gres_type: 'a:b'}]\n", "site.invalid_name",
       "gpu_series[0].gres_type"},
      {"port out of range", m + "ray: {port: 70000}\n", "site.invalid_port", "ray.port"},
      {"worker ports reversed", m + "ray: {min_worker_port: 2000, max_worker_port: 1500}\n",
       "site.invalid_port", "ray.max_worker_port"},
      {"worker range of one port", m + "ray: {min_worker_port: 2000, max_worker_port: 2000}\n",
       "site.invalid_port", "ray.max_worker_port"},
      {"worker port below 1024", m + "ray: {min_worker_port: 1000, max_worker_port: 2000}\n",
       "site.invalid_port", "ray.min_worker_port"},
      {"min worker port alone", m + "ray: {min_worker_port: 20000}\n", "site.missing_field",
       "ray.max_worker_port"},
      {"client server port below 1024", m + "ray: {ray_client_server_port: 80}\n",
       "site.invalid_port", "ray.ray_client_server_port"},
      {"two pinned ports equal", m + "ray: {port: 6379, node_manager_port: 6379}\n",
       "site.invalid_port", "ray.node_manager_port"},
      {"pinned port in the worker range",
       m + "ray: {object_manager_port: 20001, min_worker_port: 20000, max_worker_port: 20999}\n",
       "site.invalid_port", "ray.object_manager_port"},
      {"dashboard port with the dashboard off", m + "ray: {dashboard_port: 8265}\n",
       "site.conflicting_fields", "ray.dashboard_port"},
      {"dashboard not a bool", m + "ray: {dashboard: sometimes}\n", "site.wrong_type",
       "ray.dashboard"},
      {"zero join timeout", m + "ray: {join_timeout_seconds: 0}\n", "site.non_positive",
       "ray.join_timeout_seconds"},
      {"NUL in user", r("user: tp", "user: \"t\\0p\""), "site.nul_byte", "slurm.user"},
      {"staging not a map", m + "staging: tpjobs\n", "site.wrong_type", "staging"},
      {"unknown staging key", m + "staging: {mode: shared}\n", "site.unknown_field",
       "staging.mode"},
      {"empty staging group", m + "staging: {group: ''}\n", "site.invalid_value", "staging.group"},
      {"staging group with colon", m + "staging: {group: 'a:b'}\n", "site.invalid_name",
       "staging.group"},
      {"numeric staging group", m + "staging: {group: 1234}\n", "site.wrong_type", "staging.group"},
      {"preemption warning neither off nor a map",
       r("user: tp", "user: tp\n  preemption_warning: later"), "site.invalid_value",
       "slurm.preemption_warning"},
      {"preemption warning signal unknown",
       r("user: tp", "user: tp\n  preemption_warning: {signal: KILL}"), "site.invalid_value",
       "slurm.preemption_warning.signal"},
      // TunePlane stops Ray's node launchers and srun's tasks with these: a warning must not.
      {"preemption warning signal TunePlane stops steps with",
       r("user: tp", "user: tp\n  preemption_warning: {signal: USR1}"), "site.invalid_value",
       "slurm.preemption_warning.signal"},
      {"preemption warning signal TERM",
       r("user: tp", "user: tp\n  preemption_warning: {signal: TERM}"), "site.invalid_value",
       "slurm.preemption_warning.signal"},
      {"preemption warning signal with a quote",
       r("user: tp", "user: tp\n  preemption_warning: {signal: \"USR2'\"}"), "site.invalid_value",
       "slurm.preemption_warning.signal"},
      {"preemption warning over 16 bits",
       r("user: tp", "user: tp\n  preemption_warning: {before_end: 65536}"),
       "site.invalid_duration", "slurm.preemption_warning.before_end"},
      {"preemption warning not whole seconds",
       r("user: tp", "user: tp\n  preemption_warning: {before_end: 1500ms}"),
       "site.invalid_duration", "slurm.preemption_warning.before_end"},
      {"preemption warning unknown key",
       r("user: tp", "user: tp\n  preemption_warning: {lead: 60}"), "site.unknown_field",
       "slurm.preemption_warning.lead"},
      {"default_time_limit without unit", m + "default_time_limit: 90\n", "site.invalid_duration",
       "default_time_limit"},
      {"default_time_limit in seconds", m + "default_time_limit: 90s\n", "site.invalid_duration",
       "default_time_limit"},
      {"default_time_limit zero", m + "default_time_limit: 0m\n", "site.invalid_duration",
       "default_time_limit"},
      {"default_time_limit a list", m + "default_time_limit: [1h]\n", "site.wrong_type",
       "default_time_limit"},
      // Measured with aliases expanded before the file is loaded (spec/document_measure.h):
      // 4 MiB of text and 65,536 values.
      {"text over 4 MiB once aliases are expanded",
       m + "x: &a " + std::string(1000000, 'x') + "\ny: [*a, *a, *a, *a]\n",
       "site.document_too_large", "y[3]"},
      {"nested aliases over 65,536 values", test::nestedAliases() + m, "site.too_many_values",
       "x4[4]"},
  };
}

TEST(SiteLoader, EachSiteRuleHasItsCodeAndField) {
  for (const SiteRow& row : siteRows()) {
    SCOPED_TRACE(row.rule);
    const auto site = parseSiteConfig(row.text);
    ASSERT_FALSE(site.has_value());
    ASSERT_EQ(site.error().size(), 1u)
        << site.error()[0].describe() << " / " << site.error().back().describe();
    EXPECT_EQ(site.error()[0].code, row.code) << site.error()[0].describe();
    EXPECT_EQ(site.error()[0].field, row.field) << site.error()[0].describe();
  }
}

TEST(SiteLoader, StagingGroupIsOptional) {
  auto without = parseSiteConfig(kMinimalSite);
  ASSERT_TRUE(without.has_value()) << without.error().front().describe();
  EXPECT_EQ(without->staging.group, std::nullopt);
  auto with = parseSiteConfig(std::string(kMinimalSite) + "staging:\n  group: domain users\n");
  ASSERT_TRUE(with.has_value()) << with.error().front().describe();
  EXPECT_EQ(with->staging.group, "domain users");
}

TEST(SiteLoader, ReadsPinnedRayPorts) {
  const auto site = parseSiteConfig(std::string(kMinimalSite) +
                                    "ray:\n  port: 6379\n  node_manager_port: 6800\n"
                                    "  object_manager_port: 6801\n  min_worker_port: 10002\n"
                                    "  max_worker_port: 10999\n  ray_client_server_port: 10001\n"
                                    "  dashboard_agent_listen_port: 52365\n  dashboard: true\n"
                                    "  dashboard_port: 8265\n");
  ASSERT_TRUE(site.has_value()) << site.error().front().describe();
  EXPECT_EQ(site->ray.port, 6379);
  EXPECT_EQ(site->ray.max_worker_port, 10999);
  EXPECT_EQ(site->ray.ray_client_server_port, 10001);
  EXPECT_EQ(site->ray.dashboard_agent_listen_port, 52365);
  EXPECT_TRUE(site->ray.dashboard);
  EXPECT_EQ(site->ray.dashboard_port, 8265);
  EXPECT_TRUE(site->ray.pinsPorts());
  EXPECT_EQ(site->ray.pinnedPorts().size(), 8u);
}

TEST(SiteLoader, DashboardWithoutAPinnedPortPinsNothing) {
  const auto site = parseSiteConfig(std::string(kMinimalSite) + "ray: {dashboard: true}\n");
  ASSERT_TRUE(site.has_value()) << site.error().front().describe();
  EXPECT_TRUE(site->ray.dashboard);
  EXPECT_FALSE(site->ray.pinsPorts());
}

TEST(SiteLoader, ReportsEveryErrorInOnePass) {
  const auto site = parseSiteConfig(
      "slurm: {url: x, user: u}\ncontainer_runtime: docker\n"
      "staging_root: rel\nextra: 1\n");
  ASSERT_FALSE(site.has_value());
  EXPECT_EQ(site.error().size(), 5u);  // url, token source, runtime, staging_root, extra
}

TEST(SiteLoader, MissingFile) {
  const auto site = loadSiteConfigFile("/nonexistent/site.yaml");
  ASSERT_FALSE(site.has_value());
  EXPECT_EQ(site.error()[0].code, "site.unreadable_file");
}

TEST(SitePaths, RegistryPathPrefersTheEnvironment) {
  SiteConfig site;
  site.runtime_registry_file = "/site/runtimes.yaml";
  EXPECT_EQ(registryPath(site, std::string("/env/r.yaml")).value(), "/env/r.yaml");
  EXPECT_EQ(registryPath(site, std::string("")).value(), "/site/runtimes.yaml");
  EXPECT_EQ(registryPath(site, std::nullopt).value(), "/site/runtimes.yaml");
  site.runtime_registry_file.reset();
  const auto none = registryPath(site, std::nullopt);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, "site.no_runtime_registry");
}

TEST(SitePaths, SiteFilePathPrefersTheFlag) {
  EXPECT_EQ(siteFilePath(std::string("/flag.yaml"), std::string("/env.yaml")).value(),
            "/flag.yaml");
  EXPECT_EQ(siteFilePath(std::nullopt, std::string("/env.yaml")).value(), "/env.yaml");
  const auto none = siteFilePath(std::nullopt, std::string(""));
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, "site.no_site_file");
  EXPECT_THAT(none.error().message, HasSubstr("TUNEPLANE_SITE_FILE"));
}

}  // namespace
}  // namespace tuneplane::catalog
