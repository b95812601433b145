// REST API v0.0.44 as Slurm 25.11.7 serves it (the release whose newest API it is): the
// shapes of its records copied from real answers (tests/data/slurm/v0.0.44/transcripts: job
// 03_get_running, node and partition 13f_auth_probe, ping and meta 01_ping), its submit fields
// and paths from its real OpenAPI document (openapi-v0.0.44.json). Values are overwritten per
// job; keys and JSON types are kept. Where 25.11 differs from 26.05 (SimRelease): a SLUID in a
// path is refused (422/9000), refusals of a submit come as HTTP 500, a missing environment is
// error 2019, the batch step has no SLURM_JOB_SLUID.
#include "sim/api_error.h"
#include "sim/sim_api.h"

#pragma GCC diagnostic ignored "-Woverlength-strings"

namespace tuneplane::sim::v0_0_44 {
namespace {

const char* const kJob =
    R"json({"account":"","accrue_time":{"set":true,"infinite":false,"number":1796535928},"admin_comment":"","allocating_node":"localhost","array_job_id":{"set":true,"infinite":false,"number":0},"array_task_id":{"set":false,"infinite":false,"number":0},"array_max_tasks":{"set":true,"infinite":false,"number":0},"array_task_string":"","association_id":0,"batch_features":"","batch_flag":true,"batch_host":"cpu1","flags":["JOB_WAS_RUNNING","EXACT_MEMORY_REQUESTED","USING_DEFAULT_ACCOUNT","USING_DEFAULT_QOS","USING_DEFAULT_WCKEY"],"burst_buffer":"","burst_buffer_state":"","cluster":"tp","cluster_features":"","command":"","comment":"harness single job comment","container":"","container_id":"","contiguous":false,"core_spec":0,"thread_spec":32766,"cores_per_socket":{"set":false,"infinite":false,"number":0},"billable_tres":{"set":true,"infinite":false,"number":2.0},"cpus_per_task":{"set":true,"infinite":false,"number":2},"cpu_frequency_minimum":{"set":false,"infinite":false,"number":0},"cpu_frequency_maximum":{"set":false,"infinite":false,"number":0},"cpu_frequency_governor":{"set":false,"infinite":false,"number":0},"cpus_per_tres":"","cron":"","deadline":{"set":true,"infinite":false,"number":0},"delay_boot":{"set":true,"infinite":false,"number":0},"dependency":"","derived_exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"infinite":false,"number":0},"signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},"eligible_time":{"set":true,"infinite":false,"number":1796535928},"end_time":{"set":true,"infinite":false,"number":1796536529},"excluded_nodes":"","exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"infinite":false,"number":0},"signal":{"id":{"set":false,"infinite":false,"number":0},"name":""}},"extra":"","failed_node":"","features":"","federation_origin":"","federation_siblings_active":"",)json"
    R"json("federation_siblings_viable":"","gres_detail":[],"group_id":1001,"group_name":"tpuser","het_job_id":{"set":true,"infinite":false,"number":0},"het_job_id_set":"","het_job_offset":{"set":true,"infinite":false,"number":0},"job_id":4,"job_resources":{"select_type":["CPU"],"nodes":{"count":1,"select_type":["ONE_ROW"],"list":"cpu1","whole":false,"allocation":[{"index":0,"name":"cpu1","cpus":{"count":2,"used":0},"memory":{"used":0,"allocated":256},"sockets":[{"index":0,"cores":[{"index":0,"status":["UNALLOCATED"]}]},{"index":1,"cores":[{"index":0,"status":["UNALLOCATED"]}]},{"index":2,"cores":[{"index":0,"status":["ALLOCATED"]}]},{"index":3,"cores":[{"index":0,"status":["ALLOCATED"]}]}]}]},"cpus":2,"threads_per_core":{"set":false,"infinite":false,"number":0}},"job_size_str":[],"job_state":["RUNNING"],"last_sched_evaluation":{"set":true,"infinite":false,"number":1796535929},"licenses":"","licenses_allocated":"","mail_type":[],"mail_user":"tpuser","max_cpus":{"set":true,"infinite":false,"number":0},"max_nodes":{"set":true,"infinite":false,"number":0},"mcs_label":"","memory_per_tres":"","name":"tp-single","network":"","nodes":"cpu1","nice":0,"tasks_per_core":{"set":false,"infinite":true,"number":0},"tasks_per_tres":{"set":true,"infinite":false,"number":0},"tasks_per_node":{"set":true,"infinite":false,"number":0},"tasks_per_socket":{"set":false,"infinite":true,"number":0},"tasks_per_board":{"set":true,"infinite":false,"number":0},"cpus":{"set":true,"infinite":false,"number":2},"node_count":{"set":true,"infinite":false,"number":1},"tasks":{"set":true,"infinite":false,"number":1},"partition":"cpu","prefer":"","memory_per_cpu":{"set":false,"infinite":false,"number":0},"memory_per_node":{"set":true,"infinite":false,"number":256},"minimum_cpus_per_node":{"set":true,"infinite":false,"number":2},)json"
    R"json("minimum_tmp_disk_per_node":{"set":true,"infinite":false,"number":0},"power":{"flags":[]},"preempt_time":{"set":true,"infinite":false,"number":0},"preemptable_time":{"set":true,"infinite":false,"number":0},"pre_sus_time":{"set":true,"infinite":false,"number":0},"hold":false,"priority":{"set":true,"infinite":false,"number":1},"priority_by_partition":[],"profile":["NOT_SET"],"qos":"","reboot":false,"required_nodes":"","required_switches":0,"requeue":false,"resize_time":{"set":true,"infinite":false,"number":0},"restart_cnt":0,"resv_name":"","scheduled_nodes":"","segment_size":0,"selinux_context":"","shared":[],"step_id":{"sluid":"sFK1M94Y5HJ700","job_id":{"set":true,"infinite":false,"number":4},"step_het_component":{"set":false,"infinite":false,"number":0},"step_id":"entire"},"sockets_per_board":0,"sockets_per_node":{"set":false,"infinite":false,"number":0},"start_time":{"set":true,"infinite":false,"number":1796535929},"state_description":"","state_reason":"None","standard_input":"","standard_output":"/home/tpuser/jobs/single-%j.out","standard_error":"/home/tpuser/jobs/single-%j.err","stdin_expanded":"","stdout_expanded":"/home/tpuser/jobs/single-4.out","stderr_expanded":"/home/tpuser/jobs/single-4.err","submit_time":{"set":true,"infinite":false,"number":1796535928},"submit_line":"","suspend_time":{"set":true,"infinite":false,"number":0},"system_comment":"","time_limit":{"set":true,"infinite":false,"number":10},"time_minimum":{"set":true,"infinite":false,"number":0},"threads_per_core":{"set":false,"infinite":false,"number":0},"tres_bind":"","tres_freq":"","tres_per_job":"","tres_per_node":"","tres_per_socket":"","tres_per_task":"","tres_req_str":"cpu=2,mem=256M,node=1,billing=2","tres_alloc_str":"cpu=2,mem=256M,node=1,billing=2","user_id":1001,"user_name":"tpuser","maximum_switch_wait_time":0,)json"
    R"json("wckey":"","current_working_directory":"/home/tpuser/jobs"})json";
