//! A dataset's columns and where each comes from (issue 43, item 4): the
//! fields its `schema` facet names, those its column lineage writes and
//! those read from it downstream, each with the input fields its column
//! lineage names (DIRECT or INDIRECT, with the spec's subtypes). A
//! column no column lineage writes comes from nowhere the graph knows,
//! which the page says rather than leaving it blank.

use super::columns::{ColumnEdge, FieldRef, Transform};
use serde::{Deserialize, Serialize};

/// One input of a column.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    pub from: FieldRef,
    pub kind: Transform,
    pub subtypes: Vec<String>,
}

/// A column of the dataset with its inputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetColumn {
    pub field: String,
    /// Empty when no column lineage writes it.
    pub sources: Vec<Source>,
    /// Column lineage downstream reads it.
    pub read_downstream: bool,
}

/// The columns: the schema's fields in its order, then the others
/// (written by column lineage or read from it downstream) by name.
/// `into` are the column edges whose `to` is a field of this dataset;
/// `read` the fields of it that column edges downstream name.
pub fn columns(schema: &[String], into: &[ColumnEdge], read: &[String]) -> Vec<DatasetColumn> {
    let mut names: Vec<String> = Vec::new();
    for f in schema {
        if !names.contains(f) {
            names.push(f.clone());
        }
    }
    let mut others: Vec<String> = into
        .iter()
        .map(|e| e.to.clone())
        .chain(read.iter().cloned())
        .filter(|f| !names.contains(f))
        .collect();
    others.sort();
    others.dedup();
    names.extend(others);
    names
        .into_iter()
        .map(|field| {
            let mut sources: Vec<Source> = into
                .iter()
                .filter(|e| e.to == field)
                .map(|e| Source {
                    from: e.from.clone(),
                    kind: e.kind,
                    subtypes: e.subtypes.clone(),
                })
                .collect();
            sources.sort_by(|a, b| a.from.cmp(&b.from));
            DatasetColumn {
                read_downstream: read.contains(&field),
                field,
                sources,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(from: &str, to: &str, kind: Transform) -> ColumnEdge {
        ColumnEdge {
            from: FieldRef::new("kafka://b:9092", "orders", from),
            to: to.into(),
            kind,
            subtypes: vec!["AGGREGATION".into()],
        }
    }

    #[test]
    fn schema_fields_first_then_the_ones_lineage_names_each_with_its_inputs() {
        let into = [
            edge("status", "revenue", Transform::Indirect),
            edge("amount", "revenue", Transform::Direct),
            edge("day", "day", Transform::Direct),
        ];
        let read = ["revenue".to_string(), "extra".to_string()];
        let cols = columns(&["day".into(), "note".into()], &into, &read);
        let names: Vec<&str> = cols.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(names, vec!["day", "note", "extra", "revenue"]);
        let revenue = &cols[3];
        assert_eq!(revenue.sources.len(), 2);
        assert_eq!(revenue.sources[0].from.field, "amount", "sorted by input");
        assert_eq!(revenue.sources[0].kind, Transform::Direct);
        assert_eq!(revenue.sources[1].kind, Transform::Indirect);
        assert!(revenue.read_downstream);
        // A schema field no column lineage writes comes from nowhere known.
        assert!(cols[1].sources.is_empty());
        assert!(!cols[1].read_downstream);
    }

    #[test]
    fn nothing_known_is_no_column() {
        assert!(columns(&[], &[], &[]).is_empty());
    }
}
