//! A numeric knob's range in words ("1–90 %", "1 MiB – 12 GiB", "0 – 6144 pages of 2 MiB"),
//! not `1..=90` or raw byte counts, and typed values read back into the number its file takes
//! (`256M` → 268435456 for a byte count).

/// What a numeric knob counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A share of memory in percent (`vm.dirty_ratio`).
    Percent,
    /// Bytes (`vm.dirty_bytes`).
    Bytes,
    /// Huge pages of this many bytes each (unknown: the size is not said).
    HugePages(Option<u64>),
    /// Packets per round or queue (`net.core.netdev_budget`).
    Packets,
    /// Microseconds.
    Micros,
    /// Kibibytes, the number the file takes (`vm.min_free_kbytes`); shown and typed as bytes.
    KiB,
    /// A plain number with no unit (`vm.swappiness`, a reclaim weight).
    Plain,
}

const KIB: u64 = 1024;
const UNITS: [(u64, &str); 4] = [
    (KIB * KIB * KIB * KIB, "TiB"),
    (KIB * KIB * KIB, "GiB"),
    (KIB * KIB, "MiB"),
    (KIB, "KiB"),
];

/// `12 GiB`, `1.5 GiB`, `512 B`: whole numbers where the value is a whole number of the unit.
pub fn bytes(b: u64) -> String {
    for (size, name) in UNITS {
        if b >= size {
            return if b % size == 0 {
                format!("{} {name}", b / size)
            } else {
                format!("{:.1} {name}", b as f64 / size as f64)
            };
        }
    }
    format!("{b} B")
}

/// One value in words.
pub fn value(v: u64, unit: Unit) -> String {
    match unit {
        Unit::Percent => format!("{v} %"),
        Unit::Bytes => bytes(v),
        Unit::HugePages(_) => format!("{v} pages"),
        Unit::Packets => format!("{v} packets"),
        Unit::Micros => format!("{v} µs"),
        Unit::KiB => bytes(v.saturating_mul(KIB)),
        Unit::Plain => v.to_string(),
    }
}

/// The range in words: `1–90 %`, `1 MiB – 12 GiB`, `0 – 6144 pages of 2 MiB (12 GiB)`.
pub fn words(min: u64, max: u64, unit: Unit) -> String {
    match unit {
        Unit::Percent => format!("{min}–{max} %"),
        Unit::Bytes => format!("{} – {}", bytes(min), bytes(max)),
        Unit::HugePages(Some(page)) => format!(
            "{min} – {max} pages of {} ({} at most)",
            bytes(page),
            bytes(max.saturating_mul(page))
        ),
        Unit::HugePages(None) => format!("{min} – {max} pages"),
        Unit::Packets => format!("{min} – {max} packets"),
        Unit::Micros => format!("{min} – {max} µs"),
        Unit::KiB => format!(
            "{} – {}",
            bytes(min.saturating_mul(KIB)),
            bytes(max.saturating_mul(KIB))
        ),
        Unit::Plain => format!("{min} – {max}"),
    }
}

/// The number a knob file is written: plain decimal digits, no sign, no leading zero. The
/// kernel's `kstrto*` reads `010` as octal 8 and `0x10` as 16, and takes a `+`, so anything
/// but this one form could write a value other than the one checked.
pub fn canonical(text: &str) -> Result<u64, String> {
    let b = text.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return Err("not a plain decimal number (digits only: no sign, no 0x, no exponent)".into());
    }
    if b.len() > 1 && b[0] == b'0' {
        return Err("a leading zero (the kernel would read it as octal)".into());
    }
    text.parse().map_err(|_| "too large".to_string())
}

