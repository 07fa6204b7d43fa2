//! Number formatting shared by the text report and the TUI: fixed widths, `-` for unknown,
//! binary size units, compact rates.

/// Unknown is `-`, never 0.
pub const UNKNOWN: &str = "-";

/// `v` with `dec` decimals, or `-`.
pub fn num(v: Option<f64>, dec: usize) -> String {
    match v {
        Some(x) if x.is_finite() => fixed(x, dec, ""),
        _ => UNKNOWN.to_string(),
    }
}

/// `format!("{x:.dec$}{suffix}")`, without the formatter where the answer is certain: the
/// dashboard writes a few hundred numbers a frame, and the formatter's exact decimal expansion
/// was ~2 % of the idle dashboard (`perf`, 2026-12-07).
///
/// `x * 10^dec` is rounded to the nearest integer. When the product is below 2^43 its error is
/// under 2^-10, so if it lies within 0.49 of an integer the exact value does too and both
/// round to it, whatever rule breaks ties; anything nearer a tie, or larger, or with more
/// decimals is left to the formatter.
fn fixed(x: f64, dec: usize, suffix: &str) -> String {
    const POW: [f64; 4] = [1.0, 10.0, 100.0, 1000.0];
    const LIMIT: f64 = 8_796_093_022_208.0; // 2^43
    let scaled = POW.get(dec).map(|p| x * p);
    let Some(scaled) = scaled.filter(|s| s.abs() < LIMIT && (s - s.round()).abs() <= 0.49) else {
        return format!("{x:.dec$}{suffix}");
    };
    // Exact: |scaled| < 2^43.
    let n = scaled.round().abs() as u64;
    let mut digits = [0u8; 24];
    let mut at = digits.len();
    let mut rest = n;
    let mut written = 0;
    // The digits, last first, with the point after `dec` of them and at least one before it.
    while rest > 0 || written <= dec {
        if written == dec && dec > 0 {
            at -= 1;
            digits[at] = b'.';
        }
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        written += 1;
    }
    let mut out = String::with_capacity(digits.len() - at + 1 + suffix.len());
    // The formatter keeps the sign of a negative number that rounds to zero (`-0.0`).
    if x.is_sign_negative() {
        out.push('-');
    }
    out.extend(digits[at..].iter().map(|&b| char::from(b)));
    out.push_str(suffix);
    out
}

/// `v` with up to `dec` decimals, dropping decimals (then switching to `compact`) until it
/// fits in `width` characters.
pub fn num_fit(v: Option<f64>, dec: usize, width: usize) -> String {
    for d in (0..=dec).rev() {
        let s = num(v, d);
        if s.len() <= width {
            return s;
        }
    }
    compact(v)
}

/// `v` for a column whose header holds the unit (`rkB/s`, `r/s`): decimals dropped until it
/// fits in `width`, and never a suffix (`3.1M` under `wkB/s` read as 3.1 MB/s when it is
/// 3.1 GB/s). A whole number wider than `width` comes back whole: the column is sized so that
/// real values fit.
pub fn plain_fit(v: Option<f64>, dec: usize, width: usize) -> String {
    for d in (1..=dec).rev() {
        let s = num(v, d);
        if s.len() <= width {
            return s;
        }
    }
    num(v, 0)
}

/// A rate or count squeezed into ~5 characters: 999, 9.9k, 99.9k, 999k, 9.9M.
pub fn compact(v: Option<f64>) -> String {
    let Some(x) = v.filter(|x| x.is_finite()) else {
        return UNKNOWN.to_string();
    };
    let a = x.abs();
    if a < 10.0 {
        // Small rates matter (1 drop/s), keep one decimal unless it is whole.
        if (x - x.round()).abs() < 0.05 {
            fixed(x, 0, "")
        } else {
            fixed(x, 1, "")
        }
    } else if a < 1000.0 {
        fixed(x, 0, "")
    } else if a < 10_000.0 {
        fixed(x / 1e3, 1, "k")
    } else if a < 1e6 {
        fixed(x / 1e3, 0, "k")
    } else if a < 1e7 {
        fixed(x / 1e6, 1, "M")
    } else if a < 1e9 {
        fixed(x / 1e6, 0, "M")
    } else {
        fixed(x / 1e9, 1, "G")
    }
}

/// kB as a short binary size: 512K, 1.5M, 23G, 1.2T.
pub fn kb(v: Option<u64>) -> String {
    let Some(k) = v else {
        return UNKNOWN.to_string();
    };
    let units = ["K", "M", "G", "T", "P"];
    let mut x = k as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if x < 10.0 && u > 0 {
        fixed(x, 1, units[u])
    } else {
        fixed(x, 0, units[u])
    }
}

/// Percent with one decimal, `-` when unknown.
pub fn pct(v: Option<f64>) -> String {
    num(v, 1)
}

