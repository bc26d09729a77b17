//! The release binary against the debug one, in one run, on what users
//! feel: a sign-in, the cluster page listing 10,000 consumer groups, and
//! a compatibility check of a 1,000-field Avro schema against the reader
//! schemas of 50 consumer groups; and each binary's size and its time
//! from start to ready (`/readyz` 200). Both are real `streamkeeper serve`
//! processes on loopback, against one database, asked over HTTP.
//!
//! ```sh
//! scripts/release                                  # the tarball's binary
//! cargo build -p streamkeeper-server               # the debug one
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench release -- \
//!   ~/.cache/streamkeeper/target/release/streamkeeper \
//!   ~/.cache/streamkeeper/target/debug/streamkeeper ~/.cache/streamkeeper/target/site
//! ```
//! Arguments: the release binary, the debug binary, and the site folder
//! the debug one serves (a release binary from scripts/release carries
//! its own). Works in a database of its own, dropped at the end.

#[path = "support/db.rs"]
mod bench_db;
#[path = "support/median.rs"]
mod bench_median;
#[path = "../../benches/support/wide_avro.rs"]
mod wide_avro;

use bench_db::BenchDb;
use bench_median::median;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use wide_avro::{FIELDS, READERS, Variation, schema, variation};

const GROUPS: usize = 10_000;
const PASSWORD: &str = "correct-horse-battery-staple";
/// Sign-ins per binary: within the per-account budget (successes cost
/// nothing, but each is one person's).
const SIGN_INS: usize = 8;
const PAGE_LOADS: usize = 20;
const CHECKS: usize = 10;
const STARTS: usize = 3;

struct Build {
    label: &'static str,
    bin: PathBuf,
    site: Option<PathBuf>,
}

