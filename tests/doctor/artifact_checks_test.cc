// The registry and each artifact, judged from verification results.
#include "doctor/artifact_checks.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace tuneplane::doctor {
namespace {

using catalog::ContainerRuntime;
using testing::contains;

ArtifactFacts artifact(Status verified,
                       catalog::ArtifactFormat format = catalog::ArtifactFormat::kSqsh) {
  ArtifactFacts f;
  f.runtime = {
      "custom-torch-2.4", format, "/shared/runtimes/torch.sqsh", std::string(64, 'a'), {"custom"}};
  f.verified = std::move(verified);
  f.size_bytes = uint64_t{3} << 30;
  return f;
}

TEST(ArtifactChecksTest, Artifacts) {
  ArtifactFacts mismatch = artifact(fail("artifact.sha256_mismatch", "", "SHA-256 is bbbb…"));
  mismatch.actual_sha256 = std::string(64, 'b');
  struct Row {
    const char* name;
    ArtifactFacts facts;
    ContainerRuntime runtime;
    CheckStatus status;
    const char* says;
    const char* fix;
  };
  const Row rows[] = {
      {"verified", artifact(ok()), ContainerRuntime::kPyxis, CheckStatus::kOk,
       "runtime 'custom-torch-2.4' (/shared/runtimes/torch.sqsh, 3.0 GiB) matches the registry's "
       "SHA-256",
       ""},
      {"format the site cannot start", artifact(ok()), ContainerRuntime::kApptainer,
       CheckStatus::kWarn, "it is sqsh and this site runs apptainer", "publish a sif image"},
      {"missing",
       artifact(fail("artifact.missing", "", "/shared/runtimes/torch.sqsh: no such file")),
       ContainerRuntime::kPyxis, CheckStatus::kFail, "[artifact.missing]",
       "publish the image at /shared/runtimes/torch.sqsh"},
      {"tampered", mismatch, ContainerRuntime::kPyxis, CheckStatus::kFail,
       "[artifact.sha256_mismatch]", "set sha256 of runtime 'custom-torch-2.4' to bbbbbbbb"},
      {"a directory", artifact(fail("artifact.not_regular_file", "", "not a regular file")),
       ContainerRuntime::kPyxis, CheckStatus::kFail, "not a regular file", "image file itself"},
      {"unreadable", artifact(fail("artifact.unreadable", "", "Permission denied")),
       ContainerRuntime::kPyxis, CheckStatus::kFail, "Permission denied", "readable"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const CheckResult r = checkArtifact(row.facts, row.runtime);
    EXPECT_EQ(r.name, "artifact/custom-torch-2.4");
    EXPECT_EQ(toString(r.status), std::string(toString(row.status))) << r.message;
    EXPECT_TRUE(contains(r.message, row.says)) << r.message;
    EXPECT_TRUE(contains(r.fix, row.fix)) << r.fix;
  }
}

TEST(ArtifactChecksTest, Registry) {
  catalog::RuntimeRegistry two;
  two.runtimes.resize(2);
  const CheckResult loaded = checkRegistry("/etc/tp/runtimes.yaml", two);
  EXPECT_EQ(loaded.status, CheckStatus::kOk);
  EXPECT_TRUE(contains(loaded.message, "lists 2 runtimes")) << loaded.message;

  const CheckResult empty = checkRegistry("/etc/tp/runtimes.yaml", catalog::RuntimeRegistry{});
  EXPECT_EQ(empty.status, CheckStatus::kWarn);

  const CheckResult broken = checkRegistry(
      "/etc/tp/runtimes.yaml",
      failAll({Error{"registry.invalid_sha256", "runtimes[0].sha256", "not 64 hex digits"}}));
  EXPECT_EQ(broken.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(broken.message, "[registry.invalid_sha256]")) << broken.message;

  const CheckResult none = checkRegistry(
      "", failAll({Error{"site.no_runtime_registry", "runtime_registry_file", "no registry"}}));
  EXPECT_EQ(none.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(none.fix, "TUNEPLANE_RUNTIME_REGISTRY_FILE")) << none.fix;
}

}  // namespace
}  // namespace tuneplane::doctor
