//! Property: any arrival order within the out-of-orderness bound gives the same final window
//! values as the same events sorted by time, and both equal the reference model's — with
//! `hot_keys` off, salt or auto alike.

mod common;

use common::*;
use proptest::prelude::*;

const OOO: i64 = 2_000;

/// Events at strictly increasing even slots, each `ts = slot - jitter` with jitter < OOO: every
/// event is then strictly inside the bound of all earlier ones (max earlier ts - ts < OOO).
fn in_bound_events(seed: u64, n: usize) -> Vec<(i64, String)> {
    let mut g = Gen::new(n, OOO);
    g.base = BASE + 30_000;
    g.step_max = 60;
    g.keys = 5;
    g.even_ts = true;
    gen_lines(seed, &g)
}

/// Swaps neighbours at random wherever the result stays within the bound, `rounds` passes.
fn shuffle_within_bound(events: &mut [(i64, String)], seed: u64, rounds: usize) -> usize {
    let mut rng = common::Rng::new(seed);
    let mut swaps = 0;
    for _ in 0..rounds {
        let mut max_before = i64::MIN;
        for i in 0..events.len().saturating_sub(1) {
            let (a, b) = (events[i].0, events[i + 1].0);
            // After the swap b comes first (its prefix only shrinks) and a must stay in bound of b.
            if rng.chance(500) && max_before.max(b) - a < OOO {
                events.swap(i, i + 1);
                swaps += 1;
            }
            max_before = max_before.max(events[i].0);
        }
    }
    swaps
}

fn in_bound(events: &[(i64, String)]) -> bool {
    let mut max = i64::MIN;
    events.iter().all(|(ts, _)| {
        let ok = max == i64::MIN || max - ts < OOO;
        max = max.max(*ts);
        ok
    })
}

fn window(kind: u8) -> Win {
    match kind {
        0 => Win::Tumbling { size: 10_000 },
        1 => Win::Sliding {
            size: 10_000,
            slide: 5_000,
        },
        2 => Win::Cumulative {
            step: 5_000,
            max_size: 20_000,
        },
        // Odd gap with even timestamps: never exactly `gap` apart.
        _ => Win::Session { gap: 3_001 },
    }
}

const CHUNKS: [usize; 4] = [64, 333, 4_096, 1 << 20];
const RINGS: [usize; 3] = [16, 256, 8_192];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn arrival_order_within_bound_does_not_change_results(
        seed in any::<u64>(),
        n in 200usize..1_500,
        kind in 0u8..4,
        shards in 1usize..=3,
        chunk in 0usize..CHUNKS.len(),
        ring in 0usize..RINGS.len(),
        rounds in 1usize..6,
        hot in 0usize..3,
    ) {
        let sorted_events = {
            let mut e = in_bound_events(seed, n);
            e.sort_by_key(|(ts, _)| *ts);
            e
        };
        let mut shuffled = sorted_events.clone();
        shuffled.sort_by_key(|(ts, _)| *ts);
        let swaps = shuffle_within_bound(&mut shuffled, seed ^ 0xA5A5, rounds);
        prop_assert!(in_bound(&shuffled), "the shuffle left the bound");
        prop_assert!(swaps > 0);

        let job = Job::clicks(window(kind), OOO, 0);
        let text = |e: &[(i64, String)]| file_of(&e.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>());
        let (shuffled_text, sorted_text) = (text(&shuffled), text(&sorted_events));
        let m = model(&job, &[&shuffled_text]);
        let m_sorted = model(&job, &[&sorted_text]);
        prop_assert!(m.late.is_empty() && m.refires == 0 && m.ambiguous_session_merges == 0);
        prop_assert_eq!(final_rows(&m.rows), final_rows(&m_sorted.rows), "model: order changed results");

        let dir = tempfile::tempdir().expect("tempdir");
        // Two-phase aggregation must not change results either (sessions cannot take it).
        let v = match (hot, kind) {
            (_, 3) | (0, _) => rt(shards, RINGS[ring], CHUNKS[chunk]),
            (1, _) => rt(shards, RINGS[ring], CHUNKS[chunk]).hot("{ mode = \"salt\" }"),
            _ => rt(shards, RINGS[ring], CHUNKS[chunk]).hot("{ mode = \"auto\", threshold = 0.1 }"),
        };
        let f1 = input_file(dir.path(), "shuffled.ndjson", &shuffled_text);
        let f2 = input_file(dir.path(), "sorted.ndjson", &sorted_text);
        let a = run_job(dir.path(), &job, v, &f1.to_string_lossy());
        let b = run_job(dir.path(), &job, v, &f2.to_string_lossy());
        assert_final_match(&job, &a.out, &m.rows, &format!("shuffled {v:?} {:?}", job.window));
        assert_final_match(&job, &b.out, &m.rows, &format!("sorted {v:?} {:?}", job.window));
        prop_assert!(a.late.is_empty() && b.late.is_empty() && a.dead.is_empty() && b.dead.is_empty());
    }
}
