// POST /v1/workdirs of ApiServer (api_server.h): a user's code folder, as a ustar archive,
// checked against the site's limits and rules (common/workdir_tree.h) before anything is
// written, then stored under its tree hash for that user (staging/workdir_store.h). A spec
// names it as `spec.workdir: sha256:<hex>`; every attempt of the job gets a copy.
// Why a separate upload and not a multipart POST /v1/jobs: the job's body stays the small
// spec text that the idempotency key, validation and the store already handle; the upload is
// idempotent by construction (its name is its content's hash: the same folder sent twice is
// stored once, 201 then 200), bounded by its own limits, and a retried submit re-sends 90
// bytes of spec, not the folder.
#include "api/api_server.h"
#include "api/body_checks.h"
#include "common/workdir_tree.h"
#include "staging/error_codes.h"
#include "staging/staging_fs.h"
#include "staging/workdir_store.h"

namespace tuneplane::api {
namespace {

using nlohmann::json;

// The status of a refused folder: its size and count 413, an archive that cannot be read 400,
// an entry the rules refuse (a link, a device, a path) 422, the filesystem 500.
int uploadStatus(const std::string& code) {
  if (code == workdir::codes::kTooLarge || code == workdir::codes::kTooManyFiles) return 413;
  if (code == workdir::codes::kInvalidArchive) return 400;
  if (code == staging::codes::kIo) return 500;
  return 422;
}

json uploadJson(const staging::StoredWorkdir& stored, const workdir::Tree& tree) {
  return {{"workdir", workdir::workdirReference(stored.sha256)},
          {"sha256", stored.sha256},
          {"files", tree.files},
          {"folders", tree.entries.size() - tree.files},
          {"bytes", tree.bytes}};
}

}  // namespace

void ApiServer::installWorkdirRoutes() {
  post(kWorkdirUploadPath, Access::kUser,
       [this](const HttpRequest& req, HttpResponse& res, const Principal& who) {
         if (auto type = checkContentType(req.header("Content-Type"), BodyKind::kTar); !type) {
           return sendError(res, 415, type.error());
         }
         auto tree = workdir::parseWorkdirTar(req.body, options_.workdir);
         if (!tree) return sendError(res, uploadStatus(tree.error().code), tree.error());
         staging::PosixStagingFs fs;
         auto stored =
             staging::storeWorkdir(deps_.launcher.site().site.staging_root, who.user, *tree, fs);
         if (!stored) return sendError(res, uploadStatus(stored.error().code), stored.error());
         sendJson(res, stored->created ? 201 : 200, uploadJson(*stored, *tree));
       });
}

}  // namespace tuneplane::api
