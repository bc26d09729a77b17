//! How the client proves who it is. The caller resolves Streamkeeper's
//! credential references (`env:…`, `file:…`) and hands over the values;
//! a secret here is never logged nor printed, `Debug` included.

use std::fmt;

/// A credential value that prints as `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The registry's authentication. On Confluent Cloud, Basic with a Schema
/// Registry API key as the user and its secret.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Auth {
    #[default]
    None,
    Basic {
        user: String,
        secret: Secret,
    },
    Bearer(Secret),
}

impl Auth {
    pub(crate) fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Auth::None => request,
            Auth::Basic { user, secret } => request.basic_auth(user, Some(secret.expose())),
            Auth::Bearer(token) => request.bearer_auth(token.expose()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show_in_debug_output() {
        let basic = Auth::Basic {
            user: "SR-KEY".into(),
            secret: Secret::new("hunter2"),
        };
        let bearer = Auth::Bearer(Secret::new("eyJtoken"));
        let shown = format!("{basic:?} {bearer:?}");
        assert!(shown.contains("SR-KEY"), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("eyJtoken"), "{shown}");
    }
}
