//! Decimal formatting of integers for every writer of JSON text (results, generated events).
//!
//! Hand-written because it runs per result line and per generated event, and must not allocate:
//! `to_string` would, and `write!` goes through `fmt` machinery.

const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Decimal digits of `v`, two at a time from a pair table.
#[inline]
pub fn write_u64(mut v: u64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        pos -= 2;
        buf[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    } else {
        pos -= 1;
        buf[pos] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf[pos..]);
}

#[inline]
pub fn write_i64(v: i64, out: &mut Vec<u8>) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(v.unsigned_abs(), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn itoa_matches_std_formatting() {
        let mut cases = vec![0u64, 9, 10, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1];
        cases.extend((0..20).map(|p| 10u64.pow(p)));
        cases.extend((1..20).map(|p| 10u64.pow(p) - 1));
        for v in cases {
            let mut out = Vec::new();
            write_u64(v, &mut out);
            assert_eq!(out, v.to_string().as_bytes());
        }
        for v in [i64::MIN, -1, 0, 1, i64::MAX] {
            let mut out = Vec::new();
            write_i64(v, &mut out);
            assert_eq!(out, v.to_string().as_bytes());
        }
    }
}
