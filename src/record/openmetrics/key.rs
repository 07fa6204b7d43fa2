//! Map keys as text: the tree's object keys and the leaves' shape both take a key this way,
//! so the two name every key alike.

use super::tree::Error;
use serde::ser::{self, Serialize};
use std::io::Write as _;

/// A map key's text, appended to a buffer as serde_json writes a key: a string, an integer or
/// a bool as its text, a unit variant as its name. Anything else is an error, float keys too
/// (serde_json writes those; no type perftop serializes has one).
pub(super) struct KeyText<'a>(pub(super) &'a mut Vec<u8>);

fn key_error() -> Error {
    ser::Error::custom("key must be a string")
}

/// Key methods that write their value's text.
macro_rules! key_text {
    ($($name:ident $t:ty),*) => {
        $(fn $name(self, v: $t) -> Result<(), Error> {
            write!(self.0, "{v}").map_err(|_| key_error())
        })*
    };
}

/// Key methods that are an error.
macro_rules! key_refused {
    ($($name:ident($($t:ty),*)),*) => {
        $(fn $name(self, $(_: $t),*) -> Result<(), Error> {
            Err(key_error())
        })*
    };
}

impl ser::Serializer for KeyText<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    key_text!(serialize_bool bool, serialize_i8 i8, serialize_i16 i16, serialize_i32 i32,
        serialize_i64 i64, serialize_i128 i128, serialize_u8 u8, serialize_u16 u16,
        serialize_u32 u32, serialize_u64 u64, serialize_u128 u128, serialize_char char);
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        // Not through `write!`: most keys are strings (flattened fields), and the formatting
        // machinery was most of a key's cost.
        self.0.extend_from_slice(v.as_bytes());
        Ok(())
    }
    key_refused!(
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str)
    );

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.0.extend_from_slice(v.as_bytes());
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}
