//! The pager under every paginated list.

use leptos::prelude::*;
use streamkeeper::platform::page::Page;

/// Previous / next links for a server-side page. `href` builds the link for
/// a page number, keeping the page's other query parameters. A page with
/// two pagers names them apart (`label`): screen readers list landmarks
/// by name.
#[component]
pub fn Pager<T: 'static>(
    page: Page<T>,
    href: impl Fn(u32) -> String + 'static,
    #[prop(default = "Pages")] label: &'static str,
) -> impl IntoView {
    let prev = page.has_prev().then(|| href(page.page - 1));
    let next = page.has_next().then(|| href(page.page + 1));
    view! {
        <nav class="pager" aria-label=label>
            {prev.map(|h| view! { <a rel="prev" href=h>"← Previous"</a> })}
            <span>{format!("Page {} of {} · {} in all", page.page, page.pages(), page.total)}</span>
            {next.map(|h| view! { <a rel="next" href=h>"Next →"</a> })}
        </nav>
    }
}
