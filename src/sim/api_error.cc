#include "sim/api_error.h"

#include "sim/accounting.h"

namespace tuneplane::sim {

std::string slurmStrerror(int error_number) {
  switch (error_number) {
    case kErrRestInvalidQuery:
      return "Query empty or not RFC7320 compliant";
    case kErrInvalidJobId:
      return "Invalid job id specified";
    case kErrAlreadyDone:
      return "Job/step already completing or completed";
    case kErrAuth:
      return "Protocol authentication error";
    case kErrInvalidFeature:
      return "Invalid feature specification";
    case kErrNodeConfigUnavailable:
      return "Requested node configuration is not available";
    case kErrInvalidPartition:
      return "Invalid partition name specified";
    case kErrMissingEnvironment:
      return "Environment is missing in job";
    case kErrWritingScript:
      return "I/O error writing script/environment to file";
    case kErrMissingCwd:
      return "Job cannot be submitted without the current working directory specified.";
    case kErrPartitionConfigNow:
      return "Requested partition configuration not available now";
    case kErrAccessDenied:
      return "Access/permission denied";
    case kErrUserUnknown:
      return "Rejecting authentication of user nobody or group nobody";
    case kErrInvalidAccount:
      return "Invalid account or account/partition combination specified";
    case kErrInvalidQos:
      return "Invalid qos specification";
    default:
      return "Unspecified error";
  }
}

nlohmann::json ApiError::toJson() const {
  return {{"description", description},
          {"error_number", error_number},
          {"error", slurmStrerror(error_number)},
          {"source", source}};
}

}  // namespace tuneplane::sim
