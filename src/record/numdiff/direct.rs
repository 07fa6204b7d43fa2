//! The step transform straight from serde: a value split into its skeleton and column as
//! [`super::encode`] splits its JSON, without writing the JSON and reading it back.
//!
//! Why: the recorder wrote each sample's ~23 KB of JSON and then scanned it byte by byte for
//! its numbers; the two were 27 % of its CPU an interval on a 2-vCPU VM. serde_json's own
//! serializer still lays the value out (its key order, string escapes and float text), but
//! through a [`Formatter`] that writes the skeleton and takes each number as a number: `#`
//! in the skeleton, the number or its difference in the column. The skeleton is what the scan
//! would make of that JSON, so the reader decodes it unchanged, and the path of each number is
//! worked out by the same [`Paths`] the scan drives (the tests hold the two to the same
//! bytes).

use super::{canonical_int, encode_number, u64_digits, write_int, Cursor, Fields, Paths};
use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};
use std::io::{self, Write};

/// What [`encode`] made beyond the skeleton and column.
pub struct Encoded {
    /// The length of the JSON the value would have been: what picks the zstd level.
    pub json_len: usize,
}

/// Splits `value` into `skel` and `col` against `prev`, filling `next`, as
/// [`super::encode`] splits `serde_json::to_vec(value)`.
pub fn encode<T: Serialize + ?Sized>(
    value: &T,
    prev: &Fields,
    skel: &mut Vec<u8>,
    col: &mut Vec<u8>,
    next: &mut Fields,
) -> Result<Encoded, String> {
    skel.clear();
    col.clear();
    next.clear();
    let mut f = Direct {
        skel,
        col,
        prev,
        next,
        paths: Paths::new(),
        cursor: Cursor::new(),
        string_at: None,
        numbers: 0,
        number_bytes: 0,
        text: Vec::new(),
    };
    let mut ser = serde_json::Serializer::with_formatter(io::sink(), &mut f);
    value.serialize(&mut ser).map_err(|e| e.to_string())?;
    if !f.paths.is_closed() {
        return Err("the value's JSON does not close".into());
    }
    let Direct {
        skel,
        next,
        cursor,
        numbers,
        number_bytes,
        ..
    } = f;
    prev.hand_on(&cursor, next);
    Ok(Encoded {
        json_len: skel.len() - numbers + number_bytes,
    })
}

/// The formatter: serde_json's writer is a sink; everything goes to `skel` and `col`.
struct Direct<'a> {
    skel: &'a mut Vec<u8>,
    col: &'a mut Vec<u8>,
    prev: &'a Fields,
    next: &'a mut Fields,
    paths: Paths,
    cursor: Cursor,
    /// Where the string being written began in `skel` (its opening quote).
    string_at: Option<usize>,
    /// Numbers put in the column, and the bytes of their JSON text: the JSON's length.
    numbers: usize,
    number_bytes: usize,
    /// A number's text, reused.
    text: Vec<u8>,
}

fn err(e: String) -> io::Error {
    io::Error::other(e)
}

impl Direct<'_> {
    /// A number whose JSON text is `tok` (`int`: its value, when a canonical integer).
    fn number(&mut self, tok: &[u8], int: Option<i128>) -> io::Result<()> {
        if self.string_at.is_some() {
            // A map's integer key: text inside its string.
            self.skel.extend_from_slice(tok);
            return Ok(());
        }
        let diff = match self.paths.number(tok).map_err(err)? {
            None => None,
            Some(path) => encode_number(tok, int, path, self.prev, self.next, &mut self.cursor)
                .map_err(err)?,
        };
        self.skel.push(b'#');
        if !self.col.is_empty() {
            self.col.push(b',');
        }
        match diff {
            Some(v) => write_int(self.col, v),
            None => self.col.extend_from_slice(tok),
        }
        self.numbers += 1;
        self.number_bytes += tok.len();
        Ok(())
    }

    fn unsigned(&mut self, v: u64) -> io::Result<()> {
        let mut buf = [0; 20];
        self.number(u64_digits(v, &mut buf), Some(i128::from(v)))
    }

    fn signed(&mut self, v: i64) -> io::Result<()> {
        self.number_text(Some(i128::from(v)), |t| {
            if v < 0 {
                t.push(b'-');
            }
            t.extend_from_slice(u64_digits(v.unsigned_abs(), &mut [0; 20]));
            Ok(())
        })
    }

    /// A number `write` puts into the reused text buffer; `int` its value when known, else
    /// read from the text as the scan reads it (a float is none; an `i128` or `u128` is one
    /// within 20 digits).
    fn number_text(
        &mut self,
        int: Option<i128>,
        write: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        write(&mut text)?;
        let int = int.or_else(|| canonical_int(&text));
        let r = self.number(&text, int);
        self.text = text;
        r
    }

    /// `{` (`obj`) or `[`.
    fn open(&mut self, obj: bool) -> io::Result<()> {
        self.paths.open(obj).map_err(err)?;
        self.skel.push(if obj { b'{' } else { b'[' });
        Ok(())
    }

    /// `}` (`obj`) or `]`.
    fn close(&mut self, obj: bool) -> io::Result<()> {
        if !self.paths.close(obj) {
            return Err(err("a close without its open".into()));
        }
        self.skel.push(if obj { b'}' } else { b']' });
        Ok(())
    }

    /// Before an element or a member: a `,` unless it is the first.
    fn comma(&mut self, first: bool) {
        if !first {
            self.paths.comma();
            self.skel.push(b',');
        }
    }

    fn literal(&mut self, text: &[u8]) -> io::Result<()> {
        if self.string_at.is_none() {
            self.paths.literal().map_err(err)?;
        }
        self.skel.extend_from_slice(text);
        Ok(())
    }
}

