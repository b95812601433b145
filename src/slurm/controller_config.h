// What TunePlane reads of slurmctld's configuration (slurm.conf as the controller holds it),
// from v0.0.45's GET /conf: the cluster's preemption settings, which doctor needs to say what
// a preempted job gets (a partition's record carries only its own GraceTime and PreemptMode).
// Read once per doctor run; the answer is ~7 KB. v0.0.44 has no such route (its SlurmApi says
// so, and the client answers kErrConfUnavailable without asking). Plain values.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tuneplane::slurm {

// The controller's configuration cannot be read from this client: the REST API version has
// no GET /conf (v0.0.44), or the client reads none (a test's fake).
inline constexpr std::string_view kErrConfUnavailable = "slurm.conf_unavailable";

struct ControllerConfig {
  // PreemptType: "preempt/none", "preempt/partition_prio" or "preempt/qos".
  std::string preempt_type;
  // PreemptMode, as Slurm names it: "DISABLED" (OFF), "SUSPEND", "REQUEUE", "CANCEL", "GANG",
  // "WITHIN", "PRIORITY"; unknown names kept verbatim.
  std::vector<std::string> preempt_mode;
  // PreemptParameters, each option ("send_user_signal", "reclaim_licenses", …).
  std::vector<std::string> preempt_parameters;
};

}  // namespace tuneplane::slurm