/// A typed value as the number the knob's file takes. Byte counts take a binary suffix
/// (`64K`, `256M`, `1.5G`, `1GiB`; plain numbers are bytes); a KiB count the same suffixes
/// (a plain number is KiB, as the file counts); the others whole numbers, an optional `%`
/// after a percentage.
pub fn parse(text: &str, unit: Unit) -> Result<u64, String> {
    let t = text.trim();
    let bad = || format!("{t:?} is not a number");
    let int = t.trim_end_matches(|c: char| !c.is_ascii_digit());
    let int = int.split('.').next().unwrap_or(int);
    if t.starts_with('+') || (int.len() > 1 && int.starts_with('0')) {
        return Err(format!(
            "{t:?}: write it without a sign or leading zero (the kernel reads 010 as octal 8)"
        ));
    }
    match unit {
        Unit::KiB if t.bytes().all(|b| b.is_ascii_digit()) => t.parse().map_err(|_| bad()),
        Unit::KiB => {
            let b = parse(t, Unit::Bytes)?;
            if b % KIB != 0 {
                return Err(format!("{t:?} is not a whole number of KiB"));
            }
            Ok(b / KIB)
        }
        Unit::Bytes => {
            let lower = t.to_ascii_lowercase();
            let num_end = lower
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(lower.len());
            let (num, suffix) = lower.split_at(num_end);
            let mult = match suffix.trim() {
                "" | "b" => 1,
                "k" | "kb" | "kib" => KIB,
                "m" | "mb" | "mib" => KIB * KIB,
                "g" | "gb" | "gib" => KIB * KIB * KIB,
                "t" | "tb" | "tib" => KIB * KIB * KIB * KIB,
                _ => return Err(format!("{t:?}: use a number of bytes or K, M, G, T")),
            };
            if let Ok(n) = num.parse::<u64>() {
                return n
                    .checked_mul(mult)
                    .ok_or_else(|| format!("{t:?} is too large"));
            }
            let f: f64 = num.parse().map_err(|_| bad())?;
            let b = f * mult as f64;
            if !b.is_finite() || b < 0.0 || b > u64::MAX as f64 {
                return Err(format!("{t:?} is too large"));
            }
            Ok(b.round() as u64)
        }
        Unit::Percent => t.trim_end_matches('%').trim().parse().map_err(|_| bad()),
        _ => t.parse().map_err(|_| bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_read_as_words() {
        assert_eq!(words(1, 90, Unit::Percent), "1–90 %");
        assert_eq!(words(1 << 20, 12 << 30, Unit::Bytes), "1 MiB – 12 GiB");
        assert_eq!(
            words(1 << 20, 33_470_000_000, Unit::Bytes),
            "1 MiB – 31.2 GiB"
        );
        assert_eq!(
            words(0, 6144, Unit::HugePages(Some(2 << 20))),
            "0 – 6144 pages of 2 MiB (12 GiB at most)"
        );
        assert_eq!(words(2000, 20_000, Unit::Micros), "2000 – 20000 µs");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(value(15, Unit::Percent), "15 %");
        assert_eq!(words(128, 1 << 20, Unit::KiB), "128 KiB – 1 GiB");
        assert_eq!(value(67_584, Unit::KiB), "66 MiB");
        assert_eq!(words(0, 200, Unit::Plain), "0 – 200");
    }

    #[test]
    fn typed_values() {
        assert_eq!(parse("256M", Unit::Bytes), Ok(256 << 20));
        assert_eq!(parse("1.5GiB", Unit::Bytes), Ok(3 << 29));
        assert_eq!(parse(" 4096 ", Unit::Bytes), Ok(4096));
        assert_eq!(parse("15%", Unit::Percent), Ok(15));
        assert!(parse("15%", Unit::Packets).is_err());
        assert!(parse("1X", Unit::Bytes).is_err());
        assert!(parse("-1", Unit::Bytes).is_err());
        assert!(parse("99999999999T", Unit::Bytes).is_err());
        assert!(parse("", Unit::Micros).is_err());
        assert_eq!(parse("67584", Unit::KiB), Ok(67_584));
        assert_eq!(parse("64M", Unit::KiB), Ok(65_536));
        assert!(parse("1000B", Unit::KiB).is_err(), "not whole KiB");
        assert_eq!(parse("60", Unit::Plain), Ok(60));
        assert!(parse("6O", Unit::Plain).is_err());
        // One form per number: what the kernel would read otherwise (010 is octal 8).
        for bad in ["010", "+5", "0x10", "1e3", "00", "-0", " 012 "] {
            assert!(parse(bad, Unit::Plain).is_err(), "{bad:?}");
            assert!(canonical(bad.trim()).is_err(), "{bad:?}");
        }
        assert_eq!(parse("0", Unit::Plain), Ok(0));
        assert_eq!(parse("0.5G", Unit::Bytes), Ok(1 << 29));
        assert!(parse("01G", Unit::Bytes).is_err());
        assert_eq!(canonical("0"), Ok(0));
        assert_eq!(canonical("60"), Ok(60));
        assert!(canonical("18446744073709551616").is_err());
    }
}
