//! One name table per option enum: `named!` derives the accepted
//! spellings, `Display`, `FromStr` (with the enum's [`ParseError`]) and
//! serde (the same spelling on the wire) from it, so a value reads the same
//! in a job file, a request and a flag.
//!
//! Not `clap::ValueEnum` or serde's derived enums: both word the refusal
//! themselves, and the messages (the value, and what is accepted) are part
//! of the interface.
//!
//! [`ParseError`]: crate::ParseError

/// `named!(Type, |text| error, { Variant => "name", ... })`: `Type::ALL`,
/// `Type::name`, `Display`, `FromStr`, `Serialize` and `Deserialize`.
macro_rules! named {
    ($ty:ident, $refuse:expr, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in the order reports list them.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The name flags, files and reports use.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }

            /// Every name, comma-separated (for messages and help).
            pub fn names() -> String {
                [$($name),+].join(", ")
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.pad(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::ParseError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let refuse: fn(&str) -> $crate::ParseError = $refuse;
                $ty::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| refuse(s))
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use named;
