//! The step transform of format 2: a sample's JSON split into its *skeleton* (the JSON with each
//! number replaced by `#`) and its *column* (the numbers, comma-separated, in order), with each
//! integer in the column written as its difference from the same field of the previous sample;
//! and back.
//!
//! Consecutive samples of a quiet host differ in a few dozen counters, each by a small amount:
//! the skeleton is usually the previous one byte for byte, and the column is the previous column
//! with a few dozen short numbers changed, which zstd (with the previous column as dictionary)
//! stores in a few bytes each. Measured on an idle 2-vCPU VM (docs/recording.md): ~280 B per
//! sample against ~420 B for the differenced JSON kept whole, and ~640 B for the JSON itself
//! against its keyframe (format 1).
//!
//! A field is named by its path, hashed: object keys, array indexes — except that an array
//! element that is an object whose first member is a number or a string (`{"pid":669,...}`,
//! `{"name":"vda",...}`) is named by that member, so a process list that gains or loses an entry
//! still pairs each process with itself. That first member is written as it is (never as a
//! difference): the decoder needs it to name the element before it meets the element's numbers.
//!
//! The rule the decoder applies, which the encoder guarantees: an integer token in the
//! transformed text is a difference exactly when the previous sample held an integer at the
//! same path; anything else (a float, a string, a field the previous sample did not have) is
//! written as it is. Only canonical integers of at most 20 digits (all serde writes) are
//! differenced; a sample with any other integer where the previous one had an integer is not
//! encoded this way ([`encode`] fails and the writer writes a keyframe). Paths are hashed, so two
//! paths may share a hash: both sides then pair the same fields, which costs bytes, never
//! correctness.

use super::numfields::Cursor;
pub use super::numfields::Fields;

pub mod direct;

impl Fields {
    /// The fields of a sample's plain JSON (a keyframe).
    pub fn of(json: &[u8]) -> Result<Fields, String> {
        let mut f = Fields::default();
        let (mut skel, mut col) = (Vec::new(), Vec::new());
        encode(json, &Fields::default(), &mut skel, &mut col, &mut f)?;
        Ok(f)
    }
}

/// Splits `cur` (a sample's JSON) into `skel` and `col`, its integers as differences from
/// `prev`, and fills `next` with `cur`'s fields. Fails (and the caller writes a keyframe instead)
/// on text that is not JSON, or an integer this transform cannot difference where `prev` has one.
pub fn encode(
    cur: &[u8],
    prev: &Fields,
    skel: &mut Vec<u8>,
    col: &mut Vec<u8>,
    next: &mut Fields,
) -> Result<(), String> {
    col.clear();
    scan(cur, prev, skel, Col::Out(col), next, usize::MAX)
}

/// The inverse of [`encode`]: the sample's JSON (into `json`) from its skeleton and column and
/// the previous sample's fields; an error, as soon as it is known, when the JSON would be longer
/// than `limit` bytes (a short column entry can stand for a 40-digit number, so a skeleton of
/// `#,#,#...` within any limit could make JSON 20 times its size).
pub fn decode(
    skel: &[u8],
    col: &[u8],
    prev: &Fields,
    json: &mut Vec<u8>,
    next: &mut Fields,
    limit: usize,
) -> Result<(), String> {
    scan(skel, prev, json, Col::In(col, 0), next, limit)
}

