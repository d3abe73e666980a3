//! CONoise(k) (SPEC §9): k times, pick a random DC σ and two random distinct
//! tuples, and change them until they jointly satisfy every predicate of σ,
//! i.e. violate σ:
//! - `=`, `<=`, `>=` not satisfied: copy one side's value to the other (the
//!   side is random);
//! - `<`, `>`, `!=` not satisfied: change one side (random) to a value of its
//!   active domain that satisfies the predicate, or, when none does, to a
//!   random number in the needed range (numeric columns) or a modified string
//!   (text columns);
//! - a predicate against a constant: set the attribute so the comparison
//!   holds (the constant itself for `=`, `<=`, `>=`).
//!
//! Legacy mode reproduces the paper's code: the second tuple is first
//! overwritten by a copy of the first, then the predicates that still fail
//! (the `<`, `>`, `!=` ones) are forced as above.
//!
//! Fixing one predicate can undo another that shares an attribute, so the
//! predicates are revisited (at most four rounds) until all hold. Values
//! compare as numbers when every value of the column in the input is a number
//! (the engine's typing of a CSV column), else as strings; NULL satisfies no
//! predicate (SPEC §1), so a NULL operand is filled first.
//!
//! The table is held in memory, dictionary-encoded (4 bytes a cell plus the
//! distinct values), which also gives the active domains for free.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use dpincon_constraints::{Literal, Operator, TupleVar};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::table::{Kind, TableFormat, TableReader, TableWriter, check_distinct};
use crate::typo::typo;
use crate::{DenialConstraint, GenerateError, Resolved, Side, literal_text, resolve};

const NULL: u32 = u32::MAX;
/// Rounds of fixing per iteration before giving up on a pair.
const ROUNDS: usize = 4;

/// What [`conoise`] did.
#[derive(Debug, Clone, Serialize)]
pub struct ConoiseStats {
    /// Always `conoise`.
    pub generator: &'static str,
    /// The input table.
    pub input: PathBuf,
    /// The noisy table written.
    pub out: PathBuf,
    /// Its format.
    pub format: TableFormat,
    /// Rows (input = output).
    pub rows: u64,
    /// The seed.
    pub seed: u64,
    /// k.
    pub iterations: u64,
    /// Whether the paper's copy-the-first-tuple behaviour was used.
    pub legacy: bool,
    /// Denial constraints drawn from.
    pub constraints: usize,
    /// Iterations whose pair violated its constraint when the iteration
    /// ended (later iterations may repair it again by chance).
    pub violating_pairs: u64,
    /// Cell writes that changed a value.
    pub assignments: u64,
    /// Distinct cells whose final value differs from the input.
    pub cells_modified: u64,
    /// `cells_modified` by attribute (only attributes with changes).
    pub modified_per_attribute: BTreeMap<String, u64>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Every iteration's constraint and pair, for checking (not serialised).
    #[serde(skip)]
    pub pairs: Vec<ConoisePair>,
}

/// One CONoise iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConoisePair {
    /// Index of the constraint in the slice given to [`conoise`].
    pub constraint: usize,
    /// Row (0-based) playing `t1`.
    pub t1: u64,
    /// Row (0-based) playing `t2`.
    pub t2: u64,
    /// Whether the pair violated the constraint right after the iteration.
    pub violated: bool,
}

/// One column, dictionary-encoded. Codes below `domain_len` are the input's
/// values (the active domain); later codes are values CONoise made up.
struct Column {
    dict: Vec<Box<str>>,
    index: HashMap<Box<str>, u32>,
    codes: Vec<u32>,
    domain_len: usize,
    kind: Kind,
    numeric: bool,
    /// Domain codes sorted numerically / as strings, built on first use.
    sorted_num: Option<Vec<u32>>,
    sorted_str: Option<Vec<u32>>,
}

impl Column {
    fn new(kind: Kind) -> Self {
        Column {
            dict: Vec::new(),
            index: HashMap::new(),
            codes: Vec::new(),
            domain_len: 0,
            kind,
            numeric: false,
            sorted_num: None,
            sorted_str: None,
        }
    }

