use super::*;

/// splitmix64 finaliser: a well-mixed 64-bit hash of an integer.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn sketch_of(range: std::ops::Range<u64>) -> Distinct {
    counter_of(range, Mode::Approx)
}

fn counter_of(range: std::ops::Range<u64>, mode: Mode) -> Distinct {
    let mut d = Distinct::new();
    for i in range {
        d.insert(mix(i), mode);
    }
    d
}

#[test]
fn exact_below_threshold_with_duplicates() {
    let mut d = Distinct::new();
    assert_eq!(d.estimate(), 0);
    for round in 0..3 {
        for i in 0..SMALL_MAX as u64 {
            d.insert(mix(i), Mode::Approx);
        }
        assert_eq!(d.estimate(), SMALL_MAX as u64, "round {round}");
        assert!(!d.is_dense());
    }
    // Adjacent raw values (not hashed) are distinct too.
    let mut e = Distinct::new();
    for h in [5, 4, 5, 0, u64::MAX, 4, 0] {
        e.insert(h, Mode::Approx);
    }
    assert_eq!(e, Distinct::Small(vec![0, 4, 5, u64::MAX]));
}

#[test]
fn one_past_threshold_goes_dense_and_stays_close() {
    let d = sketch_of(0..SMALL_MAX as u64 + 1);
    assert!(d.is_dense());
    // Linear counting at n = 257 over 4096 registers is within a couple of values.
    let est = d.estimate() as i64;
    assert!((est - 257).abs() <= 5, "estimate {est}");
}

#[test]
fn merge_small_equals_union() {
    let mut a = sketch_of(0..100);
    let b = sketch_of(50..180);
    a.merge(&b, Mode::Approx);
    assert_eq!(a, sketch_of(0..180));
    assert_eq!(a.estimate(), 180);
    // Empty merges are identities.
    let mut e = Distinct::new();
    e.merge(&b, Mode::Approx);
    assert_eq!(e, b);
    let mut c = b.clone();
    c.merge(&Distinct::new(), Mode::Approx);
    assert_eq!(c, b);
}

#[test]
fn merge_small_overflowing_threshold_goes_dense() {
    let mut a = sketch_of(0..200);
    a.merge(&sketch_of(200..400), Mode::Approx);
    assert!(a.is_dense());
    assert_eq!(a, sketch_of(0..400));
}

#[test]
fn merge_mixed_and_dense_equals_sketch_of_union() {
    // dense + dense
    let mut a = sketch_of(0..30_000);
    a.merge(&sketch_of(20_000..50_000), Mode::Approx);
    assert_eq!(a, sketch_of(0..50_000));
    // small into dense
    let mut b = sketch_of(0..1000);
    b.merge(&sketch_of(5000..5100), Mode::Approx);
    let mut expect = sketch_of(0..1000);
    for i in 5000..5100 {
        expect.insert(mix(i), Mode::Approx);
    }
    assert_eq!(b, expect);
    // dense into small
    let mut c = sketch_of(5000..5100);
    c.merge(&sketch_of(0..1000), Mode::Approx);
    assert_eq!(c, expect);
}

fn assert_within_3_sigma(n: u64) {
    let est = sketch_of(0..n).estimate() as f64;
    let rel = (est - n as f64).abs() / n as f64;
    let sigma = 1.04 / (REGISTERS as f64).sqrt();
    assert!(rel < 3.0 * sigma, "n={n} est={est} rel={rel:.4}");
}

#[test]
fn estimate_10k_within_3_sigma() {
    assert_within_3_sigma(10_000);
}

#[test]
fn estimate_100k_within_3_sigma() {
    assert_within_3_sigma(100_000);
}

#[test]
fn estimate_1m_within_3_sigma() {
    assert_within_3_sigma(1_000_000);
}

#[test]
fn no_bias_bump_where_classic_estimator_switches() {
    // The classic estimator overestimates by ~2% on average near 2.5·m = 10240; Ertl's does not.
    let (n, trials) = (10_500u64, 16u64);
    let mean: f64 = (0..trials)
        .map(|t| sketch_of(t << 40..(t << 40) + n).estimate() as f64 / n as f64 - 1.0)
        .sum::<f64>()
        / trials as f64;
    assert!(mean.abs() < 0.008, "mean relative error {mean:.4}");
}

