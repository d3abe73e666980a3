//! The keys a deserialisable struct accepts, read from its derived
//! `Deserialize` (the names after `rename_all`): the coordinator tells an
//! operator's key from an unknown one by the type that declares it.

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// The keys `T` accepts. Empty for a type that is not a plain struct (one
/// with a `flatten` field reads a map and names no keys).
pub fn keys<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut probe = Probe(&[]);
    // The probe fails every read once it has the keys: the error is expected.
    let _ = T::deserialize(&mut probe);
    probe.0
}

struct Probe(&'static [&'static str]);

impl<'de> Deserializer<'de> for &mut Probe {
    type Error = de::value::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0 = fields;
        Err(de::Error::custom("keys only"))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("keys only"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use crate::{ReleaseOptions, TestOptions};

    #[test]
    fn keys_are_the_names_a_file_uses() {
        assert_eq!(super::keys::<TestOptions>(), ["seed", "non-private", "brute-force"]);
        assert!(super::keys::<ReleaseOptions>().contains(&"ir-method"));
    }
}