    fn intern(&mut self, v: &str) -> u32 {
        if let Some(&c) = self.index.get(v) {
            return c;
        }
        let c = self.dict.len() as u32;
        self.dict.push(v.into());
        self.index.insert(v.into(), c);
        c
    }

    fn get(&self, row: usize) -> Option<&str> {
        match self.codes[row] {
            NULL => None,
            c => Some(&self.dict[c as usize]),
        }
    }

    /// The active domain sorted in the order a predicate compares it in.
    fn sorted(&mut self, numeric: bool) {
        let slot = if numeric { &mut self.sorted_num } else { &mut self.sorted_str };
        if slot.is_none() {
            let mut v: Vec<u32> = (0..self.domain_len as u32).collect();
            v.sort_by(|&a, &b| compare(&self.dict[a as usize], &self.dict[b as usize], numeric));
            *slot = Some(v);
        }
    }
}

/// Compare two values as numbers (when `numeric`) or strings.
fn compare(a: &str, b: &str, numeric: bool) -> Ordering {
    if !numeric {
        return a.cmp(b);
    }
    match (a.parse::<i64>(), b.parse::<i64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        _ => match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => x.total_cmp(&y),
            _ => a.cmp(b),
        },
    }
}

/// One operand's value in the current pair.
enum Val<'a> {
    Cell(usize, usize),
    Const(&'a Literal),
}

struct Table {
    columns: Vec<Column>,
    /// Input code of every cell changed at least once.
    original: HashMap<(usize, usize), u32>,
    assignments: u64,
}

impl Table {
    fn text<'a>(&'a self, v: &'a Val<'a>, lit: &'a str) -> Option<&'a str> {
        match v {
            Val::Cell(c, r) => self.columns[*c].get(*r),
            Val::Const(_) => Some(lit),
        }
    }

    fn set_code(&mut self, col: usize, row: usize, code: u32) {
        let old = self.columns[col].codes[row];
        if old != code {
            self.original.entry((col, row)).or_insert(old);
            self.columns[col].codes[row] = code;
            self.assignments += 1;
        }
    }

    fn set(&mut self, col: usize, row: usize, value: &str) {
        let code = self.columns[col].intern(value);
        self.set_code(col, row, code);
    }

