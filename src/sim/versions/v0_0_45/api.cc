// REST API v0.0.45 as Slurm 26.05.3 serves it: the job record is the SHAPE of a real
// RUNNING record (tests/data/slurm/transcripts/03_get_running.json); node and partition
// records follow the OpenAPI document in tests/data/slurm/ (no transcript shows them); ping
// and meta are 01_ping's; submit fields and paths are openapi-v0.0.45.json's. Values are
// overwritten per job; keys and JSON types are kept. 26.05 takes SLUIDs in paths and refuses
// a submit with HTTP 422 (SimRelease's defaults).
#include "sim/sim_api.h"

#pragma GCC diagnostic ignored "-Woverlength-strings"

namespace tuneplane::sim::v0_0_45 {
namespace {

const char* const kJob =
    R"json({"account":"","accrue_time":{"set":true,"infinite":false,"number":1796226016},"admin_comment":"","allocating_node":"localhost","array_job_id":{"set":true,"infinite":false,"number":0},"array_task_id":{"set":false,"infinite":false,"number":0},"array_max_tasks":{"set":true,"infinite":false,"number":0},"array_task_string":"","association_id":0,"batch_features":"","batch_flag":true,"batch_host":"cpu1","flags":["JOB_WAS_RUNNING","EXACT_MEMORY_REQUESTED","USING_DEFAULT_ACCOUNT","USING_DEFAULT_QOS","USING_DEFAULT_WCKEY"],"burst_buffer":"","burst_buffer_state":"","cluster":"tp","cluster_features":"","command":"","comment":"harness single job comment","container":"","container_id":"","container_type":"","contiguous":false,"core_spec":0,"thread_spec":32766,"cores_per_socket":{"set":false,"infinite":false,"number":0},"billable_tres":{"set":true,"infinite":false,"number":2.0},"cpus_per_task":{"set":true,"infinite":false,"number":2},"cpu_frequency_minimum":{"set":false,"infinite":false,"number":0},"cpu_frequency_maximum":{"set":false,"infinite":false,"number":0},"cpu_frequency_governor":{"set":false,"infinite":false,"number":0},"cpus_per_tres":"","cron":"","deadline":{"set":true,"infinite":false,"number":0},"delay_boot":{"set":true,"infinite":false,"number":0},"dependency":"","derived_exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"infinite":false,"number":0},"signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},"eligible_time":{"set":true,"infinite":false,"number":1796226016},"end_time":{"set":true,"infinite":false,"number":1796226616},"excluded_nodes":"","exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"infinite":false,"number":0},"signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},"extra":"","failed_node":"","features":"","federation_origin":"",)json"
    R"json("federation_siblings_active":"","federation_siblings_viable":"","gres_detail":[],"group_id":1001,"group_name":"tpuser","het_job_id":{"set":true,"infinite":false,"number":0},"het_job_id_set":"","het_job_offset":{"set":true,"infinite":false,"number":0},"job_id":2,"job_resources":{"select_type":["CR_CPU_MEMORY"],"nodes":{"count":1,"select_type":["ONE_ROW"],"list":"cpu1","whole":false,"allocation":[{"index":0,"name":"cpu1","cpus":{"count":2,"used":0},"memory":{"used":0,"allocated":256},"sockets":[{"index":0,"cores":[{"index":0,"status":["ALLOCATED"]}]},{"index":1,"cores":[{"index":0,"status":["ALLOCATED"]}]},{"index":2,"cores":[{"index":0,"status":["UNALLOCATED"]}]},{"index":3,"cores":[{"index":0,"status":["UNALLOCATED"]}]}]}]},"cpus":2,"threads_per_core":{"set":false,"infinite":false,"number":0}},"job_size_str":[],"job_state":["RUNNING"],"last_sched_evaluation":{"set":true,"infinite":false,"number":1796226016},"licenses":"","licenses_allocated":"","mail_type":[],"mail_user":"tpuser","max_cpus":{"set":true,"infinite":false,"number":0},"max_nodes":{"set":true,"infinite":false,"number":0},"mcs_label":"","memory_per_tres":"","memory_update_delay":0,"memory_update_margin":0,"name":"tp-single","network":"","nodes":"cpu1","nice":0,"tasks_per_core":{"set":false,"infinite":true,"number":0},"tasks_per_tres":{"set":true,"infinite":false,"number":0},"tasks_per_node":{"set":true,"infinite":false,"number":0},"tasks_per_socket":{"set":false,"infinite":true,"number":0},"tasks_per_board":{"set":true,"infinite":false,"number":0},"cpus":{"set":true,"infinite":false,"number":2},"node_count":{"set":true,"infinite":false,"number":1},"tasks":{"set":true,"infinite":false,"number":1},"partition":"cpu","prefer":"","memory_per_cpu":{"set":false,"infinite":false,"number":0},"memory_per_node":{"set":true,)json"
    R"json("infinite":false,"number":256},"minimum_cpus_per_node":{"set":true,"infinite":false,"number":2},"minimum_tmp_disk_per_node":{"set":true,"infinite":false,"number":0},"preempt_time":{"set":true,"infinite":false,"number":0},"preemptable_time":{"set":true,"infinite":false,"number":0},"pre_sus_time":{"set":true,"infinite":false,"number":0},"hold":false,"priority":{"set":true,"infinite":false,"number":1},"priority_by_partition":[],"profile":["NOT_SET"],"qos":"","reboot":false,"required_nodes":"","required_switches":0,"requeue":false,"resize_time":{"set":true,"infinite":false,"number":0},"restart_cnt":0,"resv_name":"","scheduled_nodes":"","segment_size":0,"selinux_context":"","shared":[],"step_id":{"sluid":"sCC1M8VPKSJX00","job_id":{"set":true,"infinite":false,"number":2},"step_het_component":{"set":false,"infinite":false,"number":0},"step_id":"entire"},"sockets_per_board":0,"sockets_per_node":{"set":false,"infinite":false,"number":0},"start_time":{"set":true,"infinite":false,"number":1796226016},"state_description":"","state_reason":"None","standard_input":"","standard_output":"/home/tpuser/jobs/single-%j.out","standard_error":"/home/tpuser/jobs/single-%j.err","stdin_expanded":"","stdout_expanded":"/home/tpuser/jobs/single-2.out","stderr_expanded":"/home/tpuser/jobs/single-2.err","submit_time":{"set":true,"infinite":false,"number":1796226016},"submit_line":"","suspend_time":{"set":true,"infinite":false,"number":0},"system_comment":"","time_limit":{"set":true,"infinite":false,"number":10},"time_minimum":{"set":true,"infinite":false,"number":0},"threads_per_core":{"set":false,"infinite":false,"number":0},"tres_bind":"","tres_freq":"","tres_per_job":"","tres_per_node":"","tres_per_socket":"","tres_per_task":"","tres_req_str":"cpu=2,mem=256M,node=1,billing=2","tres_alloc_str":"cpu=2,)json"
    R"json(mem=256M,node=1,billing=2","user_id":1001,"user_name":"tpuser","maximum_switch_wait_time":0,"wckey":"","current_working_directory":"/home/tpuser/jobs"})json";
