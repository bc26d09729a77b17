-- The lineage bench's second sender (benches/lineage.rs, step 3b): wrk
-- POSTs one RunEvent a request to /api/v1/lineage, each event distinct
-- (its run id and job name carry a counter), in the shape of the
-- in-process sender's events: one input topic of a tier, one output of
-- the next. wrk runs in a process of its own (C, its connections on one
-- epoll thread), so the sender's share of the cores the server and
-- Postgres share is told apart from the server's.
--
--   wrk -t1 -c32 -d60s -s lineage_wrk.lua http://ADDR/api/v1/lineage -- TOKEN FIRST JOBS TOPICS
--
-- Prints one line the bench parses: "streamkeeper-wrk created=… other=…
-- throttled=… errors=… p50_us=… p99_us=… max_us=…". A response does not
-- say which request it answers, so the bench checks 201s by count.

local ffi = require("ffi")
ffi.cdef[[
  typedef struct { long tv_sec; long tv_usec; } sk_timeval;
  int gettimeofday(sk_timeval *tv, void *tz);
]]
local tv = ffi.new("sk_timeval")

-- The time of sending, to the microsecond, as a live stream's events
-- carry (so each one moves its nodes' and edges' last-seen times).
local function now()
  ffi.C.gettimeofday(tv, nil)
  return os.date("!%Y-%m-%dT%H:%M:%S", tonumber(tv.tv_sec)) .. string.format(".%06dZ", tonumber(tv.tv_usec))
end

local threads = {}

function setup(thread)
  thread:set("index", #threads)
  table.insert(threads, thread)
end

local next_j, jobs, per_tier

function init(args)
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer " .. args[1]
  wrk.headers["Content-Type"] = "application/json"
  -- Threads count from far apart, so that events never repeat.
  next_j = tonumber(args[2]) + index * 100000000
  jobs = tonumber(args[3])
  per_tier = tonumber(args[4]) / 100
  math.randomseed(11 + index)
  created, other, throttled = 0, 0, 0
end

local producer = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"

local function topic(tier)
  local i = (tier % 100) * per_tier + math.random(0, per_tier - 1)
  return string.format(
    '{"facets": {}, "inputFacets": {}, "name": "topic-%d", "namespace": "kafka://SASL_SSL://broker-%d:9093"}',
    i, i % 3)
end

function request()
  local j = next_j
  next_j = next_j + 1
  local tier = math.floor(((j % jobs) * 100) / jobs)
  local body = string.format(
    '{"eventTime": "%s", "eventType": "RUNNING", "inputs": [%s], '
    .. '"job": {"facets": {"jobType": {"_producer": "%s", '
    .. '"_schemaURL": "https://openlineage.io/spec/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet", '
    .. '"integration": "FLINK", "jobType": "JOB", "processingType": "STREAMING"}}, "name": "job-%d", "namespace": "bench"}, '
    .. '"outputs": [%s], "producer": "%s", "run": {"facets": {}, "runId": "0194b3a2-7c1e-7000-8000-%012d"}, '
    .. '"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}',
    now(), topic(tier), producer, j % jobs, topic(tier + 1), producer, j)
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status == 201 then
    created = created + 1
  elseif status == 429 then
    throttled = throttled + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local c, o, t = 0, 0, 0
  for _, thread in ipairs(threads) do
    c = c + thread:get("created")
    o = o + thread:get("other")
    t = t + thread:get("throttled")
  end
  io.write(string.format(
    "streamkeeper-wrk created=%d other=%d throttled=%d errors=%d p50_us=%d p99_us=%d max_us=%d\n",
    c, o, t,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