/// Seconds as `3d04h`, `5h12m`, `12m30s`.
pub fn duration(secs: Option<f64>) -> String {
    let Some(s) = secs.filter(|s| s.is_finite() && *s >= 0.0) else {
        return UNKNOWN.to_string();
    };
    let s = s as u64;
    let (d, h, m, sec) = (s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
    if d > 0 {
        format!("{d}d{h:02}h")
    } else if h > 0 {
        format!("{h}h{m:02}m")
    } else {
        format!("{m}m{sec:02}s")
    }
}

/// An f32 as the f64 that its shortest decimal form names: 2.7f32 widened with `as f64` is
/// 2.700000047683716, which is what a dump printed; this is 2.7. (Display of an f32 is the
/// shortest text that reads back as the same f32, and such a text, at most 9 digits, reads
/// as an f64 that prints the same way.)
pub fn f32_decimal(x: f32) -> f64 {
    format!("{x}").parse().unwrap_or(f64::from(x))
}

/// Cuts a string to `w` characters, marking the cut with `~`.
pub fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
    out.push('~');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(num(None, 2), "-");
        assert_eq!(num(Some(f64::NAN), 2), "-");
        assert_eq!(num(Some(1.005), 1), "1.0");
        assert_eq!(compact(Some(0.0)), "0");
        assert_eq!(compact(Some(2.5)), "2.5");
        assert_eq!(compact(Some(12_345.0)), "12k");
        assert_eq!(compact(Some(1_500_000.0)), "1.5M");
        assert_eq!(kb(Some(512)), "512K");
        assert_eq!(kb(Some(1536)), "1.5M");
        assert_eq!(kb(Some(32 * 1024 * 1024)), "32G");
        assert_eq!(duration(Some(90061.0)), "1d01h");
        assert_eq!(duration(Some(61.0)), "1m01s");
        assert_eq!(fit("abcdef", 4), "abc~");
        assert_eq!(num_fit(Some(20000.0), 1, 6), "20000");
        assert_eq!(num_fit(Some(640000.0), 1, 5), "640k");
        assert_eq!(num_fit(Some(1.25), 2, 6), "1.25");
        assert_eq!(num_fit(None, 2, 6), "-");
    }

    /// One convention per column: a unit in the header and plain numbers under it.
    #[test]
    fn a_column_with_its_unit_in_the_header_never_gets_a_suffix() {
        // 3.1 GB/s under `wkB/s`: was `3.1M` from `num_fit`.
        assert_eq!(plain_fit(Some(3_250_585.6), 0, 7), "3250586");
        assert_eq!(plain_fit(Some(12_345_678.0), 1, 7), "12345678");
        assert_eq!(plain_fit(Some(867_883.4), 1, 7), "867883");
        assert_eq!(plain_fit(Some(12.34), 1, 7), "12.3");
        assert_eq!(plain_fit(None, 1, 7), "-");
        for v in [0.4, 9.9, 1e3, 2.5e5, 9.9e6, 1.2e9] {
            let s = plain_fit(Some(v), 1, 6);
            assert!(s.chars().all(|c| c.is_ascii_digit() || c == '.'), "{s}");
        }
    }

    #[test]
    fn f32_prints_as_its_shortest_form() {
        assert_eq!(f64::from(2.7f32).to_string(), "2.700000047683716");
        for (x, text) in [
            (2.7f32, "2.7"),
            (0.1, "0.1"),
            (3.12, "3.12"),
            (1.23, "1.23"),
            (0.0, "0"),
        ] {
            assert_eq!(f32_decimal(x).to_string(), text);
            assert_eq!(f32_decimal(x) as f32, x, "reads back as the same f32");
        }
        assert!(f32_decimal(f32::NAN).is_nan());
        assert_eq!(f32_decimal(f32::INFINITY), f64::INFINITY);
    }

    /// `fixed` writes what the formatter writes: ties, near-ties, negative zero, every
    /// magnitude, and a million values spread over all of them.
    #[test]
    fn fixed_is_the_formatters_text() {
        let check = |x: f64, dec: usize| {
            assert_eq!(fixed(x, dec, "k"), format!("{x:.dec$}k"), "{x:e} {dec}");
        };
        let edges = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.125,
            0.375,
            0.05,
            0.15,
            0.25,
            0.35,
            1.005,
            2.675,
            -0.04,
            -0.4,
            -0.0004,
            9.995,
            99.95,
            999.5,
            1e12,
            8.7e12,
            9e12,
            1e15,
            123_456.789,
            4.35,
            0.045,
            1e-300,
            -1e-300,
            5e-324,
            f64::MAX,
            f64::MIN,
        ];
        for x in edges {
            for dec in 0..=4 {
                check(x, dec);
            }
        }
        let mut z = 0x1234_5678_9abc_def0_u64;
        for i in 0..1_000_000u64 {
            z = z
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Magnitudes from 1e-6 to 1e14, and values a hair from ties.
            let mantissa = (z >> 11) as f64 / (1u64 << 53) as f64;
            let exp = (z % 21) as i32 - 6;
            let mut x = mantissa * 10f64.powi(exp);
            if i % 3 == 0 {
                x = (x * 1000.0).round() / 1000.0 + 0.0005;
            }
            if z & 1 == 1 {
                x = -x;
            }
            check(x, (i % 4) as usize);
        }
    }
}
