//! Column types as far as sluice needs them: which values are text, integers, exact decimals or
//! timestamps, so that output columns are written as Flink's JSON format writes them.

use sqlparser::tokenizer::{Span, Token, TokenWithSpan};

use super::error::SqlError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlType {
    String,
    Boolean,
    /// TINYINT, SMALLINT, INT, BIGINT.
    Integer,
    /// FLOAT, DOUBLE.
    Float,
    Decimal {
        precision: u32,
        scale: u32,
    },
    /// TIMESTAMP(p): in records as epoch milliseconds (a window's bounds), written as
    /// `yyyy-MM-dd HH:mm:ss[.fff]`.
    Timestamp,
    /// TIMESTAMP_LTZ(p) / TIMESTAMP(p) WITH LOCAL TIME ZONE.
    TimestampLtz,
    /// DATE, TIME, ROW, ARRAY, MAP and others: passed through as the JSON value they are.
    Other(String),
    /// A computed column: its type is its expression's.
    Computed,
}

impl SqlType {
    /// Reads a type from its tokens (`DECIMAL ( 10 , 2 )`, `ROW < a INT >`, ...).
    pub fn parse(tokens: &[TokenWithSpan], at: Span) -> Result<SqlType, SqlError> {
        let words: Vec<String> = tokens
            .iter()
            .map(|t| match &t.token {
                Token::Word(w) => w.value.to_ascii_uppercase(),
                other => other.to_string(),
            })
            .collect();
        let Some(head) = words.first() else {
            return Err(SqlError::span(at, "expected the column's type"));
        };
        let numbers: Vec<u32> = tokens
            .iter()
            .filter_map(|t| match &t.token {
                Token::Number(n, _) => n.parse().ok(),
                _ => None,
            })
            .collect();
        let ltz = words.windows(3).any(|w| w == ["LOCAL", "TIME", "ZONE"]);
        Ok(match head.as_str() {
            "STRING" | "VARCHAR" | "CHAR" => SqlType::String,
            "BOOLEAN" => SqlType::Boolean,
            "TINYINT" | "SMALLINT" | "INT" | "INTEGER" | "BIGINT" => SqlType::Integer,
            "FLOAT" | "DOUBLE" | "REAL" => SqlType::Float,
            "DECIMAL" | "DEC" | "NUMERIC" => SqlType::Decimal {
                precision: numbers.first().copied().unwrap_or(10),
                scale: numbers.get(1).copied().unwrap_or(0),
            },
            "TIMESTAMP" if ltz => SqlType::TimestampLtz,
            "TIMESTAMP" => SqlType::Timestamp,
            "TIMESTAMP_LTZ" => SqlType::TimestampLtz,
            "DATE" | "TIME" | "ROW" | "ARRAY" | "MAP" | "MULTISET" | "BYTES" | "BINARY" | "VARBINARY" => {
                SqlType::Other(words.join(" "))
            }
            other => {
                return Err(SqlError::span(
                    tokens[0].span,
                    format!("unknown type `{other}` (expected STRING, VARCHAR, BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p, s), TIMESTAMP(3), TIMESTAMP_LTZ(3), ROW<...>, ...)"),
                ))
            }
        })
    }

    /// The type a parsed `CAST(x AS type)` names.
    pub fn of_data_type(dt: &sqlparser::ast::DataType, at: Span) -> Result<SqlType, SqlError> {
        let text = dt.to_string();
        let tokens = sqlparser::tokenizer::Tokenizer::new(&super::lex::FlinkDialect, &text)
            .tokenize_with_location()
            .map_err(|e| SqlError::span(at, e.message))?;
        let tokens: Vec<TokenWithSpan> = tokens
            .into_iter()
            .filter(|t| !matches!(t.token, Token::Whitespace(_)))
            .map(|t| TokenWithSpan::new(t.token, at))
            .collect();
        SqlType::parse(&tokens, at)
    }

    pub fn is_time(&self) -> bool {
        matches!(self, SqlType::Timestamp | SqlType::TimestampLtz)
    }
}
