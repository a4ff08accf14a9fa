//! A script's `if` / `elif` / `else` / `fi` blocks, reduced to the branch the shell would run where
//! the script's own assignments decide it: Megatron-LM's `examples/llama/train_llama3_8b_h100_fp8.sh`
//! passes `--fp8-format hybrid` only `if [[ "$DTYPE" == "fp8" ]]`, so a copy of it set to
//! `DTYPE="bf16"` trains in bf16, and reading every branch read fp8.
//!
//! A condition is decided when it is `[ … ]`, `[[ … ]]` or `test …` over values the script gives
//! (its assignments before the `if`, and `${NAME:-default}`'s default where it sets none): string
//! (`=`, `==`, `!=`) and integer (`-eq`, `-ne`, `-lt`, `-le`, `-gt`, `-ge`) comparisons, `-z`, `-n`,
//! `!`, and such tests joined by `&&` and `||` (bash's, left to right). Anything else — a file test,
//! a pattern, a value from the environment — leaves the block as it was: every branch read, the
//! last assignment of each name standing.

use std::borrow::Cow;

use super::script::{expand, script_vars};

/// Whether an `if` block has run a branch, none yet (each condition so far false), or cannot be
/// told.
#[derive(Clone, Copy, PartialEq)]
enum Ran {
    Yes,
    NotYet,
    Undecided,
}

/// One open `if` block.
struct Block {
    /// Whether the lines around the block are kept.
    outer: bool,
    ran: Ran,
    /// Whether the branch being read is kept.
    keeping: bool,
}

/// `text` with the lines of each branch the shell would not run blanked, and the `if`, `elif`,
/// `else`, `then` and `fi` lines, which set nothing, so that line numbers stay; as it is where it
/// has no `if` block.
pub(super) fn taken_branches(text: &str) -> Cow<'_, str> {
    let first_word =
        |line: &str| line.split_whitespace().next().unwrap_or("").trim_end_matches(';').to_owned();
    if !text.lines().any(|l| first_word(l) == "if") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut blocks: Vec<Block> = Vec::new();
    let keeping = |blocks: &[Block]| blocks.last().is_none_or(|b| b.keeping);
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        let word = first_word(t);
        // A whole `if …; then …; fi` on one line is left as written.
        let one_line = word == "if" && t.ends_with("fi") && t.contains("then");
        let blank = || if line.ends_with('\n') { "\n" } else { "" };
        match word.as_str() {
            "if" if !one_line => {
                let outer = keeping(&blocks);
                let decided = condition(t.strip_prefix("if").unwrap_or(t), &out);
                let (ran, kept) = opened(decided);
                blocks.push(Block { outer, ran, keeping: outer && kept });
                out.push_str(blank());
            }
            "elif" if !blocks.is_empty() => {
                let (ran, kept) = match blocks.last().map(|b| b.ran) {
                    Some(Ran::NotYet) => opened(condition(t.strip_prefix("elif").unwrap_or(t), &out)),
                    Some(Ran::Undecided) => (Ran::Undecided, true),
                    _ => (Ran::Yes, false),
                };
                if let Some(b) = blocks.last_mut() {
                    (b.ran, b.keeping) = (ran, b.outer && kept);
                }
                out.push_str(blank());
            }
            "else" if !blocks.is_empty() => {
                let Some(b) = blocks.last_mut() else { continue };
                let kept = b.ran != Ran::Yes;
                if b.ran == Ran::NotYet {
                    b.ran = Ran::Yes;
                }
                b.keeping = b.outer && kept;
                out.push_str(blank());
            }
            "fi" if !blocks.is_empty() => {
                blocks.pop();
                out.push_str(blank());
            }
            "then" if !blocks.is_empty() => out.push_str(blank()),
            _ if keeping(&blocks) => out.push_str(line),
            _ => out.push_str(blank()),
        }
    }
    Cow::Owned(out)
}

/// A branch opened on a condition: what the block has run since, and whether the branch is read.
fn opened(decided: Option<bool>) -> (Ran, bool) {
    match decided {
        Some(true) => (Ran::Yes, true),
        Some(false) => (Ran::NotYet, false),
        None => (Ran::Undecided, true),
    }
}