    /// Whether `v op w` holds, and whether it compares numerically.
    fn numeric(&self, a: &Val<'_>, b: &Val<'_>) -> bool {
        let num = |v: &Val<'_>| match v {
            Val::Cell(c, _) => self.columns[*c].numeric,
            Val::Const(l) => matches!(l, Literal::Int(_) | Literal::Float(_)),
        };
        num(a) && num(b)
    }

    fn holds(&self, p: &Resolved<'_>, rows: [usize; 2]) -> bool {
        let (l, r) = (val(p.left, rows), val(p.right, rows));
        let (lt, rt) = (lit(p.left), lit(p.right));
        let (Some(a), Some(b)) = (self.text(&l, &lt), self.text(&r, &rt)) else {
            return false; // NULL satisfies no predicate
        };
        p.op.holds(&compare(a, b, self.numeric(&l, &r)), &Ordering::Equal)
    }

    /// A uniformly random active-domain value of `col`.
    fn any_value(&self, col: usize, rng: &mut impl Rng) -> Option<String> {
        let c = &self.columns[col];
        (c.domain_len > 0).then(|| c.dict[rng.random_range(0..c.domain_len)].to_string())
    }

    /// A value `x` for column `col` with `x op v`: from the active domain if
    /// one satisfies it, else made up.
    fn satisfying(
        &mut self,
        col: usize,
        op: Operator,
        v: &str,
        numeric: bool,
        rng: &mut impl Rng,
    ) -> Option<String> {
        self.columns[col].sorted(numeric);
        let column = &self.columns[col];
        let int_column = column.kind == Kind::Int;
        let sorted =
            if numeric { column.sorted_num.as_deref() } else { column.sorted_str.as_deref() }
                .expect("built just above");
        let dict = &column.dict;
        let cmp = |code: u32| compare(&dict[code as usize], v, numeric);
        let below = sorted.partition_point(|&c| cmp(c) == Ordering::Less);
        let not_above = sorted.partition_point(|&c| cmp(c) != Ordering::Greater);
        let choice = match op {
            Operator::Lt if below > 0 => Some(sorted[rng.random_range(0..below)]),
            Operator::Gt if not_above < sorted.len() => {
                Some(sorted[rng.random_range(not_above..sorted.len())])
            }
            Operator::Ne if below + (sorted.len() - not_above) > 0 => {
                let i = rng.random_range(0..below + sorted.len() - not_above);
                Some(sorted[if i < below { i } else { not_above + i - below }])
            }
            _ => None,
        };
        if let Some(code) = choice {
            return Some(dict[code as usize].to_string());
        }
        if numeric { made_up_number(op, v, int_column, rng) } else { made_up_string(op, v, rng) }
    }

    /// Make `p` hold for the pair; false if it cannot (e.g. `t1.A < t1.A`).
    fn force(&mut self, p: &Resolved<'_>, rows: [usize; 2], rng: &mut impl Rng) -> bool {
        match (val(p.left, rows), val(p.right, rows)) {
            (Val::Cell(cl, rl), Val::Cell(cr, rr)) => {
                if (cl, rl) == (cr, rr) {
                    return false;
                }
                let numeric = self.numeric(&Val::Cell(cl, rl), &Val::Cell(cr, rr));
                let left_first = rng.random_bool(0.5);
                let (first, second, op) = if left_first {
                    ((cl, rl), (cr, rr), p.op)
                } else {
                    ((cr, rr), (cl, rl), p.op.flip())
                };
                match op {
                    // Copy `first` into `second` (or back when it is NULL).
                    Operator::Eq | Operator::Le | Operator::Ge => {
                        let (src, dst) = if self.columns[first.0].get(first.1).is_some() {
                            (first, second)
                        } else {
                            (second, first)
                        };
                        let value = match self.columns[src.0].get(src.1) {
                            Some(v) => v.to_string(),
                            None => match self.any_value(src.0, rng) {
                                Some(v) => {
                                    self.set(src.0, src.1, &v);
                                    v
                                }
                                None => return false,
                            },
                        };
                        self.set(dst.0, dst.1, &value);
                        true
                    }
                    // Change `first` so that `first op second`; if no value
                    // can do it (a string below ""), change `second` instead.
                    _ => {
                        self.change(first, op, second, numeric, rng)
                            || self.change(second, op.flip(), first, numeric, rng)
                    }
                }
            }
            (Val::Cell(c, r), Val::Const(l)) => self.force_const(c, r, p.op, l, rng),
            (Val::Const(l), Val::Cell(c, r)) => self.force_const(c, r, p.op.flip(), l, rng),
            (Val::Const(_), Val::Const(_)) => false,
        }
    }

    /// Set cell `x` to a value with `x op y`, filling a NULL `y` first.
    fn change(
        &mut self,
        x: (usize, usize),
        op: Operator,
        y: (usize, usize),
        numeric: bool,
        rng: &mut impl Rng,
    ) -> bool {
        let reference = match self.columns[y.0].get(y.1) {
            Some(v) => v.to_string(),
            None => match self.any_value(y.0, rng) {
                Some(v) => {
                    self.set(y.0, y.1, &v);
                    v
                }
                None => return false,
            },
        };
        match self.satisfying(x.0, op, &reference, numeric, rng) {
            Some(v) => {
                self.set(x.0, x.1, &v);
                true
            }
            None => false,
        }
    }

    fn force_const(
        &mut self,
        col: usize,
        row: usize,
        op: Operator,
        l: &Literal,
        rng: &mut impl Rng,
    ) -> bool {
        let text = literal_text(l);
        match op {
            Operator::Eq | Operator::Le | Operator::Ge => {
                self.set(col, row, &text);
                true
            }
            _ => {
                let numeric =
                    self.columns[col].numeric && matches!(l, Literal::Int(_) | Literal::Float(_));
                match self.satisfying(col, op, &text, numeric, rng) {
                    Some(v) => {
                        self.set(col, row, &v);
                        true
                    }
                    None => false,
                }
            }
        }
    }
}

fn val<'a>(side: Side<'a>, rows: [usize; 2]) -> Val<'a> {
    match side {
        Side::Cell(TupleVar::T1, c) => Val::Cell(c, rows[0]),
        Side::Cell(TupleVar::T2, c) => Val::Cell(c, rows[1]),
        Side::Const(l) => Val::Const(l),
    }
}

