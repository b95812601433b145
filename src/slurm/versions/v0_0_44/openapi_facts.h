// v0.0.44's facts, copied from its real OpenAPI document as a real slurmrestd gave it
// (tests/data/slurm/v0.0.44/openapi-v0.0.44.json); tests/slurm/api_versions_test.cc holds
// these lists to that file: the job_state enum of v0.0.44_job_info and the properties of
// v0.0.44_job_desc_msg.
#pragma once

#include <string_view>

namespace tuneplane::slurm::v0_0_44 {

// v0.0.44_job_info.job_state.items.enum, in the document's order: base states, then flags.
inline constexpr std::string_view kJobStates[] = {
    "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
    "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "LAUNCH_FAILED",
    "REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT", "RESIZING", "CONFIGURING", "COMPLETING",
    "STOPPED", "RECONFIG_FAIL", "POWER_UP_NODE", "REVOKED", "REQUEUE_FED", "RESV_DEL_HOLD",
    "SIGNALING", "STAGE_OUT", "EXPEDITING"};

// v0.0.44_job_desc_msg.properties, sorted: what a submit body may carry.
inline constexpr std::string_view kSubmitFields[] = {
    "account", "account_gather_frequency", "admin_comment", "allocation_node_list",
    "allocation_node_port", "argv", "array", "batch_features", "begin_time", "burst_buffer",
    "cluster_constraint", "clusters", "comment", "constraints", "container", "container_id",
    "contiguous", "core_specification", "cpu_binding", "cpu_binding_flags", "cpu_frequency",
    "cpus_per_task", "cpus_per_tres", "crontab", "current_working_directory", "deadline",
    "delay_boot", "dependency", "distribution", "distribution_plane_size", "end_time",
    "environment", "excluded_nodes", "extra", "flags", "group_id", "hetjob_group", "hold",
    "immediate", "job_id", "kill_on_node_fail", "kill_warning_delay", "kill_warning_flags",
    "kill_warning_signal", "licenses", "mail_type", "mail_user", "maximum_cpus",
    "maximum_nodes", "mcs_label", "memory_binding", "memory_binding_type", "memory_per_cpu",
    "memory_per_node", "memory_per_tres", "minimum_boards_per_node", "minimum_cpus",
    "minimum_cpus_per_node", "minimum_nodes", "minimum_sockets_per_board", "name", "network",
    "nice", "nodes", "ntasks_per_tres", "oom_kill_step", "open_mode", "overcommit", "partition",
    "power_flags", "prefer", "priority", "profile", "qos", "reboot", "requeue",
    "required_nodes", "required_switches", "reservation", "reserve_ports", "rlimits", "script",
    "segment_size", "selinux_context", "shared", "site_factor", "sockets_per_node",
    "spank_environment", "standard_error", "standard_input", "standard_output", "step_id",
    "tasks", "tasks_per_board", "tasks_per_core", "tasks_per_node", "tasks_per_socket",
    "temporary_disk_per_node", "thread_specification", "threads_per_core", "time_limit",
    "time_minimum", "tres_bind", "tres_freq", "tres_per_job", "tres_per_node",
    "tres_per_socket", "tres_per_task", "user_id", "wait_all_nodes", "wait_for_switch", "wckey",
    "x11", "x11_magic_cookie", "x11_target_host", "x11_target_port"};

}  // namespace tuneplane::slurm::v0_0_44
