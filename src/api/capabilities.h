// GET /v1/capabilities: what this backend can and cannot do on this site, and why — the
// kinds it runs and refuses, the refused features, the CPU-only rules, the site's GPU series
// (and whether each is usable: one without a slurm_constraint is refused), partitions (the
// defaults, and the ones a pool may name when the site lists them), container runtime and
// registered runtimes with the frameworks each provides. Also the reasons POST
// /v1/playgrounds and /v1/deployments are refused with. Pure functions of the site (and of
// the Slurm REST API version the server speaks, when it says: slurm::choiceJson).
#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "common/workdir_tree.h"
#include "pipeline/launch_pipeline.h"

namespace tuneplane::api {

// `slurm_api`: slurm::choiceJson of the server's client; null: the site's slurm.api_version.
// `workdir`: the bounds of a code folder (server.workdir_max_bytes, .workdir_max_files), shown
// so a client refuses an oversized folder before sending it.
nlohmann::json capabilitiesJson(const pipeline::SiteContext& site,
                                const nlohmann::json& slurm_api = nullptr,
                                const workdir::Limits& workdir = {});

// The 422 body's error for a kind Slurm cannot run ("Playground", "ModelDeployment"):
// code launch.kind_not_supported, field "kind".
Error kindRefusal(const std::string& kind);

}  // namespace tuneplane::api
