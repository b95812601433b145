// JSON templates of the records slurmrestd v0.0.45 emits (job, node, partition, meta).
// Every key real slurmrestd emits is present with its real JSON type; the simulator
// copies a template and overwrites values, so the shape cannot drift from the real one.
// Thread-safety: the returned objects are immutable after first use.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tuneplane::sim {

const nlohmann::json& jobTemplate();
const nlohmann::json& nodeTemplate();
const nlohmann::json& partitionTemplate();
const nlohmann::json& metaTemplate();
// True for the properties of v0.0.45_job_desc_msg (anything else draws a warning).
bool isJobDescField(const std::string& name);

}  // namespace tuneplane::sim
