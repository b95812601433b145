#include "spec/job_spec.h"

namespace tuneplane::spec {

const char* toString(JobKind kind) {
  switch (kind) {
    case JobKind::kTrainingJob:
      return "TrainingJob";
    case JobKind::kPlayground:
      return "Playground";
    case JobKind::kModelDeployment:
      return "ModelDeployment";
  }
  return "?";
}

const char* toString(RetryOn on) {
  switch (on) {
    case RetryOn::kInfrastructure:
      return "infrastructure";
    case RetryOn::kAny:
      return "any";
    case RetryOn::kNever:
      return "never";
  }
  return "?";
}

}  // namespace tuneplane::spec