#[test]
fn estimate_helpers_at_their_edges() {
    assert_eq!(estimate_registers(&[0u8; REGISTERS]), 0);
    // Every register at the cap: beyond anything countable.
    assert_eq!(estimate_registers(&[MAX_RANK; REGISTERS]), u64::MAX);
    // One register set to rank 1: linear counting gives m·ln(m/(m-1)) ≈ 1.
    let mut one = vec![0u8; REGISTERS];
    one[7] = 1;
    assert_eq!(estimate_registers(&one), 1);
    assert_eq!(sigma(0.0), 0.0);
    assert_eq!(tau(0.0), 0.0);
    assert_eq!(tau(1.0), 0.0);
}

#[test]
fn rank_of_all_zero_remainder_is_capped() {
    let mut regs = vec![0u8; REGISTERS];
    add_to_registers(&mut regs, 0);
    add_to_registers(&mut regs, u64::MAX);
    assert_eq!(regs[0], MAX_RANK);
    assert_eq!(regs[REGISTERS - 1], 1);
    // Top bits 0b1 then 51 zeros then a one: index 1, rank = 52.
    let mut regs = vec![0u8; REGISTERS];
    add_to_registers(&mut regs, (1u64 << (64 - P)) | 1);
    assert_eq!(regs[1], 52);
}

#[test]
fn exact_mode_counts_every_value_past_the_small_vector() {
    for n in [
        0u64,
        1,
        SMALL_MAX as u64,
        SMALL_MAX as u64 + 1,
        16_455,
        200_000,
    ] {
        let mut d = counter_of(0..n, Mode::Exact);
        // Duplicates, inserted again in another order, change nothing.
        for i in (0..n).rev().step_by(3) {
            d.insert(mix(i), Mode::Exact);
        }
        assert_eq!(d.estimate(), n, "n={n}");
        assert!(!d.is_dense());
        assert!(d.fits(Mode::Exact));
    }
    assert!(matches!(counter_of(0..300, Mode::Exact), Distinct::Set(_)));
}

#[test]
fn exact_merges_are_unions_in_every_form() {
    let union = |a: std::ops::Range<u64>, b: std::ops::Range<u64>| {
        let mut x = counter_of(a, Mode::Exact);
        x.merge(&counter_of(b, Mode::Exact), Mode::Exact);
        x.estimate()
    };
    assert_eq!(union(0..100, 50..180), 180); // small + small
    assert_eq!(union(0..200, 100..400), 400); // small + small, overflowing
    assert_eq!(union(0..1000, 990..1010), 1010); // set + small
    assert_eq!(union(990..1010, 0..1000), 1010); // small + set
    assert_eq!(union(0..30_000, 20_000..50_000), 50_000); // set + set
    assert_eq!(union(0..0, 0..1000), 1000); // empty + set
}

#[test]
fn exact_sets_round_trip_through_snapshots_and_bad_ones_are_refused() {
    for n in [0u64, 5, 257, 5000] {
        let d = counter_of(0..n, Mode::Exact);
        let mut e = Enc::default();
        d.encode(&mut e);
        let bytes = e.bytes;
        let back = Distinct::decode(&mut Dec::new(&bytes)).unwrap();
        assert_eq!(back, d, "n={n}");
    }
    // A set of 3 encoded as kind 2 breaks the invariant that sets are past the small vector.
    let mut e = Enc::default();
    e.u8(2);
    e.u64(3);
    [1u64, 2, 3].iter().for_each(|&h| e.u64(h));
    let bytes = e.bytes;
    assert!(Distinct::decode(&mut Dec::new(&bytes)).is_err());
    // An exact set never fits an approximate aggregate, nor registers an exact one.
    assert!(!counter_of(0..300, Mode::Exact).fits(Mode::Approx));
    assert!(!counter_of(0..300, Mode::Approx).fits(Mode::Exact));
}