const char* const kNode =
    R"json({"architecture":"x86_64","burstbuffer_network_address":"","boards":1,"boot_time":{"set":true,"infinite":false,"number":1796528874},"tls_cert_last_renewal":{"set":true,"infinite":false,"number":0},"cert_flags":[],"cluster_name":"","cores":1,"specialized_cores":0,"cpu_binding":0,"cpu_load":411,"free_mem":{"set":true,"infinite":false,"number":15512},"cpus":4,"effective_cpus":4,"specialized_cpus":"","energy":{"average_watts":0,"base_consumed_energy":0,"consumed_energy":0,"current_watts":{"set":true,"infinite":false,"number":0},"previous_consumed_energy":0,"last_collected":0},"external_sensors":{},"extra":"","power":{},"features":[],"active_features":[],"gpu_spec":"","gres":"","gres_drained":"N/A","gres_used":"","instance_id":"","instance_type":"","last_busy":{"set":true,"infinite":false,"number":1796535439},"mcs_label":"","specialized_memory":0,"name":"cpu1","next_state_after_reboot":["INVALID"],"address":"127.0.0.1","hostname":"localhost","state":["MIXED"],"operating_system":"Linux 6.18.44-fc-v1272 #1 SMP PREEMPT_DYNAMIC @0","owner":"","partitions":["cpu"],"port":7833,"real_memory":4096,"res_cores_per_gpu":0,"comment":"","reason":"","reason_changed_at":{"set":true,"infinite":false,"number":0},"reason_set_by_user":"","resume_after":{"set":true,"infinite":false,"number":0},"reservation":"","alloc_memory":256,"alloc_cpus":2,"alloc_idle_cpus":2,"tres_used":"cpu=2,mem=256M","tres_weighted":0.0,"slurmd_start_time":{"set":true,"infinite":false,"number":1796535907},"sockets":4,"threads":1,"temporary_disk":0,"weight":1,"topology":"","tres":"cpu=4,mem=4G,billing=4","version":"25.11.7"})json";
