//! Confluent's `EnumSchemaDiff` and `ConstSchemaDiff`: the allowed values.

use serde_json::Value;

use super::compare::Ctx;
use super::describe;
use super::difference::Kind::*;

/// Enums compare as sets: a reader accepting more values is compatible.
pub(super) fn compare_enum(ctx: &mut Ctx, original: &[Value], update: &[Value]) {
    let covers = |all: &[Value], some: &[Value]| some.iter().all(|v| all.contains(v));
    let kind = match (covers(update, original), covers(original, update)) {
        (true, true) => return,
        (true, false) => ENUM_ARRAY_EXTENDED,
        (false, true) => ENUM_ARRAY_NARROWED,
        (false, false) => ENUM_ARRAY_CHANGED,
    };
    let detail = (describe::values(original), describe::values(update));
    ctx.add_at("enum", kind, Some(detail));
}

/// Any change of a `const` is reported as an enum change, as Confluent does.
pub(super) fn compare_const(ctx: &mut Ctx, original: &Value, update: &Value) {
    if original != update {
        let detail = (describe::value(original), describe::value(update));
        ctx.add_at("const", ENUM_ARRAY_CHANGED, Some(detail));
    }
}
