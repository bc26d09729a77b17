//! The Schema Registry double on a port, for the demo and for trying the
//! console by hand: `registry-double --listen 127.0.0.1:8081`.

use clap::Parser;
use std::net::SocketAddr;
use std::process::ExitCode;
use streamkeeper_doubles::registry::{self, DoubleAuth, IncompatibleCode, Options};

#[derive(Parser)]
#[command(about = "A Confluent Schema Registry double, in memory")]
struct Args {
    /// Address to serve on.
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: SocketAddr,
    /// The error_code of an incompatible schema: 409 (Confluent up to
    /// 8.0.3 / 8.1.1) or 40901 (from 8.0.4, 8.1.2 and 8.2).
    #[arg(long, default_value = "40901", value_parser = ["409", "40901"])]
    incompatible_code: String,
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
    let incompatible_code = if args.incompatible_code == "409" {
        IncompatibleCode::Legacy
    } else {
        IncompatibleCode::Current
    };
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", args.listen);
            return ExitCode::FAILURE;
        }
    };
    let (router, _faults) = registry::router(Options {
        incompatible_code,
        auth,
    });
    let shown = listener.local_addr().unwrap_or(args.listen);
    println!("registry double listening on http://{shown}");
    match axum::serve(listener, router).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