const char* const kNode =
    R"json({"architecture":"","burstbuffer_network_address":"","boards":0,"boot_time":{"set":false,"infinite":false,"number":0},"tls_cert_last_renewal":{"set":false,"infinite":false,"number":0},"cert_flags":[],"cluster_name":"","cores":0,"specialized_cores":0,"cpu_binding":0,"cpu_load":0,"free_mem":{"set":false,"infinite":false,"number":0},"cpus":0,"effective_cpus":0,"specialized_cpus":"","energy":{"average_watts":0,"base_consumed_energy":0,"consumed_energy":0,"current_watts":{"set":false,"infinite":false,"number":0},"previous_consumed_energy":0,"last_collected":0},"extra":"","features":[],"active_features":[],"gpu_spec":"","gres":"","gres_drained":"","gres_used":"","instance_id":"","instance_type":"","last_busy":{"set":false,"infinite":false,"number":0},"mcs_label":"","specialized_memory":0,"name":"","next_state_after_reboot":[],"address":"","hostname":"","state":[],"operating_system":"","owner":"","partitions":[],"port":0,"real_memory":0,"res_cores_per_gpu":0,"comment":"","reason":"","reason_changed_at":{"set":false,"infinite":false,"number":0},"reason_set_by_user":"","resume_after":{"set":false,"infinite":false,"number":0},"reservation":"","suspend_time":{"set":false,"infinite":false,"number":0},"alloc_memory":0,"alloc_cpus":0,"alloc_idle_cpus":0,"tres_used":"","slurmd_start_time":{"set":false,"infinite":false,"number":0},"sockets":0,"threads":0,"temporary_disk":0,"weight":0,"topology":"","tres":"","version":""})json";
