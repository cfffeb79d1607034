//! Aggregates as a window or a group aggregate is written with them: the functions
//! (`count`, `sum`, ...), parsing `func(field)`, checking each against what the inputs hold, and
//! the value slot each reads.

use crate::config::{suggest, KeyPath};
use crate::expr::FieldPath;
use crate::operators::window::config::Aggregates;
use crate::plan::build::graph::{check_fields, field_path, Input};
use crate::plan::build::Builder;
use crate::plan::SlotUse;

/// The aggregate functions, as a user writes them.
pub const AGG_FUNCTIONS: [&str; 7] = [
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "count_distinct",
    "approx_count_distinct",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Sum,
    Min,
    Max,
    Avg,
    /// Exact: SQL's `COUNT(DISTINCT x)`.
    CountDistinct,
    /// A HyperLogLog sketch past 256 values (`super::distinct`), bounded at 4 KiB per group.
    ApproxCountDistinct,
}

impl AggFunc {
    /// It can take a value back out (a retraction): `count`, `sum` and `avg`; `min`, `max` and
    /// the distinct counts would need every value kept.
    pub fn takes_back(self) -> bool {
        matches!(self, AggFunc::Count | AggFunc::Sum | AggFunc::Avg)
    }

    /// How a distinct count keeps its values; `None` for the other aggregates.
    pub fn distinct_mode(self) -> Option<super::distinct::Mode> {
        match self {
            AggFunc::CountDistinct => Some(super::distinct::Mode::Exact),
            AggFunc::ApproxCountDistinct => Some(super::distinct::Mode::Approx),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggPlan {
    /// Output field name.
    pub name: String,
    pub func: AggFunc,
    /// Input field; `None` only for `count()`.
    pub field: Option<FieldPath>,
    /// The value slot of the window's events that holds `field`.
    pub slot: Option<usize>,
}

/// Gives each aggregate with a field its value slot: slot `i` of the events holds the `i`-th
/// distinct (field, use) of the aggregates. Returns them with the port's value list.
pub(crate) fn assign_slots(aggregates: Vec<AggPlan>) -> (Vec<AggPlan>, Vec<(FieldPath, SlotUse)>) {
    let mut values: Vec<(FieldPath, SlotUse)> = Vec::new();
    let aggregates = aggregates
        .into_iter()
        .map(|mut a| {
            if let Some(f) = &a.field {
                let use_ = match a.func {
                    // count(field) counts the non-null values, of any type.
                    AggFunc::CountDistinct | AggFunc::ApproxCountDistinct | AggFunc::Count => {
                        SlotUse::Hash
                    }
                    _ => SlotUse::Number,
                };
                let i = match values.iter().position(|(p, u)| p == f && *u == use_) {
                    Some(i) => i,
                    None => {
                        values.push((f.clone(), use_));
                        values.len() - 1
                    }
                };
                a.slot = Some(i);
            }
            a
        })
        .collect();
    (aggregates, values)
}

impl Builder<'_> {
    /// The `group_by` fields of transform `name`, each once, checked against what `inputs` hold;
    /// none may be one of the `fixed` output fields (a window's bounds).
    pub(crate) fn group_by_fields(
        &mut self,
        name: &str,
        group_by: &[String],
        fixed: &[&str],
        inputs: &[Input],
    ) -> Vec<FieldPath> {
        let mut fields = Vec::new();
        for (i, field) in group_by.iter().enumerate() {
            let key = KeyPath::new(["transforms", name, "group_by"]).index(i);
            if group_by[..i].contains(field) {
                self.err(key, format!("`{field}` is listed twice"));
            } else if fixed.contains(&field.as_str()) {
                self.err(key, format!("`{field}` is a field every window result has; it cannot be a group-by field"));
            } else if let Some(p) = field_path(self, &key, field) {
                check_fields(self, &key, inputs, &p);
                fields.push(p);
            }
        }
        fields
    }

    /// The aggregates of transform `name`, checked against what `inputs` hold; an aggregate may
    /// not take the name of a `fixed` output field or of a `group_by` field.
    pub(crate) fn aggregates(
        &mut self,
        name: &str,
        aggs: &Aggregates,
        fixed: &[&str],
        group_by: &[String],
        inputs: &[Input],
    ) -> Vec<AggPlan> {
        let at = |k: &str| KeyPath::new(["transforms", name, k]);
        let mut aggregates = Vec::new();
        if aggs.0.is_empty() {
            self.err(
                at("aggregates"),
                "at least one aggregate is needed, e.g. { clicks = \"count()\" }".into(),
            );
        }
        for (agg_name, expr) in &aggs.0 {
            let key = at("aggregates").key(agg_name);
            if fixed.contains(&agg_name.as_str()) || group_by.contains(agg_name) {
                let others: Vec<&str> = fixed
                    .iter()
                    .copied()
                    .chain(["the group_by fields"])
                    .collect();
                self.err(key.clone(), format!("aggregate name `{agg_name}` collides with an output field of the same name ({})", others.join(", ")));
            }
            match parse_aggregate(expr) {
                Ok((func, field)) => {
                    let field = match field {
                        Some(f) => match field_path(self, &key, &f) {
                            Some(p) => {
                                check_fields(self, &key, inputs, &p);
                                Some(p)
                            }
                            None => continue,
                        },
                        None => None,
                    };
                    aggregates.push(AggPlan {
                        name: agg_name.clone(),
                        func,
                        field,
                        slot: None,
                    });
                }
                Err(message) => self.err(key, message),
            }
        }
        aggregates
    }
}

/// Parses `func(field)` / `count()`; the error says what is wrong and what would be right.
pub fn parse_aggregate(expr: &str) -> Result<(AggFunc, Option<String>), String> {
    let form = "expected `function(field)` such as `sum(bid)`, or `count()`";
    // count() counts records; count(field) the records whose field is present and not null.
    let text = expr.trim();
    let (func, rest) = text
        .split_once('(')
        .ok_or_else(|| format!("`{expr}` is not an aggregate: {form}"))?;
    let arg = rest
        .strip_suffix(')')
        .ok_or_else(|| format!("`{expr}` is not an aggregate: {form}"))?
        .trim();
    let func = func.trim();
    let known = "count(), count(field), sum(field), min(field), max(field), avg(field), count_distinct(field), approx_count_distinct(field)";
    let f = match func {
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        "avg" => AggFunc::Avg,
        "count_distinct" => AggFunc::CountDistinct,
        "approx_count_distinct" => AggFunc::ApproxCountDistinct,
        _ => {
            let hint = suggest::hint(func, AGG_FUNCTIONS);
            return Err(format!(
                "unknown aggregate function `{func}` in `{expr}`; known functions: {known}{hint}"
            ));
        }
    };
    if arg.contains(',') {
        return Err(format!(
            "`{func}` takes {} in `{expr}`",
            if f == AggFunc::Count {
                "no field or one"
            } else {
                "exactly one field"
            }
        ));
    }
    if arg.contains(|c: char| c == '(' || c == ')' || c.is_whitespace()) {
        return Err(format!("`{arg}` in `{expr}` is not a field name"));
    }
    match (f, arg.is_empty()) {
        (AggFunc::Count, true) => Ok((f, None)),
        (_, true) => Err(format!("`{func}` needs a field: write `{func}(field)`")),
        (_, false) => Ok((f, Some(arg.to_string()))),
    }
}

/// `Count(), Sum(bid)`: what an operator's state layout depends on, in order.
pub fn signature(aggs: &[AggPlan]) -> String {
    let each: Vec<String> = aggs
        .iter()
        .map(|a| {
            format!(
                "{:?}({})",
                a.func,
                a.field.as_ref().map_or("", FieldPath::as_str)
            )
        })
        .collect();
    each.join(", ")
}

/// `n = Count(), s = Sum(bid)`: as `explain` shows them.
pub fn describe(aggs: &[AggPlan]) -> String {
    let each: Vec<String> = aggs
        .iter()
        .map(|a| {
            let f = a.field.as_ref().map_or("", FieldPath::as_str);
            format!("{} = {:?}({f})", a.name, a.func)
        })
        .collect();
    each.join(", ")
}

/// The aggregates that cannot take a value back, each with its expression as written.
pub fn unretractable<'a>(
    aggs: &'a [AggPlan],
    written: &'a Aggregates,
) -> impl Iterator<Item = (&'a AggPlan, &'a str)> + 'a {
    aggs.iter().filter(|a| !a.func.takes_back()).map(move |a| {
        let expr = written.0.iter().find(|(n, _)| *n == a.name);
        (a, expr.map_or("", |(_, e)| e.as_str()))
    })
}
