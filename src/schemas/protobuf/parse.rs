//! Compiling a schema's `.proto` text in memory with protox.
//!
//! Imports resolve, like Confluent's `dependenciesWithLogicalTypes`, to the
//! schema's references (by import path) first, then to the well-known files:
//! `google/protobuf/*.proto` as protox ships them and Confluent's
//! `confluent/meta.proto`, `confluent/type/decimal.proto` and
//! `confluent/type/variant.proto`. Confluent also knows `google/type/*.proto`
//! without a reference; here those need one.

use std::cell::RefCell;
use std::rc::Rc;

use protox::Compiler;
use protox::file::{File, FileResolver, GoogleFileResolver};

use super::ProtobufSchema;
use super::known::confluent_file;
use crate::schemas::{ResolvedReference, SchemaError, SchemaText, SchemaType};

impl ProtobufSchema {
    /// Compiles `schema.text` with its references. A syntax or type error
    /// in the text is [`SchemaError::Parse`]; an import that neither a
    /// reference nor a well-known file provides, or a reference that does
    /// not compile, is [`SchemaError::Reference`]. The detail has protox's
    /// `file:line:column: message` form.
    pub fn parse(schema: &SchemaText) -> Result<ProtobufSchema, SchemaError> {
        let main_name = main_file_name(&schema.references);
        let missing = Rc::new(RefCell::new(None));
        let files = SchemaFiles {
            main_name: main_name.clone(),
            main_text: schema.text.clone(),
            references: schema.references.clone(),
            well_known: GoogleFileResolver::new(),
            missing: Rc::clone(&missing),
        };
        let mut compiler = Compiler::with_file_resolver(files);
        if let Err(err) = compiler.open_file(&main_name) {
            return Err(schema_error(&err, &main_name, missing.borrow_mut().take()));
        }
        let pool = compiler.descriptor_pool();
        let main = pool
            .get_file_by_name(&main_name)
            .ok_or_else(|| SchemaError::Parse {
                schema_type: SchemaType::Protobuf,
                detail: "the compiled schema lacks its main file".to_owned(),
            })?;
        Ok(ProtobufSchema::from_pool(&pool, &main, &schema.references))
    }
}

/// The name the main text is compiled under: it shows in error details, and
/// must not be the import path of a reference.
fn main_file_name(references: &[ResolvedReference]) -> String {
    let mut name = "schema.proto".to_owned();
    while references.iter().any(|r| r.name == name) {
        name.insert(0, '_');
    }
    name
}

/// The files a schema can import, for protox.
struct SchemaFiles {
    main_name: String,
    main_text: String,
    references: Vec<ResolvedReference>,
    well_known: GoogleFileResolver,
    /// The import that could not be found, for the error: protox's error
    /// names it only in its text.
    missing: Rc<RefCell<Option<String>>>,
}

impl FileResolver for SchemaFiles {
    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        if name == self.main_name {
            return File::from_source(name, &self.main_text);
        }
        if let Some(reference) = self.references.iter().find(|r| r.name == name) {
            return File::from_source(name, &reference.text);
        }
        if let Some(text) = confluent_file(name) {
            return File::from_source(name, text);
        }
        self.well_known.open_file(name).inspect_err(|err| {
            if err.is_file_not_found() {
                *self.missing.borrow_mut() = Some(name.to_owned());
            }
        })
    }
}

fn schema_error(err: &protox::Error, main_name: &str, missing: Option<String>) -> SchemaError {
    // protox's Debug form is `file:line:column: message`.
    let detail = format!("{err:?}");
    if let Some(name) = missing.filter(|_| err.is_file_not_found()) {
        return SchemaError::Reference {
            name,
            detail: format!(
                "{detail} (no reference has that name, and it is not a well-known file)"
            ),
        };
    }
    match err.file() {
        Some(file) if file != main_name => SchemaError::Reference {
            name: file.to_owned(),
            detail,
        },
        _ => SchemaError::Parse {
            schema_type: SchemaType::Protobuf,
            detail,
        },
    }
}
