// The stable error codes of launch assembly: one per backend rule, so a user (or a script)
// can tell exactly which rule refused a spec. Never renamed or reused; the user guide's rule
// table lists each with its meaning.
#pragma once

namespace tuneplane::launch::codes {

// Refused on the Slurm backend, whatever the site.
inline constexpr const char* kKindNotSupported = "launch.kind_not_supported";
inline constexpr const char* kVolumesNotSupported = "launch.volumes_not_supported";
inline constexpr const char* kImageNotSupported = "launch.image_not_supported";
// The runtime artifact.
inline constexpr const char* kRuntimeIdRequired = "launch.runtime_id_required";
inline constexpr const char* kUnknownRuntime = "launch.unknown_runtime";
inline constexpr const char* kRuntimeFormatMismatch = "launch.runtime_format_mismatch";
inline constexpr const char* kFrameworkNotInRuntime = "launch.framework_not_in_runtime";
// Topology, all jobs.
inline constexpr const char* kNoPools = "launch.no_pools";
inline constexpr const char* kMixedPools = "launch.mixed_gpu_and_cpu_pools";
inline constexpr const char* kNonPositiveResources = "launch.non_positive_resources";
inline constexpr const char* kTooLarge = "launch.too_large";  // memory/scratch overflow MiB
inline constexpr const char* kInvalidTimeLimit = "launch.invalid_time_limit";
inline constexpr const char* kInvalidAttemptDir = "launch.invalid_attempt_dir";
inline constexpr const char* kInvalidCheckpointDir = "launch.invalid_checkpoint_dir";
// A pool's partition that the site does not list (partitions.allowed; a site that lists
// none leaves every name to Slurm).
inline constexpr const char* kUnknownPartition = "launch.unknown_partition";
// GPU pools.
inline constexpr const char* kGpuSeriesRequired = "launch.gpu_series_required";
inline constexpr const char* kUnknownGpuSeries = "launch.unknown_gpu_series";
inline constexpr const char* kGpuSeriesWithoutConstraint = "launch.gpu_series_without_constraint";
inline constexpr const char* kTooManyGpus = "launch.too_many_gpus_per_node";
// CPU-only jobs.
inline constexpr const char* kCpuNeedsCustom = "launch.cpu_only_requires_custom_framework";
inline constexpr const char* kCpuSinglePool = "launch.cpu_only_requires_one_pool";
inline constexpr const char* kCpuMultiNode = "launch.cpu_only_multi_node";
inline constexpr const char* kCpuScratch = "launch.cpu_only_scratch";
inline constexpr const char* kCpuRuntimeNotCustom = "launch.cpu_only_requires_custom_runtime";
inline constexpr const char* kCpuGpuSeries = "launch.cpu_only_gpu_series";

}  // namespace tuneplane::launch::codes
