//! What a CSV cell may start with. A spreadsheet opening our exports reads
//! a cell beginning `=`, `+`, `-`, `@`, a tab or a carriage return as a
//! formula (`=HYPERLINK(…)`, `+cmd|…`, `@SUM(…)`), and the text in those
//! cells comes from people: consumer group names, baseline notes. OWASP's
//! advice for CSV injection is a leading `'`, which spreadsheets show as
//! text and do not evaluate; every CSV the product writes passes its cells
//! through [`neutralise`].

use std::borrow::Cow;

/// Characters that make a spreadsheet evaluate a cell.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// The cell as written to a CSV: unchanged, unless it starts like a
/// formula, then with a leading `'`. Numbers are cells too: `-5` is
/// written `'-5`, which a spreadsheet still shows as text "-5".
pub fn neutralise(cell: &str) -> Cow<'_, str> {
    if cell.starts_with(FORMULA_STARTS) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_from_the_issue_are_quoted() {
        for cell in [
            r#"=HYPERLINK("http://evil.example","go")"#,
            "+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0",
            "-2+3+cmd|' /C calc'!A0",
            "=1+1",
            "\t=1+1",
            "\r=1+1",
        ] {
            assert_eq!(neutralise(cell), format!("'{cell}"), "{cell:?}");
        }
    }

    #[test]
    fn ordinary_cells_are_left_alone() {
        for cell in [
            "",
            "orders",
            "lag onset → owner notified",
            "12",
            " =1",
            "'=1",
            "a=b",
        ] {
            assert_eq!(neutralise(cell), cell);
        }
    }
}