fn lit(side: Side<'_>) -> String {
    match side {
        Side::Const(l) => literal_text(l),
        Side::Cell(..) => String::new(),
    }
}

/// A random number `x` with `x op v` (`<`, `>` or `!=`): `v` moved by up to
/// half its magnitude (at least 10), an integer in an integer column.
fn made_up_number(op: Operator, v: &str, int_column: bool, rng: &mut impl Rng) -> Option<String> {
    let down = match op {
        Operator::Lt => true,
        Operator::Gt => false,
        _ => rng.random_bool(0.5),
    };
    if let (true, Ok(x)) = (int_column, v.parse::<i64>()) {
        let span = (x.unsigned_abs() / 2).clamp(10, i64::MAX as u64 / 4) as i64;
        let d = rng.random_range(1..=span);
        return Some(if down { x.saturating_sub(d) } else { x.saturating_add(d) }.to_string());
    }
    let x: f64 = v.parse().ok()?;
    let span = (x.abs() / 2.0).max(10.0);
    let d = span * rng.random_range(0.01..1.0);
    let y = if down { x - d } else { x + d };
    (y != x && y.is_finite()).then(|| format!("{y:?}"))
}

/// A string `x` with `x op v` (`<`, `>` or `!=`), one edit away from `v`.
fn made_up_string(op: Operator, v: &str, rng: &mut impl Rng) -> Option<String> {
    match op {
        // A proper prefix sorts first; a single character steps down in
        // its class. Nothing sorts below "" or "A"-like minima: None.
        Operator::Lt => {
            let mut chars: Vec<char> = v.chars().collect();
            if chars.len() >= 2 {
                chars.pop();
                return Some(chars.into_iter().collect());
            }
            let c = *chars.first()?;
            let floor = match c {
                'B'..='Z' => 'A',
                'b'..='z' => 'a',
                '1'..='9' => '0',
                _ => return None,
            };
            Some(char::from(rng.random_range(floor as u8..c as u8)).to_string())
        }
        // Any extension sorts after.
        Operator::Gt => {
            let upper = v.chars().filter(|c| c.is_uppercase()).count()
                >= v.chars().filter(|c| c.is_lowercase()).count();
            let base = if upper { b'A' } else { b'a' };
            Some(format!("{v}{}", char::from(base + rng.random_range(0..26))))
        }
        _ => Some(typo(v, rng)),
    }
}

