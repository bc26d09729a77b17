//! The registry's REST API, one method per endpoint.
//!
//! Every request says `Accept: application/vnd.schemaregistry.v1+json` and
//! sends bodies with that content type, as Confluent's own client does.
//! Answers are read by what they contain: any JSON content type will do,
//! and a 2xx whose body is not what the contract says is an error.
//! Requests go through [`crate::clients::egress::HttpClient`]: no redirects (a 3xx
//! is [`RegistryError::Redirected`]), only addresses the egress rule
//! allows, and answers read up to [`RegistrySettings::max_body`].

use super::auth::Auth;
use super::error::{self, RegistryError, Target};
use super::types::{
    CheckOptions, CompatibilityCheck, Config, ConfigUpdate, Deleted, ModeBody, NewSchema,
    Registered, RegistryMode, SchemaById, SchemaVersion, Scope, SubjectVersion, VersionRef,
};
use crate::clients::egress::{BodyError, HttpClient, endpoint, media_type, read_capped};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Duration;
use streamkeeper::platform::egress::EgressPolicy;
use streamkeeper::schemas::Mode;

/// The registry's own media type, for requests and bodies.
pub const CONTENT_TYPE_V1: &str = "application/vnd.schemaregistry.v1+json";

/// The largest answer read by default: room for a subject list of tens of
/// thousands of names or a large schema, not for whatever a URL streams.
pub const MAX_BODY: usize = 8 * 1024 * 1024;

/// Of a redirect's body, only this much is read (its start is kept for
/// admins to see what answered).
const REDIRECT_BODY: usize = 64 * 1024;

/// Where the registry is and how to reach it.
#[derive(Clone, Debug)]
pub struct RegistrySettings {
    /// The base URL, e.g. `https://psrc-123.eu-west-1.aws.confluent.cloud`
    /// or `http://registry:8081/prefix`.
    pub url: String,
    pub auth: Auth,
    /// For the whole request: connecting, sending and reading the answer.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Where connections may go; public addresses only by default.
    pub egress: EgressPolicy,
    /// An answer longer than this is an error, and is not read further.
    pub max_body: usize,
}

impl RegistrySettings {
    pub fn new(url: impl Into<String>) -> Self {
        RegistrySettings {
            url: url.into(),
            auth: Auth::None,
            timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            egress: EgressPolicy::STRICT,
            max_body: MAX_BODY,
        }
    }
}

/// An async client for one Schema Registry. Cheap to clone.
#[derive(Clone, Debug)]
pub struct RegistryClient {
    http: HttpClient,
    base: Url,
    auth: Auth,
    timeout: Duration,
    max_body: usize,
}

/// One request: path segments (each percent-encoded on its own, so a
/// subject may contain `/`), query, body, and what it is about.
struct Call<'a> {
    method: Method,
    path: Vec<&'a str>,
    query: Vec<(&'static str, String)>,
    body: Option<Vec<u8>>,
    target: Target,
}

impl<'a> Call<'a> {
    fn new(method: Method, path: &[&'a str]) -> Self {
        Call {
            method,
            path: path.to_vec(),
            query: Vec::new(),
            body: None,
            target: Target::default(),
        }
    }

    fn get(path: &[&'a str]) -> Self {
        Self::new(Method::GET, path)
    }

    /// Adds `name=true` when `on`; the registry's default is false.
    fn flag(mut self, name: &'static str, on: bool) -> Self {
        if on {
            self.query.push((name, "true".into()));
        }
        self
    }

    fn deleted(self, deleted: Deleted) -> Self {
        self.flag("deleted", deleted == Deleted::Include)
            .flag("deletedOnly", deleted == Deleted::Only)
    }

    fn subject(mut self, subject: &str) -> Self {
        self.target.subject = Some(subject.to_string());
        self
    }

    fn version(mut self, version: VersionRef) -> Self {
        self.target.version = Some(version);
        self
    }

    fn body(mut self, body: &Value) -> Self {
        self.body = Some(body.to_string().into_bytes());
        self
    }
}

/// A 2xx answer.
struct Answer {
    url: String,
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn json<T: DeserializeOwned>(self) -> Result<T, RegistryError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            // serde's text quotes the body, so it goes with the body.
            error::unexpected(
                self.url,
                self.status,
                "the body is not the expected JSON",
                Some(format!("{e}: {}", error::snippet(&self.body))),
            )
        })
    }

    /// The body as text, for the raw-schema endpoints: the registry sends
    /// the schema itself under a JSON content type, so a body of another
    /// type (a proxy's HTML page) is not a schema.
    fn text(self) -> Result<String, RegistryError> {
        let content_type = self
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let essence = media_type(&self.headers);
        let textual = essence.is_empty()
            || essence == "application/json"
            || essence.ends_with("+json")
            || essence == "text/plain";
        if !textual {
            return Err(error::unexpected(
                self.url,
                self.status,
                &format!("a schema was expected, not {content_type}"),
                Some(error::snippet(&self.body)),
            ));
        }
        String::from_utf8(self.body)
            .map_err(|_| error::unexpected(self.url, self.status, "the schema is not UTF-8", None))
    }
}

