//! The step transform against values worked out by hand, and garbage against it.

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
    let a =
        r#"{"ctxt":4635269,"avg":1.05,"cpus":[{"id":0,"idle":100},{"id":1,"idle":200}],"s":"x"}"#;
    let b =
        r#"{"ctxt":4635381,"avg":0.86,"cpus":[{"id":0,"idle":102},{"id":1,"idle":199}],"s":"x"}"#;
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
    let a =
        r#"{"a":1,"b":2.5,"c":18446744073709551615,"d":-9223372036854775808,"e":[1,2,3],"f":null}"#;
    let b = r#"{"a":1.5,"b":3,"c":0,"d":9223372036854775807,"e":[3],"f":7,"g":"he said \"1\""}"#;
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
