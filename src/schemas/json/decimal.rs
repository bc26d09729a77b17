//! Exact decimals for `multipleOf`, which Confluent compares as Java
//! `BigDecimal`s: 0.3 is a multiple of 0.1 there, though not in `f64`.

use serde_json::Number;

/// `mantissa × 10^exponent`, with no trailing zero in the mantissa, so
/// equal values have equal representations (0.5 and 0.50 alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decimal {
    negative: bool,
    mantissa: u128,
    exponent: i32,
}

impl Decimal {
    /// The decimal a JSON number denotes. Floats go through their
    /// shortest round-trip text, which is the text the schema author wrote
    /// for any number of up to 17 significant digits.
    pub fn from_json(number: &Number) -> Option<Decimal> {
        if let Some(u) = number.as_u64() {
            return Some(Decimal::new(false, u128::from(u), 0));
        }
        if let Some(i) = number.as_i64() {
            return Some(Decimal::new(i < 0, u128::from(i.unsigned_abs()), 0));
        }
        Decimal::parse(&number.as_f64()?.to_string())
    }

    /// Parses the plain decimal text Rust prints for an `f64`
    /// (`-12.5`, `0.0001`; never an exponent).
    fn parse(text: &str) -> Option<Decimal> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let mut mantissa: u128 = 0;
        for c in whole.chars().chain(fraction.chars()) {
            let digit = c.to_digit(10)?;
            mantissa = mantissa.checked_mul(10)?.checked_add(u128::from(digit))?;
        }
        let exponent = -i32::try_from(fraction.len()).ok()?;
        Some(Decimal::new(negative, mantissa, exponent))
    }

    fn new(negative: bool, mut mantissa: u128, mut exponent: i32) -> Decimal {
        if mantissa == 0 {
            return Decimal {
                negative: false,
                mantissa: 0,
                exponent: 0,
            };
        }
        while mantissa.is_multiple_of(10) {
            mantissa /= 10;
            exponent += 1;
        }
        Decimal {
            negative,
            mantissa,
            exponent,
        }
    }

    pub fn is_zero(self) -> bool {
        self.mantissa == 0
    }

    /// Whether `self` is an integer multiple of `divisor` (the sign does
    /// not matter, as for `BigDecimal.remainder(..) == 0`). `false` when the
    /// scales are too far apart to compare exactly, which no schema meets.
    pub fn is_multiple_of(self, divisor: Decimal) -> bool {
        if divisor.is_zero() {
            return false;
        }
        let common = self.exponent.min(divisor.exponent);
        let scaled = |d: Decimal| -> Option<u128> {
            let shift = u32::try_from(d.exponent - common).ok()?;
            d.mantissa.checked_mul(10u128.checked_pow(shift)?)
        };
        match (scaled(self), scaled(divisor)) {
            (Some(a), Some(b)) => a % b == 0,
            _ => false,
        }
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.negative { "-" } else { "" };
        let digits = self.mantissa.to_string();
        if self.exponent >= 0 {
            let zeros = "0".repeat(self.exponent.unsigned_abs() as usize);
            return write!(f, "{sign}{digits}{zeros}");
        }
        let scale = self.exponent.unsigned_abs() as usize;
        if digits.len() > scale {
            let (whole, fraction) = digits.split_at(digits.len() - scale);
            write!(f, "{sign}{whole}.{fraction}")
        } else {
            let zeros = "0".repeat(scale - digits.len());
            write!(f, "{sign}0.{zeros}{digits}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(json: &str) -> Decimal {
        let number: Number = serde_json::from_str(json).expect("a JSON number");
        Decimal::from_json(&number).expect("representable")
    }

    #[test]
    fn equal_values_compare_equal_whatever_their_scale() {
        assert_eq!(decimal("0.5"), decimal("0.50"));
        assert_eq!(decimal("10"), decimal("10.0"));
        assert_ne!(decimal("0.5"), decimal("-0.5"));
    }

    #[test]
    fn multiples_are_exact() {
        assert!(decimal("0.3").is_multiple_of(decimal("0.1")));
        assert!(decimal("10").is_multiple_of(decimal("0.5")));
        assert!(decimal("10").is_multiple_of(decimal("2")));
        assert!(!decimal("11").is_multiple_of(decimal("10")));
        assert!(!decimal("0.5").is_multiple_of(decimal("10")));
        assert!(!decimal("1").is_multiple_of(decimal("0")));
    }

    #[test]
    fn displays_as_written() {
        for text in ["0.5", "10", "1200", "0.0001", "-2.25"] {
            assert_eq!(decimal(text).to_string(), text);
        }
    }
}
