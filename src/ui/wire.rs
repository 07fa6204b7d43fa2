//! The bytes of a frame: a ratatui backend over crossterm that writes the cells itself, so that
//! colours leave at the terminal's depth. crossterm writes `38;5;N` even for the 16 named
//! colours, which 16-colour terminals (TERM=linux, plain xterm) ignore or misread; here the 16
//! go out as SGR 30-37/90-97 (40-47/100-107), `38;5;N` only at 256 colours and `38;2;R;G;B`
//! only at 24-bit. Each colour is reduced to the depth on the way out too, so a style built
//! anywhere cannot send more than the terminal takes. Everything but drawing (cursor, clear,
//! size) is crossterm's.

use super::colors::{reduce, ANSI16};
use super::theme::ColorDepth;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::{Color, Modifier};
use std::cell::Cell as Remembered;
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// How long the terminal's size is taken as known without asking again. ratatui asks before
/// every frame, and crossterm opens `/dev/tty` to answer (open, ioctl, close: ~2 % of the idle
/// dashboard's CPU). A resize is told by its event (`forget_size`); this only bounds how long a
/// resize whose event was lost could go unseen.
const SIZE_KNOWN_FOR: Duration = Duration::from_secs(5);

pub struct Wire<W: Write> {
    inner: CrosstermBackend<W>,
    depth: ColorDepth,
    /// The size last asked, and when.
    size: Remembered<Option<(Size, Instant)>>,
}

impl<W: Write> Wire<W> {
    pub fn new(out: W, depth: ColorDepth) -> Wire<W> {
        Wire {
            inner: CrosstermBackend::new(out),
            depth,
            size: Remembered::new(None),
        }
    }

    /// The terminal was resized (or may have been: a repaint, a resume): the next frame asks.
    pub fn forget_size(&self) {
        self.size.set(None);
    }
}

/// SGR parameter of a colour already reduced to the depth; `base` is 30 (foreground) or 40
/// (background).
fn colour_param(out: &mut Vec<String>, c: Color, base: u8) {
    let ext = base + 8;
    match c {
        Color::Reset => out.push((base + 9).to_string()),
        Color::Indexed(i) => out.push(format!("{ext};5;{i}")),
        Color::Rgb(r, g, b) => out.push(format!("{ext};2;{r};{g};{b}")),
        named => {
            let i = ANSI16.iter().position(|n| *n == named).unwrap_or(0) as u8;
            out.push(if i < 8 { base + i } else { base + 60 + i - 8 }.to_string());
        }
    }
}

/// SGR parameters that turn the attributes `from` into `to` (ratatui's crossterm backend's
/// rules: normal intensity, 22, clears both bold and dim, so what stays is set again).
fn modifier_params(out: &mut Vec<String>, from: Modifier, to: Modifier) {
    let removed = from - to;
    let added = to - from;
    let mut p = |n: u8| out.push(n.to_string());
    if removed.contains(Modifier::REVERSED) {
        p(27);
    }
    let reset_intensity = removed.intersects(Modifier::BOLD | Modifier::DIM);
    if reset_intensity {
        p(22);
        if to.contains(Modifier::DIM) {
            p(2);
        }
        if to.contains(Modifier::BOLD) {
            p(1);
        }
    }
    for (m, off) in [
        (Modifier::ITALIC, 23),
        (Modifier::UNDERLINED, 24),
        (Modifier::CROSSED_OUT, 29),
        (Modifier::HIDDEN, 28),
    ] {
        if removed.contains(m) {
            p(off);
        }
    }
    if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
        p(25);
    }
    for (m, on) in [
        (Modifier::REVERSED, 7),
        (Modifier::BOLD, 1),
        (Modifier::ITALIC, 3),
        (Modifier::UNDERLINED, 4),
        (Modifier::DIM, 2),
        (Modifier::CROSSED_OUT, 9),
        (Modifier::HIDDEN, 8),
        (Modifier::SLOW_BLINK, 5),
        (Modifier::RAPID_BLINK, 6),
    ] {
        let intensity = m == Modifier::BOLD || m == Modifier::DIM;
        if added.contains(m) && !(intensity && reset_intensity) {
            p(on);
        }
    }
}

