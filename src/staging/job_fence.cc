#include "staging/job_fence.h"

namespace tuneplane::staging {

Status markAttemptStaged(const std::string& fence_dir, int attempt, StagingFs& fs,
                         const JobAccess& access) {
  const std::string& dir = fence_dir;
  const std::string mark = dir + "/" + std::to_string(attempt);
  if (!fs.exists(mark)) {
    const bool inherit = access.perUserJob();
    if (auto made = inherit ? fs.makeInheritingDirs(dir, access.treeDirMode())
                            : fs.makeDirs(dir, kFenceDirMode);
        !made) {
      return made;
    }
    if (auto written = fs.writeFile(mark, "", inherit ? access.fileMode() : kFenceMarkMode);
        !written) {
      return written;
    }
  }
  // The mark is its name (empty, nothing of it to sync): the directory's entry is made durable
  // — again when a crashed try made it, since that try may not have synced it.
  return fs.syncDir(dir);
}

}  // namespace tuneplane::staging
