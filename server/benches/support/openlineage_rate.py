"""Sends RunEvents with the real openlineage-python client (1.54) over its
HTTP transport for a while, as fast as one client goes: the lineage
bench's "real client" figure.

Usage: openlineage_rate.py URL API_KEY SECONDS WORKER
Prints "sent N" at the end; exits non-zero if the client raised.
"""

import sys
import time
import uuid

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import job_type_job

url, api_key, seconds, worker = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
client = OpenLineageClient(
    config={
        "transport": {
            "type": "http",
            "url": url,
            "endpoint": "api/v1/lineage",
            "auth": {"type": "api_key", "apiKey": api_key},
        }
    }
)
facets = {
    "jobType": job_type_job.JobTypeJobFacet(
        processingType="STREAMING", integration="FLINK", jobType="JOB"
    )
}
ns = "kafka://SASL_SSL://broker-0:9093"
sent = 0
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    i = sent
    client.emit(
        RunEvent(
            eventType=RunState.RUNNING,
            eventTime=time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            run=Run(runId=str(uuid.uuid4())),
            job=Job(namespace="bench-python", name=f"job-{worker}-{i % 500}", facets=facets),
            producer="https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python",
            inputs=[InputDataset(namespace=ns, name=f"topic-{i % 50000}")],
            outputs=[OutputDataset(namespace=ns, name=f"topic-{(i * 7 + 1) % 50000}")],
        )
    )
    sent += 1
print(f"sent {sent}")
