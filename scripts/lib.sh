# Shared by scripts/demo and scripts/test: install what is missing, start and
# stop the throwaway Postgres and broker, build the site. Source it; it sets
# no traps itself (the caller owns cleanup).

SK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SK_STATE="${SK_STATE:-$SK_ROOT/.local}"
# Builds and installed tools live outside the clone, so a fresh clone (and a
# warm CI run) reuses them.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/streamkeeper/target}"
export PATH="$HOME/.cargo/bin:$PATH"
# A run builds each crate once: incremental caches would only cost disk
# (about 12 GB for the suite) and write time. Set it to 1 to iterate.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
NISSHI_VERSION="0.8.1"
# A checkout of its own may build its site apart (SK_SITE_DIR): the target
# dir is shared.
SITE_DIR="${SK_SITE_DIR:-$CARGO_TARGET_DIR/site}"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} (apt)"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Every checkout path gets its own build of the workspace's crates in the
# shared target directory: clones and worktrees add up to tens of GB. A full
# run needs about 15 GB. When less than 25 GiB is free, drop the incremental
# caches, the test binaries and the workspace crates' own builds (all
# rebuilt; the dependencies stay); when that is not enough, the whole debug
# build, rather than failing half-way with a full disk.
free_gib() { df -Pk "$CARGO_TARGET_DIR" 2>/dev/null | awk 'NR==2 {print int($4 / 1048576)}'; }
ensure_disk() {
  mkdir -p "$CARGO_TARGET_DIR"
  local free
  free=$(free_gib)
  [ -n "$free" ] && [ "$free" -lt 25 ] || return 0
  log "only $free GiB free: removing old test binaries, incremental caches and workspace builds"
  rm -rf "$CARGO_TARGET_DIR/debug/incremental"
  find "$CARGO_TARGET_DIR/debug/deps" -maxdepth 1 -type f \( -perm -u+x -size +50M -o -name 'libstreamkeeper*' \) -delete 2>/dev/null
  free=$(free_gib)
  [ "$free" -lt 25 ] || return 0
  log "still only $free GiB free: removing the whole debug build"
  rm -rf "$CARGO_TARGET_DIR/debug"
  return 0
}

# librdkafka is built with TLS (SSL and SASL_SSL listeners, SCRAM): it
# links the system OpenSSL, found through pkg-config. binutils' strip
# trims the release binary.
ensure_build_deps() {
  apt_install libssl-dev pkg-config binutils
}

ensure_toolchain() {
  (cd "$SK_ROOT" && rustc --version >/dev/null 2>&1) && return 0
  log "installing the Rust toolchain pinned in rust-toolchain.toml"
  (cd "$SK_ROOT" && rustup toolchain install) >&2
}

