//! Rules of signing in and staying signed in: where a user lands after
//! sign-in, and when an active session's idle timeout is pushed back.

use percent_encoding::percent_decode_str;
use std::time::Duration;
use url::Url;

/// Where to send a user after sign-in, given the `next` they came with.
///
/// Only a path on this console is accepted: it must start with one `/`,
/// hold no backslash, control character or whitespace (browsers strip tabs
/// and newlines, so `/%09/evil.example` or `/\t/evil.example` would leave
/// the site), not even once percent-decoded, and joined against the public
/// URL it must stay on its origin. What is returned is the joined URL's own
/// path and query, so it is always a valid `Location`. Anything else, and
/// the sign-in page itself, lands on `/`.
pub fn safe_next(next: &str, public: &Url) -> String {
    const HOME: &str = "/";
    let clean = |s: &str| {
        !s.chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    };
    let decoded = percent_decode_str(next).decode_utf8_lossy();
    let path_only = next.starts_with('/')
        && !next.starts_with("//")
        && !decoded.starts_with("//")
        && clean(next)
        && clean(&decoded);
    if !path_only {
        return HOME.into();
    }
    let Ok(url) = public.join(next) else {
        return HOME.into();
    };
    if url.origin() != public.origin() || url.path() == "/login" {
        return HOME.into();
    }
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}

/// Whether a session last marked as seen at `seen_ms` should be saved again
/// at `now_ms`, which pushes its idle timeout back. Saving on every request
/// would write to the session store on every request; once a minute is
/// enough for a timeout of minutes. Shorter timeouts are touched every
/// quarter of the timeout, so a session in use never lapses.
pub fn touch_due(seen_ms: Option<i64>, now_ms: i64, idle: Duration) -> bool {
    let every = idle.min(Duration::from_secs(240)) / 4;
    let every_ms = i64::try_from(every.as_millis()).unwrap_or(i64::MAX);
    seen_ms.is_none_or(|seen| now_ms.saturating_sub(seen) >= every_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(s: &str) -> String {
        let public = Url::parse("https://sk.example.com/").unwrap_or_else(|e| panic!("{e}"));
        safe_next(s, &public)
    }

    #[test]
    fn local_paths_are_kept() {
        assert_eq!(next("/streams?page=2"), "/streams?page=2");
        assert_eq!(next("/settings/users?page=2"), "/settings/users?page=2");
        assert_eq!(next("/"), "/");
        assert_eq!(next("/streams/a/../b"), "/streams/b");
        assert_eq!(next("/search?q=100%25"), "/search?q=100%25");
    }

    #[test]
    fn other_sites_land_home() {
        for bad in [
            "//x",
            "//evil.example/x",
            "/\\x",
            "/\\evil.example",
            "https://evil.example",
            "https://sk.example.com/streams",
            "http:/evil.example",
            "javascript:alert(1)",
            "evil.example",
            "",
        ] {
            assert_eq!(next(bad), "/", "{bad:?}");
        }
    }

    #[test]
    fn what_browsers_strip_or_split_on_lands_home() {
        for bad in [
            "/\t/x",
            "/%09/example.org",
            "/%0d%0aSet-Cookie:x",
            "/\r\nSet-Cookie:x",
            "/%2F/example.org",
            "/%5Cexample.org",
            "/ /x",
            "/\u{a0}/x",
            "/%00",
        ] {
            assert_eq!(next(bad), "/", "{bad:?}");
        }
    }

    #[test]
    fn the_sign_in_page_is_not_a_destination() {
        assert_eq!(next("/login?next=/x"), "/");
        assert_eq!(next("/login"), "/");
    }

    #[test]
    fn sessions_are_touched_at_most_once_a_minute() {
        let idle = Duration::from_secs(1800);
        assert!(touch_due(None, 0, idle));
        assert!(!touch_due(Some(0), 59_999, idle));
        assert!(touch_due(Some(0), 60_000, idle));
        // A short timeout (tests, strict installs): every quarter of it.
        let idle = Duration::from_secs(3);
        assert!(!touch_due(Some(0), 700, idle));
        assert!(touch_due(Some(0), 750, idle));
    }
}
