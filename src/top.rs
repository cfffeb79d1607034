//! `sluice top`: a live terminal view of a running job, read from its `/metrics` endpoint once a
//! second: per shard events/s, busy / backpressured / idle share, watermark lag and ring fill, and
//! for the job late events, dead letters and checkpoint age. It only reads the endpoint; rates are
//! differences between two scrapes.

use std::collections::HashMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Samples by metric name: (labels, value).
type Samples = HashMap<String, Vec<(String, f64)>>;

/// Parses Prometheus text (what `/metrics` serves).
pub fn parse(text: &str) -> Samples {
    let mut out: Samples = HashMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(v) = value.parse::<f64>() else {
            continue;
        };
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (n, l.trim_end_matches('}')),
            None => (series, ""),
        };
        out.entry(name.to_string())
            .or_default()
            .push((labels.to_string(), v));
    }
    out
}

/// The value of `name` for `shard`, if published.
fn shard_value(s: &Samples, name: &str, shard: &str) -> Option<f64> {
    let want = format!("shard=\"{shard}\"");
    s.get(name)?
        .iter()
        .find(|(l, _)| *l == want)
        .map(|(_, v)| *v)
}

fn total(s: &Samples, name: &str) -> f64 {
    s.get(name).map_or(0.0, |v| v.iter().map(|(_, x)| x).sum())
}

/// One screen from two scrapes `dt` apart.
pub fn screen(prev: &Samples, cur: &Samples, dt: Duration) -> String {
    let secs = dt.as_secs_f64().max(1e-3);
    let mut shards: Vec<String> = cur
        .get("sluice_events_in_total")
        .map(|v| {
            v.iter()
                .filter_map(|(l, _)| {
                    l.strip_prefix("shard=\"")?
                        .strip_suffix('"')
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    shards.sort_by_key(|s| s.parse::<u64>().unwrap_or(u64::MAX));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>5} {:>12} {:>6} {:>8} {:>6} {:>14} {:>8}",
        "shard", "events/s", "busy", "backpr.", "idle", "watermark lag", "ring"
    );
    let rate = |name: &str, sh: &str| {
        let (a, b) = (shard_value(prev, name, sh), shard_value(cur, name, sh));
        match (a, b) {
            (Some(a), Some(b)) => (b - a).max(0.0) / secs,
            _ => 0.0,
        }
    };
    for sh in &shards {
        let lag = shard_value(cur, "sluice_watermark_lag_seconds", sh)
            .map_or("-".to_string(), |l| format!("{l:.1} s"));
        let _ = writeln!(
            out,
            "{:>5} {:>12.0} {:>5.0}% {:>7.0}% {:>5.0}% {:>14} {:>8}",
            sh,
            rate("sluice_events_in_total", sh),
            100.0 * rate("sluice_busy_seconds_total", sh),
            100.0 * rate("sluice_backpressured_seconds_total", sh),
            100.0 * rate("sluice_idle_seconds_total", sh),
            lag,
            shard_value(cur, "sluice_ring_events", sh).unwrap_or(0.0)
        );
    }
    let age = cur
        .get("sluice_checkpoint_age_seconds")
        .and_then(|v| v.first())
        .map_or("no checkpoints".to_string(), |(_, a)| {
            if *a < 0.0 {
                "none yet".to_string()
            } else {
                format!("{a:.1} s")
            }
        });
    let _ = writeln!(
        out,
        "late dropped {:.0}, dead letters {:.0}, results {:.0}; checkpoint age {age}; ready {}",
        total(cur, "sluice_late_events_dropped_total"),
        total(cur, "sluice_dead_letters_total"),
        total(cur, "sluice_results_emitted_total"),
        total(cur, "sluice_ready") == 1.0
    );
    out
}

/// Scrapes `address` every `every` and prints a screen, `iterations` times (forever if `None`).
pub fn run(address: &str, every: Duration, iterations: Option<u64>) -> std::io::Result<()> {
    let (_, body) = crate::api::get(address, "/metrics")?;
    let mut prev = parse(&body);
    let mut at = Instant::now();
    let mut n = 0;
    while iterations.is_none_or(|max| n < max) {
        std::thread::sleep(every);
        let (_, body) = crate::api::get(address, "/metrics")?;
        let cur = parse(&body);
        let now = Instant::now();
        // Clear the screen and go home only on a terminal; piped output stays plain.
        if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            print!("\x1b[2J\x1b[H");
        }
        println!("sluice top: {address}\n{}", screen(&prev, &cur, now - at));
        prev = cur;
        at = now;
        n += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_come_from_two_scrapes() {
        let a = parse("# TYPE sluice_events_in_total counter\nsluice_events_in_total{shard=\"0\"} 100\nsluice_busy_seconds_total{shard=\"0\"} 1\n");
        let b = parse("sluice_events_in_total{shard=\"0\"} 2100\nsluice_busy_seconds_total{shard=\"0\"} 2.5\nsluice_watermark_lag_seconds{shard=\"0\"} 3.25\nsluice_checkpoint_age_seconds 4\nsluice_ready 1\n");
        let s = screen(&a, &b, Duration::from_secs(2));
        assert!(s.contains("  1000 "), "2000 events in 2 s: {s}");
        assert!(s.contains("75%"), "1.5 s busy in 2 s: {s}");
        assert!(s.contains("3.2 s") || s.contains("3.3 s"), "{s}");
        assert!(s.contains("checkpoint age 4.0 s; ready true"), "{s}");
    }
}