/// Apply CONoise(`iterations`) to `input` under `constraints` and write the
/// result to `out` (CSV or Parquet by extension). `legacy` copies the first
/// tuple into the second before forcing, as the paper's code does. The input
/// is never modified, and `out` may not be the input file.
pub fn conoise(
    input: &Path,
    constraints: &[DenialConstraint],
    iterations: u64,
    seed: u64,
    legacy: bool,
    out: &Path,
) -> Result<ConoiseStats, GenerateError> {
    let start = Instant::now();
    check_distinct(input, out)?;
    if constraints.is_empty() {
        return Err(GenerateError::Option("conoise needs at least one constraint".into()));
    }
    let reader = TableReader::open(input)?;
    let header = reader.header().clone();
    let resolved = resolve(constraints, &header, input)?;

    let mut columns: Vec<Column> = header.kinds.iter().map(|&k| Column::new(k)).collect();
    let rows = reader.for_each(|row, values| {
        if row >= u64::from(u32::MAX) {
            return Err(GenerateError::Option(
                "conoise holds the table in memory: at most 2^32 - 1 rows".into(),
            ));
        }
        for (column, v) in columns.iter_mut().zip(values) {
            let code = match v {
                Some(v) => {
                    let code = column.intern(v);
                    if code as usize + 1 == column.dict.len() {
                        column.kind = column.kind.join(Kind::of(v));
                    }
                    code
                }
                None => NULL,
            };
            column.codes.push(code);
        }
        Ok(())
    })?;
    for column in &mut columns {
        column.domain_len = column.dict.len();
        column.numeric = column.kind.is_numeric();
    }
    if rows < 2 {
        return Err(GenerateError::Option(format!(
            "conoise needs at least two rows; '{}' has {rows}",
            input.display()
        )));
    }

    let mut table = Table { columns, original: HashMap::new(), assignments: 0 };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rows as usize;
    let mut pairs = Vec::with_capacity(iterations.min(1 << 20) as usize);
    for _ in 0..iterations {
        let k = rng.random_range(0..resolved.len());
        let a = rng.random_range(0..n);
        let mut b = rng.random_range(0..n - 1);
        if b >= a {
            b += 1;
        }
        let pair = [a, b];
        if legacy {
            for c in 0..table.columns.len() {
                let code = table.columns[c].codes[a];
                table.set_code(c, b, code);
            }
        }
        for _ in 0..ROUNDS {
            let mut all = true;
            for p in &resolved[k] {
                if !table.holds(p, pair) {
                    all = false;
                    table.force(p, pair, &mut rng);
                }
            }
            if all {
                break;
            }
        }
        let violated = resolved[k].iter().all(|p| table.holds(p, pair));
        pairs.push(ConoisePair { constraint: k, t1: a as u64, t2: b as u64, violated });
    }

    // Output types: every value a column now holds (its input kind for
    // Parquet text columns, which stay text).
    let kinds: Vec<Kind> = table
        .columns
        .iter()
        .map(|c| c.dict[c.domain_len..].iter().fold(c.kind, |k, v| k.join(Kind::of(v))))
        .collect();
    let format = TableFormat::from_path(out);
    let mut writer = TableWriter::create(out, format, &header.names, &kinds)?;
    let mut values: Vec<Option<&str>> = Vec::with_capacity(table.columns.len());
    for row in 0..n {
        values.clear();
        values.extend(table.columns.iter().map(|c| c.get(row)));
        writer.write_row(&values)?;
    }
    writer.finish()?;

    let mut modified_per_attribute = BTreeMap::new();
    let mut cells_modified = 0;
    for (&(c, r), &code) in &table.original {
        if table.columns[c].codes[r] != code {
            cells_modified += 1;
            *modified_per_attribute.entry(header.names[c].clone()).or_insert(0) += 1;
        }
    }
    Ok(ConoiseStats {
        generator: "conoise",
        input: input.into(),
        out: out.into(),
        format,
        rows,
        seed,
        iterations,
        legacy,
        constraints: constraints.len(),
        violating_pairs: pairs.iter().filter(|p| p.violated).count() as u64,
        assignments: table.assignments,
        cells_modified,
        modified_per_attribute,
        seconds: start.elapsed().as_secs_f64(),
        pairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_as_numbers() {
        assert_eq!(compare("9500", "10000", true), Ordering::Less);
        assert_eq!(compare("9500", "10000", false), Ordering::Greater);
        assert_eq!(compare("5", "5.0", true), Ordering::Equal);
        assert_eq!(compare("-1.5", "0.2", true), Ordering::Less);
    }

    #[test]
    fn made_up_values_satisfy_the_comparison() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..200 {
            for (op, v) in [(Operator::Lt, "40"), (Operator::Gt, "0"), (Operator::Ne, "7")] {
                let x = made_up_number(op, v, true, &mut rng).unwrap();
                assert!(op.holds(&compare(&x, v, true), &Ordering::Equal), "{x} {op} {v}");
                assert!(x.parse::<i64>().is_ok());
                let x = made_up_number(op, "2.5", false, &mut rng).unwrap();
                assert!(op.holds(&compare(&x, "2.5", true), &Ordering::Equal), "{x} {op} 2.5");
            }
            for (op, v) in [(Operator::Lt, "NY"), (Operator::Lt, "B"), (Operator::Gt, "CA")] {
                let x = made_up_string(op, v, &mut rng).unwrap();
                assert!(op.holds(&x.as_str().cmp(v), &Ordering::Equal), "{x} {op} {v}");
            }
            assert_ne!(made_up_string(Operator::Ne, "CA", &mut rng).unwrap(), "CA");
        }
        assert_eq!(made_up_string(Operator::Lt, "A", &mut rng), None);
        assert_eq!(made_up_string(Operator::Lt, "", &mut rng), None);
    }
}
