//! [`Figure`]: a number as a person reads it.

use std::fmt;

/// A number for people: six significant digits, no float noise (ε split
/// 4:1 from 1 is stored as `0.7999999999999999`, the largest share whose
/// exact sum stays within ε; shown, it is `0.8`), plain notation from
/// 1e-5 to 1e15, scientific outside, and 0 below 1e-12 (the noise of a
/// difference such as a cap less what was spent). Reports and messages
/// show budgets, caps and coverages with it; JSON keeps every bit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure(pub f64);

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if !x.is_finite() {
            return write!(f, "{x}");
        }
        if x.abs() < 1e-12 {
            return f.write_str("0");
        }
        let magnitude = x.abs().log10().floor() as i32;
        if !(-5..15).contains(&magnitude) {
            let sci = format!("{x:.5e}");
            let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
            let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
            return write!(f, "{mantissa}e{exponent}");
        }
        let decimals = (5 - magnitude).max(0) as usize;
        let plain = format!("{x:.decimals$}");
        let plain = if plain.contains('.') {
            plain.trim_end_matches('0').trim_end_matches('.')
        } else {
            &plain
        };
        f.write_str(if plain == "-0" { "0" } else { plain })
    }
}

#[cfg(test)]
mod tests {
    use super::Figure;

    #[test]
    fn figures_drop_float_noise_and_keep_six_digits() {
        let shown = |x: f64| Figure(x).to_string();
        assert_eq!(shown(0.7999999999999999), "0.8");
        assert_eq!(shown(0.1 + 0.2), "0.3");
        assert_eq!(shown(0.005 + 0.01), "0.015");
        assert_eq!(shown(1e-5), "0.00001");
        assert_eq!(shown(0.123456789), "0.123457");
        assert_eq!(shown(200_000.0), "200000");
        assert_eq!(shown(12_345_678.9), "12345679");
        assert_eq!(shown(-2.5), "-2.5");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(-0.0), "0");
        assert_eq!(shown(1e-7), "1e-7");
        assert_eq!(shown(-1e-17), "0");
        assert_eq!(shown(1.5e20), "1.5e20");
        assert_eq!(shown(f64::NAN), "NaN");
        assert_eq!(shown(f64::INFINITY), "inf");
    }
}
