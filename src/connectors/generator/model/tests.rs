//! Tests of the synthetic click model: events are a pure function of plan and index, fields and
//! event times stay in their configured ranges, the Zipf sampler matches theory, and the NDJSON
//! rendering parses back to the click's fields.

use super::*;

fn plan() -> GeneratorPlan {
    default_plan(None)
}

#[test]
fn click_is_a_pure_function_of_plan_and_index() {
    let a = ClickModel::new(&plan());
    let b = ClickModel::new(&plan());
    let forward: Vec<Click> = (0..10_000).map(|i| a.click(i)).collect();
    for i in (0..10_000u64).rev() {
        assert_eq!(b.click(i), forward[i as usize]);
    }
    let big = u64::MAX - 3;
    assert_eq!(a.click(big), b.click(big));
    let other = ClickModel::new(&GeneratorPlan { seed: 43, ..plan() });
    let same = (0..1000).filter(|&i| other.click(i) == a.click(i)).count();
    assert!(same < 5, "seed must matter: {same} identical clicks");
}

#[test]
fn fields_stay_in_range() {
    let p = GeneratorPlan {
        keys: 7,
        users: 3,
        ..plan()
    };
    let m = ClickModel::new(&p);
    let mut seen_bid = (i64::MAX, i64::MIN);
    for i in 0..200_000 {
        let c = m.click(i);
        assert!(c.ad_id < 7 && c.user_id < 3, "{c:?}");
        assert!((BID_MIN..=BID_MAX).contains(&c.bid), "{c:?}");
        seen_bid = (seen_bid.0.min(c.bid), seen_bid.1.max(c.bid));
    }
    assert_eq!(seen_bid, (BID_MIN, BID_MAX));
    assert_eq!(m.count(), None);
    assert_eq!(ClickModel::new(&default_plan(Some(5))).count(), Some(5));
}

#[test]
fn slot_time_is_exact_integer_math() {
    let m = ClickModel::new(&GeneratorPlan {
        events_per_second: 3,
        start_ms: -5,
        ..plan()
    });
    // 0, 333.3, 666.6, 1000, 1333.3 ms
    let slots: Vec<i64> = (0..5).map(|i| m.slot_ms(i)).collect();
    assert_eq!(slots, [-5, 328, 661, 995, 1328]);
    let fast = ClickModel::new(&GeneratorPlan {
        events_per_second: 2_500_000,
        ..plan()
    });
    assert_eq!(fast.slot_ms(2_499_999), defaults::START_MS + 999);
    assert_eq!(fast.slot_ms(2_500_000), defaults::START_MS + 1000);
    let i = (1u64 << 53) - 1;
    let m = ClickModel::new(&GeneratorPlan {
        events_per_second: 7,
        start_ms: 0,
        ..plan()
    });
    assert_eq!(m.slot_ms(i) as u128, (i as u128 * 1000) / 7);
    // Past u64::MAX / 1000 the u128 path must agree with exact arithmetic.
    let m = ClickModel::new(&GeneratorPlan {
        events_per_second: 1_000_000,
        start_ms: 0,
        ..plan()
    });
    let i = u64::MAX / 1000 + 12_345;
    assert_eq!(m.slot_ms(i) as u128, (i as u128 * 1000) / 1_000_000);
}

#[test]
fn event_times_respect_out_of_orderness_and_late_events_are_exact() {
    let p = GeneratorPlan {
        events_per_second: 5_000,
        out_of_orderness_ms: 300,
        late_fraction: 0.05,
        late_by_ms: 7_000,
        ..plan()
    };
    let m = ClickModel::new(&p);
    let n = 1_000_000u64;
    let (mut max_ts, mut late, mut max_jitter) = (p.start_ms - 300, 0u64, 0i64);
    for i in 0..n {
        let c = m.click(i);
        let slot = p.start_ms + (i * 1000 / 5_000) as i64;
        let jitter = slot - c.ts;
        if jitter == 7_000 {
            late += 1;
        } else {
            assert!((0..=300).contains(&jitter), "i={i} jitter={jitter}");
            assert!(
                max_ts - c.ts <= 300,
                "i={i} behind the running max by {}",
                max_ts - c.ts
            );
            max_jitter = max_jitter.max(jitter);
        }
        max_ts = max_ts.max(c.ts);
    }
    assert_eq!(max_jitter, 300, "jitter must reach its bound");
    let share = late as f64 / n as f64;
    assert!((share - 0.05).abs() < 0.002, "late share {share}");
    let none = ClickModel::new(&GeneratorPlan {
        late_fraction: 0.0,
        out_of_orderness_ms: 0,
        ..p
    });
    assert!((0..10_000).all(|i| none.click(i).ts == none.slot_ms(i)));
    let all = ClickModel::new(&GeneratorPlan {
        late_fraction: 1.0,
        ..p
    });
    assert!((0..10_000).all(|i| all.click(i).ts == all.slot_ms(i) - 7_000));
}

