//! Syntax colouring for the launch files: comments, strings, flags and keys, per line. The text is
//! only split, never changed: the pieces always join back to it (tested), so what is copied or
//! downloaded is what is shown.

use trainplan_core::emit::FileKind;

/// What a piece of text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Plain text.
    Plain,
    /// A comment.
    Comment,
    /// A quoted string.
    Str,
    /// A command-line flag (`--tensor-model-parallel-size`) or a YAML/JSON key.
    Key,
}

impl Class {
    /// The CSS class.
    pub fn css(self) -> &'static str {
        match self {
            Class::Plain => "hl-plain",
            Class::Comment => "hl-comment",
            Class::Str => "hl-str",
            Class::Key => "hl-key",
        }
    }
}

/// `text` cut into classified pieces that join back to it.
pub fn spans(kind: FileKind, text: &str) -> Vec<(Class, &str)> {
    let mut out = Vec::new();
    for line in text.split_inclusive('\n') {
        line_spans(kind, line, &mut out);
    }
    out
}

fn line_spans<'a>(kind: FileKind, line: &'a str, out: &mut Vec<(Class, &'a str)>) {
    let comment_start = match kind {
        FileKind::Json => None,
        _ => line.trim_start().starts_with('#').then(|| line.len() - line.trim_start().len()),
    };
    if let Some(at) = comment_start {
        if 0 < at {
            out.push((Class::Plain, &line[..at]));
        }
        out.push((Class::Comment, &line[at..]));
        return;
    }
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut plain_from = 0;
    let flush = |out: &mut Vec<(Class, &'a str)>, from: usize, to: usize| {
        if from < to {
            out.push((Class::Plain, &line[from..to]));
        }
    };
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'\'' || c == b'"' {
            // A string to the matching quote (a backslash escapes inside double quotes).
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != c {
                if c == b'"' && bytes[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            let end = (j + 1).min(bytes.len());
            flush(out, plain_from, i);
            out.push((Class::Str, &line[i..end]));
            i = end;
            plain_from = i;
        } else if c == b'-' && bytes.get(i + 1) == Some(&b'-') && (i == 0 || bytes[i - 1] == b' ') {
            let end = line[i..].find([' ', '\n']).map_or(line.len(), |n| i + n);
            flush(out, plain_from, i);
            out.push((Class::Key, &line[i..end]));
            i = end;
            plain_from = i;
        } else {
            i += line[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    // A YAML key at the start of the line: `  key: value`.
    if kind == FileKind::Yaml && plain_from == 0 {
        let indent = line.len() - line.trim_start().len();
        if let Some(colon) = line[indent..].find(':').map(|n| indent + n)
            && line[indent..colon].chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && indent < colon
        {
            flush(out, 0, indent);
            out.push((Class::Key, &line[indent..colon]));
            plain_from = colon;
        }
    }
    flush(out, plain_from, line.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use trainplan_core::{Plan, emit};

    #[test]
    fn pieces_join_back_to_every_emitted_file() {
        for text in [
            r#"{"model": "qwen2.5-7b", "parallel": {"zero_stage": 3}, "launch": {"dataset": "it's \"x\" 模型 --y"}}"#,
            r#"{"model": "llama-3-8b", "framework": "megatron", "method": "pretrain", "parallel": {"tp": 2}}"#,
            r#"{"model": "qwen2.5-7b", "framework": "verl", "method": "grpo"}"#,
            r#"{"model": "qwen2.5-7b", "framework": "mindspeed-rl", "method": "grpo", "hardware": "ascend-910b2"}"#,
        ] {
            let plan = Plan::from_json(text).unwrap();
            for f in emit::emit(&plan, "#v1=x").unwrap() {
                let pieces = spans(f.kind, &f.text);
                let joined: String = pieces.iter().map(|(_, s)| *s).collect();
                assert_eq!(joined, f.text, "{}", f.name);
                assert!(pieces.iter().any(|(c, _)| *c != Class::Plain), "{} has no colour", f.name);
            }
        }
    }

    #[test]
    fn flags_strings_and_comments_are_told_apart() {
        let pieces = spans(FileKind::Shell, "# note\n  --tp 8 'a b'\n");
        assert_eq!(
            pieces,
            [
                (Class::Comment, "# note\n"),
                (Class::Plain, "  "),
                (Class::Key, "--tp"),
                (Class::Plain, " 8 "),
                (Class::Str, "'a b'"),
                (Class::Plain, "\n"),
            ]
        );
        let pieces = spans(FileKind::Yaml, "cutoff_len: 4096\n");
        assert_eq!(pieces, [(Class::Key, "cutoff_len"), (Class::Plain, ": 4096\n")]);
    }
}
