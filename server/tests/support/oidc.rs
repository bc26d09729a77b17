//! A real OpenID Connect provider for the single sign-on tests:
//! `oidc-provider-mock` from PyPI (authlib underneath), started on a free
//! port. `scripts/test` installs it in a venv and names its Python in
//! `SK_OIDC_PROVIDER_PYTHON`. Its users are set through its own API
//! (`PUT /users/<sub>`), and its sign-in form is posted as a person would.

use super::{ORIGIN, Reply, TestApp};
use axum::http::StatusCode;
use serde_json::Value;
use std::time::Duration;
use streamkeeper::accounts::sso::GroupMapping;
use streamkeeper_server::accounts::sso::SsoSettings;
use streamkeeper_server::config::ServeConfig;
use tokio::process::{Child, Command};

pub const CLIENT_ID: &str = "streamkeeper";

/// The groups the tests' provider users carry, and what they give.
pub const MAPPING: &str = r#"{
    "kafka-admins": {"roles": ["admin"]},
    "team-payments": {"teams": ["payments"], "roles": ["owner"]},
    "approvers": {"roles": ["approver"]}
}"#;

fn python() -> String {
    std::env::var("SK_OIDC_PROVIDER_PYTHON").unwrap_or_else(|_| {
        let home = std::env::var("HOME").unwrap_or_default();
        format!("{home}/.cache/streamkeeper/oidc-provider-mock-0.3.4/bin/python")
    })
}

pub struct Provider {
    child: Child,
    pub port: u16,
    http: reqwest::Client,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn spawn(port: u16) -> Child {
    Command::new(python())
        .args(["-m", "oidc_provider_mock", "--port", &port.to_string()])
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "oidc-provider-mock could not start with {} ({e}): scripts/test installs it (SK_OIDC_PROVIDER_PYTHON)",
                python()
            )
        })
}

impl Provider {
    pub async fn start() -> Self {
        let port = free_port();
        let p = Provider {
            child: spawn(port),
            port,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
        };
        p.ready().await;
        p
    }

    async fn ready(&self) {
        let url = format!("{}/.well-known/openid-configuration", self.issuer());
        for _ in 0..150 {
            if let Ok(r) = self.http.get(&url).send().await
                && r.status().is_success()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "oidc-provider-mock did not answer on port {} in 15 s",
            self.port
        );
    }

    /// Stops and starts the provider on the same port: it comes back with
    /// a new signing key (and no users), as a provider that rotated its key.
    pub async fn restart(&mut self) {
        self.child.kill().await.expect("kill");
        let _ = self.child.wait().await;
        self.child = spawn(self.port);
        self.ready().await;
    }

