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
    #[cfg(target_arch = "x86_64")]
    {
        i = sse2::next_special_16(b, i);
    }
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

/// 16 bytes per step with SSE2, which every x86_64 CPU has (part of the architecture's baseline,
/// so this needs neither a build flag nor runtime detection). The 8-byte loop above finishes the
/// last < 16 bytes, and is the whole scan elsewhere.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    /// Index of the first special byte (as `next_special`) at or after `i` within the whole
    /// 16-byte blocks from `i`; otherwise the start of the first block that does not fit.
    #[inline(always)]
    pub(super) fn next_special_16(b: &[u8], mut i: usize) -> usize {
        while let Some(chunk) = b.get(i..i + 16) {
            // SAFETY: SSE2 is always present on x86_64 (the target's baseline), and `chunk` is
            // 16 readable bytes; `_mm_loadu_si128` has no alignment requirement.
            let m = unsafe {
                let v = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
                let slash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
                // Signed: bytes 0x00..0x1F (control) and 0x80..0xFF (non-ASCII, negative) are
                // both below 0x20.
                let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
                _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), low)) as u32
            };
            if m != 0 {
                return i + m.trailing_zeros() as usize;
            }
            i += 16;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time definition `next_special` must agree with.
    fn naive(b: &[u8], i: usize) -> usize {
        (i..b.len())
            .find(|&k| b[k] == b'"' || b[k] == b'\\' || !(0x20..0x80).contains(&b[k]))
            .unwrap_or(b.len())
    }

    #[test]
    fn next_special_finds_the_first_special_byte_at_every_offset_and_length() {
        let specials = [b'"', b'\\', 0x00, 0x1f, 0x80, 0xc3, 0xff];
        for len in 0..70 {
            for at in 0..=len {
                for &sp in &specials {
                    let mut b = vec![b'a'; len];
                    if at < len {
                        b[at] = sp;
                    }
                    // Bytes just inside the plain range on either side of each class.
                    if len > 3 {
                        b[len / 3] = if len / 3 == at { sp } else { 0x20 };
                    }
                    for start in [0, 1, at.saturating_sub(1), at] {
                        let start = start.min(len);
                        assert_eq!(
                            next_special(&b, start),
                            naive(&b, start),
                            "len {len} special {sp:#x} at {at} from {start}"
                        );
                    }
                }
            }
        }
        let plain: Vec<u8> = (0x20u8..0x80)
            .filter(|&c| c != b'"' && c != b'\\')
            .collect();
        assert_eq!(next_special(&plain, 0), plain.len());
    }
}