/// serde_json's integer methods, each widened into the one that takes its sign.
macro_rules! ints {
    ($($name:ident: $t:ty => $via:ident;)*) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, _: &mut W, v: $t) -> io::Result<()> {
            self.$via(v.into())
        }
    )*};
}

/// An array's (or an object's) open, close, and what comes before each element (or member).
macro_rules! container {
    ($begin:ident, $end:ident, $each:ident, $obj:expr) => {
        fn $begin<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
            self.open($obj)
        }
        fn $end<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
            self.close($obj)
        }
        fn $each<W: ?Sized + io::Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
            self.comma(first);
            Ok(())
        }
    };
}

impl Formatter for &mut Direct<'_> {
    fn write_null<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.literal(b"null")
    }
    fn write_bool<W: ?Sized + io::Write>(&mut self, _: &mut W, v: bool) -> io::Result<()> {
        self.literal(if v { b"true" } else { b"false" })
    }
    ints! {
        write_i8: i8 => signed;
        write_i16: i16 => signed;
        write_i32: i32 => signed;
        write_i64: i64 => signed;
        write_u8: u8 => unsigned;
        write_u16: u16 => unsigned;
        write_u32: u32 => unsigned;
        write_u64: u64 => unsigned;
    }
    fn write_i128<W: ?Sized + io::Write>(&mut self, _: &mut W, v: i128) -> io::Result<()> {
        self.number_text(None, |t| write!(t, "{v}"))
    }
    fn write_u128<W: ?Sized + io::Write>(&mut self, _: &mut W, v: u128) -> io::Result<()> {
        self.number_text(None, |t| write!(t, "{v}"))
    }
    fn write_f32<W: ?Sized + io::Write>(&mut self, _: &mut W, v: f32) -> io::Result<()> {
        self.number_text(None, |t| CompactFormatter.write_f32(t, v))
    }
    fn write_f64<W: ?Sized + io::Write>(&mut self, _: &mut W, v: f64) -> io::Result<()> {
        self.number_text(None, |t| CompactFormatter.write_f64(t, v))
    }
    fn write_number_str<W: ?Sized + io::Write>(&mut self, _: &mut W, _: &str) -> io::Result<()> {
        // Only with serde_json's arbitrary_precision, which perftop does not build with.
        Err(err("a number as text".into()))
    }
    fn begin_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.string_at = Some(self.skel.len());
        self.skel.push(b'"');
        Ok(())
    }
    fn end_string<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.skel.push(b'"');
        let at = self.string_at.take().unwrap_or(0);
        let s = self.skel.get(at..).unwrap_or_default();
        self.paths.string(s);
        Ok(())
    }
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.skel.extend_from_slice(fragment.as_bytes());
        Ok(())
    }
    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        _: &mut W,
        e: CharEscape,
    ) -> io::Result<()> {
        CompactFormatter.write_char_escape(self.skel, e)
    }
    container!(begin_array, end_array, begin_array_value, false);
    container!(begin_object, end_object, begin_object_key, true);
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.skel.push(b':');
        Ok(())
    }
    fn write_raw_fragment<W: ?Sized + io::Write>(&mut self, _: &mut W, _: &str) -> io::Result<()> {
        // Only with serde_json's raw_value, which perftop does not build with.
        Err(err("a raw JSON fragment".into()))
    }
}

#[cfg(test)]
mod tests;
