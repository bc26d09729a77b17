//! Chooses the folder the release binary carries as its site (`/pkg`: the
//! wasm, JS and CSS, see `http/site.rs`): `STREAMKEEPER_EMBED_SITE`, a
//! built site whose `pkg/` holds them, when the build sets it
//! (`scripts/release` does); otherwise an empty folder, so a plain
//! `cargo build` still works and its binary serves the site from
//! `STREAMKEEPER_SITE_ROOT`.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=STREAMKEEPER_EMBED_SITE");
    let pkg = match std::env::var("STREAMKEEPER_EMBED_SITE") {
        Ok(site) if !site.trim().is_empty() => {
            let pkg = PathBuf::from(site.trim()).join("pkg");
            if !pkg.join("streamkeeper_bg.wasm").is_file() {
                // A build that was asked to carry a site and cannot must
                // not pass for one that does.
                eprintln!(
                    "STREAMKEEPER_EMBED_SITE: {} has no streamkeeper_bg.wasm; build the site first (scripts/release does)",
                    pkg.display()
                );
                std::process::exit(1);
            }
            println!("cargo:rerun-if-changed={}", pkg.display());
            pkg
        }
        _ => {
            let Some(out) = std::env::var_os("OUT_DIR") else {
                eprintln!("OUT_DIR is not set: run this build script through cargo");
                std::process::exit(1);
            };
            let empty = PathBuf::from(out).join("no-site");
            if let Err(e) = std::fs::create_dir_all(&empty) {
                eprintln!("cannot create {}: {e}", empty.display());
                std::process::exit(1);
            }
            empty
        }
    };
    println!(
        "cargo:rustc-env=STREAMKEEPER_EMBEDDED_PKG={}",
        pkg.display()
    );
}
