//! The FD syntax: `A, B -> C, D`, one denial constraint per right-hand attribute.

use super::cursor::{is_ident_start, is_quote};
use super::{LineParser, Result};
use crate::model::{DenialConstraint, Operand, Operator, Origin, Predicate, TupleVar};

impl LineParser<'_> {
    /// Whether `->` occurs outside quotes in the rest of the constraint.
    pub(super) fn has_arrow(&self) -> bool {
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

    /// An attribute of an FD: an identifier or a quoted name.
    pub(super) fn fd_attribute(&mut self) -> Result<(usize, String)> {
        self.skip_ws();
        let start = self.pos;
        let name = self.column_name("','")?;
        Ok((start, name))
    }

    pub(super) fn eat_arrow(&mut self) -> bool {
        if self.peek() == Some('-') && self.peek_at(1) == Some('>') {
            self.pos += 2;
            true
        } else {
            false
        }
    }

    /// Hint for a missing separator: `Zip Code` was probably meant as one
    /// name.
    pub(super) fn space_hint(&self) -> &'static str {
        if self.peek().is_some_and(is_ident_start) {
            " (quote names that contain spaces: \"Zip Code\")"
        } else {
            ""
        }
    }

    /// `A, B -> C, D`, giving one DC per right-hand attribute.
    pub(super) fn functional_dependency(
        &mut self,
        origin: Origin,
    ) -> Result<Vec<DenialConstraint>> {
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