/// Where the numbers go (encoding) or come from (decoding, with the read position).
enum Col<'a> {
    Out(&'a mut Vec<u8>),
    In(&'a [u8], usize),
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn mix(h: u64, tag: u8, bytes: &[u8]) -> u64 {
    let mut h = (h ^ u64::from(tag)).wrapping_mul(FNV_PRIME);
    for b in bytes {
        h = (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME);
    }
    // One more round so short components spread over all bits.
    (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
}

enum Frame {
    Obj {
        hash: u64,
        /// The current member's key, hashed into this object's path.
        key: Option<u64>,
        /// An array element whose first member has not been read yet (it may name it).
        naming: Option<u64>,
    },
    Arr {
        hash: u64,
        index: u64,
    },
}

/// A canonical integer of at most 20 digits (`0`, `-12`, not `007`, `-0` or `1e3`).
fn canonical_int(tok: &[u8]) -> Option<i128> {
    let digits = tok.strip_prefix(b"-").unwrap_or(tok);
    if digits.is_empty()
        || digits.len() > 20
        || (digits.len() > 1 && digits[0] == b'0')
        || tok == b"-0"
    {
        return None;
    }
    let v = digits_value(digits)?;
    Some(if digits.len() < tok.len() { -v } else { v })
}

/// The value of 1 to 21 ASCII digits (`None` for any other byte): at most 10^21 - 1, which
/// an `i128` holds with room to spare.
fn digits_value(digits: &[u8]) -> Option<i128> {
    let mut v: u128 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u128::from(d);
    }
    i128::try_from(v).ok()
}

/// Any integer token the decoder may meet as a difference (up to 21 digits).
fn any_int(tok: &[u8]) -> Option<i128> {
    let digits = tok.strip_prefix(b"-").unwrap_or(tok);
    if digits.is_empty() || digits.len() > 21 {
        return None;
    }
    let v = digits_value(digits)?;
    Some(if digits.len() < tok.len() { -v } else { v })
}

/// Where one pass over a sample's JSON stands: which field the next value is. The byte scan
/// ([`encode`], [`decode`]) and the serializer's formatter ([`direct`]) both drive it, event by
/// event, so the two name every number alike.
pub(super) struct Paths {
    stack: Vec<Frame>,
}

impl Paths {
    pub(super) fn new() -> Paths {
        Paths {
            stack: Vec::with_capacity(16),
        }
    }

    /// The path of the value about to be read, or 0 at the top level.
    fn value_path(&self) -> u64 {
        match self.stack.last() {
            Some(Frame::Obj { hash, key, .. }) => mix(*hash, b'k', &key.unwrap_or(0).to_le_bytes()),
            Some(Frame::Arr { hash, index }) => mix(*hash, b'i', &index.to_le_bytes()),
            None => 0,
        }
    }

    /// In an object, a string is a key when no key is pending.
    fn expecting_key(&self) -> bool {
        matches!(self.stack.last(), Some(Frame::Obj { key: None, .. }))
    }

    /// After a member's value: the key is consumed, and the element can no longer be named.
    fn value_done(&mut self, name: Option<&[u8]>) {
        if let Some(Frame::Obj { hash, key, naming }) = self.stack.last_mut() {
            if let Some(parent) = naming.take() {
                if let (Some(n), Some(k)) = (name, *key) {
                    let h = mix(parent, b'n', &k.to_le_bytes());
                    *hash = mix(h, b'v', n);
                }
            }
            *key = None;
        }
    }

    /// `{` (`obj`) or `[`.
    pub(super) fn open(&mut self, obj: bool) -> Result<(), String> {
        let parent = match self.stack.last() {
            Some(Frame::Arr { hash, .. }) => Some(*hash),
            _ => None,
        };
        let hash = self.value_path();
        self.value_done(None);
        self.stack.push(match obj {
            true => Frame::Obj {
                hash,
                key: None,
                naming: parent,
            },
            false => Frame::Arr { hash, index: 0 },
        });
        if self.stack.len() > 256 {
            return Err("nested too deep".into());
        }
        Ok(())
    }

    /// `}` (`obj`) or `]`: whether it closes what is open.
    pub(super) fn close(&mut self, obj: bool) -> bool {
        matches!(
            (obj, self.stack.pop()),
            (true, Some(Frame::Obj { .. })) | (false, Some(Frame::Arr { .. }))
        )
    }

    /// A `,`: the next element of an array.
    pub(super) fn comma(&mut self) {
        if let Some(Frame::Arr { index, .. }) = self.stack.last_mut() {
            *index += 1;
        }
    }

    /// A string, quotes and escapes as written: a key, or a value (which may name its element).
    pub(super) fn string(&mut self, s: &[u8]) {
        if self.expecting_key() {
            if let Some(Frame::Obj { key, .. }) = self.stack.last_mut() {
                *key = Some(mix(0, b's', s));
            }
        } else {
            self.value_done(Some(s));
        }
    }

    /// `true`, `false` or `null`.
    pub(super) fn literal(&mut self) -> Result<(), String> {
        if self.expecting_key() {
            return Err("a literal where a key belongs".into());
        }
        self.value_done(None);
        Ok(())
    }

    /// A number `tok`: the path of its field, or `None` when it names its element (and is
    /// written as it is).
    pub(super) fn number(&mut self, tok: &[u8]) -> Result<Option<u64>, String> {
        if self.expecting_key() {
            return Err("number where a key belongs".into());
        }
        if let Some(Frame::Obj {
            naming: Some(_), ..
        }) = self.stack.last()
        {
            self.value_done(Some(tok));
            return Ok(None);
        }
        let path = self.value_path();
        self.value_done(None);
        Ok(Some(path))
    }

    pub(super) fn is_closed(&self) -> bool {
        self.stack.is_empty()
    }
}

/// Encoding one number at `path`, read as `int` when it is a canonical integer: looks it up in
/// `prev`, records it in `next`, and returns the difference to write (`None`: as it is).
pub(super) fn encode_number(
    tok: &[u8],
    int: Option<i128>,
    path: u64,
    prev: &Fields,
    next: &mut Fields,
    cursor: &mut Cursor,
) -> Result<Option<i128>, String> {
    let p = prev.get(path, cursor);
    let diff = match (int, p) {
        (Some(v), p) => p.map(|p| v - p),
        (None, Some(_)) if !tok.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) => {
            return Err(format!(
                "integer {} cannot be differenced",
                String::from_utf8_lossy(tok)
            ));
        }
        (None, _) => None,
    };
    next.push(path, int, cursor);
    Ok(diff)
}

/// One pass over `src` (JSON when encoding, a skeleton when decoding) writing `out` (the
/// skeleton, or the JSON, at most `limit` bytes), the numbers to or from `col`, and `next`.
fn scan(
    src: &[u8],
    prev: &Fields,
    out: &mut Vec<u8>,
    mut col: Col,
    next: &mut Fields,
    limit: usize,
) -> Result<(), String> {
    out.clear();
    next.clear();
    let mut cursor = Cursor::new();
    let mut paths = Paths::new();
    let mut pos = 0;
    while let Some(&c) = src.get(pos) {
        match c {
            b'{' | b'[' => {
                paths.open(c == b'{')?;
                out.push(c);
                pos += 1;
            }
            b'}' | b']' => {
                if !paths.close(c == b'}') {
                    return Err(format!("unbalanced '{}' at byte {pos}", c as char));
                }
                out.push(c);
                pos += 1;
            }
            b',' => {
                paths.comma();
                out.push(c);
                pos += 1;
            }
            b':' | b' ' | b'\n' | b'\t' | b'\r' => {
                out.push(c);
                pos += 1;
            }
            b'"' => {
                let start = pos;
                pos += 1;
                loop {
                    // To the next quote or backslash in one search, not a match a byte.
                    let rest = src.get(pos..).unwrap_or_default();
                    match rest.iter().position(|b| matches!(b, b'"' | b'\\')) {
                        Some(i) if rest[i] == b'\\' => pos += i + 2,
                        Some(i) => {
                            pos += i + 1;
                            break;
                        }
                        None => return Err("unterminated string".into()),
                    }
                }
                let s = src.get(start..pos).ok_or("unterminated string")?;
                paths.string(s);
                out.extend_from_slice(s);
            }
            b'-' | b'0'..=b'9' | b'#' => {
                let start = pos;
                let tok = match &mut col {
                    Col::Out(_) if c != b'#' => {
                        while src.get(pos).is_some_and(|b| {
                            matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                        }) {
                            pos += 1;
                        }
                        src.get(start..pos).ok_or("bad number")?
                    }
                    Col::In(numbers, at) if c == b'#' => {
                        pos += 1;
                        let numbers: &[u8] = numbers;
                        let rest = numbers.get(*at..).ok_or("column too short")?;
                        let len = rest.iter().position(|b| *b == b',').unwrap_or(rest.len());
                        *at += len + 1;
                        rest.get(..len).ok_or("column too short")?
                    }
                    _ => return Err(format!("unexpected byte {c:#04x} at byte {pos}")),
                };
                if tok.is_empty() {
                    return Err(format!("column too short at byte {start}"));
                }
                let path = paths
                    .number(tok)
                    .map_err(|e| format!("{e} at byte {start}"))?;
                // What the number is written as: itself, or its difference from `prev`.
                let diff = match (path, &col) {
                    // An element's name: as it is, never a difference.
                    (None, _) => None,
                    (Some(path), Col::Out(_)) => {
                        encode_number(tok, canonical_int(tok), path, prev, next, &mut cursor)?
                    }
                    (Some(path), Col::In(..)) => {
                        // What `next` holds at `path`: the integer read, if any.
                        let (int, diff) = match (any_int(tok), prev.get(path, &mut cursor)) {
                            (Some(d), Some(p)) => (Some(d + p), Some(d + p)),
                            (Some(_), None) => (canonical_int(tok), None),
                            (None, _) => (None, None),
                        };
                        next.push(path, int, &mut cursor);
                        diff
                    }
                };
                let dst = match &mut col {
                    Col::Out(numbers) => {
                        out.push(b'#');
                        if !numbers.is_empty() {
                            numbers.push(b',');
                        }
                        numbers
                    }
                    Col::In(..) => &mut *out,
                };
                match diff {
                    Some(v) => write_int(dst, v),
                    None => dst.extend_from_slice(tok),
                }
                // Everything else is copied from `src`; only numbers can outgrow it.
                if out.len() > limit {
                    return Err(format!("decodes to more than {limit} bytes"));
                }
            }
            b't' | b'f' | b'n' => {
                let start = pos;
                while src.get(pos).is_some_and(u8::is_ascii_lowercase) {
                    pos += 1;
                }
                let tok = src.get(start..pos).ok_or("bad literal")?;
                if !matches!(tok, b"true" | b"false" | b"null") || paths.literal().is_err() {
                    return Err(format!("unexpected token at byte {start}"));
                }
                out.extend_from_slice(tok);
            }
            _ => return Err(format!("unexpected byte {c:#04x} at byte {pos}")),
        }
    }
    if !paths.is_closed() {
        return Err("truncated JSON".into());
    }
    if out.len() > limit {
        return Err(format!("decodes to more than {limit} bytes"));
    }
    if let Col::In(numbers, at) = col {
        if at < numbers.len() {
            return Err("column longer than its skeleton".into());
        }
    }
    prev.hand_on(&cursor, next);
    Ok(())
}

fn write_int(out: &mut Vec<u8>, v: i128) {
    // Digits from the right into a stack buffer: `write!` of an i128 goes through u128
    // division and the formatter, several times slower, once per number of every sample. Nearly
    // every number fits a u64, whose division by 10 is a multiply; u128's is a library call.
    if v < 0 {
        out.push(b'-');
    }
    let m = v.unsigned_abs();
    match u64::try_from(m) {
        Ok(m) => out.extend_from_slice(u64_digits(m, &mut [0; 20])),
        // Past a u64 (a difference across the sign, or of two 20-digit numbers): rare enough
        // for the formatter.
        Err(_) => {
            use std::io::Write;
            let _ = write!(out, "{m}");
        }
    }
}

/// The decimal digits of `m` (what `{}` prints for it), written from the right into `buf`.
pub(crate) fn u64_digits(mut m: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    &buf[i..]
}

#[cfg(test)]
mod tests;
