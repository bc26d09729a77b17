//! Control characters in text input (issue 39): every operation of the
//! OpenAPI document, with NUL in each path segment, in a query value and in
//! every string of a JSON body, is answered 422 naming the field, never
//! 5xx. The fuzz pass in scripts/test (schemathesis) goes wider; this is
//! the same promise, checked on every build.

mod support;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use streamkeeper::accounts::role::Role;
use streamkeeper::accounts::token::Scope;
use support::{PASSWORD, TestApp};

/// A body for `schema` whose every string holds a NUL.
fn sample(doc: &Value, schema: &Value, depth: usize) -> Value {
    if depth > 6 {
        return Value::Null;
    }
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/components/schemas/");
        return sample(doc, &doc["components"]["schemas"][name], depth + 1);
    }
    for any in ["allOf", "oneOf", "anyOf"] {
        if let Some(first) = schema[any].as_array().and_then(|a| a.first()) {
            return sample(doc, first, depth + 1);
        }
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null")
            .to_string(),
        Value::String(k) => k.clone(),
        _ if schema["properties"].is_object() => "object".into(),
        _ => "string".into(),
    };
    match kind.as_str() {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (name, prop) in props {
                    out.insert(name.clone(), sample(doc, prop, depth + 1));
                }
            }
            Value::Object(out)
        }
        "array" => json!([sample(doc, &schema["items"], depth + 1)]),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => json!("a\u{0}b"),
    }
}

/// The path parameters named in an OpenAPI path.
fn params(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|p| p.split('}').next())
        .map(str::to_string)
        .collect()
}

fn filled(path: &str, nul_in: Option<&str>) -> String {
    let mut out = path.to_string();
    for p in params(path) {
        let v = if nul_in == Some(p.as_str()) {
            "a%00b"
        } else {
            "1"
        };
        out = out.replace(&format!("{{{p}}}"), v);
    }
    out
}

