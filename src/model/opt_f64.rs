//! `Option<f64>` in eight bytes, for the values kept per series of a many-series run (an
//! `Option<f64>` takes sixteen: a 100 MB CSV keeps about 400,000 series, a few values each,
//! and an export's series carries up to fourteen stats).

/// An `Option<f64>` in eight bytes. `None` is one NaN bit pattern (signalling, with a payload)
/// that no parse or arithmetic produces; a value with exactly those bits is kept as the quiet
/// NaN, which only changes a payload nothing reads. Equality is `Option<f64>`'s.
#[derive(Clone, Copy)]
pub struct OptF64(u64);

impl OptF64 {
    const NONE_BITS: u64 = 0x7FF4_0000_0000_0A5E;
    pub const NONE: OptF64 = OptF64(Self::NONE_BITS);

    pub fn new(v: Option<f64>) -> Self {
        match v {
            None => Self::NONE,
            Some(x) if x.to_bits() == Self::NONE_BITS => OptF64(f64::NAN.to_bits()),
            Some(x) => OptF64(x.to_bits()),
        }
    }

    pub fn get(self) -> Option<f64> {
        (self.0 != Self::NONE_BITS).then(|| f64::from_bits(self.0))
    }
}

impl Default for OptF64 {
    fn default() -> Self {
        Self::NONE
    }
}

impl From<Option<f64>> for OptF64 {
    fn from(v: Option<f64>) -> Self {
        OptF64::new(v)
    }
}

impl PartialEq for OptF64 {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// As the `Option<f64>` it stands for: a number or `null`.
impl serde::Serialize for OptF64 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl schemars::JsonSchema for OptF64 {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        <Option<f64>>::schema_name()
    }

    fn json_schema(gen: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <Option<f64>>::json_schema(gen)
    }

    fn inline_schema() -> bool {
        true
    }
}

impl std::fmt::Debug for OptF64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_f64_comes_back_as_it_went_in() {
        let values = [
            None,
            Some(0.0),
            Some(-0.0),
            Some(1.5),
            Some(f64::MAX),
            Some(f64::MIN_POSITIVE),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(2f64.powi(53) + 2.0),
        ];
        for v in values {
            let back = OptF64::new(v).get();
            assert_eq!(back.map(f64::to_bits), v.map(f64::to_bits), "{v:?}");
        }
        assert!(OptF64::new(Some(f64::NAN)).get().is_some_and(f64::is_nan));
        let lookalike = f64::from_bits(OptF64::NONE_BITS);
        assert!(OptF64::new(Some(lookalike)).get().is_some_and(f64::is_nan));
        assert_eq!(OptF64::default().get(), None);
        assert_ne!(OptF64::new(Some(f64::NAN)), OptF64::new(Some(f64::NAN)));
        assert_eq!(OptF64::new(Some(0.0)), OptF64::new(Some(-0.0)));
        assert_eq!(std::mem::size_of::<OptF64>(), 8);
    }
}
