// REST API v0.0.45 (Slurm 26.05): the version TunePlane was built on. Its paths take SLUIDs,
// so every lifecycle call names the job by the identifier Slurm never reuses; its ping says
// why a controller does not respond. Nothing TunePlane relies on is missing.
#include "slurm/slurm_api.h"
#include "slurm/versions/v0_0_45/openapi_facts.h"

namespace tuneplane::slurm::v0_0_45 {

const SlurmApi& api() {
  static const SlurmApi kApi{
      .name = "v0.0.45",
      .addressing = JobAddressing::kBySluid,
      .ping_names_refusal = true,
      .job_states = kJobStates,
      .submit_fields = kSubmitFields,
      .degradations = {},
  };
  return kApi;
}

}  // namespace tuneplane::slurm::v0_0_45
