//! The registry's error answers: `{"error_code":N,"message":"…"}` with the
//! HTTP status in the code's first three digits, and the messages of
//! Confluent's `Errors.java` and the exceptions it wraps, word for word.

use super::CONTENT_TYPE_V1;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ApiError {
    pub error_code: u32,
    pub message: String,
}

impl ApiError {
    pub fn new(error_code: u32, message: impl Into<String>) -> Self {
        ApiError {
            error_code,
            message: message.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        let status = if self.error_code >= 1000 {
            self.error_code / 100
        } else {
            self.error_code
        };
        u16::try_from(status)
            .ok()
            .and_then(|s| StatusCode::from_u16(s).ok())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    pub fn subject_not_found(subject: &str) -> Self {
        Self::new(40401, format!("Subject '{subject}' not found."))
    }

    /// `version` is the number asked for; `latest` is -1 here, as in Java.
    pub fn version_not_found(version: i32) -> Self {
        Self::new(40402, format!("Version {version} not found."))
    }

    pub fn schema_not_found() -> Self {
        Self::new(40403, "Schema not found")
    }

    pub fn schema_id_not_found(id: &str) -> Self {
        Self::new(40403, format!("Schema {id} not found"))
    }

    // The missing space after the first sentence is Confluent's.
    pub fn subject_soft_deleted(subject: &str) -> Self {
        Self::new(
            40404,
            format!(
                "Subject '{subject}' was soft deleted.Set permanent=true to delete permanently"
            ),
        )
    }

    pub fn subject_not_soft_deleted(subject: &str) -> Self {
        Self::new(
            40405,
            format!("Subject '{subject}' was not deleted first before being permanently deleted"),
        )
    }

    pub fn version_soft_deleted(subject: &str, version: u32) -> Self {
        Self::new(
            40406,
            format!(
                "Subject '{subject}' Version {version} was soft deleted.Set permanent=true to delete permanently"
            ),
        )
    }

    pub fn version_not_soft_deleted(subject: &str, version: u32) -> Self {
        Self::new(
            40407,
            format!(
                "Subject '{subject}' Version {version} was not deleted first before being permanently deleted"
            ),
        )
    }

    pub fn no_subject_config(subject: &str) -> Self {
        Self::new(
            40408,
            format!("Subject '{subject}' does not have subject-level compatibility configured"),
        )
    }

    pub fn no_subject_mode(subject: &str) -> Self {
        Self::new(
            40409,
            format!("Subject '{subject}' does not have subject-level mode configured"),
        )
    }

    pub fn incompatible(code: u32, subject: &str, details: &[String]) -> Self {
        Self::new(
            code,
            format!(
                "Schema being registered is incompatible with an earlier schema for subject \"{subject}\", details: [{}]",
                details.join(", ")
            ),
        )
    }

    pub fn invalid_schema(message: impl Into<String>) -> Self {
        Self::new(42201, message)
    }

    pub fn invalid_version(version: &str) -> Self {
        Self::new(
            42202,
            format!(
                "The specified version '{version}' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\""
            ),
        )
    }

    pub fn invalid_compatibility_level() -> Self {
        Self::new(
            42203,
            "Invalid compatibility level. Valid values are none, backward, forward, full, backward_transitive, forward_transitive, and full_transitive",
        )
    }

    pub fn invalid_mode(message: impl Into<String>) -> Self {
        Self::new(42204, message)
    }

    pub fn not_permitted(message: impl Into<String>) -> Self {
        Self::new(42205, message)
    }

    /// Names the version as Java prints a `SchemaKey`.
    pub fn reference_exists(subject: &str, version: u32) -> Self {
        Self::new(
            42206,
            format!(
                "One or more references exist to the schema {{magic=1,keytype=SCHEMA,subject={subject},version={version}}}."
            ),
        )
    }

    /// What Jersey answers for a path no resource has.
    pub fn no_such_resource() -> Self {
        Self::new(404, "HTTP 404 Not Found")
    }

    pub fn method_not_allowed() -> Self {
        Self::new(405, "HTTP 405 Method Not Allowed")
    }

    pub fn unsupported_media_type() -> Self {
        Self::new(415, "HTTP 415 Unsupported Media Type")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self).unwrap_or_default();
        (
            self.status(),
            [(header::CONTENT_TYPE, CONTENT_TYPE_V1)],
            body,
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_is_the_first_three_digits() {
        assert_eq!(
            ApiError::subject_not_found("s").status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(ApiError::new(409, "x").status(), StatusCode::CONFLICT);
        assert_eq!(ApiError::new(40901, "x").status(), StatusCode::CONFLICT);
        assert_eq!(
            ApiError::invalid_version("earliest").status(),
            StatusCode::UNPROCESSABLE_ENTITY
        );
        assert_eq!(
            ApiError::new(50001, "x").status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }
}
