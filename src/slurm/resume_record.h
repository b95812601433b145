// logs/resume.json: where an attempt starts, as the batch script records it just before the
// driver starts, for `tuneplane describe` (the attempt reader: attempt/attempt_files.h).
// Written only for a framework that says how it resumes (launch::ResumeRecord): for
// LlamaFactory, the highest N among the directories checkpoint-N in the job's checkpoint
// directory — the rule of transformers' get_last_checkpoint, which LlamaFactory resumes by —
// 0 when there is none, or 0 when it starts over (spec.retry.resume off). A custom job gets
// no record. The file is {"version":1,"step":N}, written to a temporary file and renamed,
// so a reader sees it whole or not at all; a failed write never fails the job.
#pragma once

#include <string_view>

namespace tuneplane::slurm {

inline constexpr std::string_view kResumeRecordFile = "resume.json";

}  // namespace tuneplane::slurm
