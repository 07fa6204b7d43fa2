//! An interval as the tree the OpenMetrics walk reads: what `serde_json::to_value` makes of
//! it (the same numbers, keys in the same sorted order, a later duplicate key winning), built
//! by a serializer of its own. `to_value` gave every field name a `String` and every object a
//! `BTreeMap`, and dropped them again: half of `perftop export`'s page (`perf record`,
//! 2026-11-27). Here a field name is the `&'static str` serde hands over and an object one
//! vector.

use serde::ser::{self, Serialize};
use serde_json::Number;
use std::borrow::Cow;

/// The eight 64-bit-or-narrower integer methods of a serializer whose output is `$ok`, each
/// `$f(v)`.
macro_rules! numbers {
    ($ok:ty, $f:expr) => {
        numbers!(@ $ok, $f, serialize_i8 i8, serialize_i16 i16, serialize_i32 i32,
            serialize_i64 i64, serialize_u8 u8, serialize_u16 u16, serialize_u32 u32,
            serialize_u64 u64);
    };
    (@ $ok:ty, $f:expr, $($name:ident $t:ty),*) => {
        $(fn $name(self, v: $t) -> Result<$ok, Error> {
            let f: fn($t) -> Result<$ok, Error> = $f;
            f(v)
        })*
    };
}

/// A sequence trait of `Seq`, whose element method is `$element`.
macro_rules! seq {
    ($trait:ident, $element:ident) => {
        impl ser::$trait for Seq {
            type Ok = Node;
            type Error = Error;
            fn $element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
                self.push(v)
            }
            fn end(self) -> Result<Node, Error> {
                Ok(self.done())
            }
        }
    };
}

/// A struct trait of `Map`: named fields.
macro_rules! fields {
    ($trait:ident) => {
        impl ser::$trait for Map<'_> {
            type Ok = Node;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Error> {
                self.field(key, v)
            }
            fn end(self) -> Result<Node, Error> {
                Ok(self.done())
            }
        }
    };
}

/// A number's or a bool's place among the leaves of the value it was serialized from, in
/// serialization order (see `leaves`): the page's template finds this interval's value of a
/// series there. Not part of the value: any two compare equal.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Leaf(pub(crate) u32);

impl PartialEq for Leaf {
    fn eq(&self, _: &Leaf) -> bool {
        true
    }
}

thread_local! {
    /// The next leaf's place: a serializer is handed over by value at every level, so the count
    /// lives beside it rather than in it. `Node::of` starts it again.
    static NEXT_LEAF: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The next leaf's place (every number and bool serialized counts, a non-finite float too, as
/// `leaves::Leaves` counts them).
fn leaf() -> Leaf {
    NEXT_LEAF.with(|n| {
        let i = n.get();
        n.set(i.wrapping_add(1));
        Leaf(i)
    })
}

/// One JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Null,
    Bool(bool, Leaf),
    Num(Number, Leaf),
    Str(String),
    Arr(Vec<Node>),
    /// Entries sorted by key, each key once.
    Obj(Vec<(Cow<'static, str>, Node)>),
}

impl Node {
    /// The tree of `v`, as `serde_json::to_value` would make it.
    #[cfg(test)]
    pub(crate) fn of<T: Serialize + ?Sized>(v: &T) -> Result<Node, Error> {
        NEXT_LEAF.with(|n| n.set(0));
        v.serialize(Tree)
    }

    /// The tree of `v` with only the top-level fields named in `keep`: the same entries as
    /// `of`'s for those, and the rest never built. `perftop export` leaves the processes out
    /// of its page, and building them only to drop them was half of the tree's time.
    pub(crate) fn of_fields<T: Serialize + ?Sized>(v: &T, keep: &[&str]) -> Result<Node, Error> {
        NEXT_LEAF.with(|n| n.set(0));
        v.serialize(Top { keep })
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Obj(m) => m
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|i| &m[i].1),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Node::Num(n, _) => n.as_f64(),
            _ => None,
        }
    }

    pub(crate) fn is_number(&self) -> bool {
        matches!(self, Node::Num(..))
    }
}

/// Sorts an object's entries by key, as a `BTreeMap` holds them; of equal keys the last
/// inserted stays, as `BTreeMap::insert` replaces.
fn object(mut m: Vec<(Cow<'static, str>, Node)>) -> Node {
    // Stable: equal keys keep their insertion order, so the last of a run is the latest.
    m.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(Cow<'static, str>, Node)> = Vec::with_capacity(m.len());
    for e in m {
        match out.last_mut() {
            Some(last) if last.0 == e.0 => *last = e,
            _ => out.push(e),
        }
    }
    Node::Obj(out)
}

/// Errors are serde_json's own, as `to_value`'s are.
pub(super) type Error = serde_json::Error;

/// An error that says `why`.
fn error(why: &str) -> Error {
    ser::Error::custom(why)
}

/// The serializer: each value becomes a `Node`.
struct Tree;

/// An array being built (sequences, tuples), and the variant it sits under if any.
struct Seq {
    items: Vec<Node>,
    variant: Option<&'static str>,
}

/// An object being built (maps, structs), the key waiting for its value, and the variant it
/// sits under if any; at the top of `Node::of_fields`, the only keys it keeps.
struct Map<'k> {
    entries: Vec<(Cow<'static, str>, Node)>,
    key: Option<String>,
    variant: Option<&'static str>,
    keep: Option<&'k [&'k str]>,
}

impl Map<'_> {
    fn keeps(&self, key: &str) -> bool {
        self.keep.is_none_or(|k| k.contains(&key))
    }
}

