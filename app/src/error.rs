//! The one error type of the screens and their server functions. It carries
//! a message fit to show a person; the server never puts database text in it.

use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum AppError {
    #[error("Your session has ended. Sign in again.")]
    Unauthenticated,
    #[error("You are not allowed to {0}.")]
    Forbidden(String),
    /// An admin set this user's password; until they change it on the
    /// account page, nothing else answers.
    #[error("Change the password an admin set for you first, on the account page (/account).")]
    PasswordChangeRequired,
    /// A rule refused the action and says why in its own words (a review
    /// item's approval by its author, say).
    #[error("{0}")]
    Refused(String),
    /// The password or second-factor code that confirms an action is
    /// missing or not right: a refusal its form shows at that field.
    #[error("{message}")]
    NotConfirmed {
        field: ConfirmField,
        message: String,
    },
    #[error("{0} was not found.")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    /// Input over a size limit; the message names the limit.
    #[error("{0}")]
    TooLarge(String),
    #[error("The service is unavailable right now: {0}")]
    Unavailable(String),
    #[error("Something went wrong on the server (reference {0}).")]
    Internal(String),
    /// The request itself could not be read or sent (bad form, network).
    #[error("The request could not be processed: {0}")]
    Request(String),
}

/// The field of a form that confirms an action with who is at the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmField {
    Password,
    Code,
}

impl AppError {
    /// The message to show at `field`, when this error is about it.
    pub fn at_field(&self, field: ConfirmField) -> Option<&str> {
        match self {
            AppError::NotConfirmed { field: f, message } if *f == field => Some(message),
            _ => None,
        }
    }

    /// A stable code for the REST API and for tests.
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Unauthenticated => "unauthenticated",
            AppError::Forbidden(_) => "forbidden",
            AppError::PasswordChangeRequired => "password_change_required",
            AppError::Refused(_) => "refused",
            AppError::NotConfirmed { .. } => "not_confirmed",
            AppError::NotFound(_) => "not_found",
            AppError::Invalid(_) => "invalid",
            AppError::Conflict(_) => "conflict",
            AppError::TooLarge(_) => "too_large",
            AppError::Unavailable(_) => "unavailable",
            AppError::Internal(_) => "internal",
            AppError::Request(_) => "bad_request",
        }
    }

    /// The HTTP status this error answers with.
    pub fn status(&self) -> u16 {
        match self {
            AppError::Unauthenticated => 401,
            AppError::Forbidden(_)
            | AppError::Refused(_)
            | AppError::NotConfirmed { .. }
            | AppError::PasswordChangeRequired => 403,
            AppError::NotFound(_) => 404,
            AppError::Invalid(_) => 422,
            AppError::Conflict(_) => 409,
            AppError::TooLarge(_) => 413,
            AppError::Unavailable(_) => 503,
            AppError::Internal(_) => 500,
            AppError::Request(_) => 400,
        }
    }
}

/// An unknown value of a query parameter or form field is the request's
/// fault: 400, with the allowed values listed.
impl From<streamkeeper::platform::page::UnknownChoice> for AppError {
    fn from(e: streamkeeper::platform::page::UnknownChoice) -> Self {
        AppError::Request(e.to_string())
    }
}

impl FromServerFnError for AppError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        AppError::Request(value.to_string())
    }
}
