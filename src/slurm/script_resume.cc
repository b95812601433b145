// The resume record of the batch script (resume_record.h): it reads the job's checkpoint
// directory on the head node, as the framework is about to, and writes logs/resume.json.
#include <string>

#include "slurm/resume_record.h"
#include "slurm/script_parts.h"
#include "slurm/script_renderer.h"

namespace tuneplane::slurm {

void renderResumeRecord(std::string& out, const launch::LaunchRequest& request) {
  using launch::ResumeRecord;
  if (request.resume_record == ResumeRecord::kNone) return;
  const std::string file = std::string(kResumeRecordFile);
  out += "\n# Where this attempt starts, for `tuneplane describe`: logs/" + file + ".\n";
  if (request.resume_record == ResumeRecord::kLastCheckpoint) {
    out += "# The framework resumes from the highest checkpoint-N in the job's checkpoint\n";
    out += "# directory (transformers' get_last_checkpoint); no such directory: step 0.\n";
    out += "tp_checkpoint_dir=" + shellQuote(request.checkpoint_dir) + "\n";
    out += R"(tp_resume_step=0
for tp_checkpoint in "$tp_checkpoint_dir"/checkpoint-*; do
  tp_step=${tp_checkpoint##*/checkpoint-}
  if [[ -d $tp_checkpoint && $tp_step =~ ^[0-9]{1,18}$ ]] && ((10#$tp_step > tp_resume_step)); then
    tp_resume_step=$((10#$tp_step))
  fi
done
)";
  } else {
    out += "# The framework starts over (spec.retry.resume is off): step 0.\n";
    out += "tp_resume_step=0\n";
  }
  out += "{ printf '{\"version\":1,\"step\":%s}\\n' \"$tp_resume_step\" >\"$tp_logs_dir/." + file +
         ".$$\" &&\n";
  out +=
      "  mv -f \"$tp_logs_dir/." + file + ".$$\" \"$tp_logs_dir/" + file + "\"; } 2>/dev/null ||\n";
  out += "  rm -f \"$tp_logs_dir/." + file + ".$$\" 2>/dev/null || true\n";
  out += "echo \"tuneplane: this attempt starts from step $tp_resume_step\"\n";
}

}  // namespace tuneplane::slurm
