//! The texts of the schemas a registered schema references, fetched from
//! the registry, so the local engines can parse a schema whose references
//! are subject versions.

use std::collections::HashSet;
use streamkeeper::schemas::ResolvedReference;

use super::{RegistryClient, RegistryError, SchemaReference, VersionRef};

/// A step of the depth-first walk: a reference to fetch, or one whose own
/// references are all out and which may follow them.
enum Visit {
    Enter(SchemaReference),
    Leave(ResolvedReference),
}

impl RegistryClient {
    /// Every schema `references` reaches, each subject version once, a
    /// reference's own references before it (the order the registry
    /// resolves them in). Fails on the first version it cannot fetch.
    pub async fn resolve_references(
        &self,
        references: &[SchemaReference],
    ) -> Result<Vec<ResolvedReference>, RegistryError> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut stack: Vec<Visit> = references.iter().rev().cloned().map(Visit::Enter).collect();
        while let Some(step) = stack.pop() {
            match step {
                Visit::Leave(resolved) => out.push(resolved),
                Visit::Enter(r) => {
                    // A version reached twice (or a cycle) is fetched once.
                    if !seen.insert((r.subject.clone(), r.version)) {
                        continue;
                    }
                    let v = self
                        .version(&r.subject, VersionRef::Number(r.version), false)
                        .await?;
                    stack.push(Visit::Leave(ResolvedReference {
                        name: r.name,
                        text: v.schema,
                    }));
                    stack.extend(v.references.into_iter().rev().map(Visit::Enter));
                }
            }
        }
        Ok(out)
    }
}
