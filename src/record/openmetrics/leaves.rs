//! An interval's numbers and bools in serialization order, with no tree: what `perftop
//! export` needs from an interval whose shape (keys, strings, ids, lengths) is the last
//! one's, which is most intervals. The page's template (`export::metrics`) knows which
//! series each leaf fills. On the 2-vCPU VM building the tree and walking it took ~450 µs
//! of an interval's ~1.9 ms; this pass takes 60-120 µs (thread CPU clock, 2026-12-07).

use super::key::KeyText;
use super::tree::Error;
use super::ID_FIELDS;
use serde::ser::{self, Serialize};

/// One interval's leaves and its shape: everything but the numbers that decides which series
/// the walk makes and how it labels them (keys, strings, the values of id fields, where
/// values are absent, lengths), as tokens. Two intervals with equal shapes make the same
/// series, in the same order, from the same leaves.
#[derive(Debug, Default)]
pub(crate) struct Leaves {
    pub(crate) shape: Vec<u8>,
    pub(crate) values: Vec<f64>,
}

/// Tokens of the shape. Text is followed by `END`, a byte UTF-8 never holds.
const END: u8 = 0xff;
const NUM: u8 = b'n';
const ID: u8 = b'i';
const BOOL: u8 = b'b';
const NULL: u8 = b'z';
const STR: u8 = b's';
const KEY: u8 = b'k';
const VARIANT: u8 = b'v';
const SEQ: u8 = b'[';
const SEQ_END: u8 = b']';
const OBJ: u8 = b'{';
const OBJ_END: u8 = b'}';

impl Leaves {
    /// Fills `self` from `v`, of whose top-level object only the fields in `keep` are read, as
    /// `Node::of_fields(v, keep)` reads them: the i-th value here is the tree's `Leaf(i)`.
    pub(crate) fn fill<T: Serialize + ?Sized>(
        &mut self,
        v: &T,
        keep: &[&str],
    ) -> Result<(), Error> {
        self.shape.clear();
        self.values.clear();
        let mut c = Collect {
            out: self,
            keep,
            depth: 0,
            top_object: false,
            skip: false,
            id: false,
        };
        v.serialize(&mut c)
    }
}

/// The serializer. `depth` counts the containers open; `top_object` says the value itself is an
/// object, whose keys (read at depth 1) are filtered; `skip` that the key just read was not
/// kept, so its value is not read either; `id` that the key just read names an id field.
struct Collect<'a, 'k> {
    out: &'a mut Leaves,
    keep: &'k [&'k str],
    depth: usize,
    top_object: bool,
    skip: bool,
    id: bool,
}

impl Collect<'_, '_> {
    fn token(&mut self, t: u8) {
        self.out.shape.push(t);
    }

    fn text(&mut self, t: u8, s: &str) {
        self.out.shape.push(t);
        self.out.shape.extend_from_slice(s.as_bytes());
        self.out.shape.push(END);
    }

    /// A number: its value, and in the shape its bits when it is an id (its text labels the
    /// series). Every number counts as a leaf, a non-finite one too (it is absent from the
    /// page), as `tree::leaf` counts.
    fn number(&mut self, x: f64, finite: bool, bits: u64) {
        if !finite {
            self.token(NULL);
        } else if self.id {
            self.token(ID);
            self.out.shape.extend_from_slice(&bits.to_le_bytes());
        } else {
            self.token(NUM);
        }
        self.out.values.push(x);
    }

    fn open(&mut self, t: u8, object: bool) {
        self.token(t);
        self.top_object |= object && self.depth == 0;
        self.depth += 1;
    }

    fn close(&mut self, t: u8) {
        self.token(t);
        self.depth = self.depth.saturating_sub(1);
    }

    /// Whether the value of the key that ends the shape at `start` is read: the key as the
    /// tree keeps it, recorded; or, under the top object, dropped with its value.
    fn keyed(&mut self, start: usize) -> bool {
        let key = self
            .out
            .shape
            .get(start + 1..self.out.shape.len() - 1)
            .unwrap_or(&[]);
        let is = |k: &&str| k.as_bytes() == key;
        if self.top_object && self.depth == 1 && !self.keep.iter().any(is) {
            self.out.shape.truncate(start);
            return false;
        }
        self.id = ID_FIELDS.iter().any(is);
        true
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, v: &T) -> Result<(), Error> {
        let start = self.out.shape.len();
        self.text(KEY, key);
        if self.keyed(start) {
            v.serialize(&mut *self)?;
        }
        Ok(())
    }
}

