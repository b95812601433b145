#include <gtest/gtest.h>

#include <filesystem>

#include "catalog/site_loader.h"
#include "support/test_paths.h"
#include "support/yaml_aliases.h"
#include "temp_dir.h"

namespace tuneplane::catalog {
namespace {

using tuneplane::testing::TempDir;

const std::string kSha(64, 'a');

TEST(RuntimeRegistry, ReadsTheExample) {
  const auto reg = loadRuntimeRegistryFile((test::sourceDir() / "examples/runtimes.yaml").string());
  ASSERT_TRUE(reg.has_value()) << reg.error().front().describe();
  ASSERT_EQ(reg->runtimes.size(), 4u);
  const Runtime* lf = reg->find("llamafactory-0.9-cu124");
  ASSERT_NE(lf, nullptr);
  EXPECT_EQ(lf->format, ArtifactFormat::kSqsh);
  EXPECT_EQ(lf->path, "/shared/runtimes/llamafactory-0.9-cu124.sqsh");
  EXPECT_EQ(lf->frameworks, std::vector<std::string>{"llamafactory"});
  EXPECT_EQ(reg->find("llamafactory-0.9-cu124-sif")->format, ArtifactFormat::kSif);
  EXPECT_EQ(reg->find("nope"), nullptr);
}

TEST(RuntimeRegistry, JsonFormAndUpperCaseHashAndRelativePath) {
  TempDir dir;
  const std::string upper(64, 'A');
  const std::string path = dir.write(
      "reg.json", R"({"runtimes": [{"id": "custom-x", "format": "sif", "path": "img/x.sif",
                     "sha256": ")" +
                      upper + R"("}]})");
  const auto reg = loadRuntimeRegistryFile(path);
  ASSERT_TRUE(reg.has_value()) << reg.error().front().describe();
  EXPECT_EQ(reg->runtimes[0].path, dir.path() + "/img/x.sif");  // the registry's directory
  EXPECT_EQ(reg->runtimes[0].sha256, kSha);                     // normalised to lower case
  EXPECT_TRUE(reg->runtimes[0].frameworks.empty());
}

struct RegistryRow {
  const char* rule;
  std::string entry;  // one runtime entry, as a YAML flow map
  const char* code;
  const char* field;
};

TEST(RuntimeRegistry, EachRegistryRuleHasItsCodeAndField) {
  const std::string ok = "id: r1, format: sqsh, path: /r.sqsh, sha256: " + kSha;
  const std::vector<RegistryRow> rows = {
      {"missing id", "format: sqsh, path: /r.sqsh, sha256: " + kSha, "registry.missing_field",
       "runtimes[1].id"},
      {"bad id", "id: R 1, format: sqsh, path: /r.sqsh, sha256: " + kSha, "registry.invalid_name",
       "runtimes[1].id"},
      {"duplicate id", ok, "registry.duplicate_id", "runtimes[1].id"},
      {"bad format", "id: r2, format: oci, path: /r.sqsh, sha256: " + kSha,
       "registry.invalid_value", "runtimes[1].format"},
      {"short sha", "id: r2, format: sqsh, path: /r.sqsh, sha256: abc", "registry.invalid_sha256",
       "runtimes[1].sha256"},
      {"non-hex sha", "id: r2, format: sqsh, path: /r.sqsh, sha256: " + std::string(64, 'g'),
       "registry.invalid_sha256", "runtimes[1].sha256"},
      {"relative path from text", "id: r2, format: sqsh, path: r.sqsh, sha256: " + kSha,
       "registry.invalid_path", "runtimes[1].path"},
      {"unknown key", "id: r2, format: sqsh, path: /r.sqsh, sha256: " + kSha + ", size: 3",
       "registry.unknown_field", "runtimes[1].size"},
      {"frameworks not a list",
       "id: r2, format: sqsh, path: /r.sqsh, frameworks: x, sha256: " + kSha, "registry.wrong_type",
       "runtimes[1].frameworks"},
  };
  for (const RegistryRow& row : rows) {
    SCOPED_TRACE(row.rule);
    const auto reg = parseRuntimeRegistry("runtimes:\n  - {" + ok + "}\n  - {" + row.entry + "}\n");
    ASSERT_FALSE(reg.has_value());
    ASSERT_EQ(reg.error().size(), 1u) << reg.error()[0].describe();
    EXPECT_EQ(reg.error()[0].code, row.code) << reg.error()[0].describe();
    EXPECT_EQ(reg.error()[0].field, row.field);
  }
  const auto missing = parseRuntimeRegistry("other: []\n");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().size(), 2u);  // unknown "other", missing "runtimes"
}

TEST(RuntimeRegistry, AliasesAreMeasuredExpandedBeforeTheRegistryIsLoaded) {
  // An anchored 1,000,000-byte path aliased four more times: over 4 MiB at the fourth alias.
  const std::string entry = "{id: r1, format: sqsh, sha256: " + kSha + ", path: ";
  const auto text = parseRuntimeRegistry(
      "runtimes:\n  - " + entry + "&p /" + std::string(999999, 'p') + "}\n  - " + entry + "*p}\n" +
      "  - " + entry + "*p}\n  - " + entry + "*p}\n  - " + entry + "*p}\n");
  ASSERT_FALSE(text.has_value());
  ASSERT_EQ(text.error().size(), 1u);
  EXPECT_EQ(text.error()[0].code, "registry.document_too_large");
  EXPECT_EQ(text.error()[0].field, "runtimes[4].path");
  // Ten levels of ten aliases each: refused by the count of values, not walked.
  const auto values = parseRuntimeRegistry(test::nestedAliases() + "runtimes: []\n");
  ASSERT_FALSE(values.has_value());
  ASSERT_EQ(values.error().size(), 1u);
  EXPECT_EQ(values.error()[0].code, "registry.too_many_values");
  // Within the limits an alias reads as its anchor.
  const auto shared =
      parseRuntimeRegistry("runtimes:\n  - {id: r1, format: sqsh, path: /r1, sha256: &s " + kSha +
                           "}\n  - {id: r2, format: sqsh, path: /r2, sha256: *s}\n");
  ASSERT_TRUE(shared.has_value()) << shared.error()[0].describe();
  EXPECT_EQ(shared->runtimes.at(1).sha256, kSha);
}

}  // namespace
}  // namespace tuneplane::catalog
