// The runtime registry: runtime id → a published SQSH (Pyxis) or SIF (Apptainer) image
// file and its SHA-256. Ids of user-built runtimes start with "custom-". Read from YAML or
// JSON by runtime_registry_parser.h.
#pragma once

#include <string>
#include <vector>

namespace tuneplane::catalog {

enum class ArtifactFormat {
  kSqsh,  // squashfs image for Enroot/Pyxis
  kSif,   // Singularity image format for Apptainer
};

inline constexpr const char* kCustomRuntimePrefix = "custom-";

struct Runtime {
  std::string id;
  ArtifactFormat format = ArtifactFormat::kSqsh;
  std::string path;                     // absolute path on the shared filesystem
  std::string sha256;                   // 64 lower-case hex digits
  std::vector<std::string> frameworks;  // framework names it may run
};

struct RuntimeRegistry {
  std::vector<Runtime> runtimes;

  const Runtime* find(const std::string& id) const;  // nullptr when unknown
};

const char* toString(ArtifactFormat format);

}  // namespace tuneplane::catalog
