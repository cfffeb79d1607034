//! Flink's built-in functions (`flink_functions.tsv`: every SQL form of Flink 2.3's
//! `docs/data/sql_functions.yml`, the window and time-attribute functions of its query pages) and
//! sluice's status for each: supported, supported with a stated difference, refused with its
//! reason, or not supported yet. `sluice functions` prints it and README's table is generated from
//! it; every function marked supported carries a probe, an expression the SQL front end must
//! compile (`tests`), so the table cannot claim what the compiler refuses.

mod status;

use std::fmt::Write as _;

pub use status::Status;

/// One documented SQL form of a Flink function.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: &'static str,
    pub family: &'static str,
    pub syntax: &'static str,
    pub deterministic: bool,
}

const TSV: &str = include_str!("flink_functions.tsv");

/// Every documented form, in the order of Flink's documentation.
pub fn functions() -> Vec<Function> {
    TSV.lines()
        .skip(1)
        .filter_map(|line| {
            let mut cols = line.split('\t');
            Some(Function {
                name: cols.next()?,
                family: cols.next()?,
                syntax: cols.next()?,
                deterministic: cols.next()? == "yes",
            })
        })
        .collect()
}

/// Sluice's status for one form.
pub fn status_of(f: &Function) -> Status {
    status::lookup(f.name, f.syntax)
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The table in Markdown, one row per form: README's "Flink's built-in functions".
pub fn markdown() -> String {
    let all = functions();
    let mut counts = [0usize; 4];
    let mut rows = String::new();
    for f in &all {
        let st = status_of(f);
        counts[st.rank()] += 1;
        let _ = writeln!(
            rows,
            "| {} | {} | `{}` | {} |",
            f.family,
            cell(f.name),
            cell(f.syntax),
            cell(&st.describe())
        );
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} forms: {} supported, {} supported with a difference, {} refused with a reason, {} not supported yet.\n",
        all.len(),
        counts[0],
        counts[1],
        counts[2],
        counts[3]
    );
    out.push_str("| Family | Function | Flink's syntax | sluice |\n|---|---|---|---|\n");
    out.push_str(&rows);
    out
}

/// The table as plain text for a terminal (`sluice functions`), optionally one family only.
pub fn text(family: Option<&str>) -> String {
    let mut out = String::new();
    for f in functions() {
        if family.is_some_and(|fam| !fam.eq_ignore_ascii_case(f.family)) {
            continue;
        }
        let _ = writeln!(
            out,
            "{:<12} {:<28} {:<60} {}",
            f.family,
            f.name,
            f.syntax,
            status_of(&f).describe()
        );
    }
    out
}

#[cfg(test)]
mod tests;
