//! SWAR ("SIMD within a register") helpers: portable bit tricks that classify or convert 8 bytes
//! of a line at once, for the scanner (string runs, digit runs, key heads) and the integer fast
//! path of number decoding. Loads are little-endian, so byte `k` of a word is `line[i + k]`.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// High bit set in every byte of `v` that is zero; exact for the lowest such byte (a borrow only
/// propagates upward from a byte that really was zero).
#[inline(always)]
fn zero_bytes(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGH
}

#[inline(always)]
pub(super) fn load8(w: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(w);
    u64::from_le_bytes(b)
}

/// First <= 8 bytes of `s` as a little-endian word, zero-padded.
pub(super) fn head_word(s: &[u8]) -> u64 {
    s.iter()
        .take(8)
        .enumerate()
        .fold(0, |w, (k, &c)| w | u64::from(c) << (8 * k))
}

/// Per byte of `w`: nonzero iff that byte is not an ASCII digit. Exact up to the first non-digit
/// (the `+ 0x06` can only carry out of a byte >= 0xFA, itself a non-digit).
#[inline(always)]
pub(super) fn non_digits(w: u64) -> u64 {
    const F0: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    ((w & F0) ^ (ONES * 0x30)) | ((w.wrapping_add(ONES * 0x06) & F0) ^ (ONES * 0x30))
}

/// Index after the run of ASCII digits starting at `i`.
#[inline(always)]
pub(super) fn digits_end(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..i + 8) {
        let x = non_digits(load8(w));
        if x != 0 {
            // High bit of every nonzero byte; no carry crosses bytes (0x7F + 0x7F < 0x100).
            let nz = ((x & !HIGH).wrapping_add(!HIGH & (ONES * 0x7F)) | x) & HIGH;
            return i + (nz.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(b'0'..=b'9') = b.get(i) {
        i += 1;
    }
    i
}

/// Value of 8 ASCII digits loaded little-endian (first digit in the low byte); the SWAR
/// reduction from simdjson's `parse_eight_digits_unrolled`.
#[inline(always)]
pub(super) fn parse8(w: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let v = w.wrapping_sub(ONES * 0x30);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    (v & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2))
        >> 32
}

/// Index of the first byte at or after `i` that ends a plain run inside a string: `"`, `\`, a
/// control character (< 0x20) or a non-ASCII byte; `b.len()` if none.
#[inline(always)]
pub(super) fn next_special(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let w = load8(chunk);
        let m = zero_bytes(w ^ (ONES * b'"' as u64))
            | zero_bytes(w ^ (ONES * b'\\' as u64))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
            | (w & HIGH);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c) {
            return i;
        }
        i += 1;
    }
    b.len()
}