# The wasm-bindgen CLI must match the wasm-bindgen crate to the patch.
ensure_wasm_bindgen() {
  local want
  want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$SK_ROOT/Cargo.lock")
  [ -n "$want" ] || die "wasm-bindgen is not in Cargo.lock"
  if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$want" ]; then
    log "installing wasm-bindgen-cli $want (a few minutes, once)"
    # No --locked: the CLI's own lockfile pins a crate version the registry no longer serves.
    # --force: cargo's own record may list a CLI whose binary is gone.
    (cd "$SK_ROOT" && cargo install --force wasm-bindgen-cli --version "$want") >&2
    [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" = "$want" ] \
      || die "wasm-bindgen-cli $want did not install"
  fi
}

# The broker with its postgres storage engine: SCRAM users need a store that
# keeps them (the in-memory one refuses --authentication). The default
# features would add libsql too, which the tests do not use. An older
# install without postgres (dynostore only) is replaced.
NISSHI_FEATURES="dynostore,postgres"
ensure_nisshi() {
  if [ "$(nisshi --version 2>/dev/null | awk '{print $2}')" != "$NISSHI_VERSION" ] \
    || ! nisshi --help 2>/dev/null | grep -q '^Storage engines:.*postgres'; then
    log "installing the nisshi broker $NISSHI_VERSION with $NISSHI_FEATURES (35 minutes measured on a busy 2-core machine, 21 of CPU; once)"
    (cd "$SK_ROOT" && cargo install --force nisshi --version "$NISSHI_VERSION" --locked \
      --no-default-features --features "$NISSHI_FEATURES") >&2
    [ "$(nisshi --version 2>/dev/null | awk '{print $2}')" = "$NISSHI_VERSION" ] \
      || die "nisshi $NISSHI_VERSION did not install"
  fi
}

# The real OpenLineage producer for the lineage tests: openlineage-python in a
# venv beside the builds. The tests find it through SK_OPENLINEAGE_PYTHON.
OPENLINEAGE_VERSION="1.54.0"
OPENLINEAGE_VENV="$HOME/.cache/streamkeeper/openlineage-$OPENLINEAGE_VERSION"
# Its Kafka transport needs confluent-kafka (the `kafka` extra, pinned here).
CONFLUENT_KAFKA_VERSION="2.16.1"
ensure_openlineage() {
  if ! "$OPENLINEAGE_VENV/bin/python" -c 'import openlineage.client, confluent_kafka' 2>/dev/null; then
    log "installing openlineage-python $OPENLINEAGE_VERSION with confluent-kafka (pip, into $OPENLINEAGE_VENV)"
    python3 -m venv "$OPENLINEAGE_VENV" >&2
    "$OPENLINEAGE_VENV/bin/pip" install -q "openlineage-python==$OPENLINEAGE_VERSION" \
      "confluent-kafka==$CONFLUENT_KAFKA_VERSION" >&2
  fi
  export SK_OPENLINEAGE_PYTHON="$OPENLINEAGE_VENV/bin/python"
}

# The peer of the pass bench (server/benches/pass.rs): a plain
# confluent-kafka script reading every group's lag, in a venv of its own.
# The bench finds it through STREAMKEEPER_CONFLUENT_PYTHON.
CONFLUENT_VENV="$HOME/.cache/streamkeeper/confluent-kafka-$CONFLUENT_KAFKA_VERSION"
ensure_confluent_kafka() {
  if ! "$CONFLUENT_VENV/bin/python" -c 'import confluent_kafka' 2>/dev/null; then
    log "installing confluent-kafka $CONFLUENT_KAFKA_VERSION (pip, into $CONFLUENT_VENV)"
    python3 -m venv "$CONFLUENT_VENV" >&2
    "$CONFLUENT_VENV/bin/pip" install -q "confluent-kafka==$CONFLUENT_KAFKA_VERSION" >&2
  fi
  export STREAMKEEPER_CONFLUENT_PYTHON="$CONFLUENT_VENV/bin/python"
}

# A dbt run made honestly for the lineage tests: dbt-ol (openlineage-dbt)
# with dbt-postgres against the test Postgres. dbt-core is held below 1.11,
# whose experimental parser downloads a binary outside the registries at
# install. The tests find dbt-ol through SK_DBT_OL.
DBT_OL_VENV="$HOME/.cache/streamkeeper/dbt-ol-$OPENLINEAGE_VERSION"
ensure_dbt_ol() {
  if ! [ -x "$DBT_OL_VENV/bin/dbt-ol" ] || ! [ -x "$DBT_OL_VENV/bin/dbt" ]; then
    log "installing dbt-ol $OPENLINEAGE_VERSION with dbt-postgres (pip, into $DBT_OL_VENV)"
    python3 -m venv "$DBT_OL_VENV" >&2
    "$DBT_OL_VENV/bin/pip" install -q "openlineage-dbt==$OPENLINEAGE_VERSION" \
      "dbt-postgres==1.11.0" "dbt-core==1.10.23" >&2
  fi
  export SK_DBT_OL="$DBT_OL_VENV/bin/dbt-ol"
}

# A real OpenID Connect provider for the single sign-on tests:
# oidc-provider-mock (authlib) in a venv beside the builds; 0.3.4 is the
# last release for Python 3.11. The tests find it through
# SK_OIDC_PROVIDER_PYTHON.
OIDC_MOCK_VERSION="0.3.4"
OIDC_MOCK_VENV="$HOME/.cache/streamkeeper/oidc-provider-mock-$OIDC_MOCK_VERSION"
ensure_oidc_provider() {
  if ! "$OIDC_MOCK_VENV/bin/python" -c 'import oidc_provider_mock' 2>/dev/null; then
    log "installing oidc-provider-mock $OIDC_MOCK_VERSION (pip, into $OIDC_MOCK_VENV)"
    python3 -m venv "$OIDC_MOCK_VENV" >&2
    "$OIDC_MOCK_VENV/bin/pip" install -q "oidc-provider-mock==$OIDC_MOCK_VERSION" >&2
  fi
  export SK_OIDC_PROVIDER_PYTHON="$OIDC_MOCK_VENV/bin/python"
}

# A real SMTP server for the mail tests (server/tests/smtp.rs and the
# approvers-told test): aiosmtpd (PyPI) in a venv beside the builds, run by
# server/tests/support/smtp_sink.py; openssl makes its test certificates.
# The tests find it through SK_SMTP_PYTHON.
AIOSMTPD_VERSION="1.4.6"
AIOSMTPD_VENV="$HOME/.cache/streamkeeper/aiosmtpd-$AIOSMTPD_VERSION"
ensure_smtp_server() {
  apt_install openssl
  if ! "$AIOSMTPD_VENV/bin/python" -c 'import aiosmtpd' 2>/dev/null; then
    log "installing aiosmtpd $AIOSMTPD_VERSION (pip, into $AIOSMTPD_VENV)"
    python3 -m venv "$AIOSMTPD_VENV" >&2
    "$AIOSMTPD_VENV/bin/pip" install -q "aiosmtpd==$AIOSMTPD_VERSION" >&2
  fi
  export SK_SMTP_PYTHON="$AIOSMTPD_VENV/bin/python"
}

# Prometheus: promtool checks and unit-tests the shipped alerting rules
# (deploy/prometheus/), and the server scrapes a test's /metrics
# (server/tests/prometheus.rs); Debian's prometheus package carries both,
# so this costs nothing beyond the one install.
ensure_prometheus() {
  { command -v promtool && command -v prometheus; } >/dev/null 2>&1 || apt_install prometheus
}

# Schemathesis (PyPI) fuzzes the whole OpenAPI document in scripts/test
# (the API fuzz step), in a venv of its own.
SCHEMATHESIS_VERSION="4.32.5"
SCHEMATHESIS_VENV="$HOME/.cache/streamkeeper/schemathesis-$SCHEMATHESIS_VERSION"
ensure_schemathesis() {
  if ! "$SCHEMATHESIS_VENV/bin/python" -c 'import schemathesis' 2>/dev/null; then
    log "installing schemathesis $SCHEMATHESIS_VERSION (pip, into $SCHEMATHESIS_VENV)"
    python3 -m venv "$SCHEMATHESIS_VENV" >&2
    "$SCHEMATHESIS_VENV/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" >&2
  fi
  export SK_SCHEMATHESIS="$SCHEMATHESIS_VENV/bin/st"
}

# Fuzzes every operation of the OpenAPI document of a server started here
# against the database $1, as an admin token holding every scope: any 5xx
# fails (`not_a_server_error`). Bounded: 15 examples per operation and
# 80 s in all (`--max-time`; the phases share it). The site is not needed
# for the API: an empty site root. The token holds every scope a token may
# (`approve` is retired: approvals are done in the console).
api_fuzz() {
  local db_url=$1 bin=$2 run=$3 port token pid status pw
  pw="fuzz-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  printf '%s\n' "$pw" | DATABASE_URL="$db_url" "$bin" user add fuzz-admin --role admin \
    --password-stdin >/dev/null || return 1
  token=$(DATABASE_URL="$db_url" "$bin" token create --user fuzz-admin --name fuzz \
    --scope read --scope write --scope check --scope propose \
    --scope lineage:write | tail -n 1) || return 1
  port=$(free_port)
  mkdir -p "$run/empty-site"
  DATABASE_URL="$db_url" STREAMKEEPER_BIND="127.0.0.1:$port" \
    STREAMKEEPER_PUBLIC_URL="http://127.0.0.1:$port" STREAMKEEPER_SITE_ROOT="$run/empty-site" \
    "$bin" serve >"$run/fuzz-server.log" 2>&1 &
  pid=$!
  wait_port "$port" 30 || { kill "$pid"; cat "$run/fuzz-server.log"; return 1; }
  (cd "$run" && timeout 120 "$SK_SCHEMATHESIS" run "http://127.0.0.1:$port/api/v1/openapi.json" \
    --checks not_a_server_error --max-examples 15 --max-time 80 --workers 2 \
    --request-timeout 10 --seed 39 --no-color \
    -H "Authorization: Bearer $token")
  status=$?
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if grep -q "panicked" "$run/fuzz-server.log"; then
    grep -m 5 "panicked" "$run/fuzz-server.log"
    status=1
  fi
  return "$status"
}

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  return 1
}