/// The integer methods: each a number (`as f64`, as `serde_json::Number::as_f64` gives it).
macro_rules! integers {
    ($($name:ident $t:ty),*) => {
        $(fn $name(self, v: $t) -> Result<(), Error> {
            self.number(v as f64, true, v as u64);
            Ok(())
        })*
    };
}

impl ser::Serializer for &mut Collect<'_, '_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.token(BOOL);
        self.out.values.push(f64::from(u8::from(v)));
        Ok(())
    }
    integers!(serialize_i8 i8, serialize_i16 i16, serialize_i32 i32, serialize_i64 i64,
        serialize_u8 u8, serialize_u16 u16, serialize_u32 u32, serialize_u64 u64);
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        // As the tree: a number when it fits 64 bits, else an error.
        if let Ok(v) = i64::try_from(v) {
            self.serialize_i64(v)
        } else if let Ok(v) = u64::try_from(v) {
            self.serialize_u64(v)
        } else {
            Err(ser::Error::custom("number out of range"))
        }
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        match u64::try_from(v) {
            Ok(v) => self.serialize_u64(v),
            Err(_) => Err(ser::Error::custom("number out of range")),
        }
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.number(v, v.is_finite(), v.to_bits());
        Ok(())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.text(STR, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.text(STR, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        // The tree makes an array of numbers.
        self.open(SEQ, false);
        for b in v {
            self.id = false;
            self.number(f64::from(*b), true, u64::from(*b));
        }
        self.close(SEQ_END);
        Ok(())
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.token(NULL);
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.token(NULL);
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.token(NULL);
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.text(STR, v);
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
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        // `{variant: v}`, never filtered (as `Top` hands it to `Tree`).
        self.text(VARIANT, variant);
        self.depth += 1;
        self.id = false;
        v.serialize(&mut *self)?;
        self.depth = self.depth.saturating_sub(1);
        Ok(())
    }
    tuples_are_seqs_structs_are_maps!(Self, Self);
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Error> {
        self.open(SEQ, false);
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Error> {
        self.text(VARIANT, variant);
        self.open(SEQ, false);
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, Error> {
        self.open(OBJ, true);
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Error> {
        // Never filtered, as `Top` hands it to `Tree`: opened one level down.
        self.text(VARIANT, variant);
        self.depth += 1;
        self.open(OBJ, true);
        self.depth -= 1;
        Ok(self)
    }
}

/// A sequence trait of `Collect`, whose element method is `$element`.
macro_rules! seq {
    ($trait:ident, $element:ident) => {
        impl ser::$trait for &mut Collect<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn $element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
                self.id = false;
                v.serialize(&mut **self)
            }
            fn end(self) -> Result<(), Error> {
                self.close(SEQ_END);
                Ok(())
            }
        }
    };
}

seq!(SerializeSeq, serialize_element);
seq!(SerializeTuple, serialize_element);
seq!(SerializeTupleStruct, serialize_field);
seq!(SerializeTupleVariant, serialize_field);

/// A struct trait of `Collect`: named fields.
macro_rules! fields {
    ($trait:ident) => {
        impl ser::$trait for &mut Collect<'_, '_> {
            type Ok = ();
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Error> {
                self.field(key, v)
            }
            fn end(self) -> Result<(), Error> {
                self.close(OBJ_END);
                Ok(())
            }
        }
    };
}

fields!(SerializeStruct);
fields!(SerializeStructVariant);

impl ser::SerializeMap for &mut Collect<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        let start = self.out.shape.len();
        self.out.shape.push(KEY);
        key.serialize(KeyText(&mut self.out.shape))?;
        self.out.shape.push(END);
        self.skip = !self.keyed(start);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        if std::mem::take(&mut self.skip) {
            return Ok(());
        }
        v.serialize(&mut **self)
    }
    fn end(self) -> Result<(), Error> {
        self.close(OBJ_END);
        Ok(())
    }
}
