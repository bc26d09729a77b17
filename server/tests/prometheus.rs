//! A real Prometheus (Debian's `prometheus`, which scripts/test installs
//! with promtool) scraping the server's `/metrics` with a `metrics`-scope
//! bearer token, as docs/prometheus.md tells operators to: the target is
//! up, and the shipped rule for a stopped group fires when a group stops.
//! `promtool test rules` covers the rules' timings; here their `for:` is
//! cut to a second so the test need not wait two minutes, and what is
//! tested is that the expressions match what `/metrics` really serves.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use streamkeeper_server::http::listener::{self, Capacity};
use support::TestApp;
use support::kafka::free_port;
use tokio_util::sync::CancellationToken;

struct Prometheus {
    url: String,
    child: Child,
    dir: PathBuf,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The shipped rules with every `for:` cut to one second.
fn rules() -> String {
    let shipped = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/prometheus/streamkeeper-rules.yml"
    );
    std::fs::read_to_string(shipped)
        .expect("the shipped rules")
        .lines()
        .map(|l| match l.trim_start().strip_prefix("for:") {
            Some(_) => format!("{}for: 1s", &l[..l.len() - l.trim_start().len()]),
            None => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Prometheus {
    /// Prometheus scraping `target` every second with `token`.
    async fn start(target: &str, token: &str) -> Self {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("sk-prom-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("token"), token).expect("token");
        std::fs::write(dir.join("rules.yml"), rules()).expect("rules");
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files: [{dir}/rules.yml]\n\
             scrape_configs:\n  - job_name: streamkeeper\n    authorization:\n      \
             type: Bearer\n      credentials_file: {dir}/token\n    static_configs:\n      \
             - targets: [\"{target}\"]\n",
            dir = dir.display()
        );
        std::fs::write(dir.join("prometheus.yml"), config).expect("config");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}/prometheus.yml", dir.display()))
            .arg(format!("--storage.tsdb.path={}/data", dir.display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Prometheus installed (apt-get install prometheus; scripts/test does)");
        let p = Self {
            url: format!("http://127.0.0.1:{port}"),
            child,
            dir,
        };
        p.wait("Prometheus ready", |_| true, "/-/ready").await;
        p
    }

    async fn get(&self, path: &str) -> Option<Value> {
        let r = reqwest::get(format!("{}{path}", self.url)).await.ok()?;
        if path == "/-/ready" {
            return r.status().is_success().then_some(Value::Null);
        }
        r.json().await.ok()
    }

    /// Polls `path` until `ok` holds of its answer (30 s at most).
    async fn wait(&self, what: &str, ok: impl Fn(&Value) -> bool, path: &str) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(v) = self.get(path).await.filter(|v| ok(v)) {
                return v;
            }
            assert!(tokio::time::Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// The alert named `name` in Prometheus' `/api/v1/alerts` answer.
fn alert<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["data"]["alerts"]
        .as_array()?
        .iter()
        .find(|a| a["labels"]["alertname"] == name)
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn prometheus_scrapes_with_a_metrics_token_and_a_stopped_group_fires(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("ada", &[Role::Admin]).await;
    let at = t.token(admin).await;
    let scraper = t.user("prometheus", &[Role::Viewer]).await;
    let token = t.token_with(scraper, &[Scope::Metrics]).await;
    let r = t
        .api(
            Method::POST,
            "/api/v1/teams",
            &at,
            Some(json!({"name": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    // A cluster and a group as a pass left them: consuming, OK.
    let cluster: i64 = sqlx::query_scalar(
        "INSERT INTO clusters (name, bootstrap, security_protocol, interval_s)
         VALUES ('prod', '127.0.0.1:9092', 'PLAINTEXT', 15) RETURNING id",
    )
    .fetch_one(&t.pool)
    .await
    .expect("cluster");
    sqlx::query(
        "INSERT INTO consumer_groups (cluster_id, name, state, members, topics, status,
                                      first_seen, last_seen)
         VALUES ($1, 'billing', 'Stable', 1, ARRAY['orders'], 'OK', now(), now())",
    )
    .bind(cluster)
    .execute(&t.pool)
    .await
    .expect("group");
    let r = t
        .api(
            Method::PUT,
            &format!("/api/v1/clusters/{cluster}/groups/billing/owner"),
            &at,
            Some(json!({"team": "payments"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);

    // The server on a real port, as `streamkeeper serve` serves it.
    let port = free_port();
    let socket = listener::bind(([127, 0, 0, 1], port).into()).expect("bind");
    let stop = CancellationToken::new();
    let serving = tokio::spawn(listener::serve(
        socket,
        t.app.clone(),
        Capacity::of_this_process(),
        stop.clone(),
    ));
    let p = Prometheus::start(&format!("127.0.0.1:{port}"), &token).await;

    // The target is up: scraped with the token, in Prometheus' own words.
    let up = |v: &Value| {
        v["data"]["activeTargets"]
            .as_array()
            .is_some_and(|t| t.len() == 1 && t[0]["health"] == "up")
    };
    let targets = p.wait("the target never up", up, "/api/v1/targets").await;
    assert_eq!(
        targets["data"]["activeTargets"][0]["labels"]["job"],
        "streamkeeper"
    );
    let scraped = |v: &Value| v["data"]["result"][0]["value"][1] == "1";
    let q = "/api/v1/query?query=streamkeeper_consumergroup_status%7Bgroup%3D%22billing%22%2Cstatus%3D%22OK%22%7D";
    p.wait("the group's status never scraped", scraped, q).await;
    let alerts = p.get("/api/v1/alerts").await.expect("alerts");
    assert!(
        alert(&alerts, "StreamkeeperConsumerGroupStopped").is_none(),
        "{alerts}"
    );

    // The group stops (as a pass judging it STOP records it).
    sqlx::query("UPDATE consumer_groups SET status = 'STOP', members = 0 WHERE name = 'billing'")
        .execute(&t.pool)
        .await
        .expect("stop");
    let firing = |v: &Value| {
        alert(v, "StreamkeeperConsumerGroupStopped").is_some_and(|a| a["state"] == "firing")
    };
    let alerts = p
        .wait(
            "the stopped group's rule never fired",
            firing,
            "/api/v1/alerts",
        )
        .await;
    let a = alert(&alerts, "StreamkeeperConsumerGroupStopped").expect("alert");
    let labels = &a["labels"];
    assert_eq!(labels["group"], "billing", "{a}");
    assert_eq!(labels["cluster_name"], "prod");
    assert_eq!(labels["owner"], "payments");
    assert_eq!(labels["severity"], "critical");
    assert_eq!(
        a["annotations"]["summary"],
        "Consumer group billing on prod has stopped"
    );
    // The rule as Prometheus reports it, and the scrape never down.
    let rules = p.get("/api/v1/rules?type=alert").await.expect("rules");
    let rule = rules["data"]["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
        .find(|r| r["name"] == "StreamkeeperConsumerGroupStopped")
        .expect("the rule loaded");
    assert_eq!(rule["state"], "firing", "{rule}");
    assert!(
        alert(&alerts, "StreamkeeperScrapeDown").is_none(),
        "{alerts}"
    );
    stop.cancel();
    drop(p);
    serving.await.expect("served");
}
