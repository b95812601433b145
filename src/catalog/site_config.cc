#include "catalog/site_config.h"

namespace tuneplane::catalog {

const GpuSeries* SiteConfig::findGpuSeries(const std::string& name) const {
  for (const GpuSeries& series : gpu_series) {
    if (series.name == name) return &series;
  }
  return nullptr;
}

const char* toString(ContainerRuntime runtime) {
  switch (runtime) {
    case ContainerRuntime::kPyxis:
      return "pyxis";
    case ContainerRuntime::kApptainer:
      return "apptainer";
  }
  return "?";
}

}  // namespace tuneplane::catalog
