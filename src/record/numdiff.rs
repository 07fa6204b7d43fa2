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
    // Decoding writes the JSON; a string or key is copied from the skeleton as it is.
    let mut stack: Vec<Frame> = Vec::with_capacity(16);
    let mut pos = 0;
    // The path of the value about to be read, or None at the top level.
    fn value_path(stack: &[Frame]) -> u64 {
        match stack.last() {
            Some(Frame::Obj { hash, key, .. }) => mix(*hash, b'k', &key.unwrap_or(0).to_le_bytes()),
            Some(Frame::Arr { hash, index }) => mix(*hash, b'i', &index.to_le_bytes()),
            None => 0,
        }
    }
    // In an object, a string is a key when no key is pending.
    let expecting_key =
        |stack: &[Frame]| matches!(stack.last(), Some(Frame::Obj { key: None, .. }));
    // After a member's value: the key is consumed, and the element can no longer be named.
    fn value_done(stack: &mut [Frame], name: Option<&[u8]>) {
        if let Some(Frame::Obj { hash, key, naming }) = stack.last_mut() {
            if let Some(parent) = naming.take() {
                if let (Some(n), Some(k)) = (name, *key) {
                    let h = mix(parent, b'n', &k.to_le_bytes());
                    *hash = mix(h, b'v', n);
                }
            }
            *key = None;
        }
    }
    while let Some(&c) = src.get(pos) {
        match c {
            b'{' | b'[' => {
                let in_arr = matches!(stack.last(), Some(Frame::Arr { .. }));
                let parent = match stack.last() {
                    Some(Frame::Arr { hash, .. }) => Some(*hash),
                    _ => None,
                };
                let hash = value_path(&stack);
                value_done(&mut stack, None);
                if c == b'{' {
                    stack.push(Frame::Obj {
                        hash,
                        key: None,
                        naming: if in_arr { parent } else { None },
                    });
                } else {
                    stack.push(Frame::Arr { hash, index: 0 });
                }
                if stack.len() > 256 {
                    return Err("nested too deep".into());
                }
                out.push(c);
                pos += 1;
            }
            b'}' | b']' => {
                let ok = matches!(
                    (c, stack.pop()),
                    (b'}', Some(Frame::Obj { .. })) | (b']', Some(Frame::Arr { .. }))
                );
                if !ok {
                    return Err(format!("unbalanced '{}' at byte {pos}", c as char));
                }
                out.push(c);
                pos += 1;
            }
            b',' => {
                if let Some(Frame::Arr { index, .. }) = stack.last_mut() {
                    *index += 1;
                }
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
                if expecting_key(&stack) {
                    if let Some(Frame::Obj { key, .. }) = stack.last_mut() {
                        *key = Some(mix(0, b's', s));
                    }
                } else {
                    value_done(&mut stack, Some(s));
                }
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
                if expecting_key(&stack) {
                    return Err(format!("number where a key belongs at byte {start}"));
                }
                let naming = matches!(
                    stack.last(),
                    Some(Frame::Obj {
                        naming: Some(_),
                        ..
                    })
                );
                // What the number is written as: itself, or its difference from `prev`.
                let mut diff: Option<i128> = None;
                if naming {
                    // An element's name: as it is, never a difference.
                    value_done(&mut stack, Some(tok));
                } else {
                    let path = value_path(&stack);
                    value_done(&mut stack, None);
                    let p = prev.get(path, &mut cursor);
                    // What `next` holds at `path`: the integer read, if any.
                    let mut int = None;
                    match &col {
                        Col::Out(_) => match (canonical_int(tok), p) {
                            (Some(v), p) => {
                                int = Some(v);
                                diff = p.map(|p| v - p);
                            }
                            (None, Some(_))
                                if !tok.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) =>
                            {
                                return Err(format!(
                                    "integer {} cannot be differenced",
                                    String::from_utf8_lossy(tok)
                                ));
                            }
                            (None, _) => {}
                        },
                        Col::In(..) => match (any_int(tok), p) {
                            (Some(d), Some(p)) => {
                                let v = d + p;
                                int = Some(v);
                                diff = Some(v);
                            }
                            (Some(_), None) => {
                                int = canonical_int(tok);
                            }
                            (None, _) => {}
                        },
                    }
                    next.push(path, int, &mut cursor);
                }
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
                if !matches!(tok, b"true" | b"false" | b"null") || expecting_key(&stack) {
                    return Err(format!("unexpected token at byte {start}"));
                }
                value_done(&mut stack, None);
                out.extend_from_slice(tok);
            }
            _ => return Err(format!("unexpected byte {c:#04x} at byte {pos}")),
        }
    }
    if !stack.is_empty() {
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
        Err(_) => {
            let mut buf = [0u8; 40];
            let mut i = buf.len();
            let mut m = m;
            loop {
                i -= 1;
                buf[i] = b'0' + (m % 10) as u8;
                m /= 10;
                if m == 0 {
                    break;
                }
            }
            out.extend_from_slice(&buf[i..]);
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
mod tests {
    use super::*;

    /// (skeleton, column, fields).
    fn enc(cur: &str, prev: &Fields) -> (String, String, Fields) {
        let (mut skel, mut col) = (Vec::new(), Vec::new());
        let mut next = Fields::default();
        encode(cur.as_bytes(), prev, &mut skel, &mut col, &mut next).expect("encode");
        let s = |v| String::from_utf8(v).expect("utf8");
        (s(skel), s(col), next)
    }

    fn dec(skel: &str, col: &str, prev: &Fields) -> (String, Fields) {
        let mut out = Vec::new();
        let mut next = Fields::default();
        decode(
            skel.as_bytes(),
            col.as_bytes(),
            prev,
            &mut out,
            &mut next,
            usize::MAX,
        )
        .expect("decode");
        (String::from_utf8(out).expect("utf8"), next)
    }

    /// A one-character difference can stand for a 20-digit number: the JSON is stopped at the
    /// limit, not built at 20 times the skeleton's size first.
    #[test]
    fn decoding_stops_at_the_limit() {
        let big = u64::MAX / 2;
        let prev = format!("[{}]", vec![big.to_string(); 1000].join(","));
        let f0 = Fields::of(prev.as_bytes()).expect("fields");
        let skel = format!("[{}]", vec!["#"; 1000].join(","));
        let col = vec!["0"; 1000].join(",");
        // 1000 numbers of 19 digits, 999 commas and the brackets: 20,001 bytes.
        let mut out = Vec::new();
        let mut next = Fields::default();
        decode(
            skel.as_bytes(),
            col.as_bytes(),
            &f0,
            &mut out,
            &mut next,
            20_001,
        )
        .expect("within the limit");
        assert_eq!(out, prev.as_bytes());
        let e = decode(
            skel.as_bytes(),
            col.as_bytes(),
            &f0,
            &mut out,
            &mut next,
            10_000,
        )
        .expect_err("over the limit");
        assert_eq!(e, "decodes to more than 10000 bytes");
        assert!(out.len() <= 10_000 + 20, "stopped at {} bytes", out.len());
    }

    #[test]
    fn integers_become_differences_and_back() {
        let a = r#"{"ctxt":4635269,"avg":1.05,"cpus":[{"id":0,"idle":100},{"id":1,"idle":200}],"s":"x"}"#;
        let b = r#"{"ctxt":4635381,"avg":0.86,"cpus":[{"id":0,"idle":102},{"id":1,"idle":199}],"s":"x"}"#;
        let f0 = Fields::of(a.as_bytes()).expect("fields");
        let (skel, col, f1) = enc(b, &f0);
        // By hand: 4635381 - 4635269 = 112; the float as it is; ids name the elements.
        assert_eq!(
            skel,
            r#"{"ctxt":#,"avg":#,"cpus":[{"id":#,"idle":#},{"id":#,"idle":#}],"s":"x"}"#
        );
        assert_eq!(col, "112,0.86,0,2,1,-1");
        let (back, g1) = dec(&skel, &col, &f0);
        assert_eq!(back, b);
        assert_eq!(g1.ints(), f1.ints());
    }

    #[test]
    fn named_elements_pair_across_insertions() {
        let a = r#"{"tasks":[{"pid":1,"ticks":10},{"pid":9,"ticks":50}]}"#;
        let b = r#"{"tasks":[{"pid":1,"ticks":11},{"pid":5,"ticks":7},{"pid":9,"ticks":52}]}"#;
        let f0 = Fields::of(a.as_bytes()).expect("fields");
        let (skel, col, _) = enc(b, &f0);
        // pid 5 is new (its ticks as they are); pid 9 moved to index 2 and still pairs.
        assert_eq!(col, "1,1,5,7,9,2");
        assert_eq!(dec(&skel, &col, &f0).0, b);
    }

    #[test]
    fn type_changes_and_extremes_round_trip() {
        let a = r#"{"a":1,"b":2.5,"c":18446744073709551615,"d":-9223372036854775808,"e":[1,2,3],"f":null}"#;
        let b =
            r#"{"a":1.5,"b":3,"c":0,"d":9223372036854775807,"e":[3],"f":7,"g":"he said \"1\""}"#;
        let f0 = Fields::of(a.as_bytes()).expect("fields");
        let (skel, col, _) = enc(b, &f0);
        assert_eq!(dec(&skel, &col, &f0).0, b);
        // Differences past u64 and i64 are still exact; "e" was [1,2,3]: 3 - 1.
        assert_eq!(col, "1.5,3,-18446744073709551615,18446744073709551615,2,7");
    }

    #[test]
    fn integers_it_cannot_difference_are_refused() {
        let f0 = Fields::of(br#"{"a":1}"#).expect("fields");
        let (mut skel, mut col) = (Vec::new(), Vec::new());
        let mut next = Fields::default();
        let mut enc = |j: &[u8]| encode(j, &f0, &mut skel, &mut col, &mut next);
        assert!(enc(br#"{"a":007}"#).is_err());
        assert!(enc(br#"{"a":123456789012345678901}"#).is_err());
        assert!(enc(br##"{"a":#}"##).is_err());
        // A new field may hold anything: it is written as it is.
        assert!(enc(br#"{"b":007}"#).is_ok());
    }

    #[test]
    fn integers_parse_and_print_as_std_does() {
        // The hand-rolled digit loops against `str::parse` and `Display`.
        let toks = [
            "0",
            "7",
            "-7",
            "10",
            "-0",
            "007",
            "-007",
            "1e3",
            "1.5",
            "-",
            "",
            "+5",
            "5-",
            "18446744073709551615",
            "-18446744073709551616",
            "99999999999999999999",
            "999999999999999999999",
            "-999999999999999999999",
            "1000000000000000000000",
        ];
        for t in toks {
            let b = t.as_bytes();
            let digits = t.strip_prefix('-').unwrap_or(t);
            let plain = !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit());
            let canonical = plain
                && digits.len() <= 20
                && !(digits.len() > 1 && digits.starts_with('0'))
                && t != "-0";
            let want = |ok: bool| ok.then(|| t.parse::<i128>().ok()).flatten();
            assert_eq!(canonical_int(b), want(canonical), "canonical {t:?}");
            assert_eq!(any_int(b), want(plain && digits.len() <= 21), "any {t:?}");
        }
        for v in [
            0i128,
            9,
            -9,
            10,
            -10,
            4_635_381,
            i128::from(u64::MAX),
            -i128::from(u64::MAX),
            i128::from(u64::MAX) + 1,
            -(10i128.pow(21) - 1),
        ] {
            let mut out = Vec::new();
            write_int(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let f = Fields::default();
        let mut out = Vec::new();
        let mut next = Fields::default();
        for (skel, col) in [
            (&b"{"[..], &b""[..]),
            (b"]", b""),
            (b"{\"a", b""),
            (b"{#:#}", b"1,2"),
            (b"{\"a\":tru}", b""),
            (b"\xff", b""),
            (b"[\"\\", b""),
            (b"[#,#]", b"1"),
            (b"[#]", b"1,2"),
            (b"[#]", b""),
            (b"[1]", b""),
        ] {
            assert!(
                decode(skel, col, &f, &mut out, &mut next, usize::MAX).is_err(),
                "{skel:?} {col:?}"
            );
        }
    }
}
