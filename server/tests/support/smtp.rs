//! A real SMTP server for the mail tests: `aiosmtpd` from PyPI, run by
//! `smtp_sink.py` beside this file on a free port, keeping each message
//! as a JSON file. `scripts/test` installs it in a venv and names its
//! Python in `SK_SMTP_PYTHON`. The certificates are made by `openssl`: a
//! CA of the test's own and a server certificate for 127.0.0.1 it signs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::Duration;
use tokio::process::{Child, Command};

fn python() -> String {
    std::env::var("SK_SMTP_PYTHON").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/streamkeeper/aiosmtpd-1.4.6/bin/python")
    })
}

/// How the test server secures its sessions.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// STARTTLS offered, and required before any mail.
    StartTls,
    /// TLS from the first byte.
    Tls,
    /// No STARTTLS offered at all.
    Plain,
}

/// A CA and a server certificate for 127.0.0.1, in a folder of their own.
pub struct Certs {
    pub dir: tempdir::Dir,
}

pub mod tempdir {
    /// A folder removed when dropped.
    pub struct Dir(pub std::path::PathBuf);

    impl Dir {
        pub fn new(tag: &str) -> Self {
            let n: u64 = rand::random();
            let p = std::env::temp_dir().join(format!("sk-{tag}-{n:x}"));
            std::fs::create_dir_all(&p).expect("a temporary folder");
            Dir(p)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = StdCommand::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Certs {
    pub fn make() -> Self {
        let dir = tempdir::Dir::new("smtp-certs");
        let d = &dir.0;
        std::fs::write(
            d.join("ext"),
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .expect("ext");
        openssl(
            d,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-subj",
                "/CN=streamkeeper test CA",
                "-days",
                "2",
            ],
        );
        openssl(
            d,
            &[
                "req",
                "-new",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                "leaf.key",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        );
        openssl(
            d,
            &[
                "x509",
                "-req",
                "-in",
                "leaf.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "leaf.pem",
                "-days",
                "2",
                "-extfile",
                "ext",
            ],
        );
        Certs { dir }
    }

    pub fn ca(&self) -> PathBuf {
        self.dir.0.join("ca.pem")
    }
}

/// The running server and the folder of what it kept.
pub struct Sink {
    _child: Child,
    pub port: u16,
    pub box_dir: tempdir::Dir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Sink {
    /// Starts a server; `login` is `user:password` it requires, if any.
    pub async fn start(mode: Mode, certs: Option<&Certs>, login: Option<&str>) -> Self {
        let port = free_port();
        let box_dir = tempdir::Dir::new("smtp-box");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/smtp_sink.py");
        let mode_arg = match mode {
            Mode::StartTls => "starttls",
            Mode::Tls => "tls",
            Mode::Plain => "plain",
        };
        let mut cmd = Command::new(python());
        cmd.arg(&script)
            .arg(port.to_string())
            .arg(&box_dir.0)
            .arg(mode_arg);
        if let Some(c) = certs {
            cmd.arg(c.dir.0.join("leaf.pem"))
                .arg(c.dir.0.join("leaf.key"));
        }
        if let Some(l) = login {
            cmd.arg(l);
        }
        let child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "aiosmtpd could not start with {} ({e}): scripts/test installs it (SK_SMTP_PYTHON)",
                    python()
                )
            });
        let sink = Sink {
            _child: child,
            port,
            box_dir,
        };
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return sink;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("aiosmtpd did not listen on {port}");
    }

    /// The messages kept so far, in order.
    pub fn messages(&self) -> Vec<Value> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(&self.box_dir.0)
            .expect("the box")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| serde_json::from_slice(&std::fs::read(p).expect("read")).expect("json"))
            .collect()
    }

    /// Waits until `n` messages are kept (at most 20 s), and returns them.
    pub async fn wait_for(&self, n: usize) -> Vec<Value> {
        for _ in 0..200 {
            let m = self.messages();
            if m.len() >= n {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{n} messages expected, {} kept", self.messages().len());
    }
}

/// A header's value in a raw message (its first occurrence, unfolded).
pub fn header(data: &str, name: &str) -> Option<String> {
    let head = data.split("\r\n\r\n").next().unwrap_or("");
    let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
    unfolded.split("\r\n").find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
    })
}
