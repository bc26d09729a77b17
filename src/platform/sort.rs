//! Every table sorts on the server by its columns, one way: `?sort=name`
//! ascending, `?sort=-name` descending. A column header links to the
//! order it would show next and tells `aria-sort` which way it is shown.

use super::page::{ECHOED, UnknownChoice};

/// A column a list sorts by. Each list has its own enum of them.
pub trait Column: Copy + PartialEq + 'static {
    /// Every column, in the order an error lists them.
    fn all() -> &'static [Self];
    /// The column as `?sort=` names it.
    fn as_str(self) -> &'static str;
    /// Whether its first click sorts it descending: figures and times
    /// (people look for the largest and the latest), never names.
    fn descending_first(self) -> bool;
    /// The order a list is in when none is asked for.
    fn default_order() -> Sorted<Self>;
}

/// A list's order: one column, either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sorted<C> {
    pub column: C,
    pub descending: bool,
}

impl<C: Column> Sorted<C> {
    /// Reads `?sort=`: trimmed and case-insensitive, a column's name with a
    /// `-` before it for descending; empty or absent is the list's default.
    /// Anything else is refused with the columns listed.
    pub fn parse(value: Option<&str>) -> Result<Self, UnknownChoice> {
        let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(C::default_order());
        };
        let (descending, name) = match v.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, v),
        };
        C::all()
            .iter()
            .copied()
            .find(|c| c.as_str().eq_ignore_ascii_case(name))
            .map(|column| Sorted { column, descending })
            .ok_or_else(|| UnknownChoice {
                name: "sort",
                value: v.chars().take(ECHOED).collect(),
                allowed: format!(
                    "{}, each descending with a '-' before it",
                    C::all()
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
    }

    /// As `?sort=` writes it: `lag` or `-lag`.
    pub fn param(self) -> String {
        let sign = if self.descending { "-" } else { "" };
        format!("{sign}{}", self.column.as_str())
    }

    /// What `column`'s header links to while `self` is shown: the order
    /// flipped when it is the column shown, else the column's first click.
    pub fn toggled(self, column: C) -> Sorted<C> {
        if self.column == column {
            Sorted {
                column,
                descending: !self.descending,
            }
        } else {
            Sorted {
                column,
                descending: column.descending_first(),
            }
        }
    }

    /// `column`'s `aria-sort`: which way the list is sorted by it, or none
    /// when it is sorted by another.
    pub fn aria_sort(self, column: C) -> Option<&'static str> {
        (self.column == column).then_some(if self.descending {
            "descending"
        } else {
            "ascending"
        })
    }
}

impl<C: Column> Default for Sorted<C> {
    fn default() -> Self {
        C::default_order()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Col {
        Name,
        Lag,
    }

    impl Column for Col {
        fn all() -> &'static [Self] {
            &[Col::Name, Col::Lag]
        }
        fn as_str(self) -> &'static str {
            match self {
                Col::Name => "name",
                Col::Lag => "lag",
            }
        }
        fn descending_first(self) -> bool {
            self == Col::Lag
        }
        fn default_order() -> Sorted<Self> {
            Sorted {
                column: Col::Lag,
                descending: true,
            }
        }
    }

    const fn s(column: Col, descending: bool) -> Sorted<Col> {
        Sorted { column, descending }
    }

    #[test]
    fn reads_a_column_either_way_and_absent_is_the_default() {
        assert_eq!(Sorted::parse(Some("name")), Ok(s(Col::Name, false)));
        assert_eq!(Sorted::parse(Some("-name")), Ok(s(Col::Name, true)));
        assert_eq!(Sorted::parse(Some(" LAG ")), Ok(s(Col::Lag, false)));
        assert_eq!(Sorted::<Col>::parse(None), Ok(s(Col::Lag, true)));
        assert_eq!(Sorted::<Col>::parse(Some("")), Ok(s(Col::Lag, true)));
        for v in ["name", "-name", "lag", "-lag"] {
            assert_eq!(
                Sorted::<Col>::parse(Some(v)).map(Sorted::param),
                Ok(v.into())
            );
        }
    }

    #[test]
    fn an_unknown_column_is_refused_with_the_columns_listed() {
        let e = Sorted::<Col>::parse(Some("colour")).map_err(|e| e.to_string());
        assert_eq!(
            e,
            Err(
                "unknown sort 'colour' (one of: name, lag, each descending with a '-' before it)"
                    .into()
            )
        );
        // Neither a bare sign, two signs nor a prefix is a column.
        for bad in ["-", "--name", "nam", "+name", "name-"] {
            assert!(Sorted::<Col>::parse(Some(bad)).is_err(), "{bad}");
        }
        let long = "x".repeat(1000);
        let e = Sorted::<Col>::parse(Some(&long))
            .err()
            .map(|e| e.value.len());
        assert_eq!(e, Some(ECHOED));
    }

    #[test]
    fn first_click_names_up_figures_down_and_the_shown_column_flips() {
        let shown = s(Col::Lag, true);
        assert_eq!(shown.toggled(Col::Name), s(Col::Name, false));
        assert_eq!(shown.toggled(Col::Lag), s(Col::Lag, false));
        assert_eq!(s(Col::Lag, false).toggled(Col::Lag), s(Col::Lag, true));
        assert_eq!(s(Col::Name, false).toggled(Col::Name), s(Col::Name, true));
        assert_eq!(s(Col::Name, true).toggled(Col::Lag), s(Col::Lag, true));
    }

    #[test]
    fn aria_sort_names_the_shown_column_only() {
        assert_eq!(s(Col::Lag, true).aria_sort(Col::Lag), Some("descending"));
        assert_eq!(s(Col::Lag, false).aria_sort(Col::Lag), Some("ascending"));
        assert_eq!(s(Col::Lag, true).aria_sort(Col::Name), None);
    }
}
