//! Headers every response carries, and the cross-site check on every
//! state-changing request.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;
use streamkeeper_app::app::CspNonce;
use streamkeeper_app::port::ClientAddr;

use super::AppState;
use crate::audit::store::Event;

/// Sets CSP (with a per-response nonce for the hydration script), nosniff,
/// Referrer-Policy, frame denial and, under https, HSTS.
pub async fn headers(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let mut bytes = [0_u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let nonce = STANDARD.encode(bytes);
    req.extensions_mut().insert(CspNonce(nonce.clone()));
    let is_static = req.uri().path().starts_with("/pkg/");
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    let csp = format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Same-origin form posts need the full Referer (server functions
    // redirect back to it without wasm); other sites get nothing.
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "permissions-policy",
        HeaderValue::from_static("camera=(), microphone=(), geolocation=()"),
    );
    if !is_static && !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if st.config.https() {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000; includeSubDomains"),
        );
    }
    res
}

/// Why a state-changing request is refused as cross-site, or `None` when it
/// is same-origin. Browsers send `Sec-Fetch-Site`; older ones only
/// `Origin`. A request with neither is not from a browser form, and is let
/// through only with a bearer token (which a browser never attaches by
/// itself, so it cannot be forged cross-site).
pub fn cross_site_reason(
    method: &Method,
    headers: &axum::http::HeaderMap,
    origin: &str,
) -> Option<&'static str> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return None;
    }
    if let Some(site) = headers.get("sec-fetch-site") {
        return match site.as_bytes() {
            b"same-origin" | b"none" => None,
            _ => Some("the request came from another site"),
        };
    }
    if let Some(o) = headers.get(header::ORIGIN) {
        return (o.as_bytes() != origin.as_bytes())
            .then_some("the request's Origin is not this console");
    }
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Bearer "));
    (!bearer).then_some("the request has neither Origin nor Sec-Fetch-Site, and no bearer token")
}

/// Refuses cross-site state changes with 403, and counts the attempt in
/// its source's row for the minute (anyone can send these, so they are not
/// chained one by one).
pub async fn same_origin(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let Some(reason) = cross_site_reason(req.method(), req.headers(), &st.config.origin()) else {
        return next.run(req).await;
    };
    let addr = req
        .extensions()
        .get::<ClientAddr>()
        .map_or("unknown", |a| a.0.as_str());
    let path = req.uri().path();
    tracing::warn!(path = streamkeeper::audit::clip_target(path), %addr, reason, "refused cross-site request");
    let event = Event {
        actor: "anonymous",
        action: "request.cross_site",
        target: format!("path:{path}"),
        detail: serde_json::json!({ "method": req.method().as_str(), "reason": reason }),
        source: addr,
    };
    if let Err(e) = st.accounts.tally(event).await {
        tracing::error!(error = %e, "could not record a refused cross-site request");
    }
    let body = serde_json::json!({
        "error": { "code": "cross_site", "message": format!("Refused: {reason}.") }
    });
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(body.to_string()),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderMap;

    fn h(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(*k, HeaderValue::from_static(v));
        }
        m
    }

    const ORIGIN: &str = "http://127.0.0.1:3000";

    #[test]
    fn reads_are_never_cross_site() {
        assert_eq!(
            cross_site_reason(
                &Method::GET,
                &h(&[("sec-fetch-site", "cross-site")]),
                ORIGIN
            ),
            None
        );
    }

    #[test]
    fn fetch_metadata_decides_when_present() {
        assert_eq!(
            cross_site_reason(
                &Method::POST,
                &h(&[("sec-fetch-site", "same-origin")]),
                ORIGIN
            ),
            None
        );
        assert!(
            cross_site_reason(
                &Method::POST,
                &h(&[("sec-fetch-site", "same-site")]),
                ORIGIN
            )
            .is_some()
        );
        assert!(
            cross_site_reason(
                &Method::POST,
                &h(&[("sec-fetch-site", "cross-site"), ("origin", ORIGIN)]),
                ORIGIN
            )
            .is_some()
        );
    }

    #[test]
    fn origin_decides_otherwise() {
        assert_eq!(
            cross_site_reason(&Method::POST, &h(&[("origin", ORIGIN)]), ORIGIN),
            None
        );
        assert!(
            cross_site_reason(
                &Method::DELETE,
                &h(&[("origin", "https://evil.example")]),
                ORIGIN
            )
            .is_some()
        );
    }

    #[test]
    fn headless_requests_need_a_bearer_token() {
        assert!(cross_site_reason(&Method::POST, &h(&[]), ORIGIN).is_some());
        assert_eq!(
            cross_site_reason(
                &Method::POST,
                &h(&[("authorization", "Bearer sk_x")]),
                ORIGIN
            ),
            None
        );
    }
}
