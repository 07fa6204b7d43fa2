//! The tree against `serde_json::to_value`'s: real intervals and every serde shape.

use super::*;
use crate::root::Root;
use crate::source::Reader;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// `to_value`'s tree in this module's terms: the reference the serializer must match.
fn from_value(v: Value) -> Node {
    match v {
        Value::Null => Node::Null,
        Value::Bool(b) => Node::Bool(b),
        Value::Number(n) => Node::Num(n),
        Value::String(s) => Node::Str(s),
        Value::Array(a) => Node::Arr(a.into_iter().map(from_value).collect()),
        Value::Object(m) => Node::Obj(
            m.into_iter()
                .map(|(k, v)| (Cow::Owned(k), from_value(v)))
                .collect(),
        ),
    }
}

fn same_as_to_value<T: Serialize>(v: &T) {
    let reference = from_value(serde_json::to_value(v).expect("to_value"));
    assert_eq!(Node::of(v).expect("tree"), reference);
}

/// Every interval of the real 16-CPU capture and the 2-vCPU VM's, derived and judged,
/// makes the tree `to_value` makes: numbers of the same kind and value, keys in the same
/// order, nothing more or less.
#[test]
fn real_intervals_make_the_tree_to_value_makes() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for host in ["real/h100vm-16cpu-load", "vm-2cpu", "intel-pstate"] {
        let read = |t: &str| Reader::new(Root::new(fixtures.join(host).join(t))).sample();
        let (t0, t1) = (read("t0"), read("t1"));
        let d = crate::assess::assess(Some(&t0), &t1, &Default::default());
        assert!(d.cpus.len() >= 2, "{host}: no CPUs read");
        same_as_to_value(&d);
        same_as_to_value(&crate::assess::assess(None, &t1, &Default::default()));
        same_as_to_value(&t1);
    }
}

#[derive(Serialize)]
enum Kind {
    Unit,
    New(u8),
    Tuple(i8, f32),
    Record { a: Option<u32>, b: &'static str },
}

#[derive(Serialize)]
struct Inner {
    z: u64,
    a: f64,
}

#[derive(Serialize)]
struct Outer {
    kinds: Vec<Kind>,
    #[serde(flatten)]
    inner: Inner,
    by_cpu: BTreeMap<u32, i64>,
    by_name: HashMap<String, bool>,
    nothing: (),
    nan: f64,
    load: [f32; 3],
    big: u128,
    negative: i128,
    letter: char,
    bytes: &'static [u8],
}

/// The serde shapes: enum variants of every kind, a flattened struct, integer map keys,
/// unit, a non-finite float (null), f32s widened as `to_value` widens them, 128-bit
/// integers that fit, a char.
#[test]
fn every_serde_shape_makes_the_tree_to_value_makes() {
    same_as_to_value(&Outer {
        kinds: vec![
            Kind::Unit,
            Kind::New(7),
            Kind::Tuple(-3, 2.7),
            Kind::Record { a: None, b: "x" },
            Kind::Record { a: Some(4), b: "" },
        ],
        inner: Inner {
            z: u64::MAX,
            a: -0.5,
        },
        by_cpu: BTreeMap::from([(10, -1), (2, 5)]),
        by_name: HashMap::from([("b".to_string(), true), ("a".to_string(), false)]),
        nothing: (),
        nan: f64::NAN,
        load: [2.7, 0.1, 3.12],
        big: u128::from(u64::MAX),
        negative: -5,
        letter: 'é',
        bytes: b"ab",
    });
}

/// Of two equal keys (a flattened field named like one beside it) the later wins and
/// sits once, in key order, as `BTreeMap::insert` leaves it.
#[test]
fn a_repeated_key_keeps_its_last_value() {
    let node = object(vec![
        (Cow::Borrowed("b"), Node::Bool(true)),
        (Cow::Borrowed("a"), Node::Null),
        (Cow::Borrowed("b"), Node::Bool(false)),
    ]);
    assert_eq!(
        node,
        Node::Obj(vec![
            (Cow::Borrowed("a"), Node::Null),
            (Cow::Borrowed("b"), Node::Bool(false)),
        ])
    );
    assert_eq!(node.get("b"), Some(&Node::Bool(false)));
    assert_eq!(node.get("c"), None);
}
