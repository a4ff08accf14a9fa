//! Shell quoting for bash scripts: every value a user typed is written as one single-quoted word,
//! so the shell never expands, splits or runs any part of it.

/// `text` as one bash word: `'…'`, with each `'` written `'\''`. An empty text is `''`.
///
/// Plans refuse control characters (`plan::LaunchFile`), so the word is always one line.
pub fn quote(text: &str) -> String {
    let mut res = String::with_capacity(text.len() + 2);
    res.push('\'');
    for c in text.chars() {
        match c {
            '\'' => res.push_str("'\\''"),
            c => res.push(c),
        }
    }
    res.push('\'');
    res
}

/// `text` as a word when it needs no quotes (letters, digits and `-_./:=+,@%`), quoted otherwise:
/// generated values stay readable, anything else is safe.
pub fn word(text: &str) -> String {
    let plain =
        !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%".contains(c));
    match plain {
        true => text.to_owned(),
        false => quote(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_close_and_reopen_around_a_quote() {
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(word("Qwen/Qwen2.5-7B"), "Qwen/Qwen2.5-7B");
        assert_eq!(word("$(id)"), "'$(id)'");
        assert_eq!(word("a b"), "'a b'");
    }
}
