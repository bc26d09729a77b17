//! A signed-in page's requests per second with 1,000 idle connections held
//! against none (issue 39): the real router behind the real listener
//! (`http::listener`) on loopback, 8 clients each asking `/account` on a
//! connection of its own, back to back, for 5 s. The idle connections send
//! nothing; the header timeout closes each after 5 s and its holder opens
//! another at once, so about 1,000 stay open throughout.
//!
//! ```sh
//! source scripts/lib.sh && start_postgres /tmp/pgbench 55433
//! DATABASE_URL=postgres://postgres@127.0.0.1:55433/postgres \
//!   cargo bench -p streamkeeper-server --bench idle_clients
//! ```
//! Works in a database of its own, dropped at the end.

#[path = "support/db.rs"]
mod bench_db;

use bench_db::BenchDb;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use streamkeeper_server::config::{ServeConfig, serve_args_from_env};
use streamkeeper_server::http::listener::{Capacity, serve};
use streamkeeper_server::http::{AppState, router};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tower_sessions_sqlx_store::PostgresStore;

const PASSWORD: &str = "correct-horse-battery-staple";
const CLIENTS: usize = 8;
const IDLE: usize = 1_000;
const WINDOW: Duration = Duration::from_secs(5);

/// One request on a connection of its own: the whole answer.
async fn exchange(port: u16, request: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    s.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    s.read_to_end(&mut answer).await.expect("answer");
    String::from_utf8_lossy(&answer).into_owned()
}

async fn sign_in(port: u16, origin: &str) -> String {
    let body = format!("username=ada&password={PASSWORD}&next=%2F");
    let answer = exchange(
        port,
        &format!(
            "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nOrigin: {origin}\r\n\
             Sec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    answer
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .expect("a session cookie")
        .to_string()
}

/// Pages answered a second by `CLIENTS` clients over `WINDOW`.
async fn rate(port: u16, cookie: &str) -> f64 {
    let request = format!(
        "GET /account HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nCookie: {cookie}\r\n\r\n"
    );
    let done = Arc::new(AtomicUsize::new(0));
    let end = Instant::now() + WINDOW;
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (request, done) = (request.clone(), done.clone());
            tokio::spawn(async move {
                while Instant::now() < end {
                    let answer = exchange(port, &request).await;
                    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
                    done.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    for c in clients {
        c.await.expect("client");
    }
    done.load(Ordering::SeqCst) as f64 / WINDOW.as_secs_f64()
}

/// `IDLE` connections that send nothing, each reopened when closed.
fn hold(port: u16, running: Arc<AtomicBool>, open: Arc<AtomicUsize>) {
    for _ in 0..IDLE {
        let (running, open) = (running.clone(), open.clone());
        tokio::spawn(async move {
            let mut buf = [0u8; 16];
            while running.load(Ordering::SeqCst) {
                let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
                    continue;
                };
                open.fetch_add(1, Ordering::SeqCst);
                tokio::select! {
                    _ = s.read(&mut buf) => {}
                    () = async { while running.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    } } => {}
                }
                open.fetch_sub(1, Ordering::SeqCst);
            }
        });
    }
}

#[tokio::main]
async fn main() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("set DATABASE_URL (see the comment at the top of benches/idle_clients.rs)");
        std::process::exit(2);
    };
    // Both ends of every connection are in this process.
    rlimit::increase_nofile_limit(8192).expect("the open-file limit");
    let db = BenchDb::create(&base, "idle_clients", 10).await;
    let pool = db.pool.clone();
    let hash = streamkeeper_server::platform::password::hash(PASSWORD).expect("hash");
    sqlx::query(
        "INSERT INTO users (username, display_name, password_hash, roles)
         VALUES ('ada', 'ada', $1, ARRAY['viewer'])",
    )
    .bind(&hash)
    .execute(&pool)
    .await
    .expect("user");
    let mut args = serve_args_from_env().expect("settings");
    args.site_root.get_or_insert_with(|| "target/site".into());
    let config = ServeConfig::from_args(
        &args,
        streamkeeper_server::clients::egress::Outbound::default(),
    )
    .expect("valid settings");
    let origin = config.public_url.origin().ascii_serialization();
    let store = PostgresStore::new(pool.clone());
    store.migrate().await.expect("session table");
    let app = router(AppState::new(pool.clone(), config), store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let stop = CancellationToken::new();
    let server = tokio::spawn(serve(
        listener,
        app,
        Capacity::of_this_process(),
        stop.clone(),
    ));

    let cookie = sign_in(port, &origin).await;
    rate(port, &cookie).await; // warm-up
    let none = rate(port, &cookie).await;

    let (running, open) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicUsize::new(0)),
    );
    hold(port, running.clone(), open.clone());
    let wait = Instant::now() + Duration::from_secs(5);
    while open.load(Ordering::SeqCst) < IDLE * 95 / 100 && Instant::now() < wait {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = open.load(Ordering::SeqCst);
    let held = rate(port, &cookie).await;
    let after = open.load(Ordering::SeqCst);
    running.store(false, Ordering::SeqCst);

    println!(
        "signed-in page (/account), {CLIENTS} clients, a connection per request, {WINDOW:?} each"
    );
    println!("  no idle connections:            {none:.0} requests/s");
    println!("  {before}..{after} idle connections held: {held:.0} requests/s");
    println!("  ratio (held / none):            {:.2}", held / none);

    stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(6), server).await;
    db.drop().await;
}
