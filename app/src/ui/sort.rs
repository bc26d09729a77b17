//! A sortable column's header, the same on every table: a link to the
//! list sorted by the column (the other way when it is the order shown),
//! with `aria-sort` saying which way the list is sorted by it.

use leptos::prelude::*;
use streamkeeper::platform::sort::{Column, Sorted};

/// The order a page shows: its `?sort=`, or the list's default. A bad
/// value never gets here with rows to show: the server refused it.
pub fn shown<C: Column>(sort: Option<&str>) -> Sorted<C> {
    Sorted::parse(sort).unwrap_or_default()
}

/// A `<th>` that sorts by `column` while `shown` is the order shown;
/// `href` makes the link from the `?sort=` value it asks for, keeping the
/// list's filters (and starting again at page 1). The view borrows
/// nothing of `href`, so the caller's pager may take what it used.
pub fn sort_header<C: Column>(
    label: &'static str,
    column: C,
    shown: Sorted<C>,
    href: impl Fn(String) -> String,
) -> AnyView {
    let link = href(shown.toggled(column).param());
    view! {
        <th aria-sort=shown.aria_sort(column)>
            <a href=link data-testid=format!("sort-{}", column.as_str())>{label}</a>
        </th>
    }
    .into_any()
}
