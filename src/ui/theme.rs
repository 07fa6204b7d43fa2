//! Themes (files in `themes/`, shipped in the binary, overridable from the XDG config dir),
//! colour depth (NO_COLOR, COLORTERM, TERM, `--color`) and glyph sets (unicode, tty, ascii).

use super::colors::reduce;
pub use super::colors::ColorDepth;
use anyhow::{bail, Context, Result};
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Themes compiled into the binary, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
    ("console16", include_str!("../../themes/console16.toml")),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlyphSet {
    Unicode,
    /// The Linux console font: block elements yes, eighth blocks and braille no.
    Tty,
    Ascii,
}

impl GlyphSet {
    pub fn detect(flag: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Result<GlyphSet> {
        if let Some(f) = flag.filter(|f| *f != "auto") {
            return Ok(match f {
                "unicode" => GlyphSet::Unicode,
                "tty" => GlyphSet::Tty,
                "ascii" => GlyphSet::Ascii,
                other => bail!("--glyphs must be auto, unicode, tty or ascii, not {other:?}"),
            });
        }
        // A VT100-class terminal (or `dumb`) draws only ASCII, whatever the locale says: its
        // character set has no box drawing or blocks, and UTF-8 bytes arrive as garbage.
        if super::colors::no_colour_term(&env("TERM").unwrap_or_default()) {
            return Ok(GlyphSet::Ascii);
        }
        // The first of LC_ALL, LC_CTYPE, LANG that is set decides, as in setlocale(3).
        let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
            .iter()
            .find_map(|k| env(k).filter(|v| !v.is_empty()))
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !(locale.contains("utf-8") || locale.contains("utf8")) {
            return Ok(GlyphSet::Ascii);
        }
        if env("TERM").as_deref() == Some("linux") {
            return Ok(GlyphSet::Tty);
        }
        Ok(GlyphSet::Unicode)
    }

    /// Sparkline/heat levels, lowest first.
    pub fn levels(self) -> &'static [char] {
        match self {
            GlyphSet::Unicode => &[' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'],
            GlyphSet::Tty => &[' ', '░', '▒', '▓', '█'],
            GlyphSet::Ascii => &[' ', '.', ':', '-', '=', '+', '*', '#', '@'],
        }
    }

    /// (dirty, writeback, empty) cells of the dirty gauge.
    pub fn gauge(self) -> (char, char, char) {
        match self {
            GlyphSet::Unicode | GlyphSet::Tty => ('█', '▓', '░'),
            GlyphSet::Ascii => ('#', '=', '.'),
        }
    }

    /// Timeline bar cells: (played, ahead, cursor, gap, action). The Linux console font has the
    /// CP437 block and line glyphs but not the geometric shapes.
    pub fn timeline(self) -> [char; 5] {
        match self {
            GlyphSet::Unicode => ['━', '─', '●', '╳', '◆'],
            GlyphSet::Tty => ['═', '─', '█', 'x', '*'],
            GlyphSet::Ascii => ['=', '-', '|', 'x', '*'],
        }
    }

    /// Borders of popups (help, tweak dialogs): box drawing, or `+-|` in ASCII.
    pub fn border(self) -> ratatui::symbols::border::Set<'static> {
        match self {
            GlyphSet::Unicode | GlyphSet::Tty => ratatui::symbols::border::PLAIN,
            GlyphSet::Ascii => super::ascii::BORDER,
        }
    }

    /// Text for the screen in this glyph set: in ASCII, `µs` as `us`, `±` as `+-`, `→` as `->`
    /// and so on (see `ascii::text`); the other sets take it as it is.
    pub fn text(self, s: &str) -> std::borrow::Cow<'_, str> {
        match self {
            GlyphSet::Ascii => super::ascii::text(s),
            GlyphSet::Unicode | GlyphSet::Tty => std::borrow::Cow::Borrowed(s),
        }
    }

    pub fn level(self, frac: f64) -> char {
        let l = self.levels();
        let f = if frac.is_finite() {
            frac.clamp(0.0, 1.0)
        } else {
            0.0
        };
        l[(f * (l.len() - 1) as f64).round() as usize]
    }
}

/// Colour roles of a theme file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: String,
    fg: String,
    dim: String,
    title: String,
    focus: String,
    headline: String,
    good: String,
    warn: String,
    crit: String,
    info: String,
    dirty: String,
    writeback: String,
    marker: String,
    selection_fg: String,
    selection_bg: String,
    /// Roles to use instead at 16 colours, where the nearest ANSI colour of two roles can be the
    /// same (light's brown warn and red crit both come out red). Same keys as above.
    #[serde(default)]
    ansi16: std::collections::BTreeMap<String, String>,
}

