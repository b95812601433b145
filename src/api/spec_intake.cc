// See spec_intake.h.
#include "api/spec_intake.h"

#include "api/body_checks.h"
#include "api/job_charge.h"
#include "api/json_views.h"
#include "common/workdir_tree.h"
#include "staging/error_codes.h"
#include "staging/staging_fs.h"
#include "staging/workdir_store.h"

namespace tuneplane::api {
namespace {

// A spec's workdir must be one of its user's uploads: refused before the job exists, not
// when its first attempt is staged. Errors: workdir.unknown, staging.io.
Status checkWorkdir(std::string_view spec_text, const Principal& who,
                    const std::string& staging_root) {
  const auto sha256 = specWorkdir(spec_text);
  if (!sha256) return ok();
  staging::PosixStagingFs fs;
  auto stored = staging::hasStoredWorkdir(staging_root, who.user, *sha256, fs);
  if (!stored) return fail(stored.error());
  if (*stored) return ok();
  return fail(workdir::codes::kUnknown, "spec.workdir",
              workdir::workdirReference(*sha256) +
                  " is not among your uploaded folders: upload it first (tuneplane submit "
                  "--workdir DIR does both; or POST /v1/workdirs)");
}

tl::unexpected<IntakeRefusal> refuse(int status, Errors errors) {
  return tl::unexpected<IntakeRefusal>(IntakeRefusal{status, std::move(errors)});
}

}  // namespace

tl::expected<std::string, IntakeRefusal> takeInSpec(const HttpRequest& req, const Principal& who,
                                                    const std::string& staging_root) {
  if (auto type = checkContentType(req.header("Content-Type"), BodyKind::kSpec); !type) {
    return refuse(415, {type.error()});
  }
  if (auto body = checkBodyText(req.body); !body) return refuse(400, {body.error()});
  auto charged = chargeSpec(req.body, who);
  if (!charged) return refuse(422, charged.error());
  if (auto stored = checkWorkdir(*charged, who, staging_root); !stored) {
    return refuse(stored.error().code == staging::codes::kIo ? 500 : 422, {stored.error()});
  }
  return std::move(*charged);
}

}  // namespace tuneplane::api
