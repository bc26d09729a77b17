//! Sentences for incompatibilities. They speak of "the writer's schema"
//! and "the reader's schema", never of old and new, because the same
//! finding serves a mode check (either may be the new one) and a
//! per-consumer check (the reader is the consumer group's schema).

use super::difference::{Difference, Kind};

pub(super) fn sentence(difference: &Difference) -> String {
    use Kind::*;
    let path = difference.path.as_str();
    let (parent, last) = path.rsplit_once('/').unwrap_or(("", path));
    let last = unescape(last);
    // `at`: where the difference is; `on`: the schema whose keyword `last`
    // changed (`maxLength` of 'name').
    let at = subject(path);
    let on = subject(parent);
    let (writer, reader) = difference.detail.clone().unwrap_or_default();
    match difference.kind {
        TOO_COMPLEX_TO_CHECK => format!(
            "The check stopped at {at}: the schemas nest more than {} schemas deep, past what this console compares, so the reader cannot be said to read the writer's data.",
            super::compare::MAX_DEPTH
        ),
        TYPE_CHANGED => format!(
            "The type of {at} differs: {writer} in the writer's schema, {reader} in the reader's schema."
        ),
        TYPE_NARROWED => format!(
            "{} is a number in the writer's schema but must be an integer in the reader's schema.",
            capitalized(&at)
        ),
        SCHEMA_ADDED => format!(
            "The reader's schema constrains {at}, which the writer's schema leaves unconstrained."
        ),
        MAX_LENGTH_ADDED
        | MIN_LENGTH_ADDED
        | PATTERN_ADDED
        | MAXIMUM_ADDED
        | MINIMUM_ADDED
        | EXCLUSIVE_MAXIMUM_ADDED
        | EXCLUSIVE_MINIMUM_ADDED
        | MULTIPLE_OF_ADDED
        | MAX_PROPERTIES_ADDED
        | MIN_PROPERTIES_ADDED
        | MAX_ITEMS_ADDED
        | MIN_ITEMS_ADDED
        | MAX_CONTAINS_ADDED
        | MIN_CONTAINS_ADDED => format!(
            "The reader's schema sets {last} {reader} on {on}; the writer's schema has no {last} there."
        ),
        MAX_LENGTH_DECREASED
        | MAXIMUM_DECREASED
        | EXCLUSIVE_MAXIMUM_DECREASED
        | MAX_PROPERTIES_DECREASED
        | MAX_ITEMS_DECREASED
        | MAX_CONTAINS_DECREASED => format!(
            "The {last} of {on} is {reader} in the reader's schema, lower than {writer} in the writer's schema."
        ),
        MIN_LENGTH_INCREASED
        | MINIMUM_INCREASED
        | EXCLUSIVE_MINIMUM_INCREASED
        | MIN_PROPERTIES_INCREASED
        | MIN_ITEMS_INCREASED
        | MIN_CONTAINS_INCREASED => format!(
            "The {last} of {on} is {reader} in the reader's schema, higher than {writer} in the writer's schema."
        ),
        MULTIPLE_OF_EXPANDED | MULTIPLE_OF_CHANGED => format!(
            "The reader's schema requires {on} to be a multiple of {reader}, which not every multiple of {writer} (the writer's schema) is."
        ),
        PATTERN_CHANGED => format!(
            "The pattern of {on} differs: {writer} in the writer's schema, {reader} in the reader's schema."
        ),
        UNIQUE_ITEMS_ADDED => format!(
            "The reader's schema requires the items of {on} to be unique; the writer's schema does not."
        ),
        ENUM_ARRAY_NARROWED => format!(
            "The reader's schema allows fewer values for {on} ({reader}) than the writer's schema ({writer})."
        ),
        ENUM_ARRAY_CHANGED => format!(
            "The allowed values of {on} differ: {writer} in the writer's schema, {reader} in the reader's schema."
        ),
        REQUIRED_ATTRIBUTE_ADDED => format!(
            "{} is required in the reader's schema, with no default, but optional in the writer's schema.",
            capitalized(&at)
        ),
        REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
        | REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL => format!(
            "{} is required in the reader's schema, with no default, but not defined in the writer's schema.",
            capitalized(&at)
        ),
        REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL
        | OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL => format!(
            "{} is defined only in the reader's schema, while the writer's schema allows any additional property, so the writer's data may carry it with another type.",
            capitalized(&at)
        ),
        PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL => format!(
            "{} is defined in the writer's schema but not in the reader's schema, which allows no additional properties.",
            capitalized(&at)
        ),
        PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL => format!(
            "{} is defined only in the reader's schema, which does not accept every value the writer's schema allows for it as an additional property.",
            capitalized(&at)
        ),
        PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL => format!(
            "{} is defined only in the writer's schema, and the reader's schema for additional properties does not accept every value it allows.",
            capitalized(&at)
        ),
        ADDITIONAL_PROPERTIES_REMOVED | UNEVALUATED_PROPERTIES_REMOVED => format!(
            "The reader's schema allows no additional properties in {on}; the writer's schema allows them."
        ),
        ADDITIONAL_PROPERTIES_NARROWED | UNEVALUATED_PROPERTIES_NARROWED => format!(
            "The reader's schema constrains the additional properties of {on}, which the writer's schema allows freely."
        ),
        ADDITIONAL_ITEMS_REMOVED | UNEVALUATED_ITEMS_REMOVED => format!(
            "The reader's schema allows no items in {on} beyond those it lists; the writer's schema allows them."
        ),
        ADDITIONAL_ITEMS_NARROWED | UNEVALUATED_ITEMS_NARROWED => format!(
            "The reader's schema constrains the items of {on} beyond those it lists, which the writer's schema allows freely."
        ),
        ITEM_ADDED_TO_OPEN_CONTENT_MODEL => format!(
            "The reader's schema constrains {at}, a position where the writer's schema allows any item."
        ),
        ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL => format!(
            "{} is defined in the writer's schema but not in the reader's schema, which allows no further items.",
            capitalized(&at)
        ),
        ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL => format!(
            "{} is defined only in the reader's schema, which does not accept every value the writer's schema allows there.",
            capitalized(&at)
        ),
        ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL => format!(
            "{} is defined only in the writer's schema, and the reader's schema for further items does not accept every value it allows.",
            capitalized(&at)
        ),
        DEPENDENCY_ARRAY_ADDED | DEPENDENCY_ARRAY_EXTENDED | DEPENDENCY_ARRAY_CHANGED => format!(
            "When '{last}' is present, the reader's schema requires {reader} in {}, where the writer's schema requires {writer}.",
            subject(parent_of(parent))
        ),
        DEPENDENCY_SCHEMA_ADDED => format!(
            "When '{last}' is present, the reader's schema applies a schema to {} that the writer's schema does not.",
            subject(parent_of(parent))
        ),
        COMBINED_TYPE_CHANGED => format!(
            "{} combines its subschemas with {writer} in the writer's schema but {reader} in the reader's schema.",
            capitalized(&at)
        ),
        PRODUCT_TYPE_EXTENDED => format!(
            "The reader's schema requires {at} to match more subschemas (allOf) than the writer's schema."
        ),
        SUM_TYPE_NARROWED => format!(
            "The reader's schema offers fewer alternatives (oneOf/anyOf) for {at} than the writer's schema."
        ),
        COMBINED_TYPE_SUBSCHEMAS_CHANGED => format!(
            "Some subschemas of {at} have no compatible counterpart: {writer} in the writer's schema; {reader} in the reader's schema."
        ),
        NOT_TYPE_EXTENDED => format!(
            "The reader's schema excludes (not) values of {on} that the writer's schema allows."
        ),
        // What remains is compatible under every policy, so it is never
        // reported; a plain description will do.
        kind => format!("{} at {at}.", kind.name()),
    }
}

