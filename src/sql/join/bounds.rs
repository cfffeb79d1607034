//! The time bounds of an interval join read from its conditions (`b.rt BETWEEN a.rt - INTERVAL
//! .. AND a.rt + INTERVAL ..`, or comparisons of the two time attributes), and the window-join
//! pairs (`a.window_start = b.window_start`), as bounds on `right.rt - left.rt`.

use sqlparser::ast::{BinaryOperator, Expr, Spanned};

use super::super::expr::unsupported;
use super::super::time::{interval_ms, MAX_INTERVAL_MS};
use super::super::{Col, SqlError};
use super::{column_of, Side};

/// `a.window_start = b.window_start` (or `window_end`) between two window results.
pub(super) fn window_pair(e: &Expr, l: &Side, r: &Side) -> Option<(Col, Col)> {
    let Expr::BinaryOp {
        left,
        op: BinaryOperator::Eq,
        right,
    } = e
    else {
        return None;
    };
    let ((a, ca), (b, cb)) = (column_of(left, [l, r])?, column_of(right, [l, r])?);
    let bound = |c: &Col| matches!(c.name.as_str(), "window_start" | "window_end");
    if ca.name != cb.name || !bound(&ca) || a == b {
        return None;
    }
    Some(if a == 0 { (ca, cb) } else { (cb, ca) })
}

/// The bounds on `right.rt - left.rt`, in milliseconds, both inclusive.
#[derive(Default)]
pub(super) struct Bounds {
    pub(super) lower: Option<i64>,
    pub(super) upper: Option<i64>,
}

impl Bounds {
    /// Reads `e` as a bound when it compares the two time attributes; false when it does not.
    pub(super) fn add(&mut self, e: &Expr, l: &Side, r: &Side) -> Result<bool, SqlError> {
        match e {
            Expr::Between {
                expr,
                negated: false,
                low,
                high,
            } => {
                let (Some(x), Some(lo), Some(hi)) = (
                    time_term(expr, l, r)?,
                    time_term(low, l, r)?,
                    time_term(high, l, r)?,
                ) else {
                    return Ok(false);
                };
                Ok(self.compare(x, BinaryOperator::GtEq, lo, e)?
                    && self.compare(x, BinaryOperator::LtEq, hi, e)?)
            }
            Expr::BinaryOp { left, op, right } => {
                let (Some(a), Some(b)) = (time_term(left, l, r)?, time_term(right, l, r)?) else {
                    return Ok(false);
                };
                self.compare(a, op.clone(), b, e)
            }
            _ => Ok(false),
        }
    }

    /// `a op b` with a = side_a.rt + off_a: as a bound on d = right - left.
    fn compare(
        &mut self,
        (sa, oa): (usize, i64),
        op: BinaryOperator,
        (sb, ob): (usize, i64),
        e: &Expr,
    ) -> Result<bool, SqlError> {
        if sa == sb {
            return Err(SqlError::span(
                e.span(),
                "this condition compares a side's time attribute with itself",
            ));
        }
        // right + oa op left + ob  <=>  d op ob - oa;  left + oa op right + ob  <=>  d op' oa - ob.
        let (op, v) = if sa == 1 {
            (op, ob - oa)
        } else {
            let flipped = match op {
                BinaryOperator::Gt => BinaryOperator::Lt,
                BinaryOperator::GtEq => BinaryOperator::LtEq,
                BinaryOperator::Lt => BinaryOperator::Gt,
                BinaryOperator::LtEq => BinaryOperator::GtEq,
                other => other,
            };
            (flipped, oa - ob)
        };
        let (lo, hi) = match op {
            BinaryOperator::GtEq => (Some(v), None),
            BinaryOperator::Gt => (Some(v + 1), None),
            BinaryOperator::LtEq => (None, Some(v)),
            BinaryOperator::Lt => (None, Some(v - 1)),
            BinaryOperator::Eq => (Some(v), Some(v)),
            _ => return Err(unsupported(e, "this comparison of time attributes is")),
        };
        if let Some(lo) = lo {
            self.lower = Some(self.lower.map_or(lo, |x| x.max(lo)));
        }
        if let Some(hi) = hi {
            self.upper = Some(self.upper.map_or(hi, |x| x.min(hi)));
        }
        Ok(true)
    }
}

/// `side.rt`, `side.rt + INTERVAL ...` or `side.rt - INTERVAL ...`: (side, offset ms).
fn time_term(e: &Expr, l: &Side, r: &Side) -> Result<Option<(usize, i64)>, SqlError> {
    if let Expr::Nested(inner) = e {
        return time_term(inner, l, r);
    }
    if let Some((side, col)) = column_of(e, [l, r]) {
        let s = if side == 0 { l } else { r };
        return Ok((s.stream.time_name() == Some(col.name.as_str())).then_some((side, 0)));
    }
    let Expr::BinaryOp { left, op, right } = e else {
        return Ok(None);
    };
    let sign = match op {
        BinaryOperator::Plus => 1,
        BinaryOperator::Minus => -1,
        _ => return Ok(None),
    };
    let Some((side, off)) = time_term(left, l, r)? else {
        return Ok(None);
    };
    if !matches!(right.as_ref(), Expr::Interval(_)) {
        return Ok(None);
    }
    let off = off
        .checked_add(sign * interval_ms(right)?)
        .filter(|o| o.abs() <= MAX_INTERVAL_MS)
        .ok_or_else(|| {
            SqlError::span(
                e.span(),
                "this time bound is too far (at most 100 000 years)",
            )
        })?;
    Ok(Some((side, off)))
}
