//! The Kafka Connect double on a port, for the demo and for trying the
//! console by hand: `connect-double --listen 127.0.0.1:8083`, optionally
//! `--seed FILE` with connectors already there: a JSON array of
//! `{"name", "config": {…}, "topics": [...], "failed_trace": "…"}` (task 0
//! failing with that trace, again after every restart).

use clap::Parser;
use std::net::SocketAddr;
use std::process::ExitCode;
use streamkeeper_doubles::connect::{self, DoubleAuth, Options};

#[derive(Parser)]
#[command(about = "A Kafka Connect worker double, in memory")]
struct Args {
    /// Address to serve on.
    #[arg(long, default_value = "127.0.0.1:8083")]
    listen: SocketAddr,
    /// Require HTTP Basic with these credentials, as USER:PASSWORD.
    #[arg(long, value_name = "USER:PASSWORD")]
    basic_auth: Option<String>,
    /// Connectors already there (see above).
    #[arg(long, value_name = "FILE")]
    seed: Option<std::path::PathBuf>,
}

/// One connector of `--seed`.
#[derive(serde::Deserialize)]
struct Seed {
    name: String,
    config: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    topics: Vec<String>,
    #[serde(default)]
    failed_trace: Option<String>,
}

fn read_seed(path: &std::path::Path) -> Result<Vec<Seed>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let auth = match args.basic_auth.as_deref().map(|a| a.split_once(':')) {
        None => DoubleAuth::None,
        Some(Some((user, password))) => DoubleAuth::Basic {
            user: user.into(),
            password: password.into(),
        },
        Some(None) => {
            eprintln!("error: --basic-auth takes USER:PASSWORD");
            return ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", args.listen);
            return ExitCode::FAILURE;
        }
    };
    let seeds = match args.seed.as_deref().map(read_seed).transpose() {
        Ok(s) => s.unwrap_or_default(),
        Err(e) => {
            eprintln!("error: --seed {e}");
            return ExitCode::from(2);
        }
    };
    let (router, handle) = connect::router(Options {
        auth,
        ..Options::default()
    });
    for s in &seeds {
        let pairs: Vec<(&str, &str)> = s
            .config
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        handle.put(&s.name, &pairs);
        if !s.topics.is_empty() {
            let topics: Vec<&str> = s.topics.iter().map(String::as_str).collect();
            handle.set_topics(&s.name, &topics);
        }
        if let Some(trace) = &s.failed_trace {
            handle.keep_failing(&s.name, 0, trace);
        }
    }
    let shown = listener.local_addr().unwrap_or(args.listen);
    println!("connect double listening on http://{shown}");
    match axum::serve(listener, router).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
