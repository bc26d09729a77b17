//! Rules of signing in and staying signed in: where a user lands after
//! sign-in, and when an active session's idle timeout is pushed back.

use percent_encoding::percent_decode_str;
use std::time::Duration;
use url::Url;

/// Where to send a user after sign-in, given the `next` they came with:
/// the one rule for every way in (password, second factor, single sign-on).
///
/// What a browser would make of `next` is worked out *first*: joined
/// against the public URL, which resolves dot segments (`%2e%2e` ones too,
/// as browsers do), so `/..//evil.example` is seen as the `//evil.example`
/// it becomes. Then only a path on this console is accepted: same origin,
/// not starting with `//` or `/\` (a browser reads either as another host),
/// not even once percent-decoded, and no backslash, control character or
/// whitespace anywhere (browsers strip tabs and newlines, so `/\t/x` would
/// leave the site). What is returned is the resolved URL's own path and
/// query, so it is always a valid `Location`. Anything else, and the
/// sign-in page itself, lands on `/`.
pub fn safe_next(next: &str, public: &Url) -> String {
    resolved_next(next, public).unwrap_or_else(|| "/".into())
}

fn resolved_next(next: &str, public: &Url) -> Option<String> {
    // A scheme, `//host` or a bare name is somewhere else from the start.
    if !next.starts_with('/') || !clean(next) || !clean(&fully_decoded(next)) {
        return None;
    }
    let url = public.join(next).ok()?;
    let path = url.path();
    if url.origin() != public.origin() || leaves_origin(path) || path == "/login" {
        return None;
    }
    // `/%2f/x` or `/%252e%252e//x`: harmless as sent, but a proxy or a
    // later decode could turn it into another host; refused all the same.
    let decoded = fully_decoded(path);
    let again = public.join(&decoded).ok()?;
    if leaves_origin(&decoded) || leaves_origin(again.path()) {
        return None;
    }
    Some(match url.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    })
}

/// Whether a browser takes a path that starts so for another host.
fn leaves_origin(path: &str) -> bool {
    path.starts_with("//") || path.starts_with("/\\")
}

fn clean(s: &str) -> bool {
    !s.chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
}

/// `s` percent-decoded until nothing is left to decode (a few rounds at
/// most: each round shortens an escape).
fn fully_decoded(s: &str) -> String {
    let mut out = s.to_string();
    for _ in 0..4 {
        let next = percent_decode_str(&out).decode_utf8_lossy().into_owned();
        if next == out {
            break;
        }
        out = next;
    }
    out
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

    /// Ways to spell "another host" that only show once dot segments and
    /// percent-encoding are resolved, as the browser resolves them.
    const CORPUS: &[&str] = &[
        "/..//evil.example",
        "/a/..//evil.example",
        "/%2e%2e//evil.example",
        "/%2E%2E//evil.example",
        "/.//evil.example",
        "/%2e//evil.example",
        "/a/b/../..//evil.example",
        "/a/%2e%2e/%2e%2e//evil.example",
        "/..%2f/evil.example",
        "/../%2fevil.example",
        "/%2e%2e/%5cevil.example",
        "/..\\evil.example",
        "/%252e%252e//evil.example",
        "/..//evil.example?x=1",
        "/..//evil.example#x",
    ];

    #[test]
    fn dot_segments_and_encodings_are_resolved_before_the_check() {
        for bad in CORPUS {
            assert_eq!(next(bad), "/", "{bad:?}");
        }
    }

    /// Pieces a `next` is made of in the property test: slashes and dot
    /// segments (mostly), their encodings and look-alikes, what browsers
    /// strip.
    const STRUCTURE: &[&str] = &["/", "//", "..", ".", "%2e%2e", "%2e", "\\", "a"];
    const PIECES: &[&str] = &[
        "/",
        "//",
        "\\",
        "/\\",
        "..",
        ".",
        "%2e",
        "%2E",
        "%2f",
        "%2F",
        "%5c",
        "%5C",
        "%252e",
        "%252f",
        "\t",
        "\r",
        "\n",
        "%09",
        "%0d%0a",
        "%00",
        " ",
        "\u{a0}",
        "evil.example",
        "a",
        "?",
        "#",
        "@",
        ":",
        "https:",
        "\u{2215}",
        "\u{2044}",
        "\u{ff0f}",
        "\u{ff3c}",
        "\u{29f5}",
        "\u{3002}",
        "%E2%88%95",
        "%EF%BC%8F",
    ];

    fn leaves(path: &str) -> bool {
        path.starts_with("//") || path.starts_with("/\\")
    }

    proptest::proptest! {
        #[test]
        fn whatever_comes_in_the_destination_is_a_path_here(
            lead in proptest::sample::select([&["/", "", "//", "/\\"][..], CORPUS].concat()),
            pieces in proptest::collection::vec(proptest::prop_oneof![
                4 => proptest::sample::select(STRUCTURE),
                1 => proptest::sample::select(PIECES),
            ], 0..8),
        ) {
            let public = Url::parse("https://sk.example.com/").unwrap_or_else(|e| panic!("{e}"));
            let given = format!("{lead}{}", pieces.concat());
            let out = safe_next(&given, &public);
            proptest::prop_assert!(out.starts_with('/') && !leaves(&out), "{given:?} -> {out:?}");
            let decoded = percent_decode_str(&out).decode_utf8_lossy();
            proptest::prop_assert!(!leaves(&decoded), "{given:?} -> {out:?}");
            proptest::prop_assert!(!out.chars().any(|c| c.is_control() || c.is_whitespace()));
            // Where a browser goes with it: this console, on a path of it.
            let went = public.join(&out).unwrap_or_else(|e| panic!("{out:?}: {e}"));
            proptest::prop_assert_eq!(went.origin(), public.origin());
            proptest::prop_assert!(!leaves(went.path()), "{given:?} -> {out:?}");
            // Asked again, the rule keeps what it gave.
            proptest::prop_assert_eq!(safe_next(&out, &public), out);
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
