// See ray_programs.h. The programs avoid single quotes only for the script's readability
// (shellQuote() would handle them).
#include "slurm/ray_programs.h"

namespace tuneplane::slurm {

const char* const kRayNodeProgram =
    R"(import importlib.util, os, re, shutil, signal, socket, subprocess, sys, tempfile, time
role = sys.argv[1]
split = sys.argv.index("--")
flags, ray = sys.argv[2:split], sys.argv[split + 1:]


def free_port():
    with socket.socket() as probe:
        probe.bind(("", 0))
        return probe.getsockname()[1]


args = list(ray)
for flag in flags:
    if flag == "--ray-client-server-port" and importlib.util.find_spec("grpc") is None:
        continue
    args.append(flag + "=" + str(free_port()))
temp_dir = tempfile.mkdtemp(prefix="tp-ray-") if role == "head" else None
if temp_dir:
    args.append("--temp-dir=" + temp_dir)
try:
    child = subprocess.Popen(args, stdout=sys.stderr)
except OSError as error:
    print("tuneplane: cannot run", " ".join(ray[:1]), "-", error, file=sys.stderr)
    sys.exit(127)
for signum in (signal.SIGTERM, signal.SIGINT):
    signal.signal(signum, lambda number, frame: child.send_signal(number))
while temp_dir and child.poll() is None:
    try:
        with open(os.path.join(temp_dir, "ray_current_cluster")) as reported:
            address = reported.read().strip()
    except OSError:
        address = ""
    if re.fullmatch(r"\S+:[0-9]+", address):
        print(address, flush=True)
        break
    time.sleep(0.2)
code = child.wait()
if temp_dir:
    shutil.rmtree(temp_dir, ignore_errors=True)
sys.exit(code if code >= 0 else 128 - code)
)";

const char* const kRayWaitProgram = R"(import sys, time
import ray
address, want, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
deadline = time.monotonic() + timeout
alive = 0
while True:
    try:
        if not ray.is_initialized():
            ray.init(address=address, logging_level="ERROR")
        alive = sum(1 for node in ray.nodes() if node["Alive"])
    except Exception as error:
        print("tuneplane: waiting for Ray at", address, "-", error, file=sys.stderr)
    if alive >= want:
        sys.exit(0)
    if time.monotonic() >= deadline:
        print("tuneplane:", alive, "of", want, "Ray nodes had joined", address, "after", timeout,
              "s", file=sys.stderr)
        sys.exit(1)
    time.sleep(1)
)";

}  // namespace tuneplane::slurm
