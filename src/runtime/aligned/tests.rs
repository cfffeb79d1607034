use super::*;
use crate::runtime::schedule::Schedule;

fn part(chunks: Option<u64>, drift: Option<i64>) -> AlignedPart {
    AlignedPart {
        chunks,
        max_out_of_orderness_ms: 0,
        max_drift_ms: drift,
    }
}

/// Walks the order chunk by chunk, reporting each chunk's event time as `time(part, k)` right
/// after it is handed out (as if production were instant); returns the chunks in order.
fn walk(o: &AlignedOrder, time: impl Fn(u16, u64) -> i64, max: u64) -> Vec<(u16, u64)> {
    let mut out = Vec::new();
    for seq in 0..max {
        match o.chunk(seq) {
            Next::Chunk(p, k) => {
                o.finished(seq, time(p, k));
                o.received(0, seq + 1);
                out.push((p, k));
            }
            Next::End => break,
            Next::Wait | Next::Pad => {
                panic!("chunk {seq} waits although every earlier chunk reported")
            }
        }
    }
    out
}

#[test]
fn without_drift_it_is_the_fixed_round_robin() {
    for counts in [
        vec![Some(3), Some(1), Some(0), Some(2)],
        vec![Some(5)],
        vec![Some(2), Some(7), Some(7)],
    ] {
        let o = AlignedOrder::new(counts.iter().map(|&c| part(c, None)).collect(), 1);
        let got = walk(&o, |_, k| k as i64 * 1000, 1000);
        let s = Schedule::new(&counts);
        let want: Vec<_> = (0..1000).map_while(|q| s.chunk(q)).collect();
        assert_eq!(got, want);
        assert_eq!(o.total(), s.total());
    }
}

#[test]
fn a_fast_partition_waits_for_the_slow_one() {
    // Partition 0 covers 10 s of event time per chunk, partition 1 only 1 s; drift 20 s.
    let o = AlignedOrder::new(
        vec![part(Some(20), Some(20_000)), part(Some(200), Some(20_000))],
        1,
    );
    let time = |p: u16, k: u64| (k as i64 + 1) * if p == 0 { 10_000 } else { 1_000 };
    let got = walk(&o, time, 10_000);
    assert_eq!(got.len(), 220, "every chunk is read exactly once");
    let mut ends = [0i64; 2];
    for &(p, k) in &got {
        ends[p as usize] = time(p, k);
        if ends[1] < 200_000 {
            // While both run: the fast one is never more than the drift plus LAG of its chunks
            // (decided before the slow one's newest chunks reported) plus one chunk ahead.
            assert!(
                ends[0] - ends[1] <= 20_000 + (LAG as i64 + 1) * 10_000 + 1_000,
                "drift {} at {:?}",
                ends[0] - ends[1],
                (p, k)
            );
        }
    }
    assert!(o.paused[0].load(Ordering::Relaxed) > 100);
    assert_eq!(o.paused[1].load(Ordering::Relaxed), 0);
    assert_eq!(o.total(), Some(220));
    // Without alignment the fast partition would finish after 20 rounds, 180 s ahead.
    let free = AlignedOrder::new(vec![part(Some(20), None), part(Some(200), None)], 1);
    let first_20: Vec<_> = walk(&free, time, 40);
    assert!(first_20.iter().filter(|(p, _)| *p == 0).count() == 20);
}

#[test]
fn an_unaligned_partition_is_never_paused_nor_holds_others() {
    let o = AlignedOrder::new(vec![part(Some(10), None), part(Some(10), Some(1_000))], 1);
    // The unaligned partition 0 is far behind in event time; partition 1 runs freely.
    let got = walk(&o, |p, k| if p == 0 { 0 } else { k as i64 * 60_000 }, 100);
    assert_eq!(got.len(), 20);
    assert_eq!(o.paused[1].load(Ordering::Relaxed), 0);
}

#[test]
fn a_round_waits_for_chunks_lag_rounds_back() {
    let o = AlignedOrder::new(vec![part(None, Some(1_000)), part(None, Some(1_000))], 2);
    // Decide LAG rounds without any report: they depend on nothing.
    let firsts = LAG * 2;
    for seq in 0..firsts {
        assert!(matches!(o.chunk(seq), Next::Chunk(..)), "chunk {seq}");
    }
    assert_eq!(o.chunk(firsts), Next::Wait);
    o.finished(0, 5);
    assert_eq!(
        o.chunk(firsts),
        Next::Wait,
        "round 0 has one chunk still out"
    );
    o.finished(1, 7);
    assert!(matches!(o.chunk(firsts), Next::Chunk(..)));
}

#[test]
fn a_checkpointed_order_continues_the_same() {
    let mk = || {
        AlignedOrder::new(
            vec![
                part(Some(30), Some(5_000)),
                part(Some(90), Some(5_000)),
                part(None, None),
            ],
            2,
        )
    };
    let time = |p: u16, k: u64| (k as i64 + 1) * [7_000, 2_000, 1_000][p as usize];
    let whole = mk();
    let want = walk(&whole, time, 150);
    // Stop after 61 chunks with the next few handed out but not reported, encode, and resume.
    let a = mk();
    let head = walk(&a, time, 61);
    for seq in 61..64 {
        assert!(matches!(a.chunk(seq), Next::Chunk(..)));
    }
    let mut e = Enc::default();
    a.encode(&mut e);
    let b = mk();
    b.decode(&mut Dec::new(&e.bytes)).unwrap();
    let mut got = head;
    for seq in 61..150 {
        let Next::Chunk(p, k) = b.chunk(seq) else {
            panic!("chunk {seq} after restore")
        };
        b.finished(seq, time(p, k));
        got.push((p, k));
    }
    assert_eq!(got, want);
    // A checkpoint of another job's partitions is refused.
    let other = AlignedOrder::new(vec![part(Some(1), Some(1))], 1);
    assert!(other.decode(&mut Dec::new(&e.bytes)).is_err());
}

#[test]
fn old_rounds_are_dropped_once_every_shard_is_past_them() {
    let o = AlignedOrder::new(vec![part(None, Some(1_000))], 2);
    for seq in 0..1000 {
        let Next::Chunk(..) = o.chunk(seq) else {
            panic!()
        };
        o.finished(seq, seq as i64);
        o.received(0, seq + 1);
        o.received(1, seq + 1);
    }
    assert!(o.lock().rounds.len() <= LAG as usize + 2);
}
