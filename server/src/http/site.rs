//! The browser's files under `/pkg` (the wasm, its JS glue, the CSS, and
//! a gzip variant of each): carried inside a release binary, so that
//! deploying is copying one file, or read from a folder
//! (`STREAMKEEPER_SITE_ROOT`), as development builds do and as an
//! operator may to serve another build of the site.
//!
//! rust-embed puts the files into the binary; serving them is written
//! here because the crates that serve rust-embed folders with axum
//! (axum-embed) are built on axum 0.7, and the rules are few: the gzip
//! variant when the browser takes gzip, an ETag per variant so a reload
//! costs a 304, and the type of the file, not of its `.gz`.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::{Embed, RustEmbed};
use std::path::PathBuf;
use tower_http::services::ServeDir;

/// The file every built site has: the hydrated app.
const WASM: &str = "streamkeeper_bg.wasm";

/// What `server/build.rs` chose: a built site's `pkg/` for a release
/// build made by `scripts/release`, an empty folder otherwise. In debug
/// builds rust-embed reads that folder at run time instead.
#[derive(Embed)]
#[folder = "$STREAMKEEPER_EMBEDDED_PKG"]
struct Carried;

/// Where `/pkg` is served from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// The files this binary carries.
    Carried,
    /// A folder whose `pkg/` holds them.
    Folder(PathBuf),
}

impl Site {
    /// The folder when one is set (it overrides what the binary carries),
    /// else the carried site; `None` when there is neither, which `serve`
    /// refuses to start with, rather than serve pages whose script 404s.
    pub fn choose(root: Option<&str>) -> Option<Self> {
        match root.map(str::trim).filter(|r| !r.is_empty()) {
            Some(root) => Some(Self::Folder(PathBuf::from(root))),
            None => Self::carried().then_some(Self::Carried),
        }
    }

    /// Whether this binary carries a site.
    pub fn carried() -> bool {
        Carried::get(WASM).is_some()
    }

    /// The `/pkg` routes (to be nested at `/pkg`).
    pub fn router(&self) -> Router {
        match self {
            Self::Carried => Router::new().route("/{*path}", get(carried)),
            Self::Folder(root) => {
                Router::new().fallback_service(ServeDir::new(root.join("pkg")).precompressed_gzip())
            }
        }
    }
}

async fn carried(Path(path): Path<String>, headers: HeaderMap) -> Response {
    serve::<Carried>(&path, &headers)
}

/// One file of an embedded folder, as `ServeDir::precompressed_gzip` serves
/// one from disk, plus an ETag.
fn serve<E: RustEmbed>(path: &str, headers: &HeaderMap) -> Response {
    // `.gz` files are variants, not names a page links to.
    let Some(file) = E::get(path).filter(|_| !path.ends_with(".gz")) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let mime = file.metadata.mimetype().to_string();
    let gzip = accepts_gzip(headers)
        .then(|| E::get(&format!("{path}.gz")))
        .flatten();
    let gzipped = gzip.is_some();
    let chosen = gzip.unwrap_or(file);
    let etag = format!("\"{}\"", hex::encode(chosen.metadata.sha256_hash()));
    let mut out = HeaderMap::new();
    out.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        out.insert(header::ETAG, v);
    }
    let unchanged = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| tag.trim() == etag || tag.trim() == "*");
    if unchanged {
        return (StatusCode::NOT_MODIFIED, out).into_response();
    }
    if let Ok(v) = HeaderValue::from_str(&mime) {
        out.insert(header::CONTENT_TYPE, v);
    }
    if gzipped {
        out.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    (out, chosen.data.into_owned()).into_response()
}

/// Whether `Accept-Encoding` takes gzip (by name or `*`) at a weight above 0.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let weight = parts
                .filter_map(|p| p.strip_prefix("q="))
                .find_map(|q| q.parse::<f32>().ok())
                .unwrap_or(1.0);
            (name.eq_ignore_ascii_case("gzip") || name == "*") && weight > 0.0
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;

    /// A site of two files, one with a gzip variant (in debug builds read
    /// from disk, as the carried site is in release builds).
    #[derive(Embed)]
    #[folder = "tests/fixtures/pkg"]
    struct Fixture;

    fn asking(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    async fn body(r: Response) -> Vec<u8> {
        to_bytes(r.into_body(), 1 << 20)
            .await
            .expect("body")
            .to_vec()
    }

    #[tokio::test]
    async fn the_gzip_variant_goes_to_browsers_that_take_it_with_the_files_own_type() {
        let r = serve::<Fixture>("app.js", &asking(&[(header::ACCEPT_ENCODING, "gzip, br")]));
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "text/javascript");
        let zipped = body(r).await;
        assert_eq!(&zipped[..2], &[0x1f, 0x8b], "a gzip stream");

        for refusing in ["identity", "gzip;q=0", "br, gzip; q=0.0"] {
            let r = serve::<Fixture>("app.js", &asking(&[(header::ACCEPT_ENCODING, refusing)]));
            assert!(
                r.headers().get(header::CONTENT_ENCODING).is_none(),
                "{refusing}"
            );
            assert_eq!(body(r).await, b"console.log(\"streamkeeper\");\n");
        }
        let r = serve::<Fixture>("app.js", &HeaderMap::new());
        assert!(r.headers().get(header::CONTENT_ENCODING).is_none());
    }

    #[tokio::test]
    async fn a_reload_with_the_etag_is_a_304_and_each_variant_has_its_own() {
        let gz = asking(&[(header::ACCEPT_ENCODING, "gzip")]);
        let first = serve::<Fixture>("app.js", &gz);
        let tag = first.headers()[header::ETAG]
            .to_str()
            .expect("etag")
            .to_string();
        let plain = serve::<Fixture>("app.js", &HeaderMap::new());
        assert_ne!(
            plain.headers()[header::ETAG],
            tag.as_str(),
            "one tag per variant"
        );

        let again = serve::<Fixture>(
            "app.js",
            &asking(&[
                (header::ACCEPT_ENCODING, "gzip"),
                (header::IF_NONE_MATCH, &tag),
            ]),
        );
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(again.headers()[header::ETAG], tag.as_str());
        assert!(body(again).await.is_empty());
        let stale = serve::<Fixture>("app.js", &asking(&[(header::IF_NONE_MATCH, "\"old\"")]));
        assert_eq!(stale.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn a_file_without_a_variant_is_sent_plain_and_unknown_names_are_404() {
        let r = serve::<Fixture>("style.css", &asking(&[(header::ACCEPT_ENCODING, "gzip")]));
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "text/css");
        assert!(r.headers().get(header::CONTENT_ENCODING).is_none());
        for missing in ["nothing.js", "app.js.gz", "../Cargo.toml"] {
            let r = serve::<Fixture>(missing, &HeaderMap::new());
            assert_eq!(r.status(), StatusCode::NOT_FOUND, "{missing}");
        }
    }

    #[test]
    fn an_empty_root_is_no_override() {
        assert_eq!(
            Site::choose(Some("/srv/site")),
            Some(Site::Folder(PathBuf::from("/srv/site")))
        );
        assert_eq!(Site::choose(Some("  ")), Site::choose(None));
    }
}
