//! A real Alertmanager (Debian's `prometheus-alertmanager`, which
//! scripts/test installs) on a free loopback port, with no clustering:
//! the tests read its own v2 API. Its one receiver drops everything, or
//! posts to a webhook of the test's own (Alertmanager's `webhook_configs`)
//! so a test can see what Alertmanager itself notified.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Alertmanager {
    pub url: String,
    child: Child,
    dir: PathBuf,
}

impl Drop for Alertmanager {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn binary() -> &'static str {
    ["prometheus-alertmanager", "alertmanager"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect(
            "Alertmanager installed (apt-get install prometheus-alertmanager; scripts/test does)",
        )
}

/// The configuration: one receiver, `drop` or a webhook to `hook`, each
/// flag's alert its own notification group, sent at once (no group wait:
/// a test must not wait Alertmanager's default 30 s to see nothing).
fn config(hook: Option<&str>) -> String {
    let receiver = match hook {
        Some(url) => format!(
            "  - name: main\n    webhook_configs:\n      - url: {url}\n        send_resolved: true\n"
        ),
        None => "  - name: main\n".to_owned(),
    };
    format!(
        "route:\n  receiver: main\n  group_by: [alertname, cluster, group, topic]\n  \
         group_wait: 100ms\n  group_interval: 1s\n  repeat_interval: 1h\nreceivers:\n{receiver}"
    )
}

impl Alertmanager {
    /// Started with a receiver that drops everything.
    pub async fn start() -> Self {
        Self::start_with(None).await
    }

    /// Started with its receiver posting to `hook` (a webhook receiver).
    pub async fn start_with(hook: Option<&str>) -> Self {
        let port = super::kafka::free_port();
        let dir = std::env::temp_dir().join(format!("sk-am-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let file = dir.join("alertmanager.yml");
        std::fs::write(&file, config(hook)).expect("write alertmanager.yml");
        let child = Command::new(binary())
            .arg(format!("--config.file={}", file.display()))
            .arg(format!("--storage.path={}", dir.display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--cluster.listen-address=")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start alertmanager");
        // Owned at once, so one that never gets ready is killed on drop.
        let am = Self {
            url: format!("http://127.0.0.1:{port}"),
            child,
            dir,
        };
        for _ in 0..100 {
            let ready = reqwest::get(format!("{}/-/ready", am.url)).await;
            if ready.is_ok_and(|r| r.status().is_success()) {
                return am;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("Alertmanager did not get ready");
    }

    /// Where a channel posts: its v2 alerts endpoint.
    pub fn alerts_endpoint(&self) -> String {
        format!("{}/api/v2/alerts", self.url)
    }

    /// Alertmanager's own view of the alerts whose label `label` is
    /// `value` (`GET /api/v2/alerts`: those not ended).
    pub async fn alerts(&self, label: &str, value: &str) -> Vec<Value> {
        let all: Value = reqwest::get(self.alerts_endpoint())
            .await
            .expect("alerts")
            .json()
            .await
            .expect("json");
        all.as_array()
            .expect("list")
            .iter()
            .filter(|a| a["labels"][label] == value)
            .cloned()
            .collect()
    }

    /// Creates a silence through Alertmanager's API (`POST
    /// /api/v2/silences`) matching `label="value"` for an hour; its id.
    pub async fn silence(&self, label: &str, value: &str) -> String {
        let now = chrono::Utc::now();
        let body = json!({
            "matchers": [{"name": label, "value": value, "isRegex": false, "isEqual": true}],
            "startsAt": now,
            "endsAt": now + chrono::Duration::hours(1),
            "createdBy": "on-call",
            "comment": "maintenance",
        });
        let r = reqwest::Client::new()
            .post(format!("{}/api/v2/silences", self.url))
            .json(&body)
            .send()
            .await
            .expect("silence");
        assert!(r.status().is_success(), "{}", r.status());
        let v: Value = r.json().await.expect("json");
        v["silenceID"].as_str().expect("silenceID").to_owned()
    }
}