impl ThemeFile {
    /// The file with its `[ansi16]` roles put in place (at 16 colours only).
    fn at_depth(mut self, depth: ColorDepth) -> Result<ThemeFile> {
        let table = std::mem::take(&mut self.ansi16);
        for (role, colour) in table {
            parse_color(&colour)?;
            let slot = match role.as_str() {
                "fg" => &mut self.fg,
                "dim" => &mut self.dim,
                "title" => &mut self.title,
                "focus" => &mut self.focus,
                "headline" => &mut self.headline,
                "good" => &mut self.good,
                "warn" => &mut self.warn,
                "crit" => &mut self.crit,
                "info" => &mut self.info,
                "dirty" => &mut self.dirty,
                "writeback" => &mut self.writeback,
                "marker" => &mut self.marker,
                "selection_fg" => &mut self.selection_fg,
                "selection_bg" => &mut self.selection_bg,
                other => bail!("[ansi16] has {other:?}, which is not a colour role"),
            };
            // Checked at every depth, so a typo shows on any terminal, not only on a console.
            if depth == ColorDepth::Ansi16 {
                *slot = colour;
            }
        }
        Ok(self)
    }
}

/// Resolved styles, already reduced to the terminal's colour depth.
#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    pub depth: ColorDepth,
    pub glyphs: GlyphSet,
    pub text: Style,
    pub dim: Style,
    pub title: Style,
    pub focus: Style,
    pub headline: Style,
    pub good: Style,
    pub warn: Style,
    pub crit: Style,
    pub info: Style,
    pub dirty: Style,
    pub writeback: Style,
    pub marker: Style,
    pub selection: Style,
}

fn parse_color(s: &str) -> Result<Color> {
    Color::from_str(s)
        .map_err(|_| anyhow::anyhow!("{s:?} is not a colour (name, #rrggbb or 0-255)"))
}

impl Theme {
    /// Loads a theme by name: a user file `$XDG_CONFIG_HOME/perftop/themes/NAME.toml` (or
    /// `~/.config/...`) wins over the built-in one; a path ending in `.toml` is read directly.
    pub fn load(name: &str, depth: ColorDepth, glyphs: GlyphSet) -> Result<Theme> {
        let text = if name.ends_with(".toml") {
            crate::root::read_regular_text(Path::new(name), crate::config::MAX_CONFIG_BYTES)
                .with_context(|| format!("reading theme {name}"))?
        } else if let Some(path) = user_theme_path(name).filter(|p| p.is_file()) {
            crate::root::read_regular_text(&path, crate::config::MAX_CONFIG_BYTES)
                .with_context(|| format!("reading theme {}", path.display()))?
        } else {
            BUILTIN
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, t)| t.to_string())
                .with_context(|| {
                    let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
                    format!("no theme {name:?} (built in: {})", names.join(", "))
                })?
        };
        Theme::parse(&text, depth, glyphs).with_context(|| format!("theme {name}"))
    }

    pub fn parse(text: &str, depth: ColorDepth, glyphs: GlyphSet) -> Result<Theme> {
        let f: ThemeFile = toml::from_str(text).context("not a perftop theme file")?;
        let f = f.at_depth(depth)?;
        let mono = depth == ColorDepth::Mono;
        // Colours are validated at every depth; monochrome then sets none at all.
        let fg = |s: &str| -> Result<Style> {
            let c = parse_color(s)?;
            Ok(if mono {
                Style::default()
            } else {
                Style::default().fg(reduce(c, depth))
            })
        };
        // Without colour, emphasis comes from modifiers alone, and the selection stays visible.
        let m = |style: Style, modifier: Modifier| {
            if mono {
                Style::default().add_modifier(modifier)
            } else {
                style
            }
        };
        Ok(Theme {
            name: f.name.clone(),
            depth,
            glyphs,
            text: fg(&f.fg)?,
            dim: m(fg(&f.dim)?, Modifier::DIM),
            title: m(fg(&f.title)?.add_modifier(Modifier::BOLD), Modifier::BOLD),
            focus: m(
                fg(&f.focus)?.add_modifier(Modifier::BOLD),
                Modifier::REVERSED,
            ),
            headline: m(fg(&f.headline)?, Modifier::empty()),
            good: m(fg(&f.good)?, Modifier::empty()),
            warn: m(fg(&f.warn)?, Modifier::BOLD),
            crit: m(
                fg(&f.crit)?.add_modifier(Modifier::BOLD),
                Modifier::BOLD | Modifier::REVERSED,
            ),
            info: m(fg(&f.info)?, Modifier::empty()),
            dirty: m(fg(&f.dirty)?, Modifier::BOLD),
            writeback: m(fg(&f.writeback)?, Modifier::empty()),
            marker: m(fg(&f.marker)?.add_modifier(Modifier::BOLD), Modifier::BOLD),
            selection: if mono {
                parse_color(&f.selection_fg)?;
                parse_color(&f.selection_bg)?;
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
                    .fg(reduce(parse_color(&f.selection_fg)?, depth))
                    .bg(reduce(parse_color(&f.selection_bg)?, depth))
            },
        })
    }
}