/// Writes the changed cells: a cursor move where they are not contiguous, one SGR sequence
/// where attributes or colours change, the symbols; then resets the attributes.
pub fn encode<'a, W, I>(w: &mut W, content: I, depth: ColorDepth) -> io::Result<()>
where
    W: Write,
    I: Iterator<Item = (u16, u16, &'a Cell)>,
{
    let (mut fg, mut bg, mut modifier) = (Color::Reset, Color::Reset, Modifier::empty());
    let mut last: Option<(u16, u16)> = None;
    let mut params = Vec::new();
    for (x, y, cell) in content {
        if !matches!(last, Some((lx, ly)) if ly == y && lx.checked_add(1) == Some(x)) {
            write!(w, "\x1b[{};{}H", u32::from(y) + 1, u32::from(x) + 1)?;
        }
        last = Some((x, y));
        params.clear();
        if cell.modifier != modifier {
            modifier_params(&mut params, modifier, cell.modifier);
            modifier = cell.modifier;
        }
        let (cf, cb) = (reduce(cell.fg, depth), reduce(cell.bg, depth));
        if cf != fg {
            colour_param(&mut params, cf, 30);
            fg = cf;
        }
        if cb != bg {
            colour_param(&mut params, cb, 40);
            bg = cb;
        }
        if !params.is_empty() {
            write!(w, "\x1b[{}m", params.join(";"))?;
        }
        w.write_all(cell.symbol().as_bytes())?;
    }
    w.write_all(b"\x1b[0m")
}

impl<W: Write> Backend for Wire<W> {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        // CrosstermBackend writes through to its writer.
        encode(&mut self.inner, content, self.depth)
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.forget_size();
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.forget_size();
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        if let Some((size, at)) = self.size.get() {
            if at.elapsed() < SIZE_KNOWN_FOR {
                return Ok(size);
            }
        }
        let size = self.inner.size()?;
        self.size.set(Some((size, Instant::now())));
        Ok(size)
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::Style;

    fn frame(cells: &[(&'static str, Style)], depth: ColorDepth) -> String {
        let cells: Vec<Cell> = cells
            .iter()
            .map(|(s, st)| {
                let mut c = Cell::new(s);
                c.set_style(*st);
                c
            })
            .collect();
        let mut out = Vec::new();
        let content = cells.iter().enumerate().map(|(i, c)| (i as u16, 2, c));
        encode(&mut out, content, depth).expect("encode");
        String::from_utf8(out).expect("utf8")
    }

    #[test]
    fn sixteen_colours_are_sgr_30_to_37_and_90_to_97() {
        let s = frame(
            &[
                ("a", Style::default().fg(Color::Red)),
                ("b", Style::default().fg(Color::LightRed).bg(Color::Blue)),
                ("c", Style::default().fg(Color::Indexed(7))),
                ("d", Style::default().fg(Color::Rgb(255, 255, 0))),
                ("e", Style::default()),
            ],
            ColorDepth::Ansi16,
        );
        assert_eq!(
            s,
            "\x1b[3;1H\x1b[31ma\x1b[91;44mb\x1b[37;49mc\x1b[93md\x1b[39me\x1b[0m"
        );
    }

    #[test]
    fn indexed_only_at_256_and_rgb_only_at_truecolor() {
        let cells = [
            ("a", Style::default().fg(Color::Rgb(255, 0, 0))),
            (
                "b",
                Style::default().fg(Color::Indexed(100)).bg(Color::Gray),
            ),
        ];
        assert_eq!(
            frame(&cells, ColorDepth::Ansi256),
            "\x1b[3;1H\x1b[38;5;196ma\x1b[38;5;100;47mb\x1b[0m"
        );
        assert_eq!(
            frame(&cells, ColorDepth::TrueColor),
            "\x1b[3;1H\x1b[38;2;255;0;0ma\x1b[38;5;100;47mb\x1b[0m"
        );
        // Monochrome: the same cells without any colour.
        assert_eq!(frame(&cells, ColorDepth::Mono), "\x1b[3;1Hab\x1b[0m");
    }

    #[test]
    fn attributes_change_with_the_fewest_codes() {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let dim_rev = Style::default().add_modifier(Modifier::DIM | Modifier::REVERSED);
        let s = frame(
            &[
                ("a", bold),
                ("b", bold),
                ("c", dim_rev),
                ("d", Style::default()),
            ],
            ColorDepth::Mono,
        );
        // bold; bold stays; bold off (22) and dim back on, reverse on; both off.
        assert_eq!(s, "\x1b[3;1H\x1b[1mab\x1b[22;2;7mc\x1b[27;22md\x1b[0m");
    }

    #[test]
    fn cursor_moves_only_where_cells_are_not_contiguous() {
        let (a, b, c) = (Cell::new("a"), Cell::new("b"), Cell::new("c"));
        let mut out = Vec::new();
        let content = [(0u16, 0u16, &a), (1, 0, &b), (5, 1, &c)].into_iter();
        encode(&mut out, content, ColorDepth::Ansi16).expect("encode");
        assert_eq!(out, b"\x1b[1;1Hab\x1b[2;6Hc\x1b[0m");
    }
}
