//! Parser of the three accepted constraint syntaxes (SPEC §1).
//!
//! - FD: `FD: Zip, State -> City` (the `FD:` prefix may be left out),
//! - NADEEF / Livshits et al.: `not(t1.Zip=t2.Zip&t1.City!=t2.City)`, with an
//!   optional `DC:` prefix and `&` or `and` between predicates,
//! - HoloClean: `t1&t2&EQ(t1.Zip,t2.Zip)&IQ(t1.City,t2.City)`.
//!
//! The parser is a hand-written recursive descent over the characters of one
//! line, so that every error can name the exact 1-based character column of
//! the offending character.

use crate::error::ConstraintError;
use crate::model::{DenialConstraint, Operand, Origin};
use cursor::content_end;

type Result<T> = std::result::Result<T, ConstraintError>;

/// Parses a whole constraint file.
///
/// One constraint per line, `#` starts a comment (to the end of the line,
/// unless inside a quoted string), blank lines are ignored. Returns the first
/// error, or [`ConstraintError::Empty`] when the file holds no constraint.
pub fn parse_constraints(text: &str) -> Result<Vec<DenialConstraint>> {
    // Editors on some platforms save UTF-8 with a byte-order mark; it is not
    // part of the first constraint.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut constraints = Vec::new();
    for (index, line) in text.lines().enumerate() {
        constraints.extend(parse_line(index + 1, line)?);
    }
    if constraints.is_empty() {
        return Err(ConstraintError::Empty);
    }
    Ok(constraints)
}

/// Parses one line of a constraint file.
///
/// `line` is the 1-based line number, used in errors and stored in
/// [`Origin::line`]; [`Origin::text`] is the trimmed text without its comment.
/// Returns an empty `Vec` for a blank or comment-only line; an FD with `k`
/// right-hand attributes yields `k` constraints sharing one origin.
pub fn parse_line(line: usize, text: &str) -> Result<Vec<DenialConstraint>> {
    LineParser::new(line, text).parse()
}

mod cursor;
mod fd;
mod holoclean;
mod nadeef;
mod tokens;

/// Parses one line. Positions are indexes into `chars`, the whole line, so
/// that `pos + 1` is the column reported to the user.
struct LineParser<'a> {
    line: usize,
    /// The line as written, for error messages.
    text: &'a str,
    chars: Vec<char>,
    /// End of the constraint: the start of the comment, or the line's end.
    end: usize,
    pos: usize,
}

impl<'a> LineParser<'a> {
    fn new(line: usize, text: &'a str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let end = content_end(&chars);
        LineParser { line, text, chars, end, pos: 0 }
    }

    fn parse(mut self) -> Result<Vec<DenialConstraint>> {
        self.skip_ws();
        if self.at_end() {
            return Ok(Vec::new());
        }
        let origin = Origin {
            line: self.line,
            text: self.chars[self.pos..self.end].iter().collect::<String>().trim_end().to_string(),
        };
        if self.eat_prefix("FD") {
            return self.functional_dependency(origin);
        }
        let dc_prefix = self.eat_prefix("DC");
        let predicates = if self.at_not() {
            self.nadeef()?
        } else if self.at_holoclean() {
            self.holoclean()?
        } else if !dc_prefix && self.has_arrow() {
            return self.functional_dependency(origin);
        } else {
            return Err(self.error(
                self.pos,
                "expected a constraint: `not(t1.A=t2.A & ...)`, HoloClean \
                 `t1&t2&EQ(t1.A,t2.A)&...` or an FD `A, B -> C`",
            ));
        };
        let constraint = DenialConstraint { predicates, origin };
        check_binary(&constraint)?;
        Ok(vec![constraint])
    }
}

/// Refuses a DC whose attributes all belong to one tuple variable: one tuple
/// alone can violate it, which a conflict graph (edges between two tuples)
/// cannot represent (SPEC §1).
pub(crate) fn check_binary(constraint: &DenialConstraint) -> Result<()> {
    let mut tuples =
        constraint.predicates.iter().flat_map(|p| [&p.left, &p.right]).filter_map(|o| match o {
            Operand::Attr { tuple, .. } => Some(*tuple),
            Operand::Const(_) => None,
        });
    let Some(first) = tuples.next() else {
        // No attribute at all: reported elsewhere (syntax or type error).
        return Ok(());
    };
    if tuples.all(|t| t == first) {
        return Err(ConstraintError::Unary {
            line: constraint.origin.line,
            text: constraint.origin.text.clone(),
            tuple: first,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
