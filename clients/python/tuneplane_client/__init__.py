"""A Python client of TunePlane's /v1 API (docs/api.md): submit jobs exactly once, follow
them, read their logs and fetch their outputs. Standard library only.

    from tuneplane_client import Client, custom_job
    client = Client()                      # TUNEPLANE_SERVER, TUNEPLANE_TOKEN, as the CLI
    job = client.submit(custom_job("hello", ["python3", "-c", "print('hi')"],
                                   runtime_id="custom-demo"))
    print(client.wait(job["id"], timeout=600)["phase"], client.logs(job["id"]))
"""

from .client import Client, SubmittedJob
from .errors import SubmitOutcomeUnknown, TunePlaneError, WaitTimeout
from .spec import custom_job, spec_to_json, spec_to_yaml, with_workdir
from .workdir import WorkdirError

__all__ = ["Client", "SubmittedJob", "TunePlaneError", "SubmitOutcomeUnknown", "WaitTimeout",
           "WorkdirError", "custom_job", "spec_to_json", "spec_to_yaml", "with_workdir"]
__version__ = "0.1.0"