const char* const kPartition =
    R"json({"nodes":{"allowed_allocation":"","configured":"","total":0},"accounts":{"allowed":"","deny":""},"groups":{"allowed":""},"qos":{"allowed":"","deny":"","assigned":""},"alternate":"","tres":{"billing_weights":"","configured":""},"cluster":"","select_type":["CR_CPU_MEMORY"],"cpus":{"task_binding":[],"total":0},"defaults":{"memory_per_cpu":0,"partition_memory_per_cpu":{"set":false,"infinite":false,"number":0},"partition_memory_per_node":{"set":false,"infinite":false,"number":0},"time":{"set":false,"infinite":false,"number":0},"job":""},"flags":[],"partition":{"exclusive":"","oversubscribe":"","state":[]},"grace_time":0,"maximums":{"cpus_per_node":{"set":false,"infinite":false,"number":0},"cpus_per_socket":{"set":false,"infinite":false,"number":0},"memory_per_cpu":0,"partition_memory_per_cpu":{"set":false,"infinite":false,"number":0},"partition_memory_per_node":{"set":false,"infinite":false,"number":0},"nodes":{"set":false,"infinite":false,"number":0},"shares":0,"oversubscribe":{"jobs":0,"flags":[]},"time":{"set":false,"infinite":false,"number":0},"over_time_limit":{"set":false,"infinite":false,"number":0}},"minimums":{"nodes":0},"name":"","node_sets":"","preempt_mode":[],"priority":{"job_factor":0,"tier":0},"timeouts":{"resume":{"set":false,"infinite":false,"number":0},"suspend":{"set":false,"infinite":false,"number":0}},"topology":"","suspend_time":{"set":false,"infinite":false,"number":0}})json";
const char* const kMeta =
    R"json({"plugin":{"type":"openapi/slurmctld","name":"Slurm OpenAPI slurmctld","data_parser":"data_parser/v0.0.45","accounting_storage":""},"client":{"source":"127.0.0.1:6820(fd:9)","user":"root","group":"root"},"command":[],"slurm":{"version":{"major":"26","micro":"3","minor":"05"},"release":"26.05.3","cluster":"tp"}})json";
const char* const kPing =
    R"json({"hostname":"vm","responding":true,"latency":883,"primary":true,"status":"No error"})json";

