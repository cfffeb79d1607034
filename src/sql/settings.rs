//! `SET 'key' = 'value'`: the Flink configuration options a SQL script may set. Only those whose
//! meaning sluice has are accepted: `table.exec.state.ttl` bounds what a deduplication remembers,
//! `table.exec.source.idle-timeout` is the idle timeout of the sources read after it;
//! `table.exec.mini-batch.enabled` with `table.optimizer.agg-phase-strategy` turns on the
//! two-phase (local-global) group aggregation of hot keys;
//! a few that change nothing in sluice's results (parallelism, watermark emission interval, the
//! job's name) are accepted and ignored; any other is refused, so no setting is silently lost.

use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::{Compiler, SqlError};

/// Options that tune Flink's execution but not the result sluice computes.
const IGNORED: &[&str] = &[
    "parallelism.default",
    "table.exec.mini-batch.allow-latency",
    "table.exec.mini-batch.size",
    "table.optimizer.distinct-agg.split.enabled",
    "pipeline.name",
    "pipeline.auto-watermark-interval",
    "execution.runtime-mode",
    "sql-client.execution.result-mode",
];

impl Compiler {
    pub(super) fn set(&mut self, tokens: &[TokenWithSpan]) -> Result<(), SqlError> {
        let text = |t: &TokenWithSpan| match &t.token {
            Token::SingleQuotedString(s) => Some(s.clone()),
            Token::Word(w) => Some(w.value.clone()),
            _ => None,
        };
        let (Some(key_tok), Some(eq), Some(val_tok)) =
            (tokens.get(1), tokens.get(2), tokens.get(3))
        else {
            return Err(SqlError::span(
                tokens[0].span,
                "expected SET 'key' = 'value'",
            ));
        };
        let (Some(key), Some(value)) = (text(key_tok), text(val_tok)) else {
            return Err(SqlError::span(key_tok.span, "expected SET 'key' = 'value'"));
        };
        if eq.token != Token::Eq || tokens.len() != 4 {
            return Err(SqlError::span(
                eq.span,
                "expected SET 'key' = 'value' (quote a key or value with dots)",
            ));
        }
        match key.as_str() {
            "table.exec.state.ttl" => {
                let ms = flink_duration_ms(&value).ok_or_else(|| {
                    SqlError::span(val_tok.span, format!("`{value}` is not a duration (expected e.g. '10 min', '1 h', '30 s', '500 ms')"))
                })?;
                if ms <= 0 {
                    return Err(SqlError::span(val_tok.span, "table.exec.state.ttl 0 keeps state forever in Flink; sluice needs a positive bound"));
                }
                self.state_ttl = Some(ms);
                Ok(())
            }
            "table.exec.source.idle-timeout" => {
                let ms = flink_duration_ms(&value).filter(|ms| *ms > 0).ok_or_else(|| {
                    SqlError::span(val_tok.span, format!("`{value}`: expected a positive duration (sluice's sources always go idle after a timeout, 30 s by default)"))
                })?;
                if !self.sources.is_empty() {
                    return Err(SqlError::span(key_tok.span, "set table.exec.source.idle-timeout before the first query that reads a table"));
                }
                self.idle_timeout = Some(ms);
                Ok(())
            }
            "table.exec.mini-batch.enabled" => {
                self.two_phase.mini_batch = flag(&value)
                    .ok_or_else(|| SqlError::span(val_tok.span, "expected 'true' or 'false'"))?;
                Ok(())
            }
            "table.optimizer.agg-phase-strategy" => {
                self.two_phase.strategy = match value.to_ascii_uppercase().as_str() {
                    "AUTO" => AggPhase::Auto,
                    "ONE_PHASE" => AggPhase::OnePhase,
                    "TWO_PHASE" => AggPhase::TwoPhase,
                    _ => return Err(SqlError::span(val_tok.span, "expected AUTO, ONE_PHASE or TWO_PHASE")),
                };
                Ok(())
            }
            "execution.runtime-mode" if !value.eq_ignore_ascii_case("streaming") => Err(
                SqlError::span(val_tok.span, "sluice runs in streaming mode only (bounded inputs end the job)"),
            ),
            k if IGNORED.contains(&k) => Ok(()),
            _ => Err(SqlError::span(key_tok.span, format!("the option `{key}` is not supported (sluice takes table.exec.state.ttl, table.exec.source.idle-timeout, table.exec.mini-batch.enabled and table.optimizer.agg-phase-strategy, and ignores {}; set sluice's own options in the job's TOML)", IGNORED.join(", ")))),
        }
    }
}

/// Flink's local-global aggregation settings: `table.exec.mini-batch.enabled` and
/// `table.optimizer.agg-phase-strategy`.
#[derive(Debug, Default, Clone, Copy)]
pub struct TwoPhase {
    pub mini_batch: bool,
    pub strategy: AggPhase,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum AggPhase {
    #[default]
    Auto,
    OnePhase,
    TwoPhase,
}

impl TwoPhase {
    /// Whether Flink would split a group aggregate into a local and a global phase: only with
    /// mini-batch on (its local phase folds one mini-batch), unless the strategy says one phase.
    /// sluice then combines the groups it finds hot (`hot_keys = auto`): the same result, and
    /// the rest of the keys pay nothing.
    pub fn on(&self) -> bool {
        self.mini_batch && self.strategy != AggPhase::OnePhase
    }
}

/// A boolean option's text.
fn flag(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Flink's duration text (`10 min`, `1h`, `30 s`, `500 ms`, `2 d`; a bare number is
/// milliseconds) in milliseconds.
pub fn flink_duration_ms(text: &str) -> Option<i64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: i64 = t[..split].parse().ok()?;
    let unit = match t[split..].trim().to_ascii_lowercase().as_str() {
        "" | "ms" | "milli" | "millis" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "min" | "m" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => return None,
    };
    n.checked_mul(unit)
}
