//! SQL hints for sluice's own options, where Flink SQL has none: `/*+ OPTIONS('sluice.hot_keys' =
//! 'auto') */` written right after a table's name, as Flink's dynamic table options are. They
//! set the window of the window table function that reads the table:
//! - `sluice.hot_keys` = `off` | `salt` | `auto`, with `sluice.hot_keys.salt` and
//!   `sluice.hot_keys.threshold` (README "Hot keys");
//! - `sluice.allowed_lateness` = a duration (`'10 s'`): Flink's window table functions drop every
//!   late row, sluice then re-fires a window for rows up to this late (its results become
//!   updates);
//! - `sluice.late_events` = a table: the rows too late for the window are written to that sink
//!   table, as they were read.
//!
//! Other options in a hint (Flink's own dynamic table options) are refused for now: set them in
//! the table's `WITH`. `sluice export flink` removes these hints.

use sqlparser::tokenizer::{Span, Token, Tokenizer};

use super::error::SqlError;
use super::lex::FlinkDialect;
use super::settings::flink_duration_ms;
use crate::config::{HotKeyMode, HotKeysConfig};

/// One `OPTIONS` hint, and the table name it follows.
#[derive(Debug, Clone)]
pub struct Hint {
    pub table: String,
    pub options: Vec<(String, String)>,
    pub span: Span,
}

/// What the hints on a table set on the window reading it.
#[derive(Debug, Default)]
pub struct WindowHints {
    /// The window's `hot_keys`.
    pub hot_keys: Option<HotKeysConfig>,
    pub lateness_ms: Option<i64>,
    /// The sink table the late rows go to.
    pub late_table: Option<(String, Span)>,
}

/// Reads the text of a hint comment (after `/*`, starting with `+`).
pub fn parse(comment: &str, table: String, span: Span) -> Result<Hint, SqlError> {
    let body = comment.strip_prefix('+').unwrap_or(comment);
    let tokens = Tokenizer::new(&FlinkDialect, body)
        .tokenize()
        .map_err(|e| SqlError::span(span, format!("in this hint: {}", e.message)))?;
    let tokens: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect();
    let form = "expected /*+ OPTIONS('key' = 'value', ...) */";
    let Some((Token::Word(w), rest)) = tokens.split_first() else {
        return Err(SqlError::span(span, form));
    };
    if !w.value.eq_ignore_ascii_case("OPTIONS") {
        return Err(SqlError::span(
            span,
            format!(
                "the hint {} is not supported (sluice takes OPTIONS hints with sluice.* keys)",
                w.value
            ),
        ));
    }
    let (Some(Token::LParen), Some(Token::RParen)) = (rest.first(), rest.last()) else {
        return Err(SqlError::span(span, form));
    };
    let mut options = Vec::new();
    for pair in rest[1..rest.len() - 1].split(|t| *t == Token::Comma) {
        match pair {
            [Token::SingleQuotedString(k), Token::Eq, Token::SingleQuotedString(v)] => {
                options.push((k.clone(), v.clone()));
            }
            _ => return Err(SqlError::span(span, form)),
        }
    }
    let hint = Hint {
        table,
        options,
        span,
    };
    // Checked here, where it is written, even if it then applies to nothing.
    window_settings(std::slice::from_ref(&hint))?;
    Ok(hint)
}

/// The window settings the hints on `table` give.
pub fn window_settings(hints: &[Hint]) -> Result<WindowHints, SqlError> {
    let mut out = WindowHints::default();
    let mut hot: Option<HotKeysConfig> = None;
    for h in hints {
        for (k, v) in &h.options {
            let bad = |what: &str| SqlError::span(h.span, format!("'{k}' = '{v}': {what}"));
            match k.as_str() {
                "sluice.hot_keys" => {
                    hot.get_or_insert_with(HotKeysConfig::default).mode = match v.as_str() {
                        "off" => HotKeyMode::Off,
                        "salt" => HotKeyMode::Salt,
                        "auto" => HotKeyMode::Auto,
                        _ => return Err(bad("expected off, salt or auto")),
                    };
                }
                "sluice.hot_keys.salt" => {
                    let n: u32 = v.parse().map_err(|_| bad("expected a number of shards"))?;
                    hot.get_or_insert_with(HotKeysConfig::default).salt = Some(n);
                }
                "sluice.hot_keys.threshold" => {
                    let t: f64 = v.parse().map_err(|_| bad("expected a share, e.g. 0.05"))?;
                    if !t.is_finite() {
                        return Err(bad("expected a share, e.g. 0.05"));
                    }
                    hot.get_or_insert_with(HotKeysConfig::default).threshold = Some(t);
                }
                "sluice.allowed_lateness" => {
                    let ms = flink_duration_ms(v)
                        .ok_or_else(|| bad("expected a duration, e.g. '10 s'"))?;
                    out.lateness_ms = Some(ms);
                }
                "sluice.late_events" => out.late_table = Some((v.clone(), h.span)),
                other if other.starts_with("sluice.") => {
                    return Err(bad("unknown sluice option (expected sluice.hot_keys, sluice.hot_keys.salt, sluice.hot_keys.threshold, sluice.allowed_lateness or sluice.late_events)"))
                }
                _ => {
                    return Err(bad(
                        "dynamic table options other than sluice.* are not supported yet; set them in the table's WITH",
                    ))
                }
            }
        }
    }
    out.hot_keys = hot;
    Ok(out)
}
