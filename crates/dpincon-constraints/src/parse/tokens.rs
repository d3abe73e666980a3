//! Tokens shared by the syntaxes: quoted names, numbers, operands, operators.

use super::cursor::{is_ident_continue, is_ident_start, tuple_var};
use super::{LineParser, Result};
use crate::model::{Literal, Operand, Operator, Predicate};

impl LineParser<'_> {
    /// A quoted string or name; the opening quote is at the current
    /// position. A doubled quote stands for one quote character.
    pub(super) fn quoted(&mut self) -> Result<String> {
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
    pub(super) fn column_name(&mut self, after: &str) -> Result<String> {
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

    pub(super) fn at_number(&self) -> bool {
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

    pub(super) fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// An integer (`30`, `-3`) or a float (`2.5`, `-1e3`).
    pub(super) fn number(&mut self) -> Result<Literal> {
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
    pub(super) fn operand(&mut self) -> Result<Operand> {
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

    pub(super) fn operator(&mut self) -> Result<Operator> {
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
    pub(super) fn require_attribute(&self, start: usize, predicate: &Predicate) -> Result<()> {
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
}
