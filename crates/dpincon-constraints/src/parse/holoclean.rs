//! The HoloClean syntax: `t1&t2&EQ(t1.A,t2.A)&IQ(t1.B,t2.B)`.

use super::cursor::tuple_var;
use super::{LineParser, Result};
use crate::model::{Operator, Predicate};

/// The HoloClean predicate functions and the operators they stand for.
const HOLOCLEAN_FUNCTIONS: [(&str, Operator); 6] = [
    ("EQ", Operator::Eq),
    ("IQ", Operator::Ne),
    ("LT", Operator::Lt),
    ("GT", Operator::Gt),
    ("LTE", Operator::Le),
    ("GTE", Operator::Ge),
];

impl LineParser<'_> {
    /// At `t1 &`, `t2 and`, or a function call `NAME(`?
    pub(super) fn at_holoclean(&mut self) -> bool {
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

    /// `[t1 & t2 &] EQ(a, b) (& FN(a, b))*`.
    pub(super) fn holoclean(&mut self) -> Result<Vec<Predicate>> {
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
    pub(super) fn holoclean_predicate(&mut self) -> Result<Predicate> {
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
}
