//! Text that people paste into a POSIX shell, such as the request the
//! review page suggests for applying a change by hand. Every value spliced
//! into such a command is quoted, so a value means itself and nothing
//! else; and values that have no business holding shell syntax (a
//! registry URL) are refused when saved.

/// Characters kept bare: none of them means anything to `sh` inside a
/// word (`=` and `~` do at a word's start, so they are quoted).
fn is_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./:@%+,".contains(c)
}

/// `word` as one POSIX `sh` word that stands for exactly `word`: bare if
/// it has only plain characters, else in single quotes, inside which
/// nothing is special but `'` itself, written `'\''` (close, escaped
/// quote, reopen). A NUL cannot be in a shell word at all; callers pass
/// text without control characters (JSON escapes them).
pub fn quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(is_plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The first character of `text` that a shell treats specially, or that
/// is whitespace or a control character; `None` if there is none.
pub fn first_unsafe(text: &str) -> Option<char> {
    text.chars()
        .find(|&c| c.is_whitespace() || c.is_control() || "`$'\"\\;&|<>(){}*?!#^".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_split_back_to_themselves() {
        let words = [
            "https://sr.example:8081/prefix",
            "http://sr/a'b",
            "$(touch /tmp/pwned)",
            "`id`",
            "it's a 'quote'",
            "'",
            "''",
            "",
            "a b\tc\nd",
            "~root",
            "x=1",
            "back\\slash \"double\"",
            "; rm -rf / #",
            "orders-value",
            "é ünïcode",
        ];
        for w in words {
            let q = quote(w);
            assert_eq!(
                shlex::split(&q),
                Some(vec![w.to_owned()]),
                "{w:?} quoted as {q}"
            );
        }
        let line = words.map(quote).join(" ");
        assert_eq!(shlex::split(&line), Some(words.map(str::to_owned).to_vec()));
    }

    #[test]
    fn plain_words_stay_bare() {
        assert_eq!(quote("orders-value"), "orders-value");
        assert_eq!(
            quote("https://sr.example/subjects/a%2Fb/versions"),
            "https://sr.example/subjects/a%2Fb/versions"
        );
        assert_eq!(quote("a'b"), r"'a'\''b'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn shell_syntax_and_whitespace_are_found() {
        assert_eq!(first_unsafe("https://sr.example:8081/prefix"), None);
        assert_eq!(first_unsafe("http://[::1]:8081/~team"), None);
        for (text, c) in [
            ("http://sr/'", '\''),
            ("http://sr/$(id)", '$'),
            ("http://sr/`id`", '`'),
            ("http://sr/a b", ' '),
            ("http://sr/a\nb", '\n'),
            ("http://sr/a\u{7}", '\u{7}'),
            ("http://sr/;ls", ';'),
            ("http://sr/a|b", '|'),
            ("http://sr/\\", '\\'),
        ] {
            assert_eq!(first_unsafe(text), Some(c), "{text:?}");
        }
    }
}