impl RegistryClient {
    pub fn new(settings: RegistrySettings) -> Result<Self, RegistryError> {
        let base = crate::clients::egress::base_url(&settings.url, "the registry's auth settings")
            .map_err(|b| RegistryError::BadUrl {
                url: b.url,
                reason: b.reason,
            })?;
        settings
            .egress
            .check_literal(base.host_str().unwrap_or(""))
            .map_err(|refusal| RegistryError::Egress {
                url: settings.url.clone(),
                refusal,
            })?;
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static(CONTENT_TYPE_V1));
        let builder = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(settings.timeout)
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("streamkeeper/", env!("CARGO_PKG_VERSION")));
        let http =
            HttpClient::new(settings.egress, builder).map_err(|e| RegistryError::BadUrl {
                url: settings.url.clone(),
                reason: format!("no HTTP client: {e}"),
            })?;
        Ok(RegistryClient {
            http,
            base,
            auth: settings.auth,
            timeout: settings.timeout,
            max_body: settings.max_body,
        })
    }

    fn url(&self, call: &Call<'_>) -> Result<Url, RegistryError> {
        endpoint(&self.base, &call.path, &call.query).ok_or_else(|| RegistryError::BadUrl {
            url: self.base.to_string(),
            reason: "it cannot take a path".into(),
        })
    }

    #[tracing::instrument(skip_all, fields(method = %call.method, subject = call.target.subject.as_deref()))]
    async fn send(&self, call: Call<'_>) -> Result<Answer, RegistryError> {
        let url = self.url(&call)?;
        let shown = url.to_string();
        let mut request = self
            .http
            .request(call.method.clone(), url)
            .map_err(|refusal| RegistryError::Egress {
                url: shown.clone(),
                refusal,
            })?;
        if let Some(body) = call.body {
            request = request
                .header(CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE_V1))
                .body(body);
        }
        let response = self.auth.apply(request).send().await.map_err(|e| {
            match crate::clients::egress::refusal_of(&e) {
                Some(refusal) => RegistryError::Egress {
                    url: shown.clone(),
                    refusal,
                },
                None => self.unreachable(&shown, &e),
            }
        })?;
        let status = response.status();
        let headers = response.headers().clone();
        tracing::debug!(status = status.as_u16(), "schema registry answered");
        if status.is_redirection() {
            let location = headers
                .get(reqwest::header::LOCATION)
                .map(|l| error::snippet(l.as_bytes()));
            // Its start only, for admins: never followed, never used.
            let body = read_capped(response, REDIRECT_BODY)
                .await
                .ok()
                .map(|b| error::snippet(&b));
            return Err(RegistryError::Redirected {
                url: shown,
                status: status.as_u16(),
                location,
                body,
            });
        }
        let body = read_capped(response, self.max_body)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge { limit } => RegistryError::TooLarge {
                    url: shown.clone(),
                    limit,
                },
                BodyError::Read(e) => self.unreachable(&shown, &e),
            })?;
        if status.is_success() {
            Ok(Answer {
                url: shown,
                status,
                headers,
                body,
            })
        } else {
            Err(error::from_answer(
                &shown,
                status,
                &headers,
                &body,
                &call.target,
            ))
        }
    }

    fn unreachable(&self, url: &str, e: &reqwest::Error) -> RegistryError {
        let reason = crate::clients::egress::unreachable_reason(e, self.timeout);
        RegistryError::Unreachable {
            url: url.to_string(),
            reason,
        }
    }

    // Subjects and versions.

    /// `GET /subjects`: subject names, sorted by the registry.
    pub async fn subjects(
        &self,
        prefix: Option<&str>,
        deleted: Deleted,
    ) -> Result<Vec<String>, RegistryError> {
        let mut call = Call::get(&["subjects"]).deleted(deleted);
        if let Some(prefix) = prefix {
            call.query.push(("subjectPrefix", prefix.to_string()));
        }
        self.send(call).await?.json()
    }

    /// `GET /subjects/{s}/versions`.
    pub async fn versions(
        &self,
        subject: &str,
        deleted: Deleted,
    ) -> Result<Vec<u32>, RegistryError> {
        let call = Call::get(&["subjects", subject, "versions"])
            .deleted(deleted)
            .subject(subject);
        self.send(call).await?.json()
    }

    /// `GET /subjects/{s}/versions/{v}`; `include_deleted` also finds a
    /// soft-deleted version.
    pub async fn version(
        &self,
        subject: &str,
        version: VersionRef,
        include_deleted: bool,
    ) -> Result<SchemaVersion, RegistryError> {
        let v = version.to_string();
        let call = Call::get(&["subjects", subject, "versions", &v])
            .flag("deleted", include_deleted)
            .subject(subject)
            .version(version);
        self.send(call).await?.json()
    }

    /// `GET /subjects/{s}/versions/{v}/schema`: the schema text alone.
    pub async fn raw_schema(
        &self,
        subject: &str,
        version: VersionRef,
        include_deleted: bool,
    ) -> Result<String, RegistryError> {
        let v = version.to_string();
        let call = Call::get(&["subjects", subject, "versions", &v, "schema"])
            .flag("deleted", include_deleted)
            .subject(subject)
            .version(version);
        self.send(call).await?.text()
    }

    /// `GET /subjects/{s}/versions/{v}/referencedby`: the IDs of schemas
    /// that reference this version.
    pub async fn referenced_by(
        &self,
        subject: &str,
        version: VersionRef,
    ) -> Result<Vec<u32>, RegistryError> {
        let v = version.to_string();
        let call = Call::get(&["subjects", subject, "versions", &v, "referencedby"])
            .subject(subject)
            .version(version);
        self.send(call).await?.json()
    }

    /// `POST /subjects/{s}/versions`: registers the schema (or finds it
    /// registered already) and returns its registry-wide ID.
    pub async fn register(
        &self,
        subject: &str,
        schema: &NewSchema,
        normalize: bool,
    ) -> Result<u32, RegistryError> {
        let call = Call::new(Method::POST, &["subjects", subject, "versions"])
            .flag("normalize", normalize)
            .subject(subject)
            .body(&schema.to_json());
        Ok(self.send(call).await?.json::<Registered>()?.id)
    }

    /// `POST /subjects/{s}`: the version under which the subject holds
    /// this schema.
    pub async fn lookup(
        &self,
        subject: &str,
        schema: &NewSchema,
        normalize: bool,
        include_deleted: bool,
    ) -> Result<SchemaVersion, RegistryError> {
        let call = Call::new(Method::POST, &["subjects", subject])
            .flag("normalize", normalize)
            .flag("deleted", include_deleted)
            .subject(subject)
            .body(&schema.to_json());
        self.send(call).await?.json()
    }

    /// `DELETE /subjects/{s}`: soft, or `permanent` after a soft delete.
    /// Returns the versions deleted.
    pub async fn delete_subject(
        &self,
        subject: &str,
        permanent: bool,
    ) -> Result<Vec<u32>, RegistryError> {
        let call = Call::new(Method::DELETE, &["subjects", subject])
            .flag("permanent", permanent)
            .subject(subject);
        self.send(call).await?.json()
    }

    /// `DELETE /subjects/{s}/versions/{v}`: returns the version deleted.
    pub async fn delete_version(
        &self,
        subject: &str,
        version: VersionRef,
        permanent: bool,
    ) -> Result<u32, RegistryError> {
        let v = version.to_string();
        let call = Call::new(Method::DELETE, &["subjects", subject, "versions", &v])
            .flag("permanent", permanent)
            .subject(subject)
            .version(version);
        self.send(call).await?.json()
    }

    // Schemas by ID.

    /// `GET /schemas/ids/{id}`.
    pub async fn schema(&self, id: u32) -> Result<SchemaById, RegistryError> {
        let i = id.to_string();
        let mut call = Call::get(&["schemas", "ids", &i]);
        call.target.id = Some(id);
        self.send(call).await?.json()
    }

    /// `GET /schemas/ids/{id}/versions`: where the schema is registered.
    pub async fn schema_versions(
        &self,
        id: u32,
        include_deleted: bool,
    ) -> Result<Vec<SubjectVersion>, RegistryError> {
        let i = id.to_string();
        let mut call =
            Call::get(&["schemas", "ids", &i, "versions"]).flag("deleted", include_deleted);
        call.target.id = Some(id);
        self.send(call).await?.json()
    }

    /// `GET /schemas/ids/{id}/subjects`.
    pub async fn schema_subjects(
        &self,
        id: u32,
        include_deleted: bool,
    ) -> Result<Vec<String>, RegistryError> {
        let i = id.to_string();
        let mut call =
            Call::get(&["schemas", "ids", &i, "subjects"]).flag("deleted", include_deleted);
        call.target.id = Some(id);
        self.send(call).await?.json()
    }

    // Compatibility.

    /// `POST /compatibility/subjects/{s}/versions/{v}`: the schema against
    /// one version, under the subject's compatibility level.
    pub async fn check_compatibility(
        &self,
        subject: &str,
        version: VersionRef,
        schema: &NewSchema,
        options: CheckOptions,
    ) -> Result<CompatibilityCheck, RegistryError> {
        let v = version.to_string();
        let call = Call::new(
            Method::POST,
            &["compatibility", "subjects", subject, "versions", &v],
        )
        .flag("verbose", options.verbose)
        .flag("normalize", options.normalize)
        .subject(subject)
        .version(version)
        .body(&schema.to_json());
        self.send(call).await?.json()
    }

    /// `POST /compatibility/subjects/{s}/versions`: the schema against the
    /// versions registration would check.
    pub async fn check_compatibility_all(
        &self,
        subject: &str,
        schema: &NewSchema,
        options: CheckOptions,
    ) -> Result<CompatibilityCheck, RegistryError> {
        let call = Call::new(
            Method::POST,
            &["compatibility", "subjects", subject, "versions"],
        )
        .flag("verbose", options.verbose)
        .flag("normalize", options.normalize)
        .subject(subject)
        .body(&schema.to_json());
        self.send(call).await?.json()
    }

    // Compatibility configuration.

    fn scoped<'s>(method: Method, root: &'static str, scope: Scope<'s>) -> Call<'s> {
        match scope {
            Scope::Global => Call::new(method, &[root]),
            Scope::Subject(subject) => Call::new(method, &[root, subject]).subject(subject),
        }
    }

    /// `GET /config[/{s}]`. A subject without its own level is
    /// [`RegistryError::NoSubjectConfig`] unless `default_to_global`.
    pub async fn config(
        &self,
        scope: Scope<'_>,
        default_to_global: bool,
    ) -> Result<Config, RegistryError> {
        let call =
            Self::scoped(Method::GET, "config", scope).flag("defaultToGlobal", default_to_global);
        self.send(call).await?.json()
    }

    /// `PUT /config[/{s}]`: returns the level the registry stored.
    pub async fn set_config(&self, scope: Scope<'_>, level: Mode) -> Result<Mode, RegistryError> {
        let call = Self::scoped(Method::PUT, "config", scope).body(&ConfigUpdate::to_json(level));
        Ok(self.send(call).await?.json::<ConfigUpdate>()?.compatibility)
    }

    /// `DELETE /config[/{s}]`: returns the configuration removed.
    pub async fn delete_config(&self, scope: Scope<'_>) -> Result<Config, RegistryError> {
        let call = Self::scoped(Method::DELETE, "config", scope);
        self.send(call).await?.json()
    }

    // Modes.

    /// `GET /mode[/{s}]`. A subject without its own mode is
    /// [`RegistryError::NoSubjectMode`] unless `default_to_global`.
    pub async fn mode(
        &self,
        scope: Scope<'_>,
        default_to_global: bool,
    ) -> Result<RegistryMode, RegistryError> {
        let call =
            Self::scoped(Method::GET, "mode", scope).flag("defaultToGlobal", default_to_global);
        Ok(self.send(call).await?.json::<ModeBody>()?.mode)
    }

    /// `PUT /mode[/{s}]`; `force` allows IMPORT where schemas exist.
    pub async fn set_mode(
        &self,
        scope: Scope<'_>,
        mode: RegistryMode,
        force: bool,
    ) -> Result<RegistryMode, RegistryError> {
        let call = Self::scoped(Method::PUT, "mode", scope)
            .flag("force", force)
            .body(&ModeBody::to_json(mode));
        Ok(self.send(call).await?.json::<ModeBody>()?.mode)
    }

    /// `DELETE /mode[/{s}]`: returns the mode removed.
    pub async fn delete_mode(&self, scope: Scope<'_>) -> Result<RegistryMode, RegistryError> {
        let call = Self::scoped(Method::DELETE, "mode", scope);
        Ok(self.send(call).await?.json::<ModeBody>()?.mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(url: &str) -> Result<RegistryClient, RegistryError> {
        RegistryClient::new(RegistrySettings::new(url))
    }

    #[test]
    fn subjects_are_one_path_segment_whatever_they_contain() {
        let c = client("https://sr.example:8081/prefix/").expect("client");
        let call = Call::get(&["subjects", "a/b c%", "versions"]).flag("deleted", true);
        assert_eq!(
            c.url(&call).expect("url").as_str(),
            "https://sr.example:8081/prefix/subjects/a%2Fb%20c%25/versions?deleted=true"
        );
    }

    #[test]
    fn false_flags_are_left_out() {
        let c = client("http://sr:8081").expect("client");
        let call = Call::get(&["subjects"]).deleted(Deleted::Hide);
        assert_eq!(
            c.url(&call).expect("url").as_str(),
            "http://sr:8081/subjects"
        );
    }

    #[test]
    fn urls_with_credentials_or_other_schemes_are_refused() {
        for url in [
            "https://key:secret@sr.example",
            "ftp://sr",
            "not a url",
            "mailto:x@y",
        ] {
            let e = client(url).expect_err(url);
            assert!(matches!(e, RegistryError::BadUrl { .. }), "{url}: {e:?}");
            assert!(!e.to_string().contains("secret"), "{e}");
        }
    }

    #[test]
    fn literal_hosts_the_egress_rule_refuses_are_refused_at_once() {
        for url in [
            "http://169.254.169.254/latest/meta-data",
            "http://[fd00:ec2::254]",
            "http://[::ffff:169.254.169.254]",
            "http://127.0.0.1:8081",
            "http://10.0.0.8:8081",
        ] {
            let e = client(url).expect_err(url);
            assert!(matches!(e, RegistryError::Egress { .. }), "{url}: {e:?}");
        }
        let with = |url: &str, egress: EgressPolicy| {
            RegistryClient::new(RegistrySettings {
                egress,
                ..RegistrySettings::new(url)
            })
        };
        assert!(with("http://127.0.0.1:8081", EgressPolicy::LOOPBACK).is_ok());
        let everything = EgressPolicy {
            loopback: true,
            private: true,
        };
        assert!(with("http://10.0.0.8:8081", everything).is_ok());
        assert!(matches!(
            with("http://169.254.169.254", everything),
            Err(RegistryError::Egress { .. })
        ));
    }
}
