//! The SQL front end's one error type: what is wrong, and where in the SQL text (line and column,
//! both from 1, as the SQL parser counts them).

use sqlparser::tokenizer::{Location, Span};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct SqlError {
    pub line: u64,
    pub column: u64,
    pub message: String,
}

impl SqlError {
    pub fn at(loc: Location, message: impl Into<String>) -> SqlError {
        SqlError {
            line: loc.line.max(1),
            column: loc.column.max(1),
            message: message.into(),
        }
    }

    pub fn span(span: Span, message: impl Into<String>) -> SqlError {
        SqlError::at(span.start, message)
    }

    /// A parser error: sqlparser writes the position into its message (`... at Line: 3, Column:
    /// 14`); it is moved to the front so every error reads the same way.
    pub fn parser(err: sqlparser::parser::ParserError, fallback: Location) -> SqlError {
        let text = match err {
            sqlparser::parser::ParserError::TokenizerError(t)
            | sqlparser::parser::ParserError::ParserError(t) => t,
            sqlparser::parser::ParserError::RecursionLimitExceeded => {
                "the statement nests too deeply".to_string()
            }
        };
        match text.rsplit_once(" at Line: ") {
            Some((message, pos)) => {
                let mut parts = pos.split(", Column: ");
                let line = parts.next().and_then(|l| l.trim().parse().ok());
                let column = parts.next().and_then(|c| c.trim().parse().ok());
                match (line, column) {
                    (Some(line), Some(column)) => {
                        SqlError::at(Location::new(line, column), message)
                    }
                    _ => SqlError::at(fallback, text.clone()),
                }
            }
            None => SqlError::at(fallback, text),
        }
    }
}