/// `{variant: node}`, as serde_json writes a non-unit enum variant.
fn under(variant: Option<&'static str>, node: Node) -> Node {
    match variant {
        Some(v) => Node::Obj(vec![(Cow::Borrowed(v), node)]),
        None => node,
    }
}

impl ser::Serializer for Tree {
    type Ok = Node;
    type Error = Error;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Seq;
    type SerializeMap = Map<'static>;
    type SerializeStruct = Map<'static>;
    type SerializeStructVariant = Map<'static>;

    fn serialize_bool(self, v: bool) -> Result<Node, Error> {
        Ok(Node::Bool(v, leaf()))
    }
    numbers!(Node, |v| Ok(Node::Num(v.into(), leaf())));
    fn serialize_i128(self, v: i128) -> Result<Node, Error> {
        // As serde_json's value serializer: a number when it fits 64 bits, else an error.
        let at = leaf();
        if let Ok(v) = i64::try_from(v) {
            Ok(Node::Num(v.into(), at))
        } else if let Ok(v) = u64::try_from(v) {
            Ok(Node::Num(v.into(), at))
        } else {
            Err(error("number out of range"))
        }
    }
    fn serialize_u128(self, v: u128) -> Result<Node, Error> {
        let at = leaf();
        u64::try_from(v)
            .map(|v| Node::Num(v.into(), at))
            .map_err(|_| error("number out of range"))
    }
    fn serialize_f32(self, v: f32) -> Result<Node, Error> {
        // `Value::from(f32)`: the f32 widened to an f64 when finite, else null.
        let at = leaf();
        Ok(Number::from_f64(f64::from(v)).map_or(Node::Null, |n| Node::Num(n, at)))
    }
    fn serialize_f64(self, v: f64) -> Result<Node, Error> {
        let at = leaf();
        Ok(Number::from_f64(v).map_or(Node::Null, |n| Node::Num(n, at)))
    }
    fn serialize_char(self, v: char) -> Result<Node, Error> {
        Ok(Node::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Node, Error> {
        Ok(Node::Str(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node, Error> {
        Ok(Node::Arr(
            v.iter().map(|b| Node::Num((*b).into(), leaf())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Node, Error> {
        Ok(Node::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Node, Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node, Error> {
        Ok(Node::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Node, Error> {
        Ok(Node::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<Node, Error> {
        Ok(Node::Str(v.to_string()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Node, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Node, Error> {
        Ok(under(Some(variant), v.serialize(self)?))
    }
    tuples_are_seqs_structs_are_maps!(Seq, Map<'static>);
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, Error> {
        Ok(Seq {
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Seq, Error> {
        Ok(Seq {
            items: Vec::with_capacity(len),
            variant: Some(variant),
        })
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'static>, Error> {
        Ok(Map::new(len, None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Map<'static>, Error> {
        Ok(Map {
            variant: Some(variant),
            ..Map::new(Some(len), None)
        })
    }
}

impl Seq {
    fn push<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.items.push(v.serialize(Tree)?);
        Ok(())
    }
    fn done(self) -> Node {
        under(self.variant, Node::Arr(self.items))
    }
}

seq!(SerializeSeq, serialize_element);
seq!(SerializeTuple, serialize_element);
seq!(SerializeTupleStruct, serialize_field);
seq!(SerializeTupleVariant, serialize_field);

impl<'k> Map<'k> {
    fn new(len: Option<usize>, keep: Option<&'k [&'k str]>) -> Self {
        Map {
            entries: Vec::with_capacity(len.unwrap_or(0)),
            key: None,
            variant: None,
            keep,
        }
    }
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        if self.keeps(key) {
            self.entries.push((Cow::Borrowed(key), v.serialize(Tree)?));
        }
        Ok(())
    }
    fn done(self) -> Node {
        under(self.variant, object(self.entries))
    }
}

impl ser::SerializeMap for Map<'_> {
    type Ok = Node;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let mut text = Vec::new();
        key.serialize(super::key::KeyText(&mut text))?;
        let text = String::from_utf8(text).map_err(|_| error("a key that is not UTF-8"))?;
        self.key = Some(text);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let key = self
            .key
            .take()
            .ok_or_else(|| error("a map value without its key"))?;
        if self.keeps(&key) {
            self.entries.push((Cow::Owned(key), v.serialize(Tree)?));
        }
        Ok(())
    }
    fn end(self) -> Result<Node, Error> {
        Ok(self.done())
    }
}

fields!(SerializeStruct);
fields!(SerializeStructVariant);

#[cfg(test)]
mod tests;
mod top;
use top::Top;
