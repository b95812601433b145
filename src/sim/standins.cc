#include "sim/standins.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#pragma GCC diagnostic ignored "-Woverlength-strings"

namespace tuneplane::sim {

namespace {

// Shared bash helper: expands a Slurm host list ("gpu[1-2],cpu1") one name per line.
constexpr const char* kExpandHostlist = R"sh(
expand_hostlist() {
  local list="$1" item="" depth=0 ch i
  local -a items=()
  for ((i = 0; i < ${#list}; i++)); do
    ch="${list:i:1}"
    [[ $ch == "[" ]] && depth=$((depth + 1))
    [[ $ch == "]" ]] && depth=$((depth - 1))
    if [[ $ch == "," && $depth -eq 0 ]]; then items+=("$item"); item=""; else item+="$ch"; fi
  done
  [[ -n $item ]] && items+=("$item")
  for item in "${items[@]}"; do
    if [[ $item =~ ^([^[]*)\[([^]]*)\](.*)$ ]]; then
      local prefix="${BASH_REMATCH[1]}" ranges="${BASH_REMATCH[2]}" suffix="${BASH_REMATCH[3]}" r
      IFS=',' read -ra parts <<<"$ranges"
      for r in "${parts[@]}"; do
        local lo="${r%%-*}" hi="${r##*-}" n
        for ((n = 10#$lo; n <= 10#$hi; n++)); do
          printf '%s%0*d%s\n' "$prefix" "${#lo}" "$n" "$suffix"
        done
      done
    else
      printf '%s\n' "$item"
    fi
  done
}
)sh";

constexpr const char* kMapBinds = R"sh(
# Binds whose path in the container differs from the host's (the job's code at /workdir): the
# stand-in runs the command on the host, so it maps them instead — each argument, the working
# directory and each TUNEPLANE_* variable that is such a path, or a path below one, is
# rewritten to the host's. A bind whose two paths agree needs nothing.
tp_binds=()
tp_add_binds() { # LIST: SRC[:DST[:OPTS]][,…]
  local item src dst
  IFS=',' read -ra tp_items <<<"$1"
  for item in "${tp_items[@]}"; do
    src=${item%%:*}; dst=${item#*:}; dst=${dst%%:*}
    [[ $item == *:* && -n $dst && $dst != "$src" ]] && tp_binds+=("$dst"$'\t'"$src")
  done
}
tp_map() { # VALUE: sets tp_mapped
  local pair dst src
  tp_mapped=$1
  for pair in ${tp_binds[@]+"${tp_binds[@]}"}; do
    dst=${pair%%$'\t'*}; src=${pair#*$'\t'}
    if [[ $tp_mapped == "$dst" || $tp_mapped == "$dst"/* ]]; then
      tp_mapped=$src${tp_mapped#"$dst"}; return
    fi
  done
}
)sh";

}  // namespace

std::string srunStandin() {
  return std::string() + R"sh(#!/bin/bash
# srun — SIMULATOR STAND-IN written by tuneplane-slurmsim. This is NOT Slurm's srun.
# It runs a job step's tasks as local processes: honours --het-group, -N/--nodes,
# -n/--ntasks, --ntasks-per-node, -w/--nodelist, -x/--exclude, --export, --chdir and
# Pyxis' --container-image (must be an existing file given as /… or ./…), --container-workdir,
# --container-mounts (a mount to another path is mapped: see tp_map);
# accepts and ignores --overlap, --cpus-per-task, --gres, --gpus*, --mem*,
# --container-env, --container-name, --no-container-mount-home, --container-remap-root, ….
# Each task gets SLURM_PROCID, SLURM_NODEID, SLURMD_NODENAME, SLURM_STEP_ID; exit = worst.
set -u
usage() {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
}
)sh" + std::string(kExpandHostlist) +
         R"sh(
)sh" + std::string(kMapBinds) +
         R"sh(
nodes="" ntasks="" per_node="" nodelist="" exclude="" het="" workdir="" image="" export_spec="ALL"
need_value() { [[ $# -ge 2 ]] || { echo "srun: option '$1' requires an argument" >&2; exit 1; }; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --version) echo "slurm 26.05.3 (tuneplane-slurmsim stand-in)"; exit 0 ;;
    --het-group=*) het="${1#*=}" ;;
    --het-group) need_value "$@"; het="$2"; shift ;;
    --nodes=*) nodes="${1#*=}" ;;
    -N|--nodes) need_value "$@"; nodes="$2"; shift ;;
    -N*) nodes="${1#-N}" ;;
    --ntasks=*) ntasks="${1#*=}" ;;
    -n|--ntasks) need_value "$@"; ntasks="$2"; shift ;;
    -n*) ntasks="${1#-n}" ;;
    --ntasks-per-node=*) per_node="${1#*=}" ;;
    --ntasks-per-node) need_value "$@"; per_node="$2"; shift ;;
    --nodelist=*) nodelist="${1#*=}" ;;
    -w|--nodelist) need_value "$@"; nodelist="$2"; shift ;;
    --exclude=*) exclude="${1#*=}" ;;
    -x|--exclude) need_value "$@"; exclude="$2"; shift ;;
    --export=*) export_spec="${1#*=}" ;;
    --export) need_value "$@"; export_spec="$2"; shift ;;
    --chdir=*|--container-workdir=*) workdir="${1#*=}" ;;
    -D|--chdir|--container-workdir) need_value "$@"; workdir="$2"; shift ;;
    --container-image=*) image="${1#*=}" ;;
    --container-image) need_value "$@"; image="$2"; shift ;;
    --container-mounts=*) tp_add_binds "${1#*=}" ;;
    --container-mounts) need_value "$@"; tp_add_binds "$2"; shift ;;
    --cpus-per-task=*|--gres=*|--gpus=*|--gpus-per-node=*|--gpus-per-task=*|--mem=*|\
    --mem-per-cpu=*|--mem-per-gpu=*|--time=*|--job-name=*|--output=*|--error=*|--input=*|\
    --container-env=*|--container-name=*|--mpi=*|--cpu-bind=*|\
    --gpu-bind=*|--distribution=*|--kill-on-bad-exit=*|--signal=*|--label=*|--wait=*|\
    --constraint=*|--partition=*|--network=*) ;;
    -c|--cpus-per-task|--gres|--gpus|--gpus-per-node|--gpus-per-task|--mem|--mem-per-cpu|\
    --mem-per-gpu|-t|--time|-J|--job-name|-o|--output|-e|--error|-i|--input|\
    --container-env|--container-name|--mpi|--cpu-bind|--gpu-bind|-m|\
    --distribution|-C|--constraint|-p|--partition|-W|--wait)
      need_value "$@"; shift ;;
    -c*) ;;
    --overlap|--exact|--exclusive|--whole|--kill-on-bad-exit|-K|-u|--unbuffered|-l|--label|\
    --no-container-mount-home|--container-mount-home|--container-remap-root|\
    --no-container-remap-root|--container-writable|--container-readonly|\
    --no-container-entrypoint|--container-entrypoint|-Q|--quiet|-v|--verbose) ;;
    --) shift; break ;;
    -*) echo "srun: unrecognized option '$1'" >&2
        echo "Try \"srun --help\" for more information" >&2; exit 1 ;;
    *) break ;;
  esac
  shift
done
if [[ $# -eq 0 ]]; then echo "srun: fatal: No command given to execute." >&2; exit 1; fi
if [[ -z ${SLURM_JOB_ID:-} ]]; then
  echo "srun: error: not inside a simulated job (no SLURM_JOB_ID)" >&2; exit 1
fi
if [[ -n $image ]]; then
  # Pyxis treats only values starting with / or . as a squashfs file; anything else is a
  # registry reference, which a simulated node cannot import.
  if [[ $image != /* && $image != .* ]]; then
    echo "pyxis: importing docker image: $image" >&2
    echo "pyxis: child 1 failed with error code: 1" >&2
    echo "pyxis: failed to import docker image (simulator: registry images are not supported)" >&2
    echo "srun: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1" >&2
    exit 1
  fi
  if [[ ! -f $image ]]; then
    echo "pyxis: failed to create container filesystem: cannot open $image" >&2
    echo "srun: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1" >&2
    exit 1
  fi
fi
if [[ -n $het ]]; then
  var="SLURM_JOB_NODELIST_HET_GROUP_$het"
  if [[ -z ${!var+x} ]]; then
    echo "srun: error: Attempt to run a job step with het group value of $het, but the job allocation has maximum value of $(( ${SLURM_HET_SIZE:-1} - 1 ))" >&2
    exit 1
  fi
  alloc="${!var}"
else
  alloc="${SLURM_JOB_NODELIST:-}"
fi
mapfile -t pool < <(expand_hostlist "$alloc")
if [[ -n $nodelist ]]; then
  mapfile -t wanted < <(expand_hostlist "$nodelist")
  for w in "${wanted[@]}"; do
    found=0; for p in "${pool[@]}"; do [[ $p == "$w" ]] && found=1; done
    if [[ $found -eq 0 ]]; then
      echo "srun: error: Requested node configuration is not available ($w not in allocation)" >&2
      exit 1
    fi
  done
  pool=("${wanted[@]}")
fi
if [[ -n $exclude ]]; then
  mapfile -t ex < <(expand_hostlist "$exclude")
  kept=()
  for p in "${pool[@]}"; do
    skip=0; for e in "${ex[@]}"; do [[ $p == "$e" ]] && skip=1; done
    [[ $skip -eq 0 ]] && kept+=("$p")
  done
  pool=("${kept[@]}")
fi
if [[ -z $nodes ]]; then
  if [[ -n $ntasks && -n $per_node ]]; then
    nodes=$(( (ntasks + per_node - 1) / per_node ))
  elif [[ -n $ntasks && $ntasks -lt ${#pool[@]} ]]; then
    nodes=$ntasks
  else
    nodes=${#pool[@]}
  fi
fi
nodes="${nodes%%-*}"
if [[ $nodes -gt ${#pool[@]} || $nodes -lt 1 ]]; then
  echo "srun: error: Only allocated ${#pool[@]} nodes asked for $nodes" >&2; exit 1
fi
[[ -z $ntasks ]] && ntasks=$(( nodes * ${per_node:-1} ))
step_nodes=("${pool[@]:0:nodes}")
tpn=$(( (ntasks + nodes - 1) / nodes ))
# Step ids count up per job, as Slurm's do.
counter="${TUNEPLANE_SLURMSIM_JOB_DIR:-/tmp}/step_counter"
step=$( (flock 9; s=$(cat "$counter" 2>/dev/null || echo -1); s=$((s + 1)); echo "$s" >"$counter"; echo "$s") 9>"$counter.lock")
step_nodelist=$(IFS=,; echo "${step_nodes[*]}")
run_task() {
  local rank="$1" nodeid="$2" node="$3" local_id="$4"; shift 4
  local -a env_args=(SLURM_PROCID="$rank" SLURM_NODEID="$nodeid" SLURMD_NODENAME="$node"
    SLURM_LOCALID="$local_id" SLURM_STEP_ID="$step" SLURM_STEPID="$step" SLURM_NTASKS="$ntasks"
    SLURM_NPROCS="$ntasks" SLURM_STEP_NUM_NODES="$nodes" SLURM_STEP_NUM_TASKS="$ntasks"
    SLURM_STEP_NODELIST="$step_nodelist" SLURM_TOPOLOGY_ADDR="$node")
  local -a base=(env)
  case "$export_spec" in
    NONE|NONE,*) base=(env -i "PATH=$PATH" "HOME=${HOME:-/}")
                 for v in $(compgen -e); do [[ $v == SLURM* ]] && base+=("$v=${!v}"); done ;;
  esac
  IFS=',' read -ra items <<<"$export_spec"
  for item in "${items[@]}"; do
    case "$item" in ALL|NONE|"") ;; *=*) env_args+=("$item") ;;
      *) [[ -n ${!item+x} ]] && env_args+=("$item=${!item}") ;; esac
  done
  if [[ ${#tp_binds[@]} -gt 0 ]]; then
    local -a args=()
    local v
    for v in "$@"; do tp_map "$v"; args+=("$tp_mapped"); done
    set -- "${args[@]}"
    for v in $(compgen -e); do
      if [[ $v == TUNEPLANE_* ]]; then tp_map "${!v}"; env_args+=("$v=$tp_mapped"); fi
    done
    tp_map "$workdir"; workdir=$tp_mapped
  fi
  if [[ -n $workdir ]]; then cd "$workdir" || exit 1; fi
  exec "${base[@]}" "${env_args[@]}" "$@"
}
pids=()
# Set before the tasks start, as srun handles signals from its start. Other signals are
# passed on to the tasks, as srun does (SIGUSR1, SIGUSR2). A step of a het
# job's first component whose srun is ended by a signal takes the whole het job with it on
# Slurm 26.05.3 (srun's abort reaches slurmctld as a cancel of the job, which then signals
# every process of it and ends CANCELLED): the simulator is told, and the job's processes
# get SIGTERM.
on_stop() {
  trap - TERM INT
  kill -TERM "${pids[@]}" 2>/dev/null
  if [[ ${SLURM_HET_SIZE:-1} -gt 1 && ${het:-0} == 0 && -n ${TUNEPLANE_SLURMSIM_JOB_DIR:-} ]]; then
    : >"$TUNEPLANE_SLURMSIM_JOB_DIR/)sh" +
         std::string(kHetCancelMark) + R"sh("
    kill -TERM 0 2>/dev/null
  fi
}
trap on_stop TERM INT
trap 'kill -USR1 "${pids[@]}" 2>/dev/null' USR1
trap 'kill -USR2 "${pids[@]}" 2>/dev/null' USR2
for ((rank = 0; rank < ntasks; rank++)); do
  nodeid=$(( rank / tpn ))
  run_task "$rank" "$nodeid" "${step_nodes[nodeid]}" $(( rank % tpn )) "$@" &
  pids+=($!)
done
worst=0
for pid in "${pids[@]}"; do
  # A trapped signal (one passed on) ends `wait` early: wait again while the task lives.
  while :; do
    wait "$pid"; rc=$?
    kill -0 "$pid" 2>/dev/null || break
  done
  [[ $rc -gt $worst ]] && worst=$rc
done
exit "$worst"
)sh";
}

std::string scontrolStandin() {
  return std::string() + R"sh(#!/bin/bash
# scontrol — SIMULATOR STAND-IN written by tuneplane-slurmsim. This is NOT Slurm's scontrol.
# Supports only what a batch script needs locally, without a controller:
#   scontrol show hostnames [LIST]   (LIST defaults to $SLURM_JOB_NODELIST)
#   scontrol show hostlist  a,b,...  (prints the list back, joined by commas)
set -u
)sh" + std::string(kExpandHostlist) +
         R"sh(
case "${1:-} ${2:-}" in
  "show hostnames"|"show hostname")
    expand_hostlist "${3:-${SLURM_JOB_NODELIST:-}}" ;;
  "show hostlist"|"show hostlistsorted")
    echo "${3:-}" | tr '\n' ',' | sed 's/,$//'; echo ;;
  "--help "*|"-h "*|"help "*)
    sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//' ;;
  *)
    echo "scontrol (tuneplane-slurmsim stand-in): only 'show hostnames' is supported" >&2
    exit 1 ;;
esac
)sh";
}

std::string apptainerStandin() {
  return std::string() + R"sh(#!/bin/bash
# apptainer — SIMULATOR STAND-IN written by tuneplane-slurmsim. This is NOT Apptainer.
# `apptainer exec [--nv] [--bind|-B SRC[:DST[:ro]]]… [--pwd|--cwd DIR] [--cleanenv|-e]
#  [--env K=V]… IMAGE CMD…` checks that IMAGE exists, exports APPTAINERENV_NAME as NAME,
# changes to --pwd and runs CMD on the host (no container; a bind to another path is mapped:
# see tp_map).
set -u
usage() { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; }
)sh" + std::string(kMapBinds) +
         R"sh(
case "${1:-}" in
  -h|--help|help|"") usage; exit 0 ;;
  --version|version) echo "apptainer version 1.5.0 (tuneplane-slurmsim stand-in)"; exit 0 ;;
  exec) shift ;;
  *) echo "FATAL:   apptainer stand-in supports only 'exec' (got '$1')" >&2; exit 255 ;;
esac
pwd_dir="" clean=0 envs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nv|--nvccli|--rocm|--containall|-C|--contain|--writable-tmpfs|--no-home|--no-mount=*|\
    --no-privs|--fakeroot|--no-init|--userns|-u|--compat) ;;
    --bind=*) tp_add_binds "${1#*=}" ;;
    -B|--bind) tp_add_binds "${2:-}"; shift ;;
    --mount=*|--home=*|--overlay=*|--security=*|--env-file=*) ;;
    --mount|-H|--home|-o|--overlay|--security|--env-file|--no-mount) shift ;;
    --pwd=*|--cwd=*) pwd_dir="${1#*=}" ;;
    --pwd|--cwd) pwd_dir="$2"; shift ;;
    -e|--cleanenv) clean=1 ;;
    --env=*) envs+=("${1#*=}") ;;
    --env) envs+=("$2"); shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "Error: unknown flag: $1" >&2; exit 255 ;;
    *) break ;;
  esac
  shift
done
if [[ $# -lt 2 ]]; then echo "FATAL:   exec needs an IMAGE and a command" >&2; exit 255; fi
image="$1"; shift
if [[ ! -e $image ]]; then
  echo "FATAL:   could not open image $image: failed to retrieve path for $image: lstat $image: no such file or directory" >&2
  exit 255
fi
declare -a exports=()
for v in $(compgen -e); do
  [[ $v == APPTAINERENV_* ]] && exports+=("${v#APPTAINERENV_}=${!v}")
done
exports+=(${envs[@]+"${envs[@]}"})
if [[ ${#tp_binds[@]} -gt 0 ]]; then
  mapped_exports=() args=()
  for e in ${exports[@]+"${exports[@]}"}; do
    if [[ $e == TUNEPLANE_*=* ]]; then tp_map "${e#*=}"; e="${e%%=*}=$tp_mapped"; fi
    mapped_exports+=("$e")
  done
  exports=(${mapped_exports[@]+"${mapped_exports[@]}"})
  for v in "$@"; do tp_map "$v"; args+=("$tp_mapped"); done
  set -- "${args[@]}"
  tp_map "$pwd_dir"; pwd_dir=$tp_mapped
fi
base=(env)
if [[ $clean -eq 1 ]]; then
  base=(env -i "PATH=${PATH}" "HOME=${HOME:-/}" "LANG=${LANG:-C.UTF-8}" "TERM=${TERM:-dumb}")
fi
if [[ -n $pwd_dir ]]; then cd "$pwd_dir" || { echo "FATAL:   cannot chdir to $pwd_dir" >&2; exit 255; }; fi
exec "${base[@]}" "${exports[@]}" "$@"
)sh";
}

Status writeStandins(const std::string& bin_dir) {
  std::error_code ec;
  std::filesystem::create_directories(bin_dir, ec);
  if (ec) return fail("sim.standins", bin_dir, ec.message());
  const std::pair<const char*, std::string> files[] = {
      {"srun", srunStandin()}, {"scontrol", scontrolStandin()}, {"apptainer", apptainerStandin()}};
  for (const auto& [name, text] : files) {
    const std::string path = bin_dir + "/" + name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out || chmod(path.c_str(), 0755) != 0)
      return fail("sim.standins", path, "cannot write stand-in");
  }
  return ok();
}

}  // namespace tuneplane::sim
