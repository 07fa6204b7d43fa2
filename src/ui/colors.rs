//! Colour depth reduction: every colour a theme (or any code) names, brought to what the
//! terminal takes — the nearest of the 16 ANSI colours, the nearest of the xterm-256 cube and
//! grey ramp, 24-bit as is, or no colour at all; and how deep the terminal's colours go
//! (NO_COLOR, COLORTERM, TERM, `--color`).

use anyhow::{bail, Result};
use ratatui::style::Color;

/// How many colours the terminal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    Mono,
    Ansi16,
    Ansi256,
    TrueColor,
}

impl ColorDepth {
    /// NO_COLOR wins, then COLORTERM, then TERM; `--color` overrides all of them.
    pub fn detect(flag: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Result<ColorDepth> {
        if let Some(f) = flag.filter(|f| *f != "auto") {
            return Ok(match f {
                "mono" | "none" | "never" => ColorDepth::Mono,
                "16" => ColorDepth::Ansi16,
                "256" => ColorDepth::Ansi256,
                "truecolor" | "24bit" => ColorDepth::TrueColor,
                other => bail!("--color must be auto, mono, 16, 256 or truecolor, not {other:?}"),
            });
        }
        if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return Ok(ColorDepth::Mono);
        }
        if env("COLORTERM").is_some_and(|v| v == "truecolor" || v == "24bit") {
            return Ok(ColorDepth::TrueColor);
        }
        let term = env("TERM").unwrap_or_default();
        if no_colour_term(&term) {
            return Ok(ColorDepth::Mono);
        }
        // Only a terminal that says so gets indexed colours: TERM=xterm or linux get the 16.
        Ok(if term.ends_with("256color") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        })
    }
}

/// A terminal that has no colour: `dumb`, and the DEC VT series (`vt52`, `vt100`, `vt102`,
/// `vt220`, ...: monochrome hardware whose terminfo has no `setaf`), which also take no UTF-8
/// (`GlyphSet::detect`). Not `vte-256color` (GNOME's VTE): a digit must follow `vt`.
pub fn no_colour_term(term: &str) -> bool {
    term == "dumb"
        || term
            .strip_prefix("vt")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// The 16 ANSI colours in index order, as ratatui names them (the wire backend sends them as
/// SGR 30-37 / 90-97, which every colour terminal reads, the Linux console included).
pub const ANSI16: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// xterm's default RGB for the 16 ANSI colours: the reference "nearest" is measured against
/// (terminals differ, but xterm's palette is what the 256-colour indexes are defined with).
const ANSI16_RGB: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

/// The six levels of each channel in the xterm 6x6x6 cube (indexes 16..=231).
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn dist2(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).unsigned_abs().pow(2);
    d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)
}

/// RGB of an xterm-256 index (0..=15 from the reference palette above).
fn rgb_of_index(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI16_RGB[usize::from(i)],
        16..=231 => {
            let i = usize::from(i - 16);
            (CUBE[i / 36], CUBE[i / 6 % 6], CUBE[i % 6])
        }
        _ => {
            let v = 8 + (i - 232) * 10;
            (v, v, v)
        }
    }
}

/// Nearest xterm-256 index of an RGB colour among the cube and the grey ramp (16..=255). The
/// first 16 are left out: terminals let users redefine them, so they are not a fixed RGB.
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    let level = |v: u8| {
        (0..CUBE.len())
            .min_by_key(|&k| (i32::from(CUBE[k]) - i32::from(v)).unsigned_abs())
            .unwrap_or(0) as u8
    };
    let cube = 16 + 36 * level(r) + 6 * level(g) + level(b);
    let avg = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    // Grey ramp 232..=255 is 8, 18, ..., 238.
    let grey = 232 + (avg.saturating_sub(3) / 10).min(23) as u8;
    let want = (r, g, b);
    if dist2(rgb_of_index(grey), want) < dist2(rgb_of_index(cube), want) {
        grey
    } else {
        cube
    }
}

/// Nearest of the 16 ANSI colours (by RGB distance to xterm's palette); named colours and
/// indexes 0..=15 are the 16 already and map to their name.
pub fn to_16(c: Color) -> Color {
    let rgb = match c {
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) if i < 16 => return ANSI16[usize::from(i)],
        Color::Indexed(i) => rgb_of_index(i),
        named => return named,
    };
    let nearest = (0..16)
        .min_by_key(|&k| dist2(ANSI16_RGB[k], rgb))
        .unwrap_or(0);
    ANSI16[nearest]
}

