//! Hand-written `Deserialize` for the cold-path input types (call options, pricing inputs):
//! one shared member loop instead of a derived visitor per type.
//!
//! `#[derive(Deserialize)]` compiles, per struct, a field-name visitor (by string, bytes and
//! index), a `visit_map` and a `visit_seq`; in the `.wasm` each copy sat inlined in its
//! caller (issue 11). Here a type lists its fields ([`fields!`]) and one generic loop reads
//! the object: the same serde_json calls in the same order as the derive, so the same errors
//! at the same positions (`unknown field`, `duplicate field`, `missing field`, `invalid type:
//! ..., expected struct Name`). The one difference: an array is not read as the struct's
//! fields by position, which only the derive's `visit_seq` did and no caller sends.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// A struct read member by member.
pub trait Fields: Sized {
    /// The struct's name, as `expected struct Name` says it.
    const NAME: &'static str;
    /// What an error calls the expected value instead, when not empty (`#[serde(expecting)]`).
    const EXPECTING: &'static str;
    /// The member names, in declaration order (at most 64).
    const FIELDS: &'static [&'static str];
    /// The members that must be given.
    const REQUIRED: &'static [&'static str];
    /// Whether an unknown member is an error (else it is skipped).
    const DENY_UNKNOWN: bool;
    /// The value before any member is read: absent members keep it.
    fn empty() -> Self;
    /// Read member `i` (an index into `FIELDS`) from `map`'s next value.
    fn member<'de, A: MapAccess<'de>>(&mut self, i: usize, map: &mut A) -> Result<(), A::Error>;
}

/// `T` from `d`, as its derived `Deserialize` would read it from an object.
pub fn deserialize<'de, T: Fields, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_struct(T::NAME, T::FIELDS, Object::<T>(PhantomData))
}

struct Object<T>(PhantomData<T>);

impl<'de, T: Fields> Visitor<'de> for Object<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match T::EXPECTING {
            "" => write!(f, "struct {}", T::NAME),
            expecting => f.write_str(expecting),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut value = T::empty();
        let mut seen = 0u64;
        let key = Key {
            fields: T::FIELDS,
            deny_unknown: T::DENY_UNKNOWN,
        };
        while let Some(i) = map.next_key_seed(key)? {
            match i {
                Some(i) => {
                    seen = first(seen, i, T::FIELDS)?;
                    value.member(i, &mut map)?;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        missing(seen, T::FIELDS, T::REQUIRED)?;
        Ok(value)
    }
}

/// `seen` with member `i` added, or `duplicate field` when it was there.
fn first<E: de::Error>(seen: u64, i: usize, fields: &'static [&'static str]) -> Result<u64, E> {
    let bit = 1u64 << i;
    if seen & bit != 0 {
        return Err(E::duplicate_field(fields[i]));
    }
    Ok(seen | bit)
}

/// `missing field` for the first required member (in declaration order) not seen.
fn missing<E: de::Error>(
    seen: u64,
    fields: &'static [&'static str],
    required: &'static [&'static str],
) -> Result<(), E> {
    for (i, name) in fields.iter().enumerate() {
        if seen & (1u64 << i) == 0 && required.contains(name) {
            return Err(E::missing_field(name));
        }
    }
    Ok(())
}

/// A member's key: the index of a known field, `None` for one skipped.
#[derive(Clone, Copy)]
struct Key {
    fields: &'static [&'static str],
    deny_unknown: bool,
}

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<usize>, E> {
        match self.fields.iter().position(|f| *f == v) {
            Some(i) => Ok(Some(i)),
            None if self.deny_unknown => Err(E::unknown_field(v, self.fields)),
            None => Ok(None),
        }
    }
}

/// `Deserialize` and [`Fields`] for a struct whose members are named as its fields:
/// `fields!(Type, [expecting: "text",] deny_unknown: bool, empty: expr, required: [names],
/// [field, ...])`; `field as Type` reads the member as `Type` and converts it (`Into`).
#[macro_export]
macro_rules! fields {
    ($ty:ident, deny_unknown: $($rest:tt)*) => {
        $crate::fields!($ty, expecting: "", deny_unknown: $($rest)*);
    };
    ($ty:ident, expecting: $expecting:literal, deny_unknown: $deny:expr, empty: $empty:expr, required: [$($req:ident),*], [$($f:ident $(as $via:ty)?),* $(,)?]) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::fields::deserialize::<Self, D>(d)
            }
        }

        impl $crate::fields::Fields for $ty {
            const NAME: &'static str = stringify!($ty);
            const EXPECTING: &'static str = $expecting;
            const FIELDS: &'static [&'static str] = &[$(stringify!($f)),*];
            const REQUIRED: &'static [&'static str] = &[$(stringify!($req)),*];
            const DENY_UNKNOWN: bool = $deny;

            fn empty() -> Self {
                $empty
            }

            fn member<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                i: usize,
                map: &mut A,
            ) -> Result<(), A::Error> {
                let mut k = 0usize;
                $(
                    if i == k {
                        $crate::fields_member!(self.$f, map $(, $via)?);
                        return Ok(());
                    }
                    k += 1;
                )*
                let _ = k;
                Ok(())
            }
        }
    };
}

/// One member's read in [`fields!`]: as the field's own type, or as `$via` converted.
#[doc(hidden)]
#[macro_export]
macro_rules! fields_member {
    ($slot:expr, $map:ident) => {
        $slot = $map.next_value()?
    };
    ($slot:expr, $map:ident, $via:ty) => {
        $slot = ::core::convert::Into::into($map.next_value::<$via>()?)
    };
}
