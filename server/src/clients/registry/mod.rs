//! Confluent Schema Registry, over its REST API: subjects and versions,
//! registration and lookup, soft and permanent deletes, schemas by ID,
//! compatibility checks, and the compatibility and mode settings.
//!
//! [`RegistryClient`] speaks the contract of
//! `reference/schema-registry-and-connect.md` §1 and turns every failure
//! into a [`RegistryError`] a person can read; nothing outside the
//! contract passes for a success.

mod auth;
mod client;
mod error;
mod references;
mod types;

pub use auth::{Auth, Secret};
pub use client::{CONTENT_TYPE_V1, RegistryClient, RegistrySettings};
pub use error::RegistryError;
pub use types::{
    CheckOptions, CompatibilityCheck, CompatibilityPolicy, Config, Deleted, NewSchema,
    RegistryMode, SchemaById, SchemaReference, SchemaVersion, Scope, SubjectVersion, VersionRef,
};