    pub fn issuer(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Sets a user's claims at the provider (its groups among them).
    pub async fn set_user(&self, sub: &str, claims: Value) {
        let r = self
            .http
            .put(format!("{}/users/{sub}", self.issuer()))
            .json(&claims)
            .send()
            .await
            .expect("set user");
        assert!(r.status().is_success(), "set user: {}", r.status());
    }

    /// Registers a client at the provider (dynamic client registration)
    /// that authenticates at its token endpoint by `auth_method`; its id
    /// and secret. (The mock's token endpoint takes only the two
    /// `client_secret_*` methods, so a public client cannot be tried on it.)
    pub async fn register_client(&self, auth_method: &str) -> (String, String) {
        let r = self
            .http
            .post(format!("{}/oauth2/clients", self.issuer()))
            .json(&serde_json::json!({
                "redirect_uris": [format!("{ORIGIN}/login/sso/callback")],
                "token_endpoint_auth_method": auth_method,
            }))
            .send()
            .await
            .expect("register a client");
        assert_eq!(r.status().as_u16(), 201, "registered");
        let v: Value = r.json().await.expect("the registration");
        (
            v["client_id"].as_str().expect("client_id").to_string(),
            v["client_secret"].as_str().unwrap_or_default().to_string(),
        )
    }

    /// Signs `sub` in at the provider's form on the authorization URL,
    /// and returns where the provider sends the browser back.
    pub async fn sign_in_at(&self, authorize: &str, sub: &str) -> String {
        let r = self
            .http
            .post(authorize)
            .form(&[("sub", sub)])
            .send()
            .await
            .expect("the provider's form");
        redirected_back(&r)
    }

    /// Ends the session at the provider's end-session page (`url`, where
    /// the console sent the browser) as a person would, and returns where
    /// the provider sends the browser back.
    pub async fn end_session_at(&self, url: &str) -> String {
        let page = self.http.get(url).send().await.expect("end-session page");
        assert_eq!(
            page.status().as_u16(),
            200,
            "the provider's end-session page"
        );
        let back = url::Url::parse(url)
            .expect("end-session URL")
            .query_pairs()
            .find(|(k, _)| k == "post_logout_redirect_uri")
            .map(|(_, v)| v.into_owned())
            .expect("a way back");
        let r = self
            .http
            .post(format!("{}/oauth2/end_session/confirm", self.issuer()))
            .form(&[("redirect_uri", back.as_str())])
            .send()
            .await
            .expect("end the session");
        redirected_back(&r)
    }

    /// Denies at the provider's form, and returns where it sends the
    /// browser back.
    pub async fn deny_at(&self, authorize: &str) -> String {
        let r = self
            .http
            .post(authorize)
            .form(&[("action", "deny")])
            .send()
            .await
            .expect("the provider's form");
        r.headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .expect("location")
            .to_string()
    }

    /// An ID token the provider issues straight to a client of the test's
    /// choosing (another audience, a nonce of its own), as a client would
    /// get one.
    pub async fn id_token_for(&self, client_id: &str, sub: &str, nonce: &str) -> String {
        let redirect = "http://127.0.0.1:1/cb";
        let mut authorize =
            url::Url::parse(&format!("{}/oauth2/authorize", self.issuer())).expect("url");
        authorize
            .query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect)
            .append_pair("scope", "openid profile email")
            .append_pair("state", "s")
            .append_pair("nonce", nonce);
        let back = self.sign_in_at(authorize.as_str(), sub).await;
        let code = url::Url::parse(&back)
            .expect("back")
            .query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
            .expect("code");
        let token: Value = self
            .http
            .post(format!("{}/oauth2/token", self.issuer()))
            .basic_auth(client_id, Some("secret"))
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", redirect),
            ])
            .send()
            .await
            .expect("token")
            .json()
            .await
            .expect("token JSON");
        token["id_token"].as_str().expect("id_token").to_string()
    }

    /// An ID token with the right claims signed by a key the provider
    /// never published, under key id `kid` (authlib, from the provider's
    /// venv).
    pub async fn forged_token(&self, kid: &str, claims: Value) -> String {
        let script = "import json, sys\n\
from authlib.jose import JsonWebKey, jwt\n\
key = JsonWebKey.generate_key('RSA', 2048, is_private=True)\n\
print(jwt.encode({'alg': 'RS256', 'kid': sys.argv[1]}, json.loads(sys.argv[2]), key).decode())\n";
        let out = Command::new(python())
            .args(["-c", script, kid, &claims.to_string()])
            .output()
            .await
            .expect("python");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// Where the provider's 302 sends the browser back.
fn redirected_back(r: &reqwest::Response) -> String {
    assert_eq!(r.status().as_u16(), 302, "the provider redirects back");
    r.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .expect("location")
        .to_string()
}

/// The tests' settings with single sign-on through `p`.
pub fn config(p: &Provider) -> ServeConfig {
    let mut cfg = super::config();
    cfg.sso = Some(SsoSettings {
        issuer: url::Url::parse(&p.issuer()).expect("issuer"),
        client_id: CLIENT_ID.into(),
        client_secret: Some("client-secret".into()),
        scopes: vec!["profile".into(), "email".into()],
        groups_claim: "groups".into(),
        username_claim: "preferred_username".into(),
        mapping: GroupMapping::parse(MAPPING).expect("mapping"),
        provider_name: "Test IdP".into(),
        redirect: url::Url::parse(&format!("{ORIGIN}/login/sso/callback")).expect("redirect"),
        provider_logout: true,
    });
    cfg
}

/// The binding cookie a start sets, as `name=value`.
pub fn browser_cookie(r: &Reply) -> String {
    r.headers
        .get_all(axum::http::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("streamkeeper_sso="))
        .and_then(|c| c.split(';').next())
        .expect("the binding cookie")
        .to_string()
}

/// The path and query of a URL back at the console.
pub fn local(url: &str) -> String {
    url.strip_prefix(ORIGIN)
        .unwrap_or_else(|| panic!("{url} is not at the console"))
        .to_string()
}

/// The whole sign-in as a browser makes it: the console's start (with the
/// session `cookie`, for a re-authentication), the provider's form as
/// `sub`, the callback with the binding cookie. The callback's reply.
pub async fn sign_in(
    t: &TestApp,
    p: &Provider,
    start: &str,
    cookie: Option<&str>,
    sub: &str,
) -> Reply {
    let r = t.get(start, cookie).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{start}: {}", r.body);
    let browser = browser_cookie(&r);
    let back = p.sign_in_at(r.location(), sub).await;
    t.get(&local(&back), Some(&browser)).await
}
