//! The Kafka Connect double on a port, for the demo and for trying the
//! console by hand: `connect-double --listen 127.0.0.1:8083`.

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
    let (router, _handle) = connect::router(Options {
        auth,
        ..Options::default()
    });
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
