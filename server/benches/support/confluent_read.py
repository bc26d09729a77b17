"""One read of every consumer group's lag with a plain confluent-kafka
(2.16.1, librdkafka underneath) AdminClient, as a platform team would
write it: the peer the pass bench (benches/pass.rs) measures our read
against, in the same run on the same broker.

It lists the groups, reads their committed offsets with 64
list_consumer_group_offsets calls in flight (the API takes one group a
call), then the latest offset of every committed partition with one
list_offsets call. That is the read ours does for lag (ours also reads
topic metadata and log-start offsets, which lag needs when retention has
passed a commit).

Usage: confluent_read.py BOOTSTRAP
The cluster's security, if any, as librdkafka settings in the environment:
CONFLUENT_READ_CONFIG='{"security.protocol": "SASL_SSL", ...}' (the
bench passes the ones our read uses, so both sign in alike).
Prints one JSON object: total and per-phase seconds, groups, committed
offsets read, partitions whose end was read, and groups that failed.
Exits non-zero if a call raised.
"""

import concurrent.futures
import json
import os
import sys
import time

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

IN_FLIGHT = 64
TIMEOUT_S = 30

bootstrap = sys.argv[1]
phases = {}
started = time.perf_counter()
mark = started


def phase(name):
    global mark
    now = time.perf_counter()
    phases[name] = round(now - mark, 4)
    mark = now


admin = AdminClient(
    {"bootstrap.servers": bootstrap, **json.loads(os.environ.get("CONFLUENT_READ_CONFIG", "{}"))}
)

listed = admin.list_consumer_groups(request_timeout=TIMEOUT_S).result()
groups = [g.group_id for g in listed.valid]
phase("list_groups")

committed = {}
failed = 0
pending = set()
queue = list(groups)
while queue or pending:
    while queue and len(pending) < IN_FLIGHT:
        group = queue.pop()
        futures = admin.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group)], request_timeout=TIMEOUT_S
        )
        pending.update(futures.values())
    done, pending = concurrent.futures.wait(
        pending, return_when=concurrent.futures.FIRST_COMPLETED
    )
    for f in done:
        try:
            answer = f.result()
        except Exception:  # a group that could not be read: counted, not zero
            failed += 1
            continue
        committed[answer.group_id] = {
            (tp.topic, tp.partition): tp.offset
            for tp in answer.topic_partitions
            if tp.error is None and tp.offset >= 0
        }
phase("committed_offsets")

partitions = {tp for offsets in committed.values() for tp in offsets}
ends = {}
if partitions:
    answers = admin.list_offsets(
        {TopicPartition(t, p): OffsetSpec.latest() for (t, p) in partitions},
        request_timeout=TIMEOUT_S,
    )
    for tp, f in answers.items():
        ends[(tp.topic, tp.partition)] = f.result().offset
phase("log_end")

lag = sum(
    max(ends[tp] - offset, 0)
    for offsets in committed.values()
    for tp, offset in offsets.items()
    if tp in ends
)
print(
    json.dumps(
        {
            "total_s": round(time.perf_counter() - started, 4),
            "phases": phases,
            "groups": len(groups),
            "committed": sum(len(o) for o in committed.values()),
            "ends": len(ends),
            "failed_groups": failed,
            "total_lag": lag,
        }
    )
)
