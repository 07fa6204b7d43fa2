//! The direct split against the scan of the same value's JSON: real samples, their derived
//! intervals, and every serde shape.

use super::super::{encode as scan_encode, Fields};
use super::encode;
use crate::root::Root;
use crate::source::Reader;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// (skeleton, column, fields) of the scan.
type Split = (String, String, Fields);

fn scanned<T: Serialize>(v: &T, prev: &Fields) -> Split {
    let json = serde_json::to_vec(v).expect("json");
    let (mut skel, mut col, mut next) = (Vec::new(), Vec::new(), Fields::default());
    scan_encode(&json, prev, &mut skel, &mut col, &mut next).expect("scan");
    let s = |v| String::from_utf8(v).expect("utf8");
    (s(skel), s(col), next)
}

/// Splits `v` both ways against `prev`: the same skeleton, column, fields (and the answers
/// handed on with them), and the JSON's length. Returns the fields for the next step.
fn same_as_the_scan<T: Serialize>(what: &str, v: &T, prev: &Fields) -> Fields {
    let (skel, col, fields) = scanned(v, prev);
    let (mut dskel, mut dcol, mut dnext) = (Vec::new(), Vec::new(), Fields::default());
    let e = encode(v, prev, &mut dskel, &mut dcol, &mut dnext).expect("direct");
    assert_eq!(String::from_utf8_lossy(&dskel), skel, "{what}: skeleton");
    assert_eq!(String::from_utf8_lossy(&dcol), col, "{what}: column");
    assert_eq!(dnext.ints(), fields.ints(), "{what}: fields");
    assert_eq!(dnext.handed_on(), fields.handed_on(), "{what}: answers");
    let json = serde_json::to_vec(v).expect("json");
    assert_eq!(e.json_len, json.len(), "{what}: JSON length");
    dnext
}

/// Two samples of the real 16-CPU capture, the 2-vCPU VM and an intel_pstate host, each
/// against nothing and against the one before, and their derived and judged interval: the
/// same bytes as the scan of their JSON. Then a sample against itself (every difference 0)
/// and against another host's (most paths new).
#[test]
fn real_samples_split_as_the_scan_splits_their_json() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut other = Fields::default();
    for host in ["real/h100vm-16cpu-load", "vm-2cpu", "intel-pstate"] {
        let read = |t: &str| Reader::new(Root::new(fixtures.join(host).join(t))).sample();
        let (t0, t1) = (read("t0"), read("t1"));
        assert!(t1.cpu.cpus.len() >= 2, "{host}: no CPUs read");
        let f0 = same_as_the_scan(host, &t0, &Fields::default());
        let f1 = same_as_the_scan(host, &t1, &f0);
        let again = same_as_the_scan(host, &t1, &f1);
        assert!(
            again.handed_on(),
            "{host}: the same paths hand their answers on"
        );
        same_as_the_scan(host, &t1, &other);
        other = f1;
        let d = crate::assess::assess(Some(&t0), &t1, &Default::default());
        let fd = same_as_the_scan(host, &d, &Fields::default());
        same_as_the_scan(host, &d, &fd);
    }
}

#[derive(Serialize)]
enum Event {
    Tick,
    Count(u64),
    Pair(i16, f64),
    Task {
        pid: u32,
        comm: Option<&'static str>,
    },
}

#[derive(Serialize)]
struct Task {
    pid: u32,
    ticks: u64,
    comm: String,
}

#[derive(Serialize)]
struct Named {
    name: &'static str,
    idle: i64,
}

#[derive(Serialize)]
struct Outer {
    events: Vec<Event>,
    tasks: Vec<Task>,
    disks: Vec<Named>,
    nested: Vec<Vec<u16>>,
    by_cpu: BTreeMap<u32, i64>,
    by_name: HashMap<String, bool>,
    nothing: (),
    nan: f64,
    floats: [f64; 5],
    load: [f32; 3],
    big: u128,
    huge: u128,
    negative: i128,
    letter: char,
    quoted: String,
    bytes: &'static [u8],
    empty: Vec<u8>,
    empty_map: BTreeMap<String, u8>,
}