#[test]
fn celebrity_share_goes_to_ad_zero() {
    let keys = 1000;
    let p = GeneratorPlan {
        keys,
        zipf_exponent: 0.0,
        celebrity_share: 0.3,
        ..plan()
    };
    let m = ClickModel::new(&p);
    let n = 1_000_000;
    let zeros = (0..n).filter(|&i| m.click(i).ad_id == 0).count() as f64 / n as f64;
    // ad 0 gets the celebrity share plus its uniform share of the rest.
    let expect = 0.3 + 0.7 / keys as f64;
    assert!(
        (zeros - expect).abs() < 0.003,
        "ad-0 share {zeros}, expected {expect}"
    );
    let all = ClickModel::new(&GeneratorPlan {
        celebrity_share: 1.0,
        ..p
    });
    assert!((0..10_000).all(|i| all.click(i).ad_id == 0));
}

fn zipf_counts(n: u64, s: f64, samples: u64) -> Vec<u64> {
    let z = Zipf::new(n, s);
    let mut counts = vec![0u64; n as usize];
    for i in 0..samples {
        counts[z.sample(&mut IndexRng::new(mix64(7), i)) as usize] += 1;
    }
    counts
}

#[test]
fn zipf_matches_theoretical_frequencies() {
    let n = 1000u64;
    for s in [0.0, 0.8, 1.0, 1.2, 1.0 + 1e-12] {
        // Uniform ranks each expect only 1/1000 of the samples: take more to keep 4.5 sigma
        // under 5%.
        let samples = if s == 0.0 { 10_000_000 } else { 2_000_000 };
        let counts = zipf_counts(n, s, samples);
        let harmonic: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
        for rank in [0usize, 1, 9, 99] {
            let p = ((rank + 1) as f64).powf(-s) / harmonic;
            let expect = p * samples as f64;
            let sigma = (expect * (1.0 - p)).sqrt();
            let got = counts[rank] as f64;
            // 4.5 sigma, which is at most ~5% of the expectation for these parameters.
            assert!(
                4.5 * sigma / expect < 0.05 || rank == 99,
                "test too weak at s={s}"
            );
            assert!(
                (got - expect).abs() < 4.5 * sigma,
                "s={s} rank={rank}: got {got}, expected {expect:.0} (sigma {sigma:.0})"
            );
        }
    }
}

#[test]
fn zipf_edge_sizes() {
    assert!(zipf_counts(1, 1.0, 1000).iter().eq([1000u64].iter()));
    // n = 2, s = 1: p = (2/3, 1/3).
    let c = zipf_counts(2, 1.0, 300_000);
    assert!((c[0] as f64 / 300_000.0 - 2.0 / 3.0).abs() < 0.005, "{c:?}");
    // Steep exponent: nearly everything on rank 0, never out of range.
    let c = zipf_counts(10, 64.0, 10_000);
    assert_eq!(c[0], 10_000);
    // Bad exponents fall back to uniform instead of hanging or panicking.
    for s in [f64::NAN, -1.0, f64::INFINITY] {
        let c = zipf_counts(4, s, 40_000);
        assert!(
            c.iter().all(|&x| (9_000..11_000).contains(&x)),
            "s={s}: {c:?}"
        );
    }
}

#[test]
fn ndjson_parses_to_the_click_fields() {
    let m = ClickModel::new(&plan());
    let mut out = Vec::new();
    let mut clicks = vec![Click {
        ad_id: 0,
        user_id: u64::MAX,
        ts: -1_234_567,
        bid: 10,
    }];
    clicks.extend((0..1000).map(|i| m.click(i)));
    for c in &clicks {
        write_ndjson(c, &mut out);
    }
    let text = std::str::from_utf8(&out).expect("ndjson is ASCII");
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), clicks.len());
    for (line, c) in text.lines().zip(&clicks) {
        let v: serde_json::Value = serde_json::from_str(line).expect("valid JSON");
        assert_eq!(v["ad_id"], format!("ad-{}", c.ad_id));
        assert_eq!(v["user_id"], format!("u-{}", c.user_id));
        assert_eq!(v["ts"].as_i64(), Some(c.ts));
        assert_eq!(v["bid"].as_i64(), Some(c.bid));
        assert_eq!(v.as_object().map(|o| o.len()), Some(4));
    }
    let mut one = Vec::new();
    write_ndjson(
        &Click {
            ad_id: 123,
            user_id: 456,
            ts: 1_700_000_000_123,
            bid: 250,
        },
        &mut one,
    );
    assert_eq!(
        one,
        b"{\"ad_id\":\"ad-123\",\"user_id\":\"u-456\",\"ts\":1700000000123,\"bid\":250}\n"
    );
}

#[test]
fn ids_are_written_with_their_prefixes() {
    let mut key = Vec::new();
    write_ad_id(42, &mut key);
    write_user_id(7, &mut key);
    assert_eq!(key, b"ad-42u-7");
}
