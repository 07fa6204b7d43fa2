//! Wrapping text for boxes that must show it whole (the findings list, tweak previews, the knob
//! menu's reasons): at spaces, and a word longer than the line (a sysfs path) after a `/`,
//! else wherever the line ends. Continuation lines keep the first line's indent plus two.

/// `text` in lines of at most `width` characters (at least 1).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let indent = text.chars().take_while(|c| *c == ' ').count();
    // Continuations are indented a little more, unless that leaves too little room.
    let more = if indent + 2 < width / 2 {
        indent + 2
    } else {
        0
    };
    wrap_at(text, width, more)
}

/// As `wrap`, continuation lines indented by `more`.
fn wrap_at(text: &str, width: usize, more: usize) -> Vec<String> {
    let width = width.max(1);
    let more = if more < width { more } else { 0 };
    let indent = text.chars().take_while(|c| *c == ' ').count();
    let mut out: Vec<String> = Vec::new();
    let mut line = " ".repeat(indent.min(width - 1));
    let mut fresh = true;
    for word in text[indent..].split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count();
        let wlen = word.chars().count();
        if !fresh && len + 1 + wlen <= width {
            line.push(' ');
            line.push_str(word);
            continue;
        }
        if fresh && len + wlen <= width {
            line.push_str(word);
            fresh = false;
            continue;
        }
        let mut rest = word;
        if !fresh {
            out.push(std::mem::replace(&mut line, " ".repeat(more)));
        }
        // The word does not fit on a line of its own: cut it, after a '/' where one is near.
        loop {
            let room = width.saturating_sub(line.chars().count()).max(1);
            if rest.chars().count() <= room {
                line.push_str(rest);
                break;
            }
            let cut = cut_at(rest, room);
            line.push_str(&rest[..cut]);
            rest = &rest[cut..];
            out.push(std::mem::replace(&mut line, " ".repeat(more)));
        }
        fresh = false;
    }
    if !fresh || out.is_empty() {
        out.push(line);
    }
    out
}

/// Columns a hanging indent leaves the text at the least; with less, continuations start four
/// columns in (a knob menu at 40 columns).
pub const MIN_HANG: usize = 12;

/// `prefix` then `text` wrapped beside it: continuation lines start under the text (a knob
/// name's reason under the reason, never under the name), or four columns in when that would
/// leave the text under `MIN_HANG` columns.
pub fn hang(prefix: &str, text: &str, width: usize) -> Vec<String> {
    let p = prefix.chars().count();
    let col = if p + MIN_HANG <= width { p } else { 4 };
    hang_at(prefix, text, width, col)
}

/// As `hang`, continuation lines starting at column `col` (the help screen's text column,
/// whatever the width of the keys on the row's first line).
pub fn hang_at(prefix: &str, text: &str, width: usize, col: usize) -> Vec<String> {
    let p = prefix.chars().count();
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    // The first line: as many words as fit after the prefix.
    let mut used = 0;
    let mut k = 0;
    for w in &words {
        let need = w.chars().count() + usize::from(k > 0);
        if p + used + need > width {
            break;
        }
        used += need;
        k += 1;
    }
    if k == 0 && !words.is_empty() && p < width {
        // The first word does not fit even there (a path): cut it where the line ends.
        let lines = wrap_at(&format!("{prefix}{}", words.join(" ")), width, col);
        return lines;
    }
    let mut out = vec![format!("{prefix}{}", words[..k].join(" "))];
    if k < words.len() {
        let pad = " ".repeat(col);
        let room = width.saturating_sub(col).max(1);
        out.extend(
            wrap_at(&words[k..].join(" "), room, 0)
                .into_iter()
                .map(|l| format!("{pad}{l}")),
        );
    }
    out
}

/// A byte index to cut `word` at, at most `room` characters in: after the last `/` in the
/// second half of that span, else at `room`.
fn cut_at(word: &str, room: usize) -> usize {
    let end = word.char_indices().nth(room).map_or(word.len(), |(i, _)| i);
    match word[..end].rfind('/') {
        Some(i) if i + 1 >= end / 2 && i + 1 < end => i + 1,
        _ => end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_at_spaces_and_paths_after_a_slash() {
        assert_eq!(
            wrap("dirty 2.3G past background", 12),
            ["dirty 2.3G", "  past", "  background"]
        );
        let path = "  policy0 /sys/devices/system/cpu/cpufreq/policy0/scaling_governor";
        let lines = wrap(path, 40);
        assert_eq!(
            lines,
            [
                "  policy0",
                "    /sys/devices/system/cpu/cpufreq/",
                "    policy0/scaling_governor"
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 40));
        // Every character of the text survives (only spaces are added or merged).
        let joined: String = lines.concat().split_whitespace().collect();
        let orig: String = path.split_whitespace().collect();
        assert_eq!(joined, orig);
    }

    #[test]
    fn hanging_text_starts_under_itself() {
        assert_eq!(
            hang(
                "  epp        ",
                "disabled: the driver refuses EPP changes",
                30
            ),
            [
                "  epp        disabled: the",
                "             driver refuses",
                "             EPP changes"
            ]
        );
        let long = hang(
            "x ",
            "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor",
            30,
        );
        assert!(long.iter().all(|l| l.chars().count() <= 30), "{long:?}");
        assert_eq!(hang("a ", "", 10), ["a "]);
    }

    #[test]
    fn odd_widths_and_text() {
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("abcdef", 1).len(), 6);
        assert_eq!(wrap("µs µs µs", 5), ["µs µs", "µs"]);
        assert!(wrap("x".repeat(100).as_str(), 7)
            .iter()
            .all(|l| l.chars().count() <= 7));
    }
}