/// `c` as the terminal can show it at `depth`. Idempotent: reducing twice changes nothing.
pub fn reduce(c: Color, depth: ColorDepth) -> Color {
    match (depth, c) {
        (ColorDepth::Mono, _) => Color::Reset,
        (ColorDepth::Ansi16, c) => to_16(c),
        (ColorDepth::Ansi256, Color::Rgb(r, g, b)) => Color::Indexed(rgb_to_256(r, g, b)),
        (ColorDepth::Ansi256, Color::Indexed(i)) if i < 16 => ANSI16[usize::from(i)],
        (ColorDepth::Ansi256 | ColorDepth::TrueColor, c) => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_of_256() {
        assert_eq!(rgb_to_256(255, 0, 0), 196);
        assert_eq!(rgb_to_256(0, 0, 0), 16);
        assert_eq!(rgb_to_256(255, 255, 255), 231);
        // #005fd7 is exactly cube (0, 1, 4).
        assert_eq!(rgb_to_256(0, 0x5f, 0xd7), 16 + 6 + 4);
        // A mid grey is nearer the grey ramp (128 -> 244 = 128) than the cube (135 -> 102).
        assert_eq!(rgb_to_256(128, 128, 128), 244);
        // Every index that is in the cube or the ramp maps back to itself.
        for i in 16..=255u8 {
            let (r, g, b) = rgb_of_index(i);
            let j = rgb_to_256(r, g, b);
            assert_eq!(rgb_of_index(j), (r, g, b), "index {i} came back as {j}");
        }
    }

    #[test]
    fn nearest_of_16() {
        assert_eq!(to_16(Color::Rgb(255, 0, 0)), Color::LightRed);
        assert_eq!(to_16(Color::Rgb(0xd7, 0, 0)), Color::Red);
        assert_eq!(to_16(Color::Rgb(0, 135, 0)), Color::Green);
        assert_eq!(to_16(Color::Rgb(0xc0, 0xc0, 0xc0)), Color::Gray);
        assert_eq!(to_16(Color::Rgb(0, 0x5f, 0xd7)), Color::Blue);
        assert_eq!(to_16(Color::Rgb(0, 255, 255)), Color::LightCyan);
        // Indexes 0..=15 are the named colours (console16 names them by number).
        assert_eq!(to_16(Color::Indexed(7)), Color::Gray);
        assert_eq!(to_16(Color::Indexed(9)), Color::LightRed);
        assert_eq!(to_16(Color::Indexed(15)), Color::White);
        // Cube and ramp indexes go to the nearest named colour.
        assert_eq!(to_16(Color::Indexed(196)), Color::LightRed);
        assert_eq!(to_16(Color::Indexed(232)), Color::Black);
        assert_eq!(to_16(Color::Indexed(255)), Color::Gray);
        assert_eq!(to_16(Color::Reset), Color::Reset);
    }

    #[test]
    fn reduce_is_idempotent_and_stays_in_depth() {
        let samples = [
            Color::Reset,
            Color::Yellow,
            Color::Indexed(3),
            Color::Indexed(100),
            Color::Rgb(0xaf, 0x5f, 0),
        ];
        for depth in [
            ColorDepth::Mono,
            ColorDepth::Ansi16,
            ColorDepth::Ansi256,
            ColorDepth::TrueColor,
        ] {
            for c in samples {
                let once = reduce(c, depth);
                assert_eq!(reduce(once, depth), once, "{c:?} at {depth:?}");
                match depth {
                    ColorDepth::Mono => assert_eq!(once, Color::Reset),
                    ColorDepth::Ansi16 => assert!(
                        !matches!(once, Color::Rgb(..) | Color::Indexed(_)),
                        "{c:?} -> {once:?}"
                    ),
                    ColorDepth::Ansi256 => assert!(!matches!(once, Color::Rgb(..))),
                    ColorDepth::TrueColor => assert_eq!(once, c),
                }
            }
        }
        assert_eq!(
            reduce(Color::Rgb(255, 0, 0), ColorDepth::Ansi256),
            Color::Indexed(196)
        );
    }
}