ensure_postgres() {
  pg_bin >/dev/null || apt_install postgresql
  pg_bin >/dev/null || die "initdb not found after installing postgresql"
}

# systemd-analyze checks the release's unit (scripts/test, release step).
ensure_systemd_analyze() {
  command -v systemd-analyze >/dev/null || apt_install systemd
}

# A real Alertmanager for the notification channels' tests
# (server/tests/notify.rs); Debian names its binary prometheus-alertmanager.
ensure_alertmanager() {
  command -v prometheus-alertmanager >/dev/null || command -v alertmanager >/dev/null \
    || apt_install prometheus-alertmanager
}

# stunnel (Debian's stunnel4) stands in front of a plaintext nisshi
# listener and requires a client certificate: nisshi cannot ask for one,
# so mutual TLS is tested through it (server/tests/broker_mtls.rs).
ensure_stunnel() {
  command -v stunnel4 >/dev/null || apt_install stunnel4
}

ensure_chromium() {
  [ -x /usr/bin/chromium ] || apt_install chromium
}

ensure_node_modules() {
  command -v npm >/dev/null || apt_install nodejs npm
  if [ ! -d "$SK_ROOT/end2end/node_modules/playwright-core" ] || [ ! -d "$SK_ROOT/end2end/node_modules/axe-core" ]; then
    log "installing playwright-core and axe-core (npm)"
    (cd "$SK_ROOT/end2end" && npm ci --no-audit --no-fund --silent) >&2
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

wait_port() { # port, seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# start_postgres DIR PORT: a throwaway cluster with trust auth on loopback.
start_postgres() {
  local dir=$1 port=$2 bin
  bin=$(pg_bin)
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres "$dir"
  as_pg "$bin/initdb" -D "$dir" -U postgres --auth=trust >"$dir.initdb.log" 2>&1 \
    || { cat "$dir.initdb.log" >&2; die "initdb failed"; }
  as_pg "$bin/pg_ctl" -D "$dir" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" \
    -l "$dir/log" start >/dev/null || { cat "$dir/log" >&2; die "Postgres did not start"; }
}

stop_postgres() {
  local dir=$1 bin
  bin=$(pg_bin) || return 0
  [ -f "$dir/postmaster.pid" ] && as_pg "$bin/pg_ctl" -D "$dir" -m immediate stop >/dev/null 2>&1
  return 0
}

# start_broker PORT LOGFILE: prints the broker's pid.
start_broker() {
  local port=$1 logf=$2
  nisshi broker --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" >"$logf" 2>&1 &
  local pid=$!
  wait_port "$port" 20 || { cat "$logf" >&2; die "the broker did not start"; }
  echo "$pid"
}

# make_test_certs DIR: a throwaway CA (DIR/ca.pem), a broker certificate it
# signed for IP 127.0.0.1 (DIR/broker.pem, DIR/broker.key), one for
# another name only, broker-1.example (DIR/other.pem, DIR/other.key), so a
# client connecting to 127.0.0.1 meets a hostname mismatch, and one for
# 127.0.0.1 that expired the day it was made (DIR/expired.pem, DIR/expired.key:
# `-days -1` puts its end a day before its start). For mutual TLS: a client
# certificate the CA signed (DIR/client.pem, DIR/client.key), and one
# signed by another CA (DIR/rogue-ca.pem) that the brokers do not trust
# (DIR/rogue.pem, DIR/rogue.key).
make_test_certs() {
  local dir=$1 name days san ca
  mkdir -p "$dir"
  for ca in ca rogue-ca; do
    openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=streamkeeper test $ca" \
      -keyout "$dir/$ca.key" -out "$dir/$ca.pem" 2>/dev/null || die "openssl could not make the test $ca"
  done
  while read -r name days san ca; do
    openssl req -newkey rsa:2048 -nodes -subj "/CN=${san#*:}" \
      -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null \
      && openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" \
        -CAcreateserial -days "$days" -extfile <(printf 'subjectAltName=%s\n' "$san") \
        -out "$dir/$name.pem" 2>/dev/null \
      || die "openssl could not make the $name certificate"
  done <<'CERTS'
broker 7 IP:127.0.0.1 ca
other 7 DNS:broker-1.example ca
expired -1 IP:127.0.0.1 ca
client 7 DNS:streamkeeper.test ca
rogue 7 DNS:streamkeeper.test rogue-ca
CERTS
}

# start_mtls_broker PORT LOGFILE CERTDIR: a broker reached over mutual TLS
# at PORT: stunnel takes TLS there with CERTDIR/broker.pem, requires a
# client certificate signed by CERTDIR/ca.pem, and passes the plain bytes
# to a nisshi on a loopback port of its own, which advertises PORT so
# clients come back through stunnel. Prints both pids.
start_mtls_broker() {
  local port=$1 logf=$2 dir=$3 inner pid conf tunnel
  inner=$(free_port)
  nisshi broker --listener-url "tcp://127.0.0.1:$inner" \
    --advertised-listener-url "tcp://127.0.0.1:$port" >"$logf" 2>&1 &
  pid=$!
  wait_port "$inner" 20 || { cat "$logf" >&2; die "the mTLS broker did not start"; }
  conf="$logf.stunnel.conf"
  cat >"$conf" <<CONF
foreground = yes
pid =
output = $logf.stunnel
[kafka]
accept = 127.0.0.1:$port
connect = 127.0.0.1:$inner
cert = $dir/broker.pem
key = $dir/broker.key
CAfile = $dir/ca.pem
verifyChain = yes
requireCert = yes
CONF
  stunnel4 "$conf" >/dev/null 2>&1 &
  tunnel=$!
  wait_port "$port" 20 || { kill "$pid" "$tunnel"; cat "$logf.stunnel" >&2; die "stunnel did not start"; }
  echo "$pid $tunnel"
}

# start_tls_broker PORT LOGFILE CERTDIR [CERT]: a broker whose listener
# accepts TLS only, with CERTDIR/CERT.pem (default broker); prints its pid.
start_tls_broker() {
  local port=$1 logf=$2 dir=$3 cert=${4:-broker}
  nisshi broker --listener-url "tcp://127.0.0.1:$port" \
    --advertised-listener-url "tcp://127.0.0.1:$port" \
    --cert "$dir/$cert.pem" --key "$dir/$cert.key" >"$logf" 2>&1 &
  local pid=$!
  wait_port "$port" 20 || { cat "$logf" >&2; die "the TLS broker did not start"; }
  echo "$pid"
}

# start_scram_broker PORT LOGFILE CERTDIR STORAGE_URL USER:PASSWORD…: a
# broker that takes TLS and SCRAM sign-ins only, its users (SCRAM-SHA-512
# and SCRAM-SHA-256 each) kept in the Postgres at STORAGE_URL. `nisshi
# user create` speaks plaintext without a sign-in, so the users are made
# through a plain broker on the same storage first, then that one stops.
start_scram_broker() {
  local port=$1 logf=$2 dir=$3 storage=$4 setup pid user mech
  shift 4
  setup=$(free_port)
  nisshi broker --listener-url "tcp://127.0.0.1:$setup" --advertised-listener-url "tcp://127.0.0.1:$setup" \
    --storage-engine "$storage" >"$logf.setup" 2>&1 &
  pid=$!
  wait_port "$setup" 30 || { cat "$logf.setup" >&2; die "the SCRAM broker's setup did not start"; }
  for user in "$@"; do
    for mech in scram512 scram256; do
      nisshi user create --broker "tcp://127.0.0.1:$setup" --mechanism "$mech" \
        "${user%%:*}" "${user#*:}" >/dev/null 2>>"$logf.setup" \
        || { kill "$pid"; cat "$logf.setup" >&2; die "nisshi could not create user ${user%%:*}"; }
    done
  done
  kill "$pid"
  wait "$pid" 2>/dev/null
  nisshi broker --listener-url "tcp://127.0.0.1:$port" --advertised-listener-url "tcp://127.0.0.1:$port" \
    --storage-engine "$storage" --authentication \
    --cert "$dir/broker.pem" --key "$dir/broker.key" >"$logf" 2>&1 &
  pid=$!
  wait_port "$port" 30 || { cat "$logf" >&2; die "the SCRAM broker did not start"; }
  echo "$pid"
}

# The islands' wasm, its JS glue and the CSS, each with a gzip variant,
# into $SITE_DIR/pkg.
build_wasm() {
  log "building the wasm (hydrate: the islands)"
  (cd "$SK_ROOT" && cargo build -q -p streamkeeper-app --lib --target wasm32-unknown-unknown \
    --features hydrate --profile wasm-release) >&2 || return 1
  local stage="$SITE_DIR/.build" f
  rm -rf "$stage"
  mkdir -p "$stage" "$SITE_DIR/pkg"
  wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section --out-dir "$stage" --out-name streamkeeper \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/wasm-release/streamkeeper_app.wasm" || return 1
  cp "$SK_ROOT/style/main.css" "$stage/streamkeeper.css"
  # -n: no name or time in the gzip header, so the same file zips to the
  # same bytes.
  for f in streamkeeper_bg.wasm streamkeeper.js streamkeeper.css; do
    gzip -9 -n -k -f "$stage/$f"
  done
  # Only what changed is replaced: an unchanged site keeps its file times,
  # so the release binary that carries it is not rebuilt for nothing.
  for f in "$stage"/*; do
    cmp -s "$f" "$SITE_DIR/pkg/${f##*/}" || cp "$f" "$SITE_DIR/pkg/"
  done
  rm -rf "$stage"
}

# The debug server with the site beside it (STREAMKEEPER_SITE_ROOT=$SITE_DIR),
# for `SK_DEMO_BUILD=debug scripts/demo`.
build_site() {
  build_wasm || return 1
  log "building the server (debug)"
  (cd "$SK_ROOT" && cargo build -q -p streamkeeper-server) >&2 || return 1
  # A copy: another checkout sharing the target dir may rebuild the binary
  # while this one runs it. It lives in the caller's run folder (the first
  # argument), which the next run clears, so copies do not pile up.
  mkdir -p "${1:-$SK_STATE}/bin"
  SK_BIN="${1:-$SK_STATE}/bin/streamkeeper"
  cp "$CARGO_TARGET_DIR/debug/streamkeeper" "$SK_BIN"
  export SK_BIN
}

sk_version() {
  awk '/^\[workspace.package\]/ { w = 1 } w && /^version = / { gsub(/version = |"/, ""); print; exit }' \
    "$SK_ROOT/Cargo.toml"
}

# The release: the site, then the release binary carrying it
# (server/build.rs), packed with the systemd unit, the example env file and
# DEPLOY.md (docs/operating.md, configuration.md and security.md)
# into $1/streamkeeper-<version>-<arch>-linux.tar.gz. Sets SK_RELEASE to
# the tarball's path.
build_release() { # out dir
  local out=$1 name stage
  build_wasm || return 1
  log "building the release binary (about 12 minutes cold on 2 cores, with the wasm; a few after a change)"
  (cd "$SK_ROOT" && STREAMKEEPER_EMBED_SITE="$SITE_DIR" cargo build -q --release -p streamkeeper-server --bin streamkeeper) >&2 \
    || return 1
  name="streamkeeper-$(sk_version)-$(uname -m)-linux"
  stage="$out/$name"
  rm -rf "$stage" "$out/$name.tar.gz"
  mkdir -p "$stage"
  # Without its symbol table: 75 MB instead of 119. Panics still say what
  # and where (file and line are data, not symbols); only a backtrace's
  # function names go.
  strip -o "$stage/streamkeeper" "$CARGO_TARGET_DIR/release/streamkeeper" || return 1
  cp "$SK_ROOT/deploy/streamkeeper.service" "$SK_ROOT/deploy/streamkeeper.env.example" "$stage/"
  {
    printf '# Deploying Streamkeeper %s\n\n' "$(sk_version)"
    printf 'From the docs of the source this binary was built from.\n\n'
    # Each page's headings one level down (code blocks left as they are),
    # so its title is a section of this one.
    awk '/^```/ { f = !f } !f && /^#/ { $0 = "#" $0 } { print }' \
      "$SK_ROOT/docs/operating.md" "$SK_ROOT/docs/configuration.md" "$SK_ROOT/docs/security.md"
  } >"$stage/DEPLOY.md"
  tar -C "$out" -czf "$out/$name.tar.gz" "$name" || return 1
  rm -rf "$stage"
  SK_RELEASE="$out/$name.tar.gz"
  export SK_RELEASE
}

# umoci builds the OCI image with no base image to download (Debian's
# package, 9 s to install).
ensure_umoci() {
  command -v umoci >/dev/null && command -v jq >/dev/null || apt_install umoci jq
}

# build_image TARBALL OUT: an OCI image (OUT/<name>-oci.tar, an OCI layout
# that `podman load`, `skopeo copy oci-archive:` or a registry push take)
# from the release tarball, built from scratch: the stripped binary, the
# shared libraries it links (from this machine's Debian, as `ldd` names
# them), the CA certificates, and a non-root user (uid 10001) it runs as.
# Sets SK_IMAGE to the archive and SK_IMAGE_LAYOUT to the unpacked layout.
build_image() {
  local tarball=$1 out=$2 work name rootfs bin lib tag
  ensure_umoci
  work=$(mktemp -d "${TMPDIR:-/tmp}/streamkeeper-image.XXXXXX")
  unpack_release "$tarball" "$work/release" || return 1
  name=$(basename "$tarball" .tar.gz)
  tag=$(sk_version)
  SK_IMAGE_LAYOUT="$work/layout"
  umoci init --layout "$SK_IMAGE_LAYOUT" && umoci new --image "$SK_IMAGE_LAYOUT:$tag"     && umoci unpack --image "$SK_IMAGE_LAYOUT:$tag" "$work/bundle" >/dev/null || return 1
  rootfs="$work/bundle/rootfs"
  bin="$rootfs/usr/local/bin/streamkeeper"
  install -D -m 0755 "$SK_BIN" "$bin"
  install -D -m 0644 "$(dirname "$SK_BIN")/DEPLOY.md" "$rootfs/usr/share/doc/streamkeeper/DEPLOY.md"
  # Every library the binary loads, at the path the loader looks it up.
  for lib in $(ldd "$SK_BIN" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    # With Debian's modes: the loader must be executable to be run at all.
    install -D -m "$(stat -L -c %a "$lib")" "$(readlink -f "$lib")" "$rootfs$lib" || return 1
  done
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt" || return 1
  printf 'root:x:0:0:root:/root:/sbin/nologin\nstreamkeeper:x:10001:10001:Streamkeeper:/nonexistent:/sbin/nologin\n' \
    >"$rootfs/etc/passwd"
  printf 'root:x:0:\nstreamkeeper:x:10001:\n' >"$rootfs/etc/group"
  printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
  # Credential files are mounted under /run/secrets (the default of
  # STREAMKEEPER_CRED_DIRS); /tmp for anything a library wants to write.
  install -d -m 0755 "$rootfs/run/secrets"
  install -d -m 1777 "$rootfs/tmp"
  umoci repack --image "$SK_IMAGE_LAYOUT:$tag" "$work/bundle" || return 1
  umoci config --image "$SK_IMAGE_LAYOUT:$tag" --config.user 10001:10001 \
    --config.entrypoint /usr/local/bin/streamkeeper --config.cmd serve \
    --config.env STREAMKEEPER_BIND=0.0.0.0:3000 --config.env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    --config.exposedports 3000/tcp --config.workingdir / \
    --config.label org.opencontainers.image.title=streamkeeper \
    --config.label "org.opencontainers.image.version=$tag" \
    --config.label "org.opencontainers.image.description=A read-only watch over Kafka streams" || return 1
  umoci gc --layout "$SK_IMAGE_LAYOUT" || return 1
  SK_IMAGE="$out/$name-oci.tar"
  tar -C "$SK_IMAGE_LAYOUT" -cf "$SK_IMAGE" . || return 1
  export SK_IMAGE SK_IMAGE_LAYOUT
}

# Unpacks a release tarball into a new folder outside the source tree and
# sets SK_BIN to its binary.
unpack_release() { # tarball, folder
  mkdir -p "$2"
  tar -C "$2" -xzf "$1" || return 1
  SK_BIN=$(find "$2" -mindepth 2 -maxdepth 2 -type f -name streamkeeper | head -n 1)
  [ -x "$SK_BIN" ] || { echo "no streamkeeper binary in $1" >&2; return 1; }
  export SK_BIN
}