fn refused(r: &support::Reply, what: &str, field: &str) {
    // Refused before the input is read (tokens cannot approve): fine.
    if r.status == StatusCode::FORBIDDEN {
        return;
    }
    assert_eq!(
        r.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{what}: {}",
        r.body
    );
    let message = r.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("holds a control character") && message.contains(field),
        "{what}: {message}"
    );
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn nul_in_any_text_of_any_api_operation_is_a_422_naming_the_field(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t
        .user(
            "root",
            &[Role::Admin, Role::Owner, Role::Approver, Role::Manager],
        )
        .await;
    let token = t.token_with(admin, &Scope::ALL).await;
    let doc = t
        .api(Method::GET, "/api/v1/openapi.json", &token, None)
        .await
        .json();
    let paths = doc["paths"].as_object().expect("paths").clone();
    let (mut segments, mut bodies) = (0, 0);
    for (path, item) in &paths {
        for (method, op) in item.as_object().expect("operations") {
            let Ok(method) = Method::from_bytes(method.to_uppercase().as_bytes()) else {
                continue;
            };
            let what = format!("{method} {path}");
            let schema = &op["requestBody"]["content"]["application/json"]["schema"];
            let body = (!schema.is_null()).then(|| sample(&doc, schema, 0));
            // A free-form body (OpenLineage events) is read by its own
            // parser, which stores events as sent: a NUL in one is never a
            // 5xx (see `free_form_events_with_nul_are_not_a_5xx`).
            if body
                .as_ref()
                .is_some_and(|b| !b.to_string().contains("\\u0000"))
            {
                continue;
            }
            for p in params(path) {
                let r = t
                    .api(
                        method.clone(),
                        &filled(path, Some(&p)),
                        &token,
                        body.clone(),
                    )
                    .await;
                refused(&r, &format!("{what}, {{{p}}}"), &p);
                segments += 1;
            }
            if let Some(body) = body {
                let r = t
                    .api(method.clone(), &filled(path, None), &token, Some(body))
                    .await;
                refused(&r, &format!("{what}, body"), "");
                bodies += 1;
            }
            if method == Method::GET {
                let uri = format!("{}?q=a%00b", filled(path, None));
                let r = t.api(method.clone(), &uri, &token, None).await;
                assert!(r.status.as_u16() < 500, "{what}, query: {}", r.body);
            }
        }
    }
    // The document's shape, so a test that checks nothing cannot pass.
    assert!(segments >= 10 && bodies >= 10, "{segments} {bodies}");
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn nul_in_a_query_value_or_a_sign_in_form_is_refused_not_a_500(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("root", &[Role::Admin]).await;
    let token = t.token(admin).await;
    let r = t
        .api(
            Method::GET,
            "/api/v1/clusters/1/groups?q=a%00b",
            &token,
            None,
        )
        .await;
    refused(&r, "groups?q", "q");
    let r = t
        .post_form(
            "/login",
            None,
            &[
                ("username", "a\u{0}b"),
                ("password", PASSWORD),
                ("next", "/"),
            ],
        )
        .await;
    assert!(r.status.as_u16() < 500, "{}", r.body);
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn free_form_events_with_nul_are_not_a_5xx(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    let admin = t.user("root", &[Role::Admin]).await;
    let token = t.token_with(admin, &Scope::ALL).await;
    let event = json!({
        "eventType": "START",
        "eventTime": "2026-01-01T00:00:00Z",
        "run": {"runId": "01890f6e-0000-7000-8000-000000000000"},
        "job": {"namespace": "a\u{0}b", "name": "x\u{0}"},
        "inputs": [{"namespace": "kafka://b:9092", "name": "t\u{0}"}],
        "producer": "p\u{0}",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    });
    for (path, body) in [
        ("/api/v1/lineage", event.clone()),
        ("/api/v1/lineage/batch", json!([event])),
    ] {
        let r = t.api(Method::POST, path, &token, Some(body)).await;
        assert!(r.status.as_u16() < 500, "{path}: {} {}", r.status, r.body);
    }
}

/// A server function, a form with a control character, the field it names.
type FormCase<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

/// A server function's form post with `field` holding a NUL.
async fn fn_post(t: &TestApp, cookie: &str, path: &str, form: &[(&str, &str)]) -> support::Reply {
    t.post_form(path, Some(cookie), form).await
}

#[sqlx::test(migrator = "streamkeeper_server::platform::db::MIGRATOR")]
async fn server_functions_refuse_control_characters_naming_the_field(pool: sqlx::PgPool) {
    let t = TestApp::new(pool).await;
    t.user(
        "root",
        &[Role::Admin, Role::Owner, Role::Approver, Role::Manager],
    )
    .await;
    let c = t.login("root", PASSWORD).await.expect("signed in");
    let cases: [FormCase; 6] = [
        (
            "/fn/create_team",
            &[("name", "payments"), ("description", "a\u{0}b")],
            "description",
        ),
        (
            "/fn/create_user",
            &[
                ("username", "bea"),
                ("display_name", "Bea\u{0}"),
                ("password", "a long enough password"),
                ("viewer", "on"),
            ],
            "display_name",
        ),
        (
            "/fn/comment_review",
            &[("item_id", "1"), ("body", "looks\u{0}good")],
            "body",
        ),
        (
            "/fn/describe_stream",
            &[
                ("cluster_id", "1"),
                ("topic", "orders"),
                ("domain", "sales\u{1b}"),
            ],
            "domain",
        ),
        (
            "/fn/set_platform_team",
            &[("team", "plat\u{0}form")],
            "team",
        ),
        // A one-line name (a form field's name) keeps no line feed.
        (
            "/fn/create_team",
            &[("name", "ok"), ("description", "ok"), ("x\ny", "1")],
            "the form",
        ),
    ];
    for (path, form, field) in cases {
        let r = fn_post(&t, &c, path, form).await;
        assert_eq!(
            r.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path}: {}",
            r.body
        );
        assert!(
            r.body.contains("holds a control character") && r.body.contains(field),
            "{path}: {}",
            r.body
        );
    }
    // Free text keeps its lines and tabs.
    let r = fn_post(
        &t,
        &c,
        "/fn/create_team",
        &[
            ("name", "payments"),
            ("description", "two\r\nlines\tand a tab"),
        ],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    // Without JavaScript the form goes back to its page with the error,
    // which the page shows.
    let req = axum::http::Request::post("/fn/create_team")
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "text/html")
        .header("referer", format!("{}/settings/teams", support::ORIGIN))
        .header("origin", support::ORIGIN)
        .header("cookie", &c)
        .body(axum::body::Body::from("name=ops&description=a%00b"))
        .expect("request");
    let r = t.send(req).await;
    assert_eq!(r.status, StatusCode::FOUND, "{}", r.body);
    let back = r
        .location()
        .strip_prefix(support::ORIGIN)
        .expect("same origin")
        .to_string();
    assert!(back.contains("__err="), "{back}");
    let page = t.get(&back, Some(&c)).await;
    assert!(
        page.body
            .contains("description holds a control character (U+0000)"),
        "{}",
        page.body
    );
    let teams = t.get("/settings/teams", Some(&c)).await;
    assert!(!teams.body.contains(">ops<"), "nothing stored");
    // A page read with a NUL in its query is never a 5xx.
    for page in [
        "/clusters/1/stream?topic=a%00b",
        "/clusters/1/connector?name=a%00b",
        "/lineage?q=a%00b",
    ] {
        let r = t.get(page, Some(&c)).await;
        assert!(r.status.as_u16() < 500, "{page}: {}", r.status);
    }
}