fn user_theme_path(name: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("perftop/themes").join(format!("{name}.toml")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn depth_detection_order() {
        let d = |p: &'static [(&'static str, &'static str)], f| {
            ColorDepth::detect(f, &env_of(p)).expect("depth")
        };
        assert_eq!(
            d(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")], None),
            ColorDepth::Mono
        );
        assert_eq!(d(&[("COLORTERM", "24bit")], None), ColorDepth::TrueColor);
        assert_eq!(d(&[("TERM", "xterm-256color")], None), ColorDepth::Ansi256);
        assert_eq!(d(&[("TERM", "linux")], None), ColorDepth::Ansi16);
        assert_eq!(d(&[("TERM", "xterm")], None), ColorDepth::Ansi16);
        assert_eq!(
            d(&[("TERM", "xterm-256color-italic")], None),
            ColorDepth::Ansi16,
            "only TERM ending in 256color"
        );
        assert_eq!(
            d(&[("TERM", "xterm"), ("COLORTERM", "yes")], None),
            ColorDepth::Ansi16
        );
        assert_eq!(d(&[("TERM", "xterm")], Some("never")), ColorDepth::Mono);
        assert_eq!(d(&[("TERM", "dumb")], None), ColorDepth::Mono);
        assert_eq!(d(&[("TERM", "vt100")], None), ColorDepth::Mono);
        assert_eq!(d(&[("TERM", "vt220")], None), ColorDepth::Mono);
        assert_eq!(d(&[("TERM", "vte")], None), ColorDepth::Ansi16);
        assert_eq!(d(&[("NO_COLOR", "1")], Some("256")), ColorDepth::Ansi256);
        assert!(ColorDepth::detect(Some("purple"), &env_of(&[])).is_err());
    }

    #[test]
    fn glyph_detection() {
        let g = |p: &'static [(&'static str, &'static str)]| {
            GlyphSet::detect(None, &env_of(p)).expect("glyphs")
        };
        assert_eq!(
            g(&[("LANG", "en_US.UTF-8"), ("TERM", "xterm")]),
            GlyphSet::Unicode
        );
        assert_eq!(
            g(&[("LANG", "en_US.UTF-8"), ("TERM", "linux")]),
            GlyphSet::Tty
        );
        assert_eq!(g(&[("LANG", "C")]), GlyphSet::Ascii);
        // A VT100 or a dumb terminal: ASCII even in a UTF-8 locale; GNOME's vte is not one.
        for term in ["vt100", "vt220", "vt52", "dumb"] {
            assert_eq!(
                GlyphSet::detect(None, &|k: &str| match k {
                    "TERM" => Some(term.to_string()),
                    "LANG" => Some("en_US.UTF-8".to_string()),
                    _ => None,
                })
                .expect("glyphs"),
                GlyphSet::Ascii,
                "{term}"
            );
        }
        assert_eq!(
            g(&[("LANG", "en_US.UTF-8"), ("TERM", "vte-256color")]),
            GlyphSet::Unicode
        );
        assert_eq!(
            g(&[("LC_ALL", "C"), ("LANG", "en_US.UTF-8")]),
            GlyphSet::Ascii
        );
    }

    #[test]
    fn builtin_themes_parse_at_every_depth() {
        for (name, _) in BUILTIN {
            for depth in [
                ColorDepth::Mono,
                ColorDepth::Ansi16,
                ColorDepth::Ansi256,
                ColorDepth::TrueColor,
            ] {
                let t = Theme::load(name, depth, GlyphSet::Ascii).expect("theme");
                if depth == ColorDepth::Mono {
                    assert_eq!(t.crit.fg, None, "mono sets no colour");
                    assert!(t.selection.add_modifier.contains(Modifier::REVERSED));
                }
            }
        }
        assert!(Theme::parse("name = 1", ColorDepth::Mono, GlyphSet::Ascii).is_err());
        assert!(Theme::load("nope", ColorDepth::Mono, GlyphSet::Ascii).is_err());
    }

    fn styles(t: &Theme) -> [Style; 13] {
        [
            t.text,
            t.dim,
            t.title,
            t.focus,
            t.headline,
            t.good,
            t.warn,
            t.crit,
            t.info,
            t.dirty,
            t.writeback,
            t.marker,
            t.selection,
        ]
    }

    /// A warning never looks like a critical finding, nor good like either, and the dirty gauge's
    /// two parts stay apart, in every built-in theme at every colour depth.
    #[test]
    fn severities_stay_distinct_at_every_depth() {
        for (name, _) in BUILTIN {
            for depth in [
                ColorDepth::Ansi16,
                ColorDepth::Ansi256,
                ColorDepth::TrueColor,
            ] {
                let t = Theme::load(name, depth, GlyphSet::Unicode).expect("theme");
                let pairs = [
                    ("warn", t.warn.fg, "crit", t.crit.fg),
                    ("good", t.good.fg, "warn", t.warn.fg),
                    ("good", t.good.fg, "crit", t.crit.fg),
                    ("dirty", t.dirty.fg, "writeback", t.writeback.fg),
                ];
                for (a, ca, b, cb) in pairs {
                    assert_ne!(
                        ca, cb,
                        "{name} at {depth:?}: {a} and {b} are the same colour"
                    );
                }
            }
        }
        let light = Theme::load("light", ColorDepth::Ansi16, GlyphSet::Unicode).expect("theme");
        assert_eq!(light.warn.fg, Some(Color::Magenta), "[ansi16] warn");
        assert_eq!(light.crit.fg, Some(Color::Red), "#d70000 nearest");
        let light = Theme::load("light", ColorDepth::Ansi256, GlyphSet::Unicode).expect("theme");
        assert_eq!(
            light.warn.fg,
            Some(Color::Indexed(130)),
            "#af5f00 kept at 256"
        );
        let bad = "name='x'\nfg='reset'\ndim='reset'\ntitle='reset'\nfocus='reset'\nheadline='reset'\ngood='reset'\nwarn='reset'\ncrit='reset'\ninfo='reset'\ndirty='reset'\nwriteback='reset'\nmarker='reset'\nselection_fg='reset'\nselection_bg='reset'\n[ansi16]\nbogus='red'\n";
        let err = Theme::parse(bad, ColorDepth::Ansi16, GlyphSet::Unicode).expect_err("bad role");
        assert!(format!("{err:#}").contains("bogus"), "{err:#}");
        assert!(Theme::parse(bad, ColorDepth::Ansi256, GlyphSet::Unicode).is_err());
    }

    /// Every colour of every built-in theme is within the depth: no index or RGB at 16
    /// colours (console16 names its colours by number 0-15), no RGB at 256.
    #[test]
    fn theme_colours_are_reduced_to_the_depth() {
        for (name, _) in BUILTIN {
            for depth in [ColorDepth::Ansi16, ColorDepth::Ansi256] {
                let t = Theme::load(name, depth, GlyphSet::Unicode).expect("theme");
                for style in styles(&t) {
                    for c in [style.fg, style.bg].into_iter().flatten() {
                        let bad = match depth {
                            ColorDepth::Ansi16 => matches!(c, Color::Rgb(..) | Color::Indexed(_)),
                            _ => matches!(c, Color::Rgb(..)),
                        };
                        assert!(!bad, "{name} at {depth:?}: {c:?}");
                    }
                }
            }
        }
        let c16 = Theme::load("console16", ColorDepth::Ansi16, GlyphSet::Tty).expect("theme");
        assert_eq!(c16.text.fg, Some(Color::Gray), "console16 fg = 7");
        assert_eq!(c16.crit.fg, Some(Color::LightRed), "console16 crit = 9");
        let hc =
            Theme::load("high-contrast", ColorDepth::Ansi256, GlyphSet::Unicode).expect("theme");
        assert_eq!(hc.crit.fg, Some(Color::Indexed(196)), "#ff0000 at 256");
    }
}