/// What one binary measured (medians).
struct Figures {
    size: u64,
    ready: Duration,
    sign_in: Duration,
    page: Duration,
    check: Duration,
}

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn cli(bin: &Path, db: &str, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new(bin)
        .args(args)
        .env("DATABASE_URL", db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run the CLI");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        writeln!(pipe, "{text}").expect("stdin");
    }
    let out = child.wait_with_output().expect("CLI output");
    assert!(out.status.success(), "streamkeeper {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `serve` started, timed until `/readyz` answers 200.
async fn start(build: &Build, db: &str, http: &reqwest::Client) -> (Server, Duration) {
    let port = free_port();
    let mut cmd = Command::new(&build.bin);
    cmd.arg("serve")
        .env("DATABASE_URL", db)
        .env("STREAMKEEPER_BIND", format!("127.0.0.1:{port}"))
        .env("STREAMKEEPER_LOG", "warn")
        .env_remove("STREAMKEEPER_SITE_ROOT")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(site) = &build.site {
        cmd.env("STREAMKEEPER_SITE_ROOT", site);
    }
    let t = Instant::now();
    let server = Server {
        child: cmd.spawn().expect("start serve"),
        base: format!("http://127.0.0.1:{port}"),
    };
    let ready = format!("{}/readyz", server.base);
    loop {
        if let Ok(r) = http.get(&ready).send().await
            && r.status() == reqwest::StatusCode::OK
        {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{} did not get ready",
            build.label
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (server, t.elapsed())
}

/// A sign-in through the form, as a browser without JavaScript posts it;
/// the session cookie it set.
async fn sign_in(http: &reqwest::Client, base: &str, user: &str) -> (Duration, String) {
    let t = Instant::now();
    let r = http
        .post(format!("{base}/login"))
        .header("origin", base)
        .header("sec-fetch-site", "same-origin")
        .form(&[("username", user), ("password", PASSWORD), ("next", "/")])
        .send()
        .await
        .expect("sign in");
    let took = t.elapsed();
    assert_eq!(r.status(), reqwest::StatusCode::SEE_OTHER, "{user}");
    assert_eq!(r.headers()["location"], "/", "{user} was not signed in");
    let cookie = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("a session cookie")
        .to_owned();
    (took, cookie)
}

async fn measure(
    build: &Build,
    db: &str,
    http: &reqwest::Client,
    cluster: i64,
    token: &str,
    writer: &str,
) -> Figures {
    let size = std::fs::metadata(&build.bin).expect("binary").len();
    let mut readies = Vec::new();
    for _ in 0..STARTS - 1 {
        readies.push(start(build, db, http).await.1);
    }
    let (server, ready) = start(build, db, http).await;
    readies.push(ready);
    let base = &server.base;

    let mut sign_ins = Vec::new();
    let mut cookie = String::new();
    for u in 0..SIGN_INS {
        let (took, c) = sign_in(http, base, &format!("bench{u}")).await;
        sign_ins.push(took);
        cookie = c;
    }

    let mut pages = Vec::new();
    for _ in 0..PAGE_LOADS {
        let t = Instant::now();
        let r = http
            .get(format!("{base}/clusters/{cluster}"))
            .header("cookie", &cookie)
            .send()
            .await
            .expect("cluster page");
        assert_eq!(r.status(), reqwest::StatusCode::OK);
        let html = r.text().await.expect("page");
        pages.push(t.elapsed());
        assert!(html.contains("group-00000"), "the page lists the groups");
    }

    let mut checks = Vec::new();
    for _ in 0..CHECKS {
        let t = Instant::now();
        let r = http
            .post(format!(
                "{base}/api/v1/clusters/{cluster}/streams/orders/compatibility"
            ))
            .bearer_auth(token)
            .json(&serde_json::json!({"schema_type": "AVRO", "schema": writer}))
            .send()
            .await
            .expect("check");
        assert_eq!(r.status(), reqwest::StatusCode::OK);
        let report: serde_json::Value = r.json().await.expect("report");
        checks.push(t.elapsed());
        let judged = report["consumers"].as_array().map_or(0, Vec::len);
        assert_eq!(judged, READERS, "every reader judged");
    }
    drop(server);
    Figures {
        size,
        ready: median(&mut readies),
        sign_in: median(&mut sign_ins),
        page: median(&mut pages),
        check: median(&mut checks),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL (see the comment at the top of benches/release.rs)");
        std::process::exit(2);
    };
    let args: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .collect();
    let [release, debug, site] = args.as_slice() else {
        eprintln!("arguments: RELEASE_BIN DEBUG_BIN SITE_DIR (see benches/release.rs)");
        std::process::exit(2);
    };
    let builds = [
        Build {
            label: "release",
            bin: release.clone(),
            site: None,
        },
        Build {
            label: "debug",
            bin: debug.clone(),
            site: Some(site.clone()),
        },
    ];

    let db = BenchDb::create(&base, "release", 4).await;
    let pool = db.pool.clone();
    let mut url = url::Url::parse(&base).expect("DATABASE_URL");
    url.set_path(pool.connect_options().get_database().unwrap_or_default());
    let url = url.to_string();
    let cli_bin = &builds[0].bin;
    for u in 0..SIGN_INS {
        cli(
            cli_bin,
            &url,
            &[
                "user",
                "add",
                &format!("bench{u}"),
                "--role",
                "admin",
                "--password-stdin",
            ],
            Some(PASSWORD),
        );
    }
    let token = cli(
        cli_bin,
        &url,
        &[
            "token", "create", "--user", "bench0", "--name", "bench", "--scope", "read", "--scope",
            "write", "--scope", "check",
        ],
        None,
    );
    let token = token.lines().last().expect("a token").trim().to_owned();
    // A cluster nobody can reach (its pass fails and stores a gap): the
    // groups are the bench's, 50 of them reading `orders`.
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('bench', '127.0.0.1:1', 'PLAINTEXT', 3600) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .expect("cluster");
    let names: Vec<String> = (0..GROUPS).map(|g| format!("group-{g:05}")).collect();
    let topics: Vec<String> = (0..GROUPS)
        .map(|g| {
            if g < READERS {
                "orders".into()
            } else {
                format!("topic-{}", g % 200)
            }
        })
        .collect();
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, first_seen, last_seen, status, total_lag)
         SELECT $1, n, 'Stable', 1, ARRAY[t], now(), now(), 'OK', 0 FROM UNNEST($2::text[], $3::text[]) AS x(n, t)",
    )
    .bind(cluster)
    .bind(&names)
    .bind(&topics)
    .execute(&pool)
    .await
    .expect("groups");
    // The topics a pass would have listed: checks and reader schemas are
    // only for topics the cluster has.
    sqlx::query(
        "INSERT INTO topics (cluster_id, name, partitions, first_seen, last_seen)
         SELECT DISTINCT $1, t, 1, now(), now() FROM UNNEST($2::text[]) AS x(t)",
    )
    .bind(cluster)
    .bind(&topics)
    .execute(&pool)
    .await
    .expect("topics");

    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("http client");
    // The readers' schemas, recorded through the API as owners do.
    {
        let (server, _) = start(&builds[0], &url, &http).await;
        for (g, name) in names.iter().take(READERS).enumerate() {
            let r = http
                .put(format!(
                    "{}/api/v1/clusters/{cluster}/groups/{name}/reader-schemas/orders",
                    server.base
                ))
                .bearer_auth(&token)
                .json(&serde_json::json!({"schema_type": "AVRO", "schema": schema(variation(g))}))
                .send()
                .await
                .expect("record a reader schema");
            assert_eq!(r.status(), reqwest::StatusCode::CREATED, "{name}");
        }
    }

    let writer = schema(Variation::Same);
    let mut figures = Vec::new();
    for build in &builds {
        let f = measure(build, &url, &http, cluster, &token, &writer).await;
        println!(
            "{:7}  {:>5.1} MB  ready {:>7.1} ms  sign-in {:>6.1} ms  cluster page ({GROUPS} groups) {:>6.1} ms  check ({FIELDS} fields, {READERS} readers) {:>7.1} ms",
            build.label,
            f.size as f64 / 1e6,
            ms(f.ready),
            ms(f.sign_in),
            ms(f.page),
            ms(f.check),
        );
        figures.push(f);
    }
    if let [r, d] = figures.as_slice() {
        println!(
            "debug ÷ release: size {:.1}×, ready {:.1}×, sign-in {:.1}×, cluster page {:.1}×, check {:.1}×",
            d.size as f64 / r.size as f64,
            d.ready.as_secs_f64() / r.ready.as_secs_f64(),
            d.sign_in.as_secs_f64() / r.sign_in.as_secs_f64(),
            d.page.as_secs_f64() / r.page.as_secs_f64(),
            d.check.as_secs_f64() / r.check.as_secs_f64(),
        );
    }
    db.drop().await;
}
