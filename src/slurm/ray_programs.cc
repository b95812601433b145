// See ray_programs.h. The programs avoid single quotes only for the script's readability
// (shellQuote() would handle them).
#include "slurm/ray_programs.h"

namespace tuneplane::slurm {

const char* const kRayNodeProgram =
    R"(import importlib.util, os, re, shutil, signal, socket, subprocess, sys, tempfile, time
role = sys.argv[1]
split = sys.argv.index("--")
flags, ray = sys.argv[2:split], sys.argv[split + 1:]
flags = [flag for flag in flags
         if flag != "--ray-client-server-port" or importlib.util.find_spec("grpc") is not None]
temp_dir = tempfile.mkdtemp(prefix="tp-ray-") if role == "head" else None
# A port found free can be taken before Ray binds it (by another Ray on this node): a head
# that exits before it reports its address is started again, with other ports, twice.
starts = 3 if temp_dir and flags else 1
child = None
stopping = False


def free_ports(count):
    probes = []
    try:
        for _ in range(count):
            probes.append(socket.socket())
            probes[-1].bind(("", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


# SIGUSR1 is how the batch script asks a node to stop (srun passes it on to the task); Ray
# gets SIGTERM for it.
def stop(number, frame):
    global stopping
    stopping = True
    if child is not None:
        child.send_signal(signal.SIGTERM if number == signal.SIGUSR1 else number)


for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
    signal.signal(signum, stop)
for start in range(1, starts + 1):
    args = list(ray) + [flag + "=" + str(port) for flag, port in zip(flags, free_ports(len(flags)))]
    if temp_dir:
        args.append("--temp-dir=" + temp_dir)
    try:
        child = subprocess.Popen(args, stdout=sys.stderr)
    except OSError as error:
        print("tuneplane: cannot run", " ".join(ray[:1]), "-", error, file=sys.stderr)
        sys.exit(127)
    if stopping:  # a signal came before there was a child to pass it to
        child.terminate()
    reported = False
    while temp_dir and not stopping and child.poll() is None:
        try:
            with open(os.path.join(temp_dir, "ray_current_cluster")) as reported_file:
                address = reported_file.read().strip()
        except OSError:
            address = ""
        if re.fullmatch(r"\S+:[0-9]+", address):
            print(address, flush=True)
            reported = True
            break
        time.sleep(0.2)
    code = child.wait()
    if reported or stopping or code == 0 or start == starts:
        break
    print("tuneplane: the Ray head exited with code", code, "before it reported its address;",
          "starting it again with other ports", file=sys.stderr, flush=True)
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
