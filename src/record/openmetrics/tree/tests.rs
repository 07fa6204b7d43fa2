//! The tree against `serde_json::to_value`'s: real intervals and every serde shape.

use super::*;
use crate::record::openmetrics::Leaves;
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
        Value::Bool(b) => Node::Bool(b, Leaf(0)),
        Value::Number(n) => Node::Num(n, Leaf(0)),
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
    same_as_to_value(&outer("x", 4));
}

fn outer(b: &'static str, a: u32) -> Outer {
    Outer {
        kinds: vec![
            Kind::Unit,
            Kind::New(7),
            Kind::Tuple(-3, 2.7),
            Kind::Record { a: None, b: "x" },
            Kind::Record { a: Some(a), b },
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
    }
}

/// The tree's numbers and bools by their place (`Leaf`), and their values.
fn tree_leaves(n: &Node, out: &mut Vec<(u32, f64)>) {
    match n {
        Node::Num(x, at) => out.push((at.0, x.as_f64().expect("a number"))),
        Node::Bool(b, at) => out.push((at.0, f64::from(u8::from(*b)))),
        Node::Arr(a) => a.iter().for_each(|x| tree_leaves(x, out)),
        Node::Obj(m) => m.iter().for_each(|(_, x)| tree_leaves(x, out)),
        Node::Str(_) | Node::Null => {}
    }
}

/// `Leaves` holds, at each tree leaf's place, that leaf's value (the page's template reads a
/// series' value there), kept fields filtered alike.
fn leaves_are_the_trees<T: Serialize>(v: &T, keep: &[&str]) -> Leaves {
    let tree = Node::of_fields(v, keep).expect("tree");
    let mut leaves = Leaves::default();
    leaves.fill(v, keep).expect("leaves");
    let mut of_tree = Vec::new();
    tree_leaves(&tree, &mut of_tree);
    assert!(!of_tree.is_empty(), "{keep:?}: no leaves");
    for (at, x) in of_tree {
        let got = leaves.values.get(at as usize).copied();
        assert_eq!(
            got.map(f64::to_bits),
            Some(x.to_bits()),
            "{keep:?}: leaf {at}"
        );
    }
    leaves
}

#[test]
fn leaves_are_counted_as_the_tree_counts_them() {
    let all = [
        "kinds", "z", "a", "by_cpu", "by_name", "nothing", "nan", "load", "big", "negative",
        "letter", "bytes",
    ];
    let whole = leaves_are_the_trees(&outer("x", 4), &all);
    let mut unfiltered = Leaves::default();
    unfiltered.fill(&outer("x", 4), &all).expect("leaves");
    // Every leaf of the value, the non-finite float and the flattened ones included: the
    // kinds' 4 numbers (7, -3, 2.7, 4), z, a, 2 by_cpu, 2 by_name, nan, 3 load, big,
    // negative, 2 bytes.
    assert_eq!(whole.values.len(), 18);
    // Filtered: a flattened field and plain ones, and the rest never read.
    let some = leaves_are_the_trees(&outer("x", 4), &["z", "load", "kinds"]);
    assert_eq!(some.values.len(), 1 + 3 + 4);
    // The shape: a string or a key changes it, a number does not, an id's value does. (A
    // `HashMap`'s order is its own per instance: its shape is the same only for that one.)
    let shape = |b, a| {
        let mut o = outer(b, a);
        o.by_name.clear();
        let mut l = Leaves::default();
        l.fill(&o, &all).expect("leaves");
        l.shape
    };
    assert_eq!(shape("x", 4), shape("x", 5));
    assert_ne!(shape("x", 4), shape("y", 4));
    #[derive(Serialize)]
    struct Cpu {
        cpu: u32,
        busy: f64,
    }
    let cpus = |cpu, busy| {
        let mut l = Leaves::default();
        l.fill(&vec![Cpu { cpu, busy }], &[]).expect("leaves");
        l
    };
    assert_eq!(cpus(3, 0.5).shape, cpus(3, 0.7).shape);
    assert_ne!(cpus(3, 0.5).shape, cpus(4, 0.5).shape);
    assert_eq!(cpus(3, 0.7).values, [3.0, 0.7]);
}

/// Real intervals: the leaves of the exported panes are the tree's.
#[test]
fn real_intervals_leaves_are_the_trees() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let keys: Vec<&str> = crate::pane::JSON_KEYS.to_vec();
    for host in ["real/h100vm-16cpu-load", "vm-2cpu", "intel-pstate"] {
        let read = |t: &str| Reader::new(Root::new(fixtures.join(host).join(t))).sample();
        let (t0, t1) = (read("t0"), read("t1"));
        let d = crate::assess::assess(Some(&t0), &t1, &Default::default());
        let l = leaves_are_the_trees(&d, &keys);
        assert!(l.values.len() > 100, "{host}: {} leaves", l.values.len());
        // The same interval derived again has the same shape: no map in it iterates in an
        // order of its own, which would send every interval down the full walk.
        let again = crate::assess::assess(Some(&t0), &t1, &Default::default());
        assert_eq!(leaves_are_the_trees(&again, &keys).shape, l.shape, "{host}");
        leaves_are_the_trees(&d, &["disks", "interrupts", "host"]);
    }
}

/// Of two equal keys (a flattened field named like one beside it) the later wins and
/// sits once, in key order, as `BTreeMap::insert` leaves it.
#[test]
fn a_repeated_key_keeps_its_last_value() {
    let node = object(vec![
        (Cow::Borrowed("b"), Node::Bool(true, Leaf(0))),
        (Cow::Borrowed("a"), Node::Null),
        (Cow::Borrowed("b"), Node::Bool(false, Leaf(0))),
    ]);
    assert_eq!(
        node,
        Node::Obj(vec![
            (Cow::Borrowed("a"), Node::Null),
            (Cow::Borrowed("b"), Node::Bool(false, Leaf(0))),
        ])
    );
    assert_eq!(node.get("b"), Some(&Node::Bool(false, Leaf(0))));
    assert_eq!(node.get("c"), None);
}
