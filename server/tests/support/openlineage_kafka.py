"""Sends OpenLineage events with the real openlineage-python client (1.54)
over its Kafka transport (confluent-kafka), as a producer would.

Usage: openlineage_kafka.py BOOTSTRAP TOPIC COUNT FIRST [PAUSE_S]
Emits COUNT RunEvents (PAUSE_S seconds apart, as a running job would), numbered from FIRST (the same numbers give the same
events, byte for byte), each a streaming job reading the topic `orders` of
the cluster at BOOTSTRAP. Prints one line per event; exits non-zero if the
client raised. SK_OL_KAFKA_CONFIG, a JSON object, adds to the producer's
librdkafka settings (a secured broker's security.protocol, sasl.*, ssl.*).
"""

import json
import os
import sys
import time

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import job_type_job

bootstrap, topic, count, first = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
client = OpenLineageClient(
    config={
        "transport": {
            "type": "kafka",
            "topic": topic,
            "config": {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                **json.loads(os.environ.get("SK_OL_KAFKA_CONFIG", "{}")),
            },
            # Each emit waits for the broker: the event is on the topic when it returns.
            "flush": True,
        }
    }
)
kafka_ns = f"kafka://{bootstrap}"
streaming = {
    "jobType": job_type_job.JobTypeJobFacet(
        processingType="STREAMING", integration="FLINK", jobType="JOB"
    )
}
for i in range(first, first + count):
    client.emit(
        RunEvent(
            eventType=RunState.RUNNING,
            eventTime=f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z",
            run=Run(runId=f"0194b3a2-7c1e-7000-8000-{i:012d}"),
            job=Job(namespace="sk-kafka", name=f"enricher_{i % 7}", facets=streaming),
            inputs=[InputDataset(namespace=kafka_ns, name="orders")],
            outputs=[OutputDataset(namespace=kafka_ns, name=f"orders-enriched-{i % 7}")],
        )
    )
    print(i, flush=True)
    time.sleep(pause)