const char* const kSubmitFields[] = {"account",
                                     "account_gather_frequency",
                                     "admin_comment",
                                     "allocation_node_list",
                                     "allocation_node_port",
                                     "argv",
                                     "array",
                                     "batch_features",
                                     "begin_time",
                                     "burst_buffer",
                                     "cluster_constraint",
                                     "clusters",
                                     "comment",
                                     "constraints",
                                     "container",
                                     "container_id",
                                     "container_type",
                                     "contiguous",
                                     "core_specification",
                                     "cores_per_socket",
                                     "cpu_binding",
                                     "cpu_binding_flags",
                                     "cpu_frequency",
                                     "cpus_per_task",
                                     "cpus_per_tres",
                                     "crontab",
                                     "current_working_directory",
                                     "deadline",
                                     "delay_boot",
                                     "dependency",
                                     "distribution",
                                     "distribution_plane_size",
                                     "end_time",
                                     "environment",
                                     "excluded_nodes",
                                     "extra",
                                     "flags",
                                     "group_id",
                                     "hetjob_group",
                                     "hold",
                                     "immediate",
                                     "job_id",
                                     "kill_on_node_fail",
                                     "kill_warning_delay",
                                     "kill_warning_flags",
                                     "kill_warning_signal",
                                     "licenses",
                                     "mail_type",
                                     "mail_user",
                                     "maximum_cpus",
                                     "maximum_nodes",
                                     "mcs_label",
                                     "memory_binding",
                                     "memory_binding_type",
                                     "memory_per_cpu",
                                     "memory_per_node",
                                     "memory_per_tres",
                                     "memory_update_delay",
                                     "memory_update_margin",
                                     "minimum_boards_per_node",
                                     "minimum_cpus",
                                     "minimum_cpus_per_node",
                                     "minimum_nodes",
                                     "minimum_sockets_per_board",
                                     "name",
                                     "network",
                                     "nice",
                                     "nodes",
                                     "ntasks_per_tres",
                                     "oom_kill_step",
                                     "open_mode",
                                     "overcommit",
                                     "partition",
                                     "prefer",
                                     "priority",
                                     "profile",
                                     "qos",
                                     "reboot",
                                     "requeue",
                                     "required_nodes",
                                     "required_switches",
                                     "reservation",
                                     "reserve_ports",
                                     "rlimits",
                                     "script",
                                     "segment_size",
                                     "selinux_context",
                                     "shared",
                                     "site_factor",
                                     "sockets_per_node",
                                     "spank_environment",
                                     "standard_error",
                                     "standard_input",
                                     "standard_output",
                                     "step_id",
                                     "tasks",
                                     "tasks_per_board",
                                     "tasks_per_core",
                                     "tasks_per_node",
                                     "tasks_per_socket",
                                     "temporary_disk_per_node",
                                     "thread_specification",
                                     "threads_per_core",
                                     "time_limit",
                                     "time_minimum",
                                     "tres_bind",
                                     "tres_freq",
                                     "tres_per_job",
                                     "tres_per_node",
                                     "tres_per_socket",
                                     "tres_per_task",
                                     "user_id",
                                     "wait_all_nodes",
                                     "wait_for_switch",
                                     "wckey",
                                     "x11",
                                     "x11_magic_cookie",
                                     "x11_target_host",
                                     "x11_target_port"};

const char* const kPaths[] = {"/slurm/v0.0.45/shares",
                              "/slurm/v0.0.45/reconfigure/",
                              "/slurm/v0.0.45/diag/",
                              "/slurm/v0.0.45/ping/",
                              "/slurm/v0.0.45/licenses/",
                              "/slurm/v0.0.45/job/submit",
                              "/slurm/v0.0.45/job/allocate",
                              "/slurm/v0.0.45/jobs/",
                              "/slurm/v0.0.45/jobs/state/",
                              "/slurm/v0.0.45/job/{job_id}",
                              "/slurm/v0.0.45/job/{job_id}/requeue",
                              "/slurm/v0.0.45/jobs/requeue",
                              "/slurm/v0.0.45/nodes/",
                              "/slurm/v0.0.45/node/{node_name}",
                              "/slurm/v0.0.45/partitions/",
                              "/slurm/v0.0.45/partition/{partition_name}",
                              "/slurm/v0.0.45/reservations/",
                              "/slurm/v0.0.45/reservation/{reservation_name}",
                              "/slurm/v0.0.45/reservation",
                              "/slurm/v0.0.45/new/node/",
                              "/slurm/v0.0.45/resources/{job_id}",
                              "/slurm/v0.0.45/conf"};

}  // namespace

const SimApi& api() {
  static const SimApi kApi = [] {
    SimApi a;
    a.name = "v0.0.45";
    a.job_template = nlohmann::json::parse(kJob);
    a.node_template = nlohmann::json::parse(kNode);
    a.partition_template = nlohmann::json::parse(kPartition);
    a.meta_template = nlohmann::json::parse(kMeta);
    a.ping_template = nlohmann::json::parse(kPing);
    a.submit_fields = {std::begin(kSubmitFields), std::end(kSubmitFields)};
    a.paths = {std::begin(kPaths), std::end(kPaths)};
    a.release = {.release = "26.05.3", .major = "26", .minor = "05", .micro = "3"};
    return a;
  }();
  return kApi;
}

}  // namespace tuneplane::sim::v0_0_45