const char* const kPartition =
    R"json({"nodes":{"allowed_allocation":"","configured":"gpu[1-2]","total":2},"accounts":{"allowed":"","deny":""},"groups":{"allowed":""},"qos":{"allowed":"","deny":"","assigned":""},"alternate":"","tres":{"billing_weights":"","configured":"cpu=8,mem=8G,node=2,billing=8"},"cluster":"","select_type":[],"cpus":{"task_binding":0,"total":8},"defaults":{"memory_per_cpu":0,"partition_memory_per_cpu":{"set":false,"infinite":false,"number":0},"partition_memory_per_node":{"set":true,"infinite":false,"number":0},"time":{"set":false,"infinite":false,"number":0},"job":""},"grace_time":0,"maximums":{"cpus_per_node":{"set":false,"infinite":true,"number":0},"cpus_per_socket":{"set":false,"infinite":true,"number":0},"memory_per_cpu":0,"partition_memory_per_cpu":{"set":false,"infinite":false,"number":0},"partition_memory_per_node":{"set":true,"infinite":false,"number":0},"nodes":{"set":false,"infinite":true,"number":0},"shares":1,"oversubscribe":{"jobs":1,"flags":[]},"time":{"set":false,"infinite":true,"number":0},"over_time_limit":{"set":false,"infinite":false,"number":0}},"minimums":{"nodes":0},"name":"gpu","node_sets":"","priority":{"job_factor":1,"tier":1},"timeouts":{"resume":{"set":false,"infinite":false,"number":0},"suspend":{"set":false,"infinite":false,"number":0}},"topology":"","partition":{"state":["UP"]},"suspend_time":{"set":false,"infinite":false,"number":0}})json";
const char* const kMeta =
    R"json({"plugin":{"type":"openapi/slurmctld","name":"Slurm OpenAPI slurmctld","data_parser":"data_parser/v0.0.44","accounting_storage":""},"client":{"source":"localhost:7820(fd:9)","user":"root","group":"root"},"command":[],"slurm":{"version":{"major":"25","micro":"7","minor":"11"},"release":"25.11.7","cluster":"tp"}})json";
const char* const kPing =
    R"json({"hostname":"vm","pinged":"UP","responding":true,"latency":858,"mode":"primary","primary":true})json";

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
                                     "contiguous",
                                     "core_specification",
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
                                     "power_flags",
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

const char* const kPaths[] = {"/slurm/v0.0.44/shares",
                              "/slurm/v0.0.44/reconfigure/",
                              "/slurm/v0.0.44/diag/",
                              "/slurm/v0.0.44/ping/",
                              "/slurm/v0.0.44/licenses/",
                              "/slurm/v0.0.44/job/submit",
                              "/slurm/v0.0.44/job/allocate",
                              "/slurm/v0.0.44/jobs/",
                              "/slurm/v0.0.44/jobs/state/",
                              "/slurm/v0.0.44/job/{job_id}",
                              "/slurm/v0.0.44/nodes/",
                              "/slurm/v0.0.44/node/{node_name}",
                              "/slurm/v0.0.44/partitions/",
                              "/slurm/v0.0.44/partition/{partition_name}",
                              "/slurm/v0.0.44/reservations/",
                              "/slurm/v0.0.44/reservation/{reservation_name}",
                              "/slurm/v0.0.44/reservation",
                              "/slurm/v0.0.44/new/node/",
                              "/slurm/v0.0.44/resources/{job_id}"};

}  // namespace

const SimApi& api() {
  static const SimApi kApi = [] {
    SimApi a;
    a.name = "v0.0.44";
    a.job_template = nlohmann::json::parse(kJob);
    a.node_template = nlohmann::json::parse(kNode);
    a.partition_template = nlohmann::json::parse(kPartition);
    a.meta_template = nlohmann::json::parse(kMeta);
    a.ping_template = nlohmann::json::parse(kPing);
    a.submit_fields = {std::begin(kSubmitFields), std::end(kSubmitFields)};
    a.paths = {std::begin(kPaths), std::end(kPaths)};
    a.release = {
        .release = "25.11.7",
        .major = "25",
        .minor = "11",
        .micro = "7",
        .sluid_paths = false,
        .sluid_state_filter_ignored = false,
        .refusal_status = 500,
        .missing_environment_error = kErrWritingScript,
        .sluid_in_batch_env = false,
    };
    return a;
  }();
  return kApi;
}

}  // namespace tuneplane::sim::v0_0_44
