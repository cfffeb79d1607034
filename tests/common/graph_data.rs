//! The input files of the graph tests: records of several kinds in one file (filters route the
//! kinds to operators), out of order within the watermark bound, with records behind it, exact
//! copies, retries (an id again, later) and null keys; every time distinct except copies, so
//! that no order-dependent tie can decide a result.

use super::{Rng, BASE};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// The source's `max_out_of_orderness` the files are shaped for.
pub const OOO: i64 = 2_000;

/// The shape of a test file: `n` records of the given kinds (by weight) over keys `k0..`, each in
/// per-mille: behind the watermark by up to `late_by` ms, an exact copy of a recent record, a
/// retry (a recent record's id and key again, later), or a null key.
pub struct Mix {
    pub kinds: &'static [(&'static str, i64)],
    pub n: usize,
    pub keys: i64,
    pub late: i64,
    pub late_by: i64,
    pub dups: i64,
    pub retries: i64,
    pub retry_kinds: &'static [&'static str],
    pub nulls: i64,
}

pub const MIX: Mix = Mix {
    kinds: &[("a", 1)],
    n: 600,
    keys: 3,
    late: 60,
    late_by: 6_000,
    dups: 40,
    retries: 40,
    retry_kinds: &["a", "b"],
    nulls: 30,
};

/// Records `{"kind","id","k","ts","v"}`: every time distinct except exact copies, every
/// record not meant to be late within the bound of all earlier ones.
pub fn records(seed: u64, mix: &Mix) -> String {
    let mut rng = Rng::new(seed);
    let total: i64 = mix.kinds.iter().map(|(_, w)| w).sum();
    let mut lines: Vec<String> = Vec::new();
    let mut recent: Vec<(String, Value)> = Vec::new();
    let mut used = BTreeSet::new();
    let (mut slot, mut max) = (BASE + 5_000, i64::MIN);
    // A first version of every key for the tables (kinds p and q), so that no input row behind
    // the watermark comes before any version (what happens then is not specified).
    for (j, (kind, _)) in mix
        .kinds
        .iter()
        .filter(|(k, _)| ["p", "q"].contains(k))
        .enumerate()
    {
        for key in 0..mix.keys {
            let ts = BASE + 100 * j as i64 + key;
            used.insert(ts);
            max = max.max(ts);
            let r = json!({"kind": kind, "id": format!("{kind}-{key}"), "k": format!("k{key}"), "ts": ts, "v": 1 + key});
            lines.push(r.to_string());
        }
    }
    for i in 0..mix.n {
        slot += 20 + rng.below(180);
        if !recent.is_empty() && rng.chance(mix.dups) {
            let (line, _) = &recent[rng.below(recent.len() as i64) as usize];
            lines.push(line.clone());
            continue;
        }
        // Behind the watermark, but after the first versions; never with a null key (a late
        // temporal-join input without a key is not specified).
        let late = i > 20 && rng.chance(mix.late) && max - OOO > BASE + 1_000;
        let retry: Vec<&(String, Value)> = recent
            .iter()
            .filter(|(_, r)| mix.retry_kinds.iter().any(|k| r["kind"] == *k))
            .filter(|(_, r)| !late || !r["k"].is_null())
            .collect();
        let (kind, id, k) = if !retry.is_empty() && rng.chance(mix.retries) {
            let r = &retry[rng.below(retry.len() as i64) as usize].1;
            (r["kind"].clone(), r["id"].clone(), r["k"].clone())
        } else {
            let mut pick = rng.below(total);
            let kind = mix.kinds.iter().find(|(_, w)| {
                pick -= w;
                pick < 0
            });
            let kind = kind.map_or("a", |(k, _)| k);
            let k = if !late && rng.chance(mix.nulls) {
                Value::Null
            } else {
                json!(format!("k{}", rng.below(mix.keys)))
            };
            (json!(kind), json!(format!("{kind}{i}")), k)
        };
        let mut ts = if late {
            (max - OOO - rng.below(mix.late_by + 1)).max(BASE + 1_000)
        } else {
            slot - rng.below(OOO - 200)
        };
        while used.contains(&ts) {
            ts += if late { -1 } else { 1 };
        }
        used.insert(ts);
        max = max.max(ts);
        let r = json!({"kind": kind, "id": id, "k": k, "ts": ts, "v": 1 + rng.below(9)});
        let line = r.to_string();
        lines.push(line.clone());
        recent.push((line, r));
        if recent.len() > 12 {
            recent.remove(0);
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

pub fn mix(kinds: &'static [(&'static str, i64)]) -> Mix {
    Mix { kinds, ..MIX }
}
