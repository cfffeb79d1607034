//! DOUBLE values (SQL's DOUBLE and FLOAT, IEEE 754 binary64) as Flink writes them: Java's
//! `Double.toString` (`0.1`, `100.0`, `1.0E10`, `1.234E-5`, `NaN`, `Infinity`), from the shortest
//! digits that read back as the same double; and a double as the exact decimal Java's
//! `BigDecimal.valueOf(d)` makes of it (CAST to DECIMAL, ROUND).

use std::fmt::Write as _;

/// Appends `d` as Java's `Double.toString` writes it.
pub fn write_java(d: f64, out: &mut String) {
    if d.is_nan() {
        out.push_str("NaN");
        return;
    }
    if d.is_infinite() {
        out.push_str(if d > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if d == 0.0 {
        out.push_str(if d.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    // Rust's `{:e}` gives the shortest round-tripping digits: `1.2345e-5`.
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if d < 0.0 {
        out.push('-');
    }
    if (-3..7).contains(&exp) {
        // Plain notation with at least one digit after the point.
        if exp >= 0 {
            let int_len = exp as usize + 1;
            let padded = format!("{digits:0<int_len$}");
            let (int, frac) = padded.split_at(int_len);
            out.push_str(int);
            out.push('.');
            out.push_str(if frac.is_empty() { "0" } else { frac });
        } else {
            out.push_str("0.");
            for _ in 0..(-exp - 1) {
                out.push('0');
            }
            out.push_str(&digits);
        }
        return;
    }
    let (head, tail) = digits.split_at(1);
    let _ = write!(
        out,
        "{head}.{}E{exp}",
        if tail.is_empty() { "0" } else { tail }
    );
}

/// `d` as Java's `Double.toString` writes it.
pub fn java_string(d: f64) -> String {
    let mut out = String::with_capacity(24);
    write_java(d, &mut out);
    out
}

/// `BigDecimal.valueOf(d)`: the decimal of `d`'s shortest digits (`0.1` is exactly 0.1), or
/// `None` for NaN, the infinities and values a decimal's 28 digits cannot hold.
pub fn to_decimal(d: f64) -> Option<rust_decimal::Decimal> {
    if !d.is_finite() {
        return None;
    }
    // Rust writes a float with its shortest round-tripping digits, without an exponent.
    let text = format!("{d}");
    rust_decimal::Decimal::from_str_exact(&text).ok()
}
