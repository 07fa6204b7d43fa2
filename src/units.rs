//! Number formatting shared by the text report and the TUI: fixed widths, `-` for unknown,
//! binary size units, compact rates.

/// Unknown is `-`, never 0.
pub const UNKNOWN: &str = "-";

/// `v` with `dec` decimals, or `-`.
pub fn num(v: Option<f64>, dec: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.dec$}"),
        _ => UNKNOWN.to_string(),
    }
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
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    } else if a < 1000.0 {
        format!("{x:.0}")
    } else if a < 10_000.0 {
        format!("{:.1}k", x / 1e3)
    } else if a < 1e6 {
        format!("{:.0}k", x / 1e3)
    } else if a < 1e7 {
        format!("{:.1}M", x / 1e6)
    } else if a < 1e9 {
        format!("{:.0}M", x / 1e6)
    } else {
        format!("{:.1}G", x / 1e9)
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
        format!("{x:.1}{}", units[u])
    } else {
        format!("{x:.0}{}", units[u])
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
}
