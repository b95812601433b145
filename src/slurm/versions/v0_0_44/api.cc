// REST API v0.0.44 (Slurm 25.11; 26.05 serves it too). Its job records carry the SLUID
// (step_id.sluid, from submit on; a requeue gives a new one, as on v0.0.45), but Slurm 25.11
// refuses a SLUID in a path (HTTP 422, error 9000: tests/data/slurm/v0.0.44/transcripts/03,
// 07): every read and cancel goes by numeric id, and since numeric ids are reused once a job
// is purged, each answer is confirmed by the SLUID it carries (job_key.h) — a cancel only
// after a read confirmed the job and found it still able to run. Its ping carries no
// `status`: a refused token reads like a controller that is down, so a ping that finds none
// responding is checked by GET /licenses/, which says 1007 (13a, 13f). It has no GET /conf
// (404 text on 26.05.3: tests/data/slurm/transcripts/24_conf.json).
#include "slurm/slurm_api.h"
#include "slurm/versions/v0_0_44/openapi_facts.h"

namespace tuneplane::slurm::v0_0_44 {
namespace {

constexpr Degradation kDegradations[] = {
    {"no SLUID in paths (Slurm 25.11 answers 422)",
     "jobs are read and cancelled by numeric id, each answer confirmed by the SLUID it "
     "carries (else by submit time and submit token) before TunePlane acts on it; a cancel "
     "costs a read first, and a job whose id now names another job is taken as gone"},
    {"no reason in a ping",
     "a ping that finds no controller responding is checked with GET /licenses/, which "
     "says whether the token was refused"},
    {"no GET /conf (the controller's configuration)",
     "doctor cannot read PreemptType and PreemptParameters, so each partition's check names "
     "both things a preempted job may get (the warning, or TERM)"},
};

}  // namespace

const SlurmApi& api() {
  static const SlurmApi kApi{
      .name = "v0.0.44",
      .addressing = JobAddressing::kByNumericId,
      .ping_names_refusal = false,
      .auth_probe = "/licenses/",
      .controller_config = false,
      .job_states = kJobStates,
      .submit_fields = kSubmitFields,
      .degradations = kDegradations,
  };
  return kApi;
}

}  // namespace tuneplane::slurm::v0_0_44
