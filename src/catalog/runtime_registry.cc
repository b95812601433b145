#include "catalog/runtime_registry.h"

namespace tuneplane::catalog {

const Runtime* RuntimeRegistry::find(const std::string& id) const {
  for (const Runtime& runtime : runtimes) {
    if (runtime.id == id) return &runtime;
  }
  return nullptr;
}

const char* toString(ArtifactFormat format) {
  switch (format) {
    case ArtifactFormat::kSqsh:
      return "sqsh";
    case ArtifactFormat::kSif:
      return "sif";
  }
  return "?";
}

}  // namespace tuneplane::catalog
