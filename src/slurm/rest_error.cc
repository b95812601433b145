#include "slurm/rest_error.h"

#include <fmt/format.h>

namespace tuneplane::slurm {

std::string SlurmError::describe() const {
  std::string out = error.describe();
  std::string detail;
  if (http_status != 0) detail += fmt::format("HTTP {}", http_status);
  if (slurm_error_number != 0) {
    if (!detail.empty()) detail += ", ";
    detail += fmt::format("slurm error {}", slurm_error_number);
    if (!slurm_error.empty()) detail += " " + slurm_error;
  }
  if (!detail.empty()) detail += ", ";
  detail += std::string("transport ") + toString(transport);
  return out + " (" + detail + ")";
}

bool neverReachedController(int slurm_error_number) {
  return slurm_error_number == kSlurmControllerConnectFailure ||
         slurm_error_number == kSlurmControllerBackoff ||
         slurm_error_number == kSlurmControllerHardDrop;
}

SlurmError makeSlurmError(std::string_view code, std::string field, std::string message,
                          TransportClass transport) {
  SlurmError e;
  e.error = Error{std::string(code), std::move(field), std::move(message)};
  e.transport = transport;
  return e;
}

}  // namespace tuneplane::slurm
