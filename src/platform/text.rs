//! Which characters text input may hold: the one rule every way in (JSON
//! bodies, forms, path and query segments) applies before a handler runs.
//!
//! Control characters are refused. NUL cannot be stored at all (Postgres
//! text refuses it, which used to surface as a 500), and the rest are never
//! what a person meant: they hide text in pages, split log lines and CSV
//! rows, and look like nothing on screen. Free text may span lines, so a
//! JSON or form string keeps tab, line feed and carriage return; a path or
//! query segment is one line and keeps none. Names that must be one line
//! (a team, a topic) are checked again by their own rules.

use serde_json::Value;

/// How a piece of text is used, which decides the controls it may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    /// A path or query segment, a JSON key: one line, no control at all.
    Line,
    /// A value in a body (a description, a comment, a schema): tab, line
    /// feed and carriage return are text there.
    Lines,
}

/// A control character where none may be, and the field that holds it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} holds a control character (U+{code:04X}), which is not accepted")]
pub struct ControlCharacter {
    /// The field as a client names it: `description`, `members[2].name`,
    /// a path parameter's or a query parameter's name.
    pub field: String,
    pub code: u32,
}

/// The first character of `text` that `kind` refuses.
pub fn refused_char(text: &str, kind: TextKind) -> Option<char> {
    text.chars()
        .find(|&c| c.is_control() && !(kind == TextKind::Lines && matches!(c, '\t' | '\n' | '\r')))
}

/// `text` checked as the field `field`.
pub fn check(field: &str, text: &str, kind: TextKind) -> Result<(), ControlCharacter> {
    match refused_char(text, kind) {
        Some(c) => Err(ControlCharacter {
            field: field.to_string(),
            code: u32::from(c),
        }),
        None => Ok(()),
    }
}

/// Every string in a JSON document, keys as one line and values as free
/// text; the error names the first offending field by its path.
pub fn check_json(value: &Value) -> Result<(), ControlCharacter> {
    walk(value, &mut String::new())
}

fn walk(value: &Value, path: &mut String) -> Result<(), ControlCharacter> {
    let here = |path: &str| {
        if path.is_empty() {
            "the body".to_string()
        } else {
            path.to_string()
        }
    };
    match value {
        Value::String(s) => check(&here(path), s, TextKind::Lines),
        Value::Array(items) => items.iter().enumerate().try_for_each(|(i, item)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let r = walk(item, path);
            path.truncate(len);
            r
        }),
        Value::Object(fields) => fields.iter().try_for_each(|(key, item)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            let r = check(&here(path), key, TextKind::Line).and_then(|()| walk(item, path));
            path.truncate(len);
            r
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// Whether a JSON text may hold a control character in a string: a cheap
/// scan so that a clean body (nearly all of them) is not parsed twice.
/// It may say yes for a body that holds none (`"\\u0001"` spelt out); it
/// never says no for one that does. Raw C0 bytes are not JSON inside a
/// string and fail the parse anyway.
pub fn json_may_hold_control(bytes: &[u8]) -> bool {
    let escaped = bytes.windows(6).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && w[2] == b'0'
            && w[3] == b'0'
            && (matches!(w[4], b'0' | b'1' | b'8' | b'9')
                || (w[4] == b'7' && matches!(w[5], b'f' | b'F')))
    });
    // JSON's short escapes for backspace and form feed.
    let short = bytes
        .windows(2)
        .any(|w| w[0] == b'\\' && matches!(w[1], b'b' | b'f'));
    // DEL, and C1 controls (U+0080..U+009F) in UTF-8: C2 80..C2 9F.
    let raw = bytes.contains(&0x7f)
        || bytes
            .windows(2)
            .any(|w| w[0] == 0xc2 && (0x80..=0x9f).contains(&w[1]));
    escaped || short || raw
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn free_text_keeps_its_lines_and_tabs() {
        assert_eq!(refused_char("a\tb\r\nc", TextKind::Lines), None);
        assert_eq!(refused_char("a\tb", TextKind::Line), Some('\t'));
        assert_eq!(refused_char("a\nb", TextKind::Line), Some('\n'));
    }

    #[test]
    fn nul_other_c0_del_and_c1_are_refused_everywhere() {
        for c in ['\0', '\u{1}', '\u{1b}', '\u{7f}', '\u{85}', '\u{9f}'] {
            let text = format!("ok{c}ok");
            assert_eq!(refused_char(&text, TextKind::Lines), Some(c), "{c:?}");
            assert_eq!(refused_char(&text, TextKind::Line), Some(c), "{c:?}");
        }
        assert_eq!(refused_char("naïve ünïcödé ✓", TextKind::Line), None);
    }

    #[test]
    fn the_error_names_the_field_by_its_path() {
        let body = json!({"name": "ok", "members": [{"name": "a"}, {"name": "b\u{0}"}]});
        let e = check_json(&body).expect_err("refused");
        assert_eq!(e.field, "members[1].name");
        assert_eq!(e.code, 0);
        assert_eq!(
            e.to_string(),
            "members[1].name holds a control character (U+0000), which is not accepted"
        );
        let key = json!({"a\nb": 1});
        assert_eq!(check_json(&key).map_err(|e| e.code), Err(10));
        assert_eq!(
            check_json(&json!("x\u{1}")).map_err(|e| e.field),
            Err("the body".to_string())
        );
        assert!(check_json(&json!({"description": "two\nlines\tand a tab"})).is_ok());
    }

    #[test]
    fn the_scan_sees_every_control_a_json_string_can_hold() {
        for c in (0u32..0x20).chain(0x7f..0xa0) {
            let Some(ch) = char::from_u32(c) else {
                continue;
            };
            let text = serde_json::to_string(&json!({ "k": format!("a{ch}b") }))
                .unwrap_or_else(|e| panic!("{e}"));
            let hides = !matches!(ch, '\t' | '\n' | '\r');
            if hides {
                assert!(json_may_hold_control(text.as_bytes()), "{c:#x}: {text}");
            }
        }
        assert!(json_may_hold_control(br#"{"k":"\u007F"}"#));
        assert!(json_may_hold_control(br#"{"k":"\u0000"}"#));
        assert!(!json_may_hold_control(br#"{"k":"plain \u00e9 text\n"}"#));
    }
}
