//! An item's canonical content and the hash approvals are bound to.

use super::Kind;
use crate::schemas::{SchemaType, SubjectReference};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Exactly what would be written to the registry: the subject and the
/// registration request's body. The schema text is kept byte for byte —
/// what was approved is what gets registered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Content {
    pub cluster_id: i64,
    /// The stream the change belongs to; its domain decides the approvers.
    pub topic: String,
    pub subject: String,
    pub schema_type: SchemaType,
    pub schema: String,
    /// Sorted by name (see [`Content::canonical`]).
    #[serde(default)]
    pub references: Vec<SubjectReference>,
}

impl Content {
    /// The same content with its references in one order, so that two
    /// submissions of one change hash alike.
    pub fn canonical(mut self) -> Content {
        self.references.sort();
        self.references.dedup();
        self
    }
}

/// What the item changes: the subject's latest version when the item was
/// proposed or last edited. Apply refuses when the registry's latest
/// version is no longer this one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Base {
    /// `None`: the subject had no versions (or no registry was configured).
    pub version: Option<u32>,
    pub schema_id: Option<u32>,
}

impl Base {
    /// Whether the subject's latest version, as the registry was last
    /// read (`None`: no versions), is no longer this base: apply would
    /// find the subject moved and send the item back to review.
    pub fn moved_to(&self, latest: Option<u32>) -> bool {
        self.version != latest
    }
}

/// The hex SHA-256 an approval is bound to: the kind, the canonical
/// content and the base, each as JSON with fields in declaration order
/// (serde_json writes structs in that order; the content holds no maps).
/// A domain prefix keeps the hash from meaning anything elsewhere.
pub fn content_hash(kind: Kind, content: &Content, base: &Base) -> String {
    let mut h = Sha256::new();
    h.update(b"streamkeeper review item v1\n");
    h.update(kind.as_str().as_bytes());
    h.update(b"\n");
    // Serialising plain structs of strings and numbers cannot fail.
    h.update(serde_json::to_vec(&content.clone().canonical()).unwrap_or_default());
    h.update(b"\n");
    h.update(serde_json::to_vec(base).unwrap_or_default());
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_moves_when_the_latest_version_is_another_or_none() {
        let base = |version| Base {
            version,
            schema_id: None,
        };
        assert!(!base(Some(3)).moved_to(Some(3)));
        assert!(base(Some(3)).moved_to(Some(4)), "registered since");
        assert!(base(Some(3)).moved_to(None), "the subject was deleted");
        assert!(
            base(None).moved_to(Some(1)),
            "registered first by someone else"
        );
        assert!(!base(None).moved_to(None));
    }

    fn content() -> Content {
        Content {
            cluster_id: 1,
            topic: "orders".into(),
            subject: "orders-value".into(),
            schema_type: SchemaType::Avro,
            schema: r#"{"type":"string"}"#.into(),
            references: vec![
                SubjectReference {
                    name: "b".into(),
                    subject: "b-value".into(),
                    version: 1,
                },
                SubjectReference {
                    name: "a".into(),
                    subject: "a-value".into(),
                    version: 2,
                },
            ],
        }
    }

    const BASE: Base = Base {
        version: Some(3),
        schema_id: Some(7),
    };

    #[test]
    fn the_hash_is_stable_and_ignores_reference_order() {
        let h = content_hash(Kind::ProducerChange, &content(), &BASE);
        assert_eq!(h.len(), 64);
        let mut reordered = content();
        reordered.references.reverse();
        assert_eq!(content_hash(Kind::ProducerChange, &reordered, &BASE), h);
    }

    #[test]
    fn any_change_to_content_base_or_kind_changes_the_hash() {
        let h = content_hash(Kind::ProducerChange, &content(), &BASE);
        let mut c = content();
        c.schema.push(' ');
        assert_ne!(
            content_hash(Kind::ProducerChange, &c, &BASE),
            h,
            "whitespace counts"
        );
        let mut c = content();
        c.subject = "orders-key".into();
        assert_ne!(content_hash(Kind::ProducerChange, &c, &BASE), h);
        let mut c = content();
        c.references[0].version = 2;
        assert_ne!(content_hash(Kind::ProducerChange, &c, &BASE), h);
        let moved = Base {
            version: Some(4),
            schema_id: Some(8),
        };
        assert_ne!(content_hash(Kind::ProducerChange, &content(), &moved), h);
        assert_ne!(content_hash(Kind::SchemaRegistration, &content(), &BASE), h);
    }
}