fn outer(step: u64) -> Outer {
    let n = step as i64;
    Outer {
        // A struct variant in a list: an object whose first member is a number, inside the
        // variant's own object.
        events: vec![
            Event::Tick,
            Event::Count(7 + step),
            Event::Pair(-3, 2.7),
            Event::Task {
                pid: 4 + step as u32,
                comm: None,
            },
            Event::Task {
                pid: 9,
                comm: Some("x"),
            },
        ],
        // Elements named by a number: one inserted at the second step.
        tasks: (0..3 + step)
            .map(|i| Task {
                pid: [1, 9, 5, 7][i as usize % 4] + i as u32 * 10,
                ticks: 100 * i + step,
                comm: format!("t{i}"),
            })
            .collect(),
        // Elements named by a string.
        disks: vec![
            Named {
                name: "vda",
                idle: 10 - n,
            },
            Named {
                name: "vdb\"",
                idle: n,
            },
        ],
        nested: vec![vec![1, 2], vec![], vec![u16::MAX]],
        by_cpu: BTreeMap::from([(10, -1 - n), (2, 5)]),
        by_name: HashMap::from([("b".to_string(), true), ("a\n".to_string(), false)]),
        nothing: (),
        nan: f64::NAN,
        floats: [0.0, -0.5, 1e20, 1e-7, 3.0 + step as f64],
        load: [2.7, 0.1, 3.12],
        big: u128::from(u64::MAX) + u128::from(step),
        huge: u128::MAX,
        negative: -5 - i128::from(n),
        letter: 'é',
        quoted: "tab\there \u{1} \"q\" \\ ü".into(),
        bytes: b"ab",
        empty: Vec::new(),
        empty_map: BTreeMap::new(),
    }
}

/// The serde shapes: enum variants of every kind, elements named by numbers and strings (one
/// inserted), integer map keys, unit, a non-finite float (null), floats in exponent form,
/// f32s, 128-bit integers within and past 20 digits, escapes, bytes, empty containers.
#[test]
fn every_serde_shape_splits_as_the_scan_splits_it() {
    let f0 = same_as_the_scan("step 0", &outer(0), &Fields::default());
    let f1 = same_as_the_scan("step 1", &outer(1), &f0);
    same_as_the_scan("step 2", &outer(2), &f1);
}

/// What the scan refuses, the direct split refuses: a 129-bit difference is not possible, but
/// an integer of 21 digits where the previous sample had an integer is.
#[test]
fn what_the_scan_refuses_is_refused() {
    #[derive(Serialize)]
    struct A {
        a: u128,
    }
    let f0 = same_as_the_scan("small", &A { a: 1 }, &Fields::default());
    let (mut skel, mut col, mut next) = (Vec::new(), Vec::new(), Fields::default());
    let big = A { a: u128::MAX };
    let json = serde_json::to_vec(&big).expect("json");
    assert!(scan_encode(&json, &f0, &mut skel, &mut col, &mut next).is_err());
    let e = encode(&big, &f0, &mut skel, &mut col, &mut next).err();
    assert_eq!(
        e.as_deref(),
        Some("integer 340282366920938463463374607431768211455 cannot be differenced")
    );
    // Nested past 256 levels: refused both ways.
    let mut deep = serde_json::Value::Null;
    for _ in 0..300 {
        deep = serde_json::Value::Array(vec![deep]);
    }
    let json = serde_json::to_vec(&deep).expect("json");
    let none = Fields::default();
    assert!(scan_encode(&json, &none, &mut skel, &mut col, &mut next).is_err());
    assert!(encode(&deep, &none, &mut skel, &mut col, &mut next).is_err());
}
