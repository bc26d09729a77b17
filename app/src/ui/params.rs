//! The address's query and path parameters, read the same way by every page, and
//! links that keep the other parameters.

use leptos::prelude::*;

/// A query parameter of the current URL.
pub fn query_param(name: &'static str) -> Memo<Option<String>> {
    let q = leptos_router::hooks::use_query_map();
    Memo::new(move |_| q.with(|q| q.get(name)).filter(|v| !v.is_empty()))
}

/// The `:id` route parameter as a number (`None` when absent or garbled).
pub fn id_param() -> Memo<Option<i64>> {
    let params = leptos_router::hooks::use_params_map();
    Memo::new(move |_| {
        params
            .with(|p| p.get("id"))
            .and_then(|v| v.parse::<i64>().ok())
    })
}

/// The `page` query parameter as a number (1 when absent or garbled).
pub fn page_param() -> Memo<u32> {
    let p = query_param("page");
    Memo::new(move |_| p.get().and_then(|p| p.parse().ok()).unwrap_or(1))
}

/// A link to `path` with the given query parameters (empty ones left out).
pub fn href_with(path: &str, params: &[(&str, Option<String>)]) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in params {
        if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
            q.append_pair(k, v);
        }
    }
    let q = q.finish();
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{q}")
    }
}
