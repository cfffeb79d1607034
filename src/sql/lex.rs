//! Statements as token lists: the SQL text cut at top-level `;`, without whitespace and comments
//! (hints are kept aside, with the table name they follow),
//! and with the two Flink spellings the SQL parser lacks rewritten: a window table function's
//! `TABLE t` argument becomes `t`, and its `TABLE t PARTITION BY k` (or `(k1, k2)`) becomes
//! `t, PARTITION_BY(k)`.

use sqlparser::dialect::Dialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer, Whitespace};

use super::error::SqlError;
use super::hints::Hint;

/// The window table functions whose first argument is `TABLE name`.
pub const WINDOW_TVFS: [&str; 4] = ["TUMBLE", "HOP", "CUMULATE", "SESSION"];

/// The dialect the statements are read in: generic SQL with `FOR SYSTEM_TIME AS OF` (Flink's
/// temporal join syntax) allowed after a table name.
#[derive(Debug, Default)]
pub struct FlinkDialect;

impl Dialect for FlinkDialect {
    fn is_identifier_start(&self, ch: char) -> bool {
        ch.is_alphabetic() || ch == '_'
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        ch.is_alphanumeric() || ch == '_' || ch == '$'
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        ch == '`' || ch == '"'
    }
    fn supports_table_versioning(&self) -> bool {
        true
    }
    /// `COUNT(*) FILTER (WHERE ...)`, as Flink's SQL has it.
    fn supports_filter_during_aggregation(&self) -> bool {
        true
    }
}

/// One statement: its tokens (never empty) and the hints written in it.
pub struct Statement {
    pub tokens: Vec<TokenWithSpan>,
    pub hints: Vec<Hint>,
}

/// The statements of `sql`.
pub fn statements(sql: &str) -> Result<Vec<Statement>, SqlError> {
    let tokens = Tokenizer::new(&FlinkDialect, sql)
        .tokenize_with_location()
        .map_err(|e| SqlError::at(e.location, e.message))?;
    let mut out = Vec::new();
    let mut hints = Vec::new();
    let mut current: Vec<TokenWithSpan> = Vec::new();
    let mut depth = 0i64;
    for t in tokens {
        match &t.token {
            Token::Whitespace(Whitespace::MultiLineComment(c)) if c.starts_with('+') => {
                let table = match current.last().map(|p| &p.token) {
                    Some(Token::Word(w)) if w.keyword != Keyword::SELECT => Some(w),
                    _ => None,
                };
                let Some(w) = table else {
                    return Err(SqlError::span(
                        t.span,
                        "a hint goes right after a table's name (FROM t /*+ OPTIONS(...) */); query hints are not supported",
                    ));
                };
                hints.push(super::hints::parse(c, w.value.clone(), t.span)?);
                continue;
            }
            Token::Whitespace(_) => continue,
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::SemiColon if depth <= 0 => {
                if !current.is_empty() {
                    out.push((std::mem::take(&mut current), std::mem::take(&mut hints)));
                }
                depth = 0;
                continue;
            }
            _ => {}
        }
        current.push(t);
    }
    if !current.is_empty() {
        out.push((current, hints));
    }
    Ok(out
        .into_iter()
        .map(|(tokens, hints)| Statement {
            tokens: partition_args(unwrap_table_args(tokens)),
            hints,
        })
        .collect())
}

/// The name the rewritten `PARTITION BY` argument of a window table function is called by.
pub const PARTITION_BY: &str = "PARTITION_BY";

/// `TVF ( t PARTITION BY k` -> `TVF ( t , PARTITION_BY ( k )`; `PARTITION BY (a, b)` keeps its
/// parentheses.
fn partition_args(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len() + 4);
    let mut i = 0;
    while i < tokens.len() {
        let n = out.len();
        let at_partition = n >= 3
            && is_word(tokens.get(i), "PARTITION")
            && is_word(tokens.get(i + 1), "BY")
            && out[n - 2].token == Token::LParen
            && matches!(&out[n - 3].token, Token::Word(w)
                if WINDOW_TVFS.iter().any(|f| w.value.eq_ignore_ascii_case(f)));
        if !at_partition {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        }
        let span = tokens[i].span;
        let made = |token: Token| TokenWithSpan { token, span };
        out.push(made(Token::Comma));
        out.push(made(Token::make_word(PARTITION_BY, None)));
        i += 2;
        if tokens.get(i).map(|t| &t.token) == Some(&Token::LParen) {
            continue;
        }
        out.push(made(Token::LParen));
        if let Some(key) = tokens.get(i) {
            out.push(key.clone());
            i += 1;
        }
        out.push(made(Token::RParen));
    }
    out
}

/// `TUMBLE ( TABLE t` -> `TUMBLE ( t`.
fn unwrap_table_args(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    for t in tokens {
        let is_table = matches!(&t.token, Token::Word(w) if w.keyword == Keyword::TABLE);
        let n = out.len();
        let after_tvf = n >= 2
            && out[n - 1].token == Token::LParen
            && matches!(&out[n - 2].token, Token::Word(w)
                if WINDOW_TVFS.iter().any(|f| w.value.eq_ignore_ascii_case(f)));
        if is_table && after_tvf {
            continue;
        }
        out.push(t);
    }
    out
}

/// Whether `t` is the word `word` (any case, quoted or not).
pub fn is_word(t: Option<&TokenWithSpan>, word: &str) -> bool {
    matches!(t.map(|t| &t.token), Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// The statement's first tokens, upper-cased, for telling statements apart.
pub fn leading(tokens: &[TokenWithSpan], n: usize) -> Vec<String> {
    tokens
        .iter()
        .take(n)
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            other => other.to_string(),
        })
        .collect()
}
