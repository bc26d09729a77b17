//! The history's schemas: the topic's first one, registered before the
//! history starts, fraud-scoring's reader schema, and the schemas of the
//! script's checks and proposals.

use axum::http::header;
use serde_json::json;
use streamkeeper::pilot::history::TOPIC;

use super::HistoryError;

/// The topic's first schema, registered before the history starts.
pub(super) async fn register_v1(registry: &str) -> Result<(), HistoryError> {
    let url = format!(
        "{}/subjects/{TOPIC}-value/versions",
        registry.trim_end_matches('/')
    );
    let fail = |e: String| HistoryError::Registry(registry.to_string(), e);
    let res = reqwest::Client::new()
        .post(&url)
        .header(
            header::CONTENT_TYPE,
            "application/vnd.schemaregistry.v1+json",
        )
        .body(json!({ "schema": schema(&[]) }).to_string())
        .send()
        .await
        .map_err(|e| fail(e.to_string()))?;
    if !res.status().is_success() {
        return Err(fail(res.status().to_string()));
    }
    Ok(())
}

/// What fraud-scoring reads: it needs `merchant_id`.
pub(super) const READER: &str = r#"{"type":"record","name":"Authorization","namespace":"cards","fields":[{"name":"id","type":"string"},{"name":"merchant_id","type":"string"}]}"#;

/// The topic's schema: id, amount, merchant_id, then optional `extra`
/// fields (each a string with a null default).
fn schema(extra: &[String]) -> String {
    let mut fields = vec![
        json!({"name": "id", "type": "string"}),
        json!({"name": "amount", "type": "double"}),
        json!({"name": "merchant_id", "type": "string"}),
    ];
    fields.extend(
        extra
            .iter()
            .map(|f| json!({"name": f, "type": ["null", "string"], "default": null})),
    );
    json!({"type": "record", "name": "Authorization", "namespace": "cards", "fields": fields})
        .to_string()
}

pub(super) fn review_field(n: usize) -> String {
    format!("review_{n}")
}

/// The `n`th proposal: every field proposed before, and one more.
pub(super) fn proposed(n: usize) -> String {
    schema(&(0..=n).map(review_field).collect::<Vec<_>>())
}

/// The `n`th check's schema: one optional field more, or `merchant_id`
/// dropped (fraud-scoring cannot read that).
pub(super) fn checked(n: usize, breaking: bool) -> String {
    if breaking {
        json!({"type": "record", "name": "Authorization", "namespace": "cards", "fields": [
            {"name": "id", "type": "string"}, {"name": "amount", "type": "double"}]})
        .to_string()
    } else {
        schema(&[format!("check_{n}")])
    }
}
