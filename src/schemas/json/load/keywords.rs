//! Reading one keyword's value where a schema object holds it (a number,
//! a count, a flag, a string set...), each refusing a value of the wrong
//! kind with where it is.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::Place;
use crate::schemas::json::decimal::Decimal;
use crate::schemas::json::model::{Meta, NumberRules};
use crate::schemas::{SchemaError, SchemaType};

pub(super) fn meta(at: Place<'_, '_>) -> Result<Meta, SchemaError> {
    Ok(Meta {
        id: text(at, "$id")?,
        title: text(at, "title")?,
        description: text(at, "description")?,
        default: at.map.get("default").cloned(),
        connect_bytes: at.map.get("connect.type").and_then(Value::as_str) == Some("bytes"),
    })
}

pub(super) fn number(at: Place<'_, '_>, integer: bool) -> Result<NumberRules, SchemaError> {
    let multiple_of = match at.map.get("multipleOf") {
        None => None,
        Some(value) => {
            let decimal = value
                .as_number()
                .and_then(Decimal::from_json)
                .ok_or_else(|| invalid(at.pointer, "'multipleOf' must be a number"))?;
            if decimal.is_zero() {
                return Err(invalid(at.pointer, "'multipleOf' must not be 0"));
            }
            Some(decimal)
        }
    };
    Ok(NumberRules {
        minimum: limit(at, "minimum")?,
        maximum: limit(at, "maximum")?,
        exclusive_minimum: exclusive_limit(at, "exclusiveMinimum")?,
        exclusive_maximum: exclusive_limit(at, "exclusiveMaximum")?,
        multiple_of,
        integer,
    })
}

pub(super) fn limit(at: Place<'_, '_>, keyword: &str) -> Result<Option<f64>, SchemaError> {
    at.map
        .get(keyword)
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be a number")))
        })
        .transpose()
}

/// A number since draft-06; draft-04's boolean form is accepted and, as in
/// Confluent's diff, not compared.
pub(super) fn exclusive_limit(
    at: Place<'_, '_>,
    keyword: &str,
) -> Result<Option<f64>, SchemaError> {
    match at.map.get(keyword) {
        Some(Value::Bool(_)) => Ok(None),
        _ => limit(at, keyword),
    }
}

/// A non-negative integer keyword (`minLength`, `maxItems`, ...).
pub(super) fn count(at: Place<'_, '_>, keyword: &str) -> Result<Option<u64>, SchemaError> {
    let Some(value) = at.map.get(keyword) else {
        return Ok(None);
    };
    let whole_float = value
        .as_f64()
        .filter(|f| f.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(f))
        // Exact: the float is whole and in range.
        .map(|f| f as u64);
    value.as_u64().or(whole_float).map(Some).ok_or_else(|| {
        invalid(
            at.pointer,
            &format!("'{keyword}' must be a non-negative integer"),
        )
    })
}

pub(super) fn flag(at: Place<'_, '_>, keyword: &str) -> Result<bool, SchemaError> {
    match at.map.get(keyword) {
        None => Ok(false),
        Some(value) => value
            .as_bool()
            .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be a boolean"))),
    }
}

pub(super) fn text(at: Place<'_, '_>, keyword: &str) -> Result<Option<String>, SchemaError> {
    at.map
        .get(keyword)
        .map(|v| {
            v.as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be a string")))
        })
        .transpose()
}

pub(super) fn object_of<'d>(
    at: Place<'d, '_>,
    keyword: &str,
) -> Result<Option<&'d Map<String, Value>>, SchemaError> {
    at.map
        .get(keyword)
        .map(|v| {
            v.as_object()
                .ok_or_else(|| invalid(at.pointer, &format!("'{keyword}' must be an object")))
        })
        .transpose()
}

pub(super) fn string_set(
    at: Place<'_, '_>,
    keyword: &str,
) -> Result<BTreeSet<String>, SchemaError> {
    match at.map.get(keyword) {
        None => Ok(BTreeSet::new()),
        Some(list) => {
            let pointer = format!("{}/{keyword}", at.pointer);
            strings(
                Place {
                    pointer: &pointer,
                    ..at
                },
                list,
            )
        }
    }
}

pub(super) fn strings(at: Place<'_, '_>, list: &Value) -> Result<BTreeSet<String>, SchemaError> {
    let not_strings = || invalid(at.pointer, "must be an array of strings");
    list.as_array()
        .ok_or_else(not_strings)?
        .iter()
        .map(|v| v.as_str().map(str::to_owned).ok_or_else(not_strings))
        .collect()
}

/// A property name as a JSON Pointer segment (RFC 6901).
pub(in crate::schemas::json) fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

pub(super) fn invalid(pointer: &str, problem: &str) -> SchemaError {
    SchemaError::Parse {
        schema_type: SchemaType::Json,
        detail: format!("at {pointer}: {problem}"),
    }
}
