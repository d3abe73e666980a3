//! Character cursor over one constraint line: position, look-ahead, errors with columns.

use super::{LineParser, Result};
use crate::error::ConstraintError;
use crate::model::TupleVar;

pub(super) fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

pub(super) fn is_ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

pub(super) fn is_quote(c: char) -> bool {
    matches!(c, '\'' | '"' | '`')
}

/// `t1` or `t2`, case-insensitively.
pub(super) fn tuple_var(word: &str) -> Option<TupleVar> {
    if word.eq_ignore_ascii_case("t1") {
        Some(TupleVar::T1)
    } else if word.eq_ignore_ascii_case("t2") {
        Some(TupleVar::T2)
    } else {
        None
    }
}

/// Index of the `#` that starts the comment, or the line's length.
///
/// Uses the same quoting rules as the tokenizer (a doubled quote inside a
/// quoted string toggles twice, so it needs no special case), so a `#` inside
/// `'...'`, `"..."` or `` `...` `` is text, not a comment.
pub(super) fn content_end(chars: &[char]) -> usize {
    let mut open_quote: Option<char> = None;
    for (i, &c) in chars.iter().enumerate() {
        match open_quote {
            Some(q) if c == q => open_quote = None,
            Some(_) => {}
            None if c == '#' => return i,
            None if is_quote(c) => open_quote = Some(c),
            None => {}
        }
    }
    chars.len()
}

impl LineParser<'_> {
    pub(super) fn error(&self, pos: usize, message: impl Into<String>) -> ConstraintError {
        // Something missing at the end is reported just after the last
        // character of the constraint, not past trailing spaces or a comment.
        let pos = if pos >= self.end {
            self.chars[..self.end]
                .iter()
                .rposition(|c| !c.is_whitespace())
                .map_or(0, |last| last + 1)
        } else {
            pos
        };
        ConstraintError::Syntax {
            line: self.line,
            column: pos + 1,
            message: message.into(),
            text: self.text.trim_end().to_string(),
        }
    }

    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.peek_at(0)
    }

    pub(super) fn peek_at(&self, offset: usize) -> Option<char> {
        let i = self.pos + offset;
        (i < self.end).then(|| self.chars[i])
    }

    pub(super) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    pub(super) fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// What is at the current position, for "found ..." in messages.
    pub(super) fn found(&self) -> String {
        match self.peek() {
            Some(c) => format!("'{c}'"),
            None => "the end of the line".to_string(),
        }
    }

    /// Reads an identifier `[A-Za-z_][A-Za-z0-9_]*` at the current position.
    pub(super) fn ident(&mut self) -> Option<String> {
        if !self.peek().is_some_and(is_ident_start) {
            return None;
        }
        let start = self.pos;
        while self.peek().is_some_and(is_ident_continue) {
            self.pos += 1;
        }
        Some(self.chars[start..self.pos].iter().collect())
    }

    /// The identifier at the current position, without consuming it.
    pub(super) fn peek_ident(&mut self) -> Option<String> {
        let start = self.pos;
        let word = self.ident();
        self.pos = start;
        word
    }

    /// The next non-space character after the current position.
    pub(super) fn peek_after_ws(&mut self) -> Option<char> {
        let start = self.pos;
        self.skip_ws();
        let c = self.peek();
        self.pos = start;
        c
    }

    /// Consumes `NAME :` (case-insensitive) if it is there.
    pub(super) fn eat_prefix(&mut self, name: &str) -> bool {
        let start = self.pos;
        if self.ident().is_some_and(|w| w.eq_ignore_ascii_case(name)) {
            self.skip_ws();
            if self.eat(':') {
                self.skip_ws();
                return true;
            }
        }
        self.pos = start;
        false
    }

    /// At the word `word` (case-insensitive, not a prefix of a longer word)?
    pub(super) fn at_word(&mut self, word: &str) -> bool {
        self.peek_ident().is_some_and(|w| w.eq_ignore_ascii_case(word))
    }

    /// Consumes a conjunction, `&` or the word `and`, if there is one.
    pub(super) fn eat_conjunction(&mut self) -> bool {
        self.skip_ws();
        if self.eat('&') {
            return true;
        }
        if self.at_word("and") {
            self.pos += 3;
            return true;
        }
        false
    }

    pub(super) fn expect_end(&mut self) -> Result<()> {
        self.skip_ws();
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error(
                self.pos,
                format!("unexpected {} after the end of the constraint", self.found()),
            ))
        }
    }
}
