//! A sample's value as both text formats write it: `NaN`, `+Inf`, `-Inf`, else what Rust's
//! `{}` prints for the f64, integers by a quicker path that prints the same digits.

use std::fmt::Write;

/// A sample value as both text formats write it (`NaN`, `+Inf`, `-Inf`, else Rust's
/// shortest round-trip form).
pub(crate) fn om_value(v: f64) -> String {
    let mut s = String::new();
    om_value_into(v, &mut s);
    s
}

/// `om_value`, appended to `out`.
pub(crate) fn om_value_into(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 && v.to_bits() != NEG_ZERO {
        // Most gauges are counts and sizes. `{v}` prints an integral f64 below 2^53 as its
        // digits (no point, no exponent), as the integer does; the float path costs several
        // times more (`perf`: 4 % of `perftop export`).
        if v < 0.0 {
            out.push('-');
        }
        // Digits only: ASCII.
        let mut buf = [0; 20];
        let digits = crate::record::numdiff::u64_digits(v.abs() as u64, &mut buf);
        out.extend(digits.iter().map(|&b| char::from(b)));
    } else {
        let _ = write!(out, "{v}");
    }
}

/// `-0.0`, which `{v}` prints as `-0`.
const NEG_ZERO: u64 = 0x8000_0000_0000_0000;

#[cfg(test)]
mod tests {
    use super::*;

    /// The integer path prints what `{}` prints, at the edges of where it applies and past them.
    #[test]
    fn values_print_as_rusts_display_does() {
        let two53 = 9_007_199_254_740_992.0_f64;
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            7.0,
            10.0,
            -4096.0,
            123_456_789.0,
            f64::from(u32::MAX),
            two53 - 1.0,
            -(two53 - 1.0),
            two53,
            two53 * 4.0,
            1e20,
            -1e300,
            0.5,
            -0.25,
            2.7,
            1e-7,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(om_value(v), format!("{v}"), "{v:e}");
        }
        assert_eq!(om_value(f64::NAN), "NaN");
        assert_eq!(om_value(f64::INFINITY), "+Inf");
        assert_eq!(om_value(f64::NEG_INFINITY), "-Inf");
    }
}
