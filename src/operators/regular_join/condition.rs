//! A regular join's condition beyond the key equality (SQL's `ON a.k = b.k AND a.t < b.t` in an
//! outer join, where it decides which rows match rather than filtering the result): an expression
//! over the joined record (`left.<field>`, `right.<field>`), true for a pair that matches. NULL,
//! false and an evaluation error (a string compared with a number) all mean "no match", as SQL's
//! ON treats anything but TRUE.

use crate::expr::{self, Program, RawJson};

pub struct Condition {
    /// `None` when the text does not compile, which the plan has already ruled out; then no pair
    /// matches rather than every pair.
    program: Option<Program>,
}

impl Condition {
    pub fn new(text: &str) -> Condition {
        Condition {
            program: expr::compile(text).ok(),
        }
    }

    /// Whether the joined record `line` (both sides present) matches.
    pub fn holds(&self, line: &[u8]) -> bool {
        let Some(p) = &self.program else {
            return false;
        };
        p.eval(&RawJson(line)).is_ok_and(|v| expr::is_true(&v))
    }
}
