//! The serializer at the top of `Node::of_fields`: the value's own object keeps only the
//! fields asked for; everything below it, and a top value that is not an object, is `Tree`'s.

use super::{Error, Map, Node, Seq, Tree};
use serde::ser::{Serialize, Serializer};

/// Serializes a value as `Tree` does, its top-level object keeping only the keys in `keep`.
pub(super) struct Top<'k> {
    pub(super) keep: &'k [&'k str],
}

/// Methods of `Top` that are `Tree`'s, unchanged: `name(args) -> ok`.
macro_rules! as_tree {
    ($($name:ident($($arg:ident: $t:ty),*) -> $ok:ty;)*) => {
        $(fn $name(self, $($arg: $t),*) -> Result<$ok, Error> {
            Tree.$name($($arg),*)
        })*
    };
}

impl<'k> Serializer for Top<'k> {
    type Ok = Node;
    type Error = Error;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = Seq;
    type SerializeMap = Map<'k>;
    type SerializeStruct = Map<'k>;
    type SerializeStructVariant = Map<'static>;

    as_tree! {
        serialize_bool(v: bool) -> Node;
        serialize_i8(v: i8) -> Node;
        serialize_i16(v: i16) -> Node;
        serialize_i32(v: i32) -> Node;
        serialize_i64(v: i64) -> Node;
        serialize_i128(v: i128) -> Node;
        serialize_u8(v: u8) -> Node;
        serialize_u16(v: u16) -> Node;
        serialize_u32(v: u32) -> Node;
        serialize_u64(v: u64) -> Node;
        serialize_u128(v: u128) -> Node;
        serialize_f32(v: f32) -> Node;
        serialize_f64(v: f64) -> Node;
        serialize_char(v: char) -> Node;
        serialize_str(v: &str) -> Node;
        serialize_bytes(v: &[u8]) -> Node;
        serialize_none() -> Node;
        serialize_unit() -> Node;
        serialize_unit_struct(name: &'static str) -> Node;
        serialize_unit_variant(name: &'static str, i: u32, v: &'static str) -> Node;
        serialize_seq(len: Option<usize>) -> Seq;
        serialize_tuple(len: usize) -> Seq;
        serialize_tuple_struct(name: &'static str, len: usize) -> Seq;
        serialize_tuple_variant(name: &'static str, i: u32, v: &'static str, len: usize) -> Seq;
        serialize_struct_variant(name: &'static str, i: u32, v: &'static str, len: usize) -> Map<'static>;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Node, Error> {
        v.serialize(self)
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
        name: &'static str,
        i: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Node, Error> {
        Tree.serialize_newtype_variant(name, i, variant, v)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<Map<'k>, Error> {
        Ok(Map::new(len, Some(self.keep)))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Map<'k>, Error> {
        self.serialize_map(Some(len))
    }
}
