"""Sends OpenLineage events with the real openlineage-python client (1.54),
over its HTTP transport with an api key, as a producer would.

Usage: openlineage_client.py URL API_KEY gzip|plain RUN_ID KAFKA_NS
Prints one line per emitted event; exits non-zero if the client raised.
"""

import sys

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    JobEvent,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.facet_v2 import job_type_job, ownership_job, schema_dataset

url, api_key, compression, run_id, kafka_ns = sys.argv[1:6]
transport = {
    "type": "http",
    "url": url,
    "endpoint": "api/v1/lineage",
    "auth": {"type": "api_key", "apiKey": api_key},
    # Fail at once instead of retrying: a refusal is what the test looks for.
    "retry": {"total": 0},
}
if compression == "gzip":
    transport["compression"] = "gzip"
client = OpenLineageClient(config={"transport": transport})

streaming = {
    "jobType": job_type_job.JobTypeJobFacet(
        processingType="STREAMING", integration="FLINK", jobType="JOB"
    ),
    "ownership": ownership_job.OwnershipJobFacet(
        owners=[ownership_job.Owner(name="team:enrichment", type="TEAM")]
    ),
}
orders = InputDataset(
    namespace=kafka_ns,
    name="orders",
    facets={
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name="order_id", type="long")]
        )
    },
)
enriched = OutputDataset(namespace=kafka_ns, name="orders-enriched")
table = OutputDataset(namespace="postgres://127.0.0.1:5432", name="shop.public.orders_enriched")

events = [
    # A streaming job's START: its edges must show at once (Marquez waits for COMPLETE).
    RunEvent(
        eventType=RunState.START,
        eventTime="2026-01-01T00:00:00Z",
        run=Run(runId=run_id),
        job=Job(namespace="sk-test", name=f"orders_enricher_{compression}", facets=streaming),
        inputs=[orders],
        outputs=[enriched],
    ),
    RunEvent(
        eventType=RunState.RUNNING,
        eventTime="2026-01-01T00:01:00Z",
        run=Run(runId=run_id),
        job=Job(namespace="sk-test", name=f"orders_enricher_{compression}"),
        inputs=[orders],
        outputs=[enriched],
    ),
    # Static lineage: a sink job declared without a run.
    JobEvent(
        eventTime="2026-01-01T00:02:00Z",
        job=Job(namespace="sk-test", name=f"enriched_sink_{compression}"),
        inputs=[InputDataset(namespace=kafka_ns, name="orders-enriched")],
        outputs=[table],
    ),
    DatasetEvent(
        eventTime="2026-01-01T00:03:00Z",
        dataset=StaticDataset(namespace=kafka_ns, name="orders"),
    ),
]
for e in events:
    client.emit(e)
    print(type(e).__name__, flush=True)