/// The value of an `if`'s condition (what follows `if` or `elif`, up to `then`) given the script
/// `before` it; `None` where the script does not decide it.
fn condition(cond: &str, before: &str) -> Option<bool> {
    let cond = cond.trim();
    let cond = cond.strip_suffix("then").unwrap_or(cond).trim_end().trim_end_matches(';').trim();
    let vars = script_vars(before);
    // `a && b || c`: bash's lists, equal precedence, left to right.
    let mut value: Option<bool> = None;
    let mut pending: Option<&str> = None;
    let mut rest = cond;
    loop {
        let (part, op, tail) = match (rest.find("&&"), rest.find("||")) {
            (Some(a), Some(o)) if a < o => (&rest[..a], Some("&&"), &rest[a + 2..]),
            (_, Some(o)) => (&rest[..o], Some("||"), &rest[o + 2..]),
            (Some(a), None) => (&rest[..a], Some("&&"), &rest[a + 2..]),
            (None, None) => (rest, None, ""),
        };
        let this = test(part.trim(), &vars)?;
        value = Some(match (value, pending) {
            (None, _) => this,
            (Some(v), Some("&&")) => v && this,
            (Some(v), _) => v || this,
        });
        match op {
            Some(op) => (pending, rest) = (Some(op), tail),
            None => return value,
        }
    }
}

/// One test: `[ … ]`, `[[ … ]]` or `test …`, perhaps after `!`.
fn test(part: &str, vars: &[(String, String)]) -> Option<bool> {
    if let Some(negated) = part.strip_prefix('!') {
        return test(negated.trim(), vars).map(|v| !v);
    }
    let inner = part
        .strip_prefix("[[")
        .and_then(|p| p.strip_suffix("]]"))
        .or_else(|| part.strip_prefix('[').and_then(|p| p.strip_suffix(']')))
        .or_else(|| part.strip_prefix("test "))?;
    let words = shell_words::split(inner).ok()?;
    let value = |w: &str| expand(w, vars, &mut 64);
    let number = |w: &str| value(w)?.trim().parse::<i64>().ok();
    match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["-z", w] => Some(value(w)?.is_empty()),
        ["-n", w] => Some(!value(w)?.is_empty()),
        // A pattern on the right of `==` in `[[ ]]` is bash's glob: not read.
        [_, "=" | "==" | "!=", b] if b.contains(['*', '?', '[']) => None,
        [a, "=" | "==", b] => Some(value(a)? == value(b)?),
        [a, "!=", b] => Some(value(a)? != value(b)?),
        [a, op @ ("-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"), b] => {
            let (a, b) = (number(a)?, number(b)?);
            Some(match op {
                "-eq" => a == b,
                "-ne" => a != b,
                "-lt" => a < b,
                "-le" => a <= b,
                "-gt" => a > b,
                _ => a >= b,
            })
        }
        [w] if !w.starts_with('-') => Some(!value(w)?.is_empty()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The branches bash would run, each case's expected lines worked out by hand from bash's
    /// semantics (`man bash`, "Compound Commands" and "CONDITIONAL EXPRESSIONS").
    #[test]
    fn the_branch_bash_runs_is_the_one_kept() {
        let kept = |text: &str| -> Vec<String> {
            taken_branches(text).lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect()
        };
        let script = "DTYPE=\"bf16\"\nif [[ \"$DTYPE\" == \"fp8\" ]]; then\n  A=fp8\nelse\n  A=other\nfi\n";
        assert_eq!(kept(script), ["DTYPE=\"bf16\"", "A=other"]);
        assert_eq!(kept(&script.replace("bf16", "fp8")), ["DTYPE=\"fp8\"", "A=fp8"]);
        // elif, integers, a default, `then` on its own line, and nesting.
        let script = "N=${NNODES:-2}\nif [ $N -gt 4 ]\nthen\n  TP=8\nelif [ $N -ge 2 ]; then\n  TP=4\n  if [ -z \"$X\" ]; then\n    Y=1\n  fi\nelse\n  TP=1\nfi\n";
        assert_eq!(kept(script), ["N=${NNODES:-2}", "TP=4", "Y=1"]);
        // `&&` and `||` left to right, and `!`.
        let script = "A=1\nB=2\nif [ $A -eq 1 ] && [ $B -eq 3 ] || ! [ $A = 2 ]; then\n  C=yes\nfi\n";
        assert_eq!(kept(script), ["A=1", "B=2", "C=yes"]);
        // A value from the environment, a file test or a pattern: every branch stays.
        for cond in ["[ \"$HOME\" = /root ]", "[ -f train.py ]", "[[ $A == fp* ]]"] {
            let script = format!("A=fp8\nif {cond}; then\n  B=1\nelse\n  B=2\nfi\n");
            assert_eq!(kept(&script), ["A=fp8", "B=1", "B=2"], "{cond}");
        }
        // No block: the text as it is.
        assert!(matches!(taken_branches("A=1\n"), Cow::Borrowed(_)));
    }
}
