//! Typos: one keyboard slip (insert, delete, substitute or transpose one
//! character), the second kind of error RNoise injects (SPEC §9).

use rand::Rng;

use crate::table::Kind;

/// The character class a slip next to `c` draws from: digits next to parts of
/// a number, capitals next to capitals, and so on, so that `MN` becomes `MQ`
/// or `MNB` rather than `M#N`.
#[derive(Clone, Copy)]
enum Class {
    Digit,
    Upper,
    Lower,
}

impl Class {
    fn draw(self, rng: &mut impl Rng) -> char {
        let (base, span) = match self {
            Class::Digit => (b'0', 10),
            Class::Upper => (b'A', 26),
            Class::Lower => (b'a', 26),
        };
        (base + rng.random_range(0..span)) as char
    }
}

fn class_of(c: char, numeric: bool, mostly_upper: bool) -> Class {
    if c.is_ascii_digit() || (numeric && matches!(c, '.' | '-' | '+' | 'e' | 'E')) {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_lowercase() {
        Class::Lower
    } else if mostly_upper {
        Class::Upper
    } else {
        Class::Lower
    }
}

/// A typo of `value`: always a different, non-empty string.
///
/// A number stays a number (`45000` → `4500`, `45600`, `54000`; `6.84` →
/// `6.4`): the engine types a CSV column from all its rows, so one letter in
/// `Salary` would turn the whole column into text and make every order
/// comparison lexicographic — the conflicts would then come from the typing,
/// not from the injected error. Text gets letters of the same case.
pub(crate) fn typo(value: &str, rng: &mut impl Rng) -> String {
    let chars: Vec<char> = value.chars().collect();
    let numeric = !value.is_empty() && Kind::of(value).is_numeric();
    let upper = chars.iter().filter(|c| c.is_uppercase()).count();
    let lower = chars.iter().filter(|c| c.is_lowercase()).count();
    let mostly_upper = upper >= lower;
    let class = |c: char| class_of(c, numeric, mostly_upper);
    let transposable: Vec<usize> =
        (0..chars.len().saturating_sub(1)).filter(|&i| chars[i] != chars[i + 1]).collect();
    for _ in 0..64 {
        let mut out = chars.clone();
        // Operations that can change the value: deleting the only character
        // would make it empty (NULL in a CSV file), not a typo.
        let mut ops = vec![0u8, 2];
        if chars.len() >= 2 {
            ops.push(1);
        }
        if !transposable.is_empty() {
            ops.push(3);
        }
        if chars.is_empty() {
            ops = vec![0];
        }
        match ops[rng.random_range(0..ops.len())] {
            0 => {
                let at = rng.random_range(0..=chars.len());
                let near =
                    if at > 0 { chars[at - 1] } else { chars.first().copied().unwrap_or('a') };
                out.insert(at, class(near).draw(rng));
            }
            1 => {
                out.remove(rng.random_range(0..chars.len()));
            }
            2 => {
                let at = rng.random_range(0..chars.len());
                let c = class(chars[at]).draw(rng);
                out[at] = c;
            }
            _ => {
                let at = transposable[rng.random_range(0..transposable.len())];
                out.swap(at, at + 1);
            }
        }
        let out: String = out.into_iter().collect();
        if out != value && (!numeric || Kind::of(&out).is_numeric()) {
            return out;
        }
    }
    // Practically unreachable (64 failed draws): append a digit or letter,
    // which always changes the value and keeps a number a number.
    let mut out = value.to_string();
    out.push(if numeric || value.is_empty() { '1' } else { 'X' });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// Edit distance 1 or one transposition.
    fn one_slip(a: &str, b: &str) -> bool {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        if a.len() == b.len() {
            let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
            diff.len() == 1
                || (diff.len() == 2
                    && diff[1] == diff[0] + 1
                    && a[diff[0]] == b[diff[1]]
                    && a[diff[1]] == b[diff[0]])
        } else {
            let (short, long) = if a.len() < b.len() { (&a, &b) } else { (&b, &a) };
            long.len() == short.len() + 1
                && (0..long.len()).any(|skip| {
                    long.iter()
                        .enumerate()
                        .filter(|&(i, _)| i != skip)
                        .map(|(_, c)| c)
                        .eq(short.iter())
                })
        }
    }

    #[test]
    fn typos_are_one_slip_and_keep_numbers_numeric() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for v in ["45000", "6.84", "0.0", "-1.5", "M", "CA", "DAYTONA BEACH", "Rosa", "7", ""] {
            for _ in 0..500 {
                let t = typo(v, &mut rng);
                assert_ne!(t, v);
                assert!(!t.is_empty());
                assert!(one_slip(v, &t), "{v:?} -> {t:?}");
                if !v.is_empty() && Kind::of(v).is_numeric() {
                    assert!(Kind::of(&t).is_numeric(), "{v:?} -> {t:?}");
                }
            }
        }
    }
}
