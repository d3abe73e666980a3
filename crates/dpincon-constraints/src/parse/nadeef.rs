//! The NADEEF / Livshits et al. syntax: `not(t1.A=t2.A & t1.B!=t2.B)`.

use super::{LineParser, Result};
use crate::model::Predicate;

impl LineParser<'_> {
    /// At `not (`?
    pub(super) fn at_not(&mut self) -> bool {
        let start = self.pos;
        let found = self.ident().is_some_and(|w| w.eq_ignore_ascii_case("not"))
            && self.peek_after_ws() == Some('(');
        self.pos = start;
        found
    }

    /// `not( pred (& pred)* )`; the current position is at `not`.
    pub(super) fn nadeef(&mut self) -> Result<Vec<Predicate>> {
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
}
