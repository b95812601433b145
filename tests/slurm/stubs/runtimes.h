// Both container runtimes, as the parameter of the tests that run rendered scripts
// (tests/slurm/*_test.cc): INSTANTIATE_TEST_SUITE_P(Runtimes, Suite, bothRuntimes(),
// runtimeName) names the cases …/Pyxis and …/Apptainer.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "catalog/site_config.h"

namespace tuneplane::slurm {

inline auto bothRuntimes() {
  return ::testing::Values(catalog::ContainerRuntime::kPyxis,
                           catalog::ContainerRuntime::kApptainer);
}

inline std::string runtimeName(const ::testing::TestParamInfo<catalog::ContainerRuntime>& info) {
  return info.param == catalog::ContainerRuntime::kPyxis ? "Pyxis" : "Apptainer";
}

}  // namespace tuneplane::slurm
