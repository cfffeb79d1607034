//! Errors of the expression language: [`ExprError`] when compiling, [`EvalError`] when
//! evaluating, [`RecordError`] when a record cannot give a field's value.
//!
//! Both expression errors render the same way: the reason, then the line of the expression with a
//! caret under the 1-based column it blames.

use std::fmt;
use std::sync::Arc;

use super::ast::FieldPath;

/// What kind of compile-time error an [`ExprError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprErrorKind {
    Syntax,
    UnknownFunction,
    Arity,
    Type,
    /// A constant part of the expression always fails (`1 / 0`, an out-of-range literal).
    Constant,
}

/// An expression that does not compile, with the place to blame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}\n{}", Caret { text, line: *line, column: *column })]
pub struct ExprError {
    pub kind: ExprErrorKind,
    pub message: String,
    /// The whole expression text.
    pub text: String,
    /// 1-based line of the blamed place.
    pub line: usize,
    /// 1-based column (in characters) of the blamed place within its line.
    pub column: usize,
}

impl ExprError {
    pub(super) fn new(kind: ExprErrorKind, text: &str, pos: usize, message: String) -> Self {
        let (line, column) = line_column(text, pos);
        Self {
            kind,
            message,
            text: text.to_owned(),
            line,
            column,
        }
    }
}

/// Why a field's value could not be read from a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("the record is not valid JSON at byte {offset}: {what}")]
    Malformed { offset: usize, what: &'static str },
    #[error("the value is {kind}; expressions read only null, booleans, numbers and strings")]
    NotScalar { kind: &'static str },
    #[error("the number `{text}` does not fit a decimal exactly (at most 28 fraction digits and 28 digits in all)")]
    Number { text: String },
}

/// Why evaluating an expression failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalReason {
    #[error("`{op}` needs {expected}, got {found}")]
    Type {
        op: &'static str,
        expected: &'static str,
        found: &'static str,
    },
    #[error("`{op}` cannot compare {left} with {right}")]
    Incomparable {
        op: &'static str,
        left: &'static str,
        right: &'static str,
    },
    #[error("integer overflow in `{op}`")]
    IntOverflow { op: &'static str },
    #[error("decimal overflow in `{op}`")]
    DecimalOverflow { op: &'static str },
    #[error("division by zero")]
    DivisionByZero,
    #[error("unknown time unit `{0}` (expected 'second', 'minute', 'hour' or 'day')")]
    TimeUnit(String),
    #[error("timestamp {0} ms is outside the years 0000 to 9999")]
    TimeRange(i64),
    #[error("date pattern `{0}`: expected the letters y, M, d, H, m, s, S (up to SSS) and 'quoted text'")]
    DatePattern(String),
    #[error("`round` digits must be between 0 and 28, got {0}")]
    RoundDigits(i64),
    #[error("cannot read the field: {0}")]
    Record(RecordError),
    #[error("`{op}`: {why}")]
    Invalid { op: &'static str, why: String },
    #[error("`{op}`: {text:?} is not {expected}")]
    Cast {
        op: &'static str,
        text: String,
        expected: &'static str,
    },
}

/// An expression that failed on one record. Boxed, so `eval`'s `Result` stays small on the hot
/// path; read it through the accessors.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.0)]
pub struct EvalError(Box<EvalErrorDetail>);

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}{}\n{}", FieldNote(field.as_ref()), Caret { text, line: *line, column: *column })]
struct EvalErrorDetail {
    reason: EvalReason,
    field: Option<FieldPath>,
    text: Arc<str>,
    line: usize,
    column: usize,
}

impl EvalError {
    pub(super) fn new(
        reason: EvalReason,
        field: Option<FieldPath>,
        text: &Arc<str>,
        pos: usize,
    ) -> Self {
        let (line, column) = line_column(text, pos);
        let text = Arc::clone(text);
        Self(Box::new(EvalErrorDetail {
            reason,
            field,
            text,
            line,
            column,
        }))
    }

    /// Why it failed.
    pub fn reason(&self) -> &EvalReason {
        &self.0.reason
    }

    /// The field the offending operand was read from, when it was a field.
    pub fn field(&self) -> Option<&FieldPath> {
        self.0.field.as_ref()
    }

    /// The whole expression text (shared with the program, so errors are cheap to build).
    pub fn text(&self) -> &str {
        &self.0.text
    }

    /// 1-based line of the blamed place.
    pub fn line(&self) -> usize {
        self.0.line
    }

    /// 1-based column (in characters) of the blamed place within its line.
    pub fn column(&self) -> usize {
        self.0.column
    }
}

struct FieldNote<'a>(Option<&'a FieldPath>);

impl fmt::Display for FieldNote<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, " (in field `{path}`)"),
            None => Ok(()),
        }
    }
}

/// Two lines: the blamed line of `text` indented by two spaces, and a caret under `column`.
struct Caret<'a> {
    text: &'a str,
    line: usize,
    column: usize,
}

impl fmt::Display for Caret<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = self.text.lines().nth(self.line - 1).unwrap_or("");
        writeln!(f, "  {line}")?;
        f.write_str("  ")?;
        // Keep tabs so the caret lines up with tab-indented text.
        for c in line.chars().take(self.column - 1) {
            f.write_str(if c == '\t' { "\t" } else { " " })?;
        }
        f.write_str("^")
    }
}

/// 1-based line and column (in characters) of byte offset `pos` in `text`.
pub(super) fn line_column(text: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(text.len());
    let before = text.get(..pos).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}