/// A pointer's parent (`properties/a/dependencies` → `properties/a`).
fn parent_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// Where `path` is, in the terms of the data: `'address.zip'`,
/// `'tags[]'`, `'tags[0]'`, `'extra.*'` (any additional property), or
/// "the root schema".
fn subject(path: &str) -> String {
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(unescape)
        .collect();
    let mut field = String::new();
    let mut rest = segments.iter().peekable();
    while let Some(segment) = rest.next() {
        match segment.as_str() {
            "properties" | "required" if rest.peek().is_some() => {
                let name = rest.next().cloned().unwrap_or_default();
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(&name);
            }
            "items" => match rest.next_if(|n| is_index(n)) {
                Some(index) => field.push_str(&format!("[{index}]")),
                None => field.push_str("[]"),
            },
            "additionalProperties" | "unevaluatedProperties" => field.push_str(".*"),
            "additionalItems" | "unevaluatedItems" => field.push_str("[*]"),
            "allOf" | "anyOf" | "oneOf" if rest.peek().is_some_and(|n| is_index(n)) => {
                let index = rest.next().cloned().unwrap_or_default();
                field.push_str(&format!(" ({segment} branch {index})"));
            }
            "dependencies" if rest.peek().is_some() => {
                let name = rest.next().cloned().unwrap_or_default();
                field.push_str(&format!(" (dependency of {name})"));
            }
            other => field.push_str(&format!(" ({other})")),
        }
    }
    let field = field.trim_start_matches(['.', ' ']);
    if field.is_empty() {
        "the root schema".to_owned()
    } else {
        format!("'{field}'")
    }
}

/// A JSON Pointer segment back to the name it escapes (RFC 6901).
fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn is_index(segment: &str) -> bool {
    segment.parse::<usize>().is_ok()
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::difference::Policy;
    use super::*;

    /// Whatever STRICT can report reads as a sentence of its own, not as
    /// the fallback for kinds no policy rejects.
    #[test]
    fn every_reportable_kind_has_its_own_sentence() {
        for &kind in Kind::ALL {
            if Policy::Strict.allows(kind) {
                continue;
            }
            let difference = Difference {
                kind,
                path: "properties/a/dependencies/b".into(),
                detail: Some(("1".into(), "2".into())),
            };
            let sentence = sentence(&difference);
            assert!(!sentence.contains(kind.name()), "{kind:?}: {sentence}");
            assert!(sentence.ends_with('.'), "{kind:?}: {sentence}");
        }
    }

    #[test]
    fn subjects_read_as_data_paths() {
        assert_eq!(subject(""), "the root schema");
        assert_eq!(
            subject("properties/address/properties/zip"),
            "'address.zip'"
        );
        assert_eq!(subject("properties/tags/items"), "'tags[]'");
        assert_eq!(subject("properties/pair/items/1"), "'pair[1]'");
        assert_eq!(subject("properties/a~1b"), "'a/b'");
        assert_eq!(subject("required/age"), "'age'");
        assert_eq!(subject("properties/m/additionalProperties"), "'m.*'");
        assert_eq!(subject("properties/p/oneOf/1"), "'p (oneOf branch 1)'");
        assert_eq!(subject("not"), "'(not)'");
    }
}
