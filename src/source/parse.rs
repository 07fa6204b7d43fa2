//! Small tolerant parsers shared by the readers: `key: value` tables, bracketed choices.
//!
//! Tolerant means a garbled line is skipped and counted, never fatal: one bad line in
//! `/proc/meminfo` must not make the whole file unknown.

/// At most the first 60 characters of a string, for error messages about garbled input.
pub fn clip(s: &str) -> &str {
    match s.char_indices().nth(60) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Parses `Key:   123 kB`, `key 123` and `Node 0 Key: 123 kB` lines. Calls `f(key, value)` for
/// each good line and returns the number of lines that could not be parsed.
pub fn kv_lines(text: &str, mut f: impl FnMut(&str, u64)) -> usize {
    let mut bad = 0;
    for line in text.lines() {
        // Unicode whitespace splitting decodes every char; kernel tables are ASCII, where
        // both splits agree. Their lines are cut by hand: the split iterator was ~1 % of the
        // idle dashboard for the ~300 lines of meminfo and vmstat a second.
        let t = if line.is_ascii() {
            ascii_first4(line)
        } else {
            first4(line.split_whitespace())
        };
        let mut t = t.into_iter().flatten();
        let Some(mut key) = t.next() else { continue };
        if key == "Node" {
            // nodeN/meminfo prefixes every line with "Node N".
            t.next();
            let Some(k) = t.next() else {
                bad += 1;
                continue;
            };
            key = k;
        }
        let key = key.strip_suffix(':').unwrap_or(key);
        match t.next().and_then(|v| v.parse::<u64>().ok()) {
            Some(v) => f(key, v),
            None => bad += 1,
        }
    }
    bad
}

/// The first four items of `it` (`None` past its end).
fn first4<'a>(mut it: impl Iterator<Item = &'a str>) -> [Option<&'a str>; 4] {
    [it.next(), it.next(), it.next(), it.next()]
}

/// `first4(line.split_ascii_whitespace())` for an ASCII `line`, by one scan of its bytes.
fn ascii_first4(line: &str) -> [Option<&str>; 4] {
    let b = line.as_bytes();
    let mut out = [None; 4];
    let mut i = 0;
    for slot in &mut out {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        if start == i {
            break;
        }
        // Cut at ASCII whitespace, a char boundary.
        *slot = line.get(start..i);
    }
    out
}

/// `always [madvise] never` → (`madvise`, [`always`, `madvise`, `never`]).
pub fn bracketed_choice(text: &str) -> (Option<String>, Vec<String>) {
    let mut selected = None;
    let mut choices = Vec::new();
    for word in text.split_whitespace() {
        if let Some(inner) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            selected = Some(inner.to_string());
            choices.push(inner.to_string());
        } else {
            choices.push(word.to_string());
        }
    }
    (selected, choices)
}

/// The `[selected]` word of a choice file, borrowed: what is read every sample of a disk's
/// `queue/scheduler` (the list of choices is not kept).
pub fn selected_choice(text: &str) -> Option<&str> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
}

/// Fast decimal parse of a token (interrupt and softirq tables are megabytes on big hosts).
#[inline]
pub fn dec(tok: &str) -> Option<u64> {
    let b = tok.as_bytes();
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_formats() {
        let mut got = Vec::new();
        let bad = kv_lines(
            "MemTotal:  100 kB\nnr_dirty 7\nNode 1 Dirty:  12 kB\ngarbage\nHugePages_Total:   4\nX: y\n",
            |k, v| got.push((k.to_string(), v)),
        );
        assert_eq!(
            got,
            vec![
                ("MemTotal".to_string(), 100),
                ("nr_dirty".to_string(), 7),
                ("Dirty".to_string(), 12),
                ("HugePages_Total".to_string(), 4)
            ]
        );
        assert_eq!(bad, 2);
    }

    #[test]
    fn choices() {
        let (sel, all) = bracketed_choice("always defer defer+madvise [madvise] never\n");
        assert_eq!(sel.as_deref(), Some("madvise"));
        assert_eq!(all.len(), 5);
        assert_eq!(bracketed_choice("").0, None);
        assert_eq!(
            selected_choice("[mq-deadline] kyber bfq none\n"),
            Some("mq-deadline")
        );
        assert_eq!(selected_choice("none [bfq]"), Some("bfq"));
        assert_eq!(selected_choice("mq-deadline none"), None);
        assert_eq!(selected_choice("[] x"), Some(""));
    }

    #[test]
    fn decimal() {
        assert_eq!(dec("0"), Some(0));
        assert_eq!(dec("18446744073709551615"), Some(u64::MAX));
        assert_eq!(dec("18446744073709551616"), None);
        assert_eq!(dec("1a"), None);
        assert_eq!(dec(""), None);
        assert_eq!(clip(&"é".repeat(100)).chars().count(), 60);
    }

    /// The hand cut gives the iterator's first four words, on the kernel's tables and on
    /// lines of every spacing.
    #[test]
    fn ascii_cut_is_the_iterators() {
        let mut lines: Vec<String> = [
            "",
            " ",
            "\t",
            "MemTotal:       24576000 kB",
            "nr_free_pages 123",
            "Node 0 MemFree: 5 kB",
            "  a  b\tc \x0c d e f",
            "a",
            "a b c d",
            "a\r",
            "x:\t\t9\r",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for f in ["meminfo", "vmstat"] {
            let path = format!(
                "{}/tests/fixtures/vm-2cpu/t1/proc/{f}",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(&path).expect("fixture");
            lines.extend(text.lines().map(str::to_string));
        }
        for l in &lines {
            assert_eq!(ascii_first4(l), first4(l.split_ascii_whitespace()), "{l:?}");
        }
    }
}
