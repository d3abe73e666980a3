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
use crate::model::{DenialConstraint, Literal, Operand, Operator, Origin, Predicate, TupleVar};

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

/// The HoloClean predicate functions and the operators they stand for.
const HOLOCLEAN_FUNCTIONS: [(&str, Operator); 6] = [
    ("EQ", Operator::Eq),
    ("IQ", Operator::Ne),
    ("LT", Operator::Lt),
    ("GT", Operator::Gt),
    ("LTE", Operator::Le),
    ("GTE", Operator::Ge),
];

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_continue(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_quote(c: char) -> bool {
    matches!(c, '\'' | '"' | '`')
}

/// `t1` or `t2`, case-insensitively.
fn tuple_var(word: &str) -> Option<TupleVar> {
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
fn content_end(chars: &[char]) -> usize {
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

    // ----- character-level helpers -----

    fn error(&self, pos: usize, message: impl Into<String>) -> ConstraintError {
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

    fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    fn peek(&self) -> Option<char> {
        self.peek_at(0)
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        let i = self.pos + offset;
        (i < self.end).then(|| self.chars[i])
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// What is at the current position, for "found ..." in messages.
    fn found(&self) -> String {
        match self.peek() {
            Some(c) => format!("'{c}'"),
            None => "the end of the line".to_string(),
        }
    }

    /// Reads an identifier `[A-Za-z_][A-Za-z0-9_]*` at the current position.
    fn ident(&mut self) -> Option<String> {
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
    fn peek_ident(&mut self) -> Option<String> {
        let start = self.pos;
        let word = self.ident();
        self.pos = start;
        word
    }

    /// The next non-space character after the current position.
    fn peek_after_ws(&mut self) -> Option<char> {
        let start = self.pos;
        self.skip_ws();
        let c = self.peek();
        self.pos = start;
        c
    }

    /// Consumes `NAME :` (case-insensitive) if it is there.
    fn eat_prefix(&mut self, name: &str) -> bool {
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

    /// At `not (`?
    fn at_not(&mut self) -> bool {
        let start = self.pos;
        let found = self.ident().is_some_and(|w| w.eq_ignore_ascii_case("not"))
            && self.peek_after_ws() == Some('(');
        self.pos = start;
        found
    }

    /// At `t1 &`, `t2 and`, or a function call `NAME(`?
    fn at_holoclean(&mut self) -> bool {
        let start = self.pos;
        let found = match self.ident() {
            Some(word) if tuple_var(&word).is_some() => {
                self.skip_ws();
                self.peek() == Some('&') || self.at_word("and")
            }
            Some(_) => self.peek_after_ws() == Some('('),
            None => false,
        };
        self.pos = start;
        found
    }

    /// Whether `->` occurs outside quotes in the rest of the constraint.
    fn has_arrow(&self) -> bool {
        let rest = &self.chars[self.pos..self.end];
        let mut open_quote: Option<char> = None;
        for (i, &c) in rest.iter().enumerate() {
            match open_quote {
                Some(q) if c == q => open_quote = None,
                Some(_) => {}
                None if is_quote(c) => open_quote = Some(c),
                None if c == '-' && rest.get(i + 1) == Some(&'>') => return true,
                None => {}
            }
        }
        false
    }

    /// At the word `word` (case-insensitive, not a prefix of a longer word)?
    fn at_word(&mut self, word: &str) -> bool {
        self.peek_ident().is_some_and(|w| w.eq_ignore_ascii_case(word))
    }

    /// Consumes a conjunction, `&` or the word `and`, if there is one.
    fn eat_conjunction(&mut self) -> bool {
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

    fn expect_end(&mut self) -> Result<()> {
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

    // ----- tokens -----

    /// A quoted string or name; the opening quote is at the current
    /// position. A doubled quote stands for one quote character.
    fn quoted(&mut self) -> Result<String> {
        let start = self.pos;
        let Some(quote) = self.bump() else {
            unreachable!("quoted() is called at a quote");
        };
        let mut value = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(self.error(
                        start,
                        format!("unterminated quoted text: missing closing {quote}"),
                    ));
                }
                Some(c) if c == quote => {
                    if !self.eat(quote) {
                        return Ok(value);
                    }
                    value.push(quote);
                }
                Some(c) => value.push(c),
            }
        }
    }

    /// A column name: an identifier, or quoted with `"` or `` ` ``.
    fn column_name(&mut self, after: &str) -> Result<String> {
        self.skip_ws();
        let start = self.pos;
        let name = match self.peek() {
            Some('"' | '`') => self.quoted()?,
            Some(c) if is_ident_start(c) => self.ident().unwrap_or_default(),
            _ => {
                return Err(self.error(
                    start,
                    format!(
                        "expected a column name after {after}, found {} \
                         (names other than [A-Za-z_][A-Za-z0-9_]* must be quoted: \"Zip Code\")",
                        self.found()
                    ),
                ));
            }
        };
        if name.is_empty() {
            return Err(self.error(start, "empty column name"));
        }
        Ok(name)
    }

    fn at_number(&self) -> bool {
        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        match self.peek() {
            Some(c) if c.is_ascii_digit() => true,
            Some('.') => digit(self.peek_at(1)),
            Some('-' | '+') => {
                digit(self.peek_at(1)) || (self.peek_at(1) == Some('.') && digit(self.peek_at(2)))
            }
            _ => false,
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// An integer (`30`, `-3`) or a float (`2.5`, `-1e3`).
    fn number(&mut self) -> Result<Literal> {
        let start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        self.digits();
        let mut is_float = false;
        if self.eat('.') {
            is_float = true;
            self.digits();
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            let mark = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some('-' | '+')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                // Not an exponent: leave the `e` to the check below.
                self.pos = mark;
            } else {
                is_float = true;
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        // `3rd` or `1.2.3` is neither a number nor a bare word.
        if self.peek().is_some_and(|c| is_ident_continue(c) || c == '.') {
            return Err(self.error(
                start,
                format!("malformed number starting '{text}' (quote string constants: '{text}...')"),
            ));
        }
        if is_float {
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Literal::Float(v)),
                _ => Err(self.error(start, format!("float constant {text} is out of range"))),
            }
        } else {
            text.parse::<i64>().map(Literal::Int).map_err(|_| {
                self.error(start, format!("integer constant {text} does not fit in 64 bits"))
            })
        }
    }

    /// `t1.Col`, `t2."Col"`, a number, a quoted string, or a bare word.
    fn operand(&mut self) -> Result<Operand> {
        self.skip_ws();
        let start = self.pos;
        match self.peek() {
            Some('\'' | '"') => Ok(Operand::Const(Literal::Str(self.quoted()?))),
            Some('`') => Err(self.error(
                start,
                "backticks quote column names (t1.`Zip Code`); quote string constants with ' or \"",
            )),
            Some(c) if is_ident_start(c) => {
                let word = self.ident().unwrap_or_default();
                let tuple = tuple_var(&word);
                if self.peek_after_ws() == Some('.') {
                    let Some(tuple) = tuple else {
                        return Err(self.error(
                            start,
                            format!("unknown tuple variable '{word}' (expected t1 or t2)"),
                        ));
                    };
                    self.skip_ws();
                    self.pos += 1; // the '.'
                    let column = self.column_name(&format!("'{word}.'"))?;
                    Ok(Operand::Attr { tuple, column })
                } else if tuple.is_some() {
                    Err(self.error(
                        self.pos,
                        format!(
                            "expected '.' and a column name after '{word}', found {}",
                            self.found()
                        ),
                    ))
                } else {
                    // A bare word is a string constant: `t1.State = NY`.
                    Ok(Operand::Const(Literal::Str(word)))
                }
            }
            _ if self.at_number() => Ok(Operand::Const(self.number()?)),
            _ => Err(self.error(
                start,
                format!(
                    "expected an operand (t1.Column, t2.Column or a constant), found {}",
                    self.found()
                ),
            )),
        }
    }

    fn operator(&mut self) -> Result<Operator> {
        self.skip_ws();
        let start = self.pos;
        while matches!(self.peek(), Some('=' | '!' | '<' | '>')) {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        match text.as_str() {
            "=" | "==" => Ok(Operator::Eq),
            "!=" | "<>" => Ok(Operator::Ne),
            "<" => Ok(Operator::Lt),
            ">" => Ok(Operator::Gt),
            "<=" => Ok(Operator::Le),
            ">=" => Ok(Operator::Ge),
            "" => Err(self.error(
                start,
                format!("expected a comparison operator (= != < > <= >=), found {}", self.found()),
            )),
            _ => {
                Err(self
                    .error(start, format!("unknown operator '{text}' (expected = != < > <= >=)")))
            }
        }
    }

    /// Refuses `5 = 5`: a predicate must compare at least one attribute.
    fn require_attribute(&self, start: usize, predicate: &Predicate) -> Result<()> {
        let is_attr = |o: &Operand| matches!(o, Operand::Attr { .. });
        if is_attr(&predicate.left) || is_attr(&predicate.right) {
            Ok(())
        } else {
            Err(self.error(
                start,
                format!(
                    "predicate `{predicate}` has no attribute: each predicate compares t1.Column or t2.Column"
                ),
            ))
        }
    }

    // ----- the three syntaxes -----

    /// `not( pred (& pred)* )`; the current position is at `not`.
    fn nadeef(&mut self) -> Result<Vec<Predicate>> {
        self.ident();
        self.skip_ws();
        let open = self.pos;
        self.pos += 1; // the '(' checked by at_not
        self.skip_ws();
        if self.peek() == Some(')') {
            return Err(self.error(
                self.pos,
                "empty 'not()': a denial constraint needs at least one predicate",
            ));
        }
        let mut predicates = Vec::new();
        loop {
            self.skip_ws();
            let start = self.pos;
            let left = self.operand()?;
            let op = self.operator()?;
            let right = self.operand()?;
            let predicate = Predicate { left, op, right };
            self.require_attribute(start, &predicate)?;
            predicates.push(predicate);
            if self.eat_conjunction() {
                continue;
            }
            if self.eat(')') {
                break;
            }
            let message = if self.at_end() {
                format!("missing ')' to close the 'not(' at column {}", open + 1)
            } else {
                format!("expected '&', 'and' or ')' after a predicate, found {}", self.found())
            };
            return Err(self.error(self.pos, message));
        }
        self.expect_end()?;
        Ok(predicates)
    }

    /// `[t1 & t2 &] EQ(a, b) (& FN(a, b))*`.
    fn holoclean(&mut self) -> Result<Vec<Predicate>> {
        // The optional header naming the tuple variables, `t1&t2&`.
        loop {
            self.skip_ws();
            let start = self.pos;
            match self.ident() {
                Some(word) if tuple_var(&word).is_some() && self.peek_after_ws() != Some('.') => {
                    if !self.eat_conjunction() {
                        return Err(self.error(
                            self.pos,
                            format!(
                                "expected '&' and a predicate such as EQ(t1.A,t2.A), found {}",
                                self.found()
                            ),
                        ));
                    }
                }
                _ => {
                    self.pos = start;
                    break;
                }
            }
        }
        let mut predicates = Vec::new();
        loop {
            predicates.push(self.holoclean_predicate()?);
            if !self.eat_conjunction() {
                break;
            }
        }
        self.expect_end()?;
        Ok(predicates)
    }

    /// `FN(a, b)` with FN one of [`HOLOCLEAN_FUNCTIONS`].
    fn holoclean_predicate(&mut self) -> Result<Predicate> {
        self.skip_ws();
        let start = self.pos;
        let names = "EQ, IQ, LT, GT, LTE or GTE";
        let Some(name) = self.ident() else {
            return Err(self.error(
                start,
                format!("expected a HoloClean predicate ({names}), found {}", self.found()),
            ));
        };
        let Some(&(_, op)) =
            HOLOCLEAN_FUNCTIONS.iter().find(|(f, _)| f.eq_ignore_ascii_case(&name))
        else {
            return Err(self
                .error(start, format!("unknown HoloClean function '{name}' (expected {names})")));
        };
        self.skip_ws();
        let open = self.pos;
        if !self.eat('(') {
            return Err(self
                .error(self.pos, format!("expected '(' after '{name}', found {}", self.found())));
        }
        let left = self.operand()?;
        self.skip_ws();
        if !self.eat(',') {
            return Err(self.error(
                self.pos,
                format!(
                    "expected ',' between the two arguments of {name}(...), found {}",
                    self.found()
                ),
            ));
        }
        let right = self.operand()?;
        self.skip_ws();
        if !self.eat(')') {
            let message = if self.at_end() {
                format!("missing ')' to close the '{name}(' at column {}", open + 1)
            } else {
                format!(
                    "expected ')' after the second argument of {name}(...), found {}",
                    self.found()
                )
            };
            return Err(self.error(self.pos, message));
        }
        let predicate = Predicate { left, op, right };
        self.require_attribute(start, &predicate)?;
        Ok(predicate)
    }

    /// An attribute of an FD: an identifier or a quoted name.
    fn fd_attribute(&mut self) -> Result<(usize, String)> {
        self.skip_ws();
        let start = self.pos;
        let name = self.column_name("','")?;
        Ok((start, name))
    }

    fn eat_arrow(&mut self) -> bool {
        if self.peek() == Some('-') && self.peek_at(1) == Some('>') {
            self.pos += 2;
            true
        } else {
            false
        }
    }

    /// Hint for a missing separator: `Zip Code` was probably meant as one
    /// name.
    fn space_hint(&self) -> &'static str {
        if self.peek().is_some_and(is_ident_start) {
            " (quote names that contain spaces: \"Zip Code\")"
        } else {
            ""
        }
    }

    /// `A, B -> C, D`, giving one DC per right-hand attribute.
    fn functional_dependency(&mut self, origin: Origin) -> Result<Vec<DenialConstraint>> {
        self.skip_ws();
        if self.peek() == Some('-') && self.peek_at(1) == Some('>') {
            return Err(self.error(self.pos, "an FD needs at least one attribute before '->'"));
        }
        let mut lhs: Vec<String> = Vec::new();
        loop {
            let (_, name) = self.fd_attribute()?;
            // A repeated attribute adds nothing to the FD.
            if !lhs.contains(&name) {
                lhs.push(name.clone());
            }
            self.skip_ws();
            if self.eat(',') {
                continue;
            }
            if self.eat_arrow() {
                break;
            }
            return Err(self.error(
                self.pos,
                format!(
                    "expected ',' or '->' after '{name}', found {}{}",
                    self.found(),
                    self.space_hint()
                ),
            ));
        }
        self.skip_ws();
        if self.at_end() {
            return Err(self.error(self.pos, "expected an attribute after '->'"));
        }
        let mut rhs: Vec<String> = Vec::new();
        loop {
            let (start, name) = self.fd_attribute()?;
            if lhs.contains(&name) {
                return Err(
                    self.error(start, format!("trivial FD: '{name}' is on both sides of '->'"))
                );
            }
            if !rhs.contains(&name) {
                rhs.push(name.clone());
            }
            self.skip_ws();
            if self.at_end() {
                break;
            }
            if self.eat(',') {
                continue;
            }
            let message = if self.peek() == Some('-') && self.peek_at(1) == Some('>') {
                "an FD has only one '->'".to_string()
            } else {
                format!(
                    "expected ',' or the end of the line after '{name}', found {}{}",
                    self.found(),
                    self.space_hint()
                )
            };
            return Err(self.error(self.pos, message));
        }
        let attr = |tuple, column: &String| Operand::Attr { tuple, column: column.clone() };
        let same = |column: &String, op| Predicate {
            left: attr(TupleVar::T1, column),
            op,
            right: attr(TupleVar::T2, column),
        };
        Ok(rhs
            .iter()
            .map(|y| DenialConstraint {
                predicates: lhs
                    .iter()
                    .map(|x| same(x, Operator::Eq))
                    .chain(std::iter::once(same(y, Operator::Ne)))
                    .collect(),
                origin: origin.clone(),
            })
            .collect())
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
