//! A CSV table cut into byte ranges of whole records, each read on its own
//! with its rows numbered as a reader of the whole file numbers them
//! (SPEC §1): how a cluster's executors share a CSV table (issue 29).
//!
//! Where records end is not local: a quoted field may hold new lines, so a
//! range's first new line need not end a record. [`split_csv`] therefore
//! reads the file once, in order, with the very record rules arrow-csv
//! reads it by (csv-core's, default settings: `"` quotes, `""` inside
//! quotes, `\r`, `\n` or `\r\n` ends a record, blank lines are skipped),
//! and cuts it only where a record has just ended, counting the records
//! before each cut. A reader started at such a cut is in the state a reader
//! of the whole file is in there, so [`read_csv_range`] decodes exactly the
//! records the whole-file reader would, and numbers them from the range's
//! first row. It checks the count it decoded against the split's, so a
//! file changed since it was split is an error, never misnumbered rows.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use arrow::csv::ReaderBuilder;
use arrow::datatypes::Schema;
use arrow::record_batch::RecordBatch;
use serde::{Deserialize, Serialize};

use crate::SourceError;
use crate::arrow_io::{BATCH_ROWS, clean_message};

/// A range is not cut smaller than this by default: a task per few
/// records would cost more in scheduling than it saves.
pub const MIN_RANGE_BYTES: u64 = 1 << 20;

/// Whole records of a CSV table at bytes `start..end`: the table's rows
/// `first_row..first_row + rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CsvRange {
    /// The first byte (just after a record's end, or the header's).
    pub start: u64,
    /// One past the last byte (just after a record's end, or the file's).
    pub end: u64,
    /// The table row of the range's first record.
    pub first_row: u64,
    /// How many records the range holds.
    pub rows: u64,
}

/// A CSV table's header and its cut into ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvSplit {
    /// The header row's names, trimmed.
    pub header: Vec<String>,
    /// The ranges, in row order; together they hold every data record.
    pub ranges: Vec<CsvRange>,
}

/// Bytes (and field ends) of one record kept before they are dropped.
const RECORD_CAP: usize = 1 << 24;

/// Counts records as csv-core ends them, over input fed in chunks.
#[derive(Debug)]
struct RecordEnds {
    reader: csv_core::Reader,
    /// Field bytes and ends are written here and dropped: only where
    /// records end matters (csv-core keeps its state across calls).
    output: Vec<u8>,
    ends: Vec<usize>,
    /// Bytes consumed so far.
    at: u64,
}

impl RecordEnds {
    fn new() -> Self {
        RecordEnds {
            reader: csv_core::Reader::new(),
            output: vec![0; 1 << 16],
            ends: vec![0; 1 << 10],
            at: 0,
        }
    }

    /// Feeds `chunk` (empty at the end of the input), calling `ended` with
    /// the byte just past each record that ends in it and the record's
    /// fields and their ends (exact up to 16 MiB a record; a header).
    fn feed(&mut self, mut chunk: &[u8], mut ended: impl FnMut(u64, &[u8], &[usize])) {
        let mut nout = 0;
        let mut nends = 0;
        loop {
            let (result, read, wrote, ended_fields) =
                self.reader.read_record(chunk, &mut self.output[nout..], &mut self.ends[nends..]);
            chunk = &chunk[read..];
            self.at += read as u64;
            nout += wrote;
            nends += ended_fields;
            match result {
                csv_core::ReadRecordResult::Record => {
                    let fields = &self.output[..nout.min(self.output.len())];
                    ended(self.at, fields, &self.ends[..nends]);
                    (nout, nends) = (0, 0);
                }
                // A long record: grown up to a cap, then its bytes dropped.
                csv_core::ReadRecordResult::OutputFull if self.output.len() < RECORD_CAP => {
                    self.output.resize(2 * self.output.len(), 0);
                }
                csv_core::ReadRecordResult::OutputFull => nout = 0,
                csv_core::ReadRecordResult::OutputEndsFull if self.ends.len() < RECORD_CAP => {
                    self.ends.resize(2 * self.ends.len(), 0);
                }
                csv_core::ReadRecordResult::OutputEndsFull => nends = 0,
                csv_core::ReadRecordResult::InputEmpty | csv_core::ReadRecordResult::End => {
                    return;
                }
            }
        }
    }
}

/// Why a CSV table's header row cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum HeaderError {
    #[error("no header row")]
    Missing,
    #[error("the header row is too long")]
    TooLong,
    #[error("the header row is not UTF-8")]
    NotUtf8(#[source] std::str::Utf8Error),
}

/// The header's names from its record's `fields` and field `ends`.
fn header_names(fields: &[u8], ends: &[usize]) -> Result<Vec<String>, HeaderError> {
    let mut start = 0;
    let mut names = Vec::with_capacity(ends.len());
    for &end in ends {
        let field = fields.get(start..end).ok_or(HeaderError::TooLong)?;
        let name = std::str::from_utf8(field).map_err(HeaderError::NotUtf8)?;
        names.push(name.trim().to_string());
        start = end;
    }
    Ok(names)
}

/// Cuts a CSV table of `size` bytes, fed in order in chunks of any size,
/// into at most `parts` ranges of whole records, about equal in bytes and
/// at least a given size each (one range for a small table): see the
/// module docs.
#[derive(Debug)]
pub struct CsvSplitter {
    ends: RecordEnds,
    header: Option<Result<Vec<String>, HeaderError>>,
    size: u64,
    parts: usize,
    min_bytes: u64,
    /// Bytes per range, once the header's end is known.
    step: u64,
    ranges: Vec<CsvRange>,
    /// Where the range being counted starts, and the records so far.
    start: u64,
    rows: u64,
}

impl CsvSplitter {
    /// A splitter of a table of `size` bytes into at most `parts` ranges
    /// of at least `min_bytes` (e.g. [`MIN_RANGE_BYTES`]) each.
    pub fn new(size: u64, parts: usize, min_bytes: u64) -> Self {
        CsvSplitter {
            ends: RecordEnds::new(),
            header: None,
            size,
            parts: parts.max(1),
            min_bytes,
            step: u64::MAX,
            ranges: Vec::new(),
            start: 0,
            rows: 0,
        }
    }

    /// The table's next bytes.
    pub fn feed(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.feed_or_end(chunk);
    }

    fn feed_or_end(&mut self, chunk: &[u8]) {
        let CsvSplitter { ends, header, size, parts, min_bytes, step, ranges, start, rows } = self;
        ends.feed(chunk, |at, fields, field_ends| {
            if header.is_none() {
                *header = Some(header_names(fields, field_ends));
                *start = at;
                *step = (size.saturating_sub(at) / *parts as u64).max(*min_bytes);
                return;
            }
            *rows += 1;
            // A cut lands where a record ends at or past the range's bytes.
            if at - *start >= *step && ranges.len() + 1 < *parts {
                let first_row = ranges.last().map_or(0, |r| r.first_row + r.rows);
                ranges.push(CsvRange {
                    start: *start,
                    end: at,
                    first_row,
                    rows: *rows - first_row,
                });
                *start = at;
            }
        });
    }

    /// The header and the ranges, once every byte was fed; `path` names
    /// the table in errors.
    pub fn finish(mut self, path: &Path) -> Result<CsvSplit, SourceError> {
        self.feed_or_end(&[]);
        let fail =
            |e: HeaderError| SourceError::Read { path: path.to_path_buf(), message: e.to_string() };
        let header = self.header.unwrap_or(Err(HeaderError::Missing)).map_err(fail)?;
        let (mut ranges, rows) = (self.ranges, self.rows);
        let first_row = ranges.last().map_or(0, |r| r.first_row + r.rows);
        if rows > first_row || ranges.is_empty() {
            let (start, end) = (self.start, self.ends.at);
            ranges.push(CsvRange { start, end, first_row, rows: rows - first_row });
        }
        if rows > u64::from(u32::MAX) {
            return Err(SourceError::TooManyRows { path: path.to_path_buf(), rows });
        }
        Ok(CsvSplit { header, ranges })
    }
}

/// [`CsvSplitter`] over a local file, whose size sets the cuts.
pub fn split_csv(path: &Path, parts: usize, min_bytes: u64) -> Result<CsvSplit, SourceError> {
    let mut file = File::open(path)
        .map_err(|e| SourceError::Open { path: path.to_path_buf(), message: e.to_string() })?;
    let size = file.metadata().map_err(|e| fail_read(path, e))?.len();
    let mut splitter = CsvSplitter::new(size, parts, min_bytes);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        match file.read(&mut buffer).map_err(|e| fail_read(path, e))? {
            0 => return splitter.finish(path),
            n => splitter.feed(&buffer[..n]),
        }
    }
}

fn fail_read(path: &Path, e: std::io::Error) -> SourceError {
    SourceError::Read { path: path.to_path_buf(), message: e.to_string() }
}

/// Reads `range` of the CSV table at `path` with `schema` (the whole
/// table's column types, in file order), keeping the columns `projection`
/// (indices into `schema`), and hands `emit` its batches in order until it
/// returns false. Fails if the range does not hold `range.rows` records.
pub fn read_csv_range(
    path: &Path,
    schema: Arc<Schema>,
    projection: &[usize],
    range: &CsvRange,
    emit: impl FnMut(RecordBatch) -> bool,
) -> Result<(), SourceError> {
    let mut file = File::open(path)
        .map_err(|e| SourceError::Open { path: path.to_path_buf(), message: e.to_string() })?;
    file.seek(SeekFrom::Start(range.start)).map_err(|e| fail_read(path, e))?;
    let bytes = BufReader::with_capacity(1 << 20, file.take(range.end - range.start));
    read_range_from(bytes, path, schema, projection, range, emit)
}

/// [`read_csv_range`] on the range's bytes themselves (fetched from a
/// store).
pub fn read_range_from(
    bytes: impl Read,
    path: &Path,
    schema: Arc<Schema>,
    projection: &[usize],
    range: &CsvRange,
    mut emit: impl FnMut(RecordBatch) -> bool,
) -> Result<(), SourceError> {
    // Arrow numbers the range's records from 0; the whole-file reader
    // names the same record by its line with the header as line 1.
    let fail = |message: String| SourceError::Read {
        path: path.to_path_buf(),
        message: shift_lines(&message, range.first_row + 1),
    };
    let reader = ReaderBuilder::new(schema)
        .with_header(false)
        .with_batch_size(BATCH_ROWS)
        .with_projection(projection.to_vec())
        .build(bytes)
        .map_err(|e| fail(clean_message(&e.to_string())))?;
    let mut read = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| fail(clean_message(&e.to_string())))?;
        read += batch.num_rows() as u64;
        if !emit(batch) {
            return Ok(());
        }
    }
    if read != range.rows {
        return Err(fail(format!(
            "{read} records where the split counted {}: the file changed since it was split",
            range.rows
        )));
    }
    Ok(())
}

/// `message` with each `line N` read as `line N + by`.
fn shift_lines(message: &str, by: u64) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("line ") {
        let (head, tail) = rest.split_at(at + "line ".len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        match tail[..digits].parse::<u64>() {
            Ok(n) => out.push_str(&(n + by).to_string()),
            Err(_) => out.push_str(&tail[..digits]),
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use arrow::compute::concat_batches;
    use arrow::datatypes::{DataType, Field};

    use super::*;
    use crate::{ReadOptions, SchemaOverride};

    /// A table with every record shape csv-core knows: quoted fields with
    /// new lines, `\r\n` and doubled quotes, CRLF and LF endings, blank
    /// lines, and a last record without its new line.
    fn tricky_csv(rows: usize, seed: u64) -> String {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut text = String::from("Id,Name,Score\r\n");
        for i in 0..rows {
            let name = match next() % 6 {
                0 => format!("\"line\nbreak {i}\""),
                1 => format!("\"a \"\"quote\"\" and\r\nCRLF {i}\""),
                2 => String::new(),
                3 => format!("\"comma, {i}\""),
                _ => format!("plain{}", next() % 50),
            };
            let score = if next() % 7 == 0 { String::new() } else { format!("{}", next() % 100) };
            text.push_str(&format!("{i},{name},{score}"));
            if i + 1 < rows {
                text.push_str(if next() % 2 == 0 { "\n" } else { "\r\n" });
                if next() % 9 == 0 {
                    text.push_str("\n\r\n");
                }
            }
        }
        text
    }

    fn declared() -> Arc<Schema> {
        Arc::new(Schema::new(vec![
            Field::new("Id", DataType::Int64, true),
            Field::new("Name", DataType::Utf8, true),
            Field::new("Score", DataType::Int64, true),
        ]))
    }

    /// Every cut, read range by range with its rows numbered from the
    /// split, gives the whole-file reader's batches: same records, same
    /// order, same values.
    #[test]
    fn ranges_read_as_the_whole_file_does() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let text = tricky_csv(3_000, 5);
        std::fs::write(&path, &text).unwrap();
        let options = ReadOptions {
            schema: ["Id:int", "Name:string", "Score:int"]
                .iter()
                .map(|e| crate::parse_schema_override(e).unwrap().remove(0))
                .collect::<Vec<SchemaOverride>>(),
            ..Default::default()
        };
        let (schema, whole) = crate::csv_file::read_csv(&path, &options).unwrap();
        assert_eq!(schema.as_ref(), declared().as_ref());
        let whole = concat_batches(&schema, &whole).unwrap();
        assert_eq!(whole.num_rows(), 3_000);
        for parts in [1, 2, 3, 7, 40] {
            let mut splitter = CsvSplitter::new(text.len() as u64, parts, 1);
            // Fed in odd chunks: cuts and counts do not depend on them.
            text.as_bytes().chunks(997).for_each(|c| splitter.feed(c));
            let split = splitter.finish(&path).unwrap();
            assert_eq!(split.header, ["Id", "Name", "Score"]);
            assert_eq!(split.ranges.len(), parts, "{parts} parts of a 3,000-row table");
            assert_eq!(split.ranges.last().unwrap().end, text.len() as u64);
            let mut batches = Vec::new();
            let mut next_row = 0;
            for range in &split.ranges {
                assert_eq!(range.first_row, next_row, "ranges are contiguous in rows");
                next_row += range.rows;
                read_csv_range(&path, declared(), &[0, 1, 2], range, |b| {
                    batches.push(b);
                    true
                })
                .unwrap();
            }
            assert!(split.ranges.windows(2).all(|w| w[0].end == w[1].start));
            assert_eq!(concat_batches(&schema, &batches).unwrap(), whole, "{parts} parts");
        }
        // The default minimum keeps a small table whole.
        assert_eq!(split_csv(&path, 8, MIN_RANGE_BYTES).unwrap().ranges.len(), 1);
    }

    #[test]
    fn a_changed_or_bad_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "Id,Name,Score\n1,a,2\n3,b,4\n").unwrap();
        let split = split_csv(&path, 4, MIN_RANGE_BYTES).unwrap();
        assert_eq!(split.ranges, [CsvRange { start: 14, end: 26, first_row: 0, rows: 2 }]);
        let read = |range: &CsvRange| read_csv_range(&path, declared(), &[0], range, |_| true);
        read(&split.ranges[0]).unwrap();
        let more = CsvRange { rows: 3, ..split.ranges[0] };
        let e = read(&more).unwrap_err().to_string();
        assert!(e.contains("2 records where the split counted 3"), "{e}");
        // A bad record is named by the line the whole-file reader names.
        let text = "Id,Name,Score\n1,a,2\n3,b,4\n5,c,x\n";
        std::fs::write(&path, text).unwrap();
        let options = ReadOptions {
            schema: crate::parse_schema_override("Id:int,Name:string,Score:int").unwrap(),
            ..Default::default()
        };
        let whole = crate::csv_file::read_csv(&path, &options).unwrap_err().to_string();
        let mut splitter = CsvSplitter::new(text.len() as u64, 2, 1);
        splitter.feed(text.as_bytes());
        let last = *splitter.finish(&path).unwrap().ranges.last().unwrap();
        assert_eq!(last.first_row, 2);
        let e = read_csv_range(&path, declared(), &[0, 1, 2], &last, |_| true).unwrap_err();
        let e = e.to_string();
        assert!(whole.contains("at line 3"), "{whole}");
        assert_eq!(e, whole);
        std::fs::write(&path, "Id,Name,Score\n1,a,2\n3,b\n").unwrap();
        let e = read(&split_csv(&path, 1, 1).unwrap().ranges[0]).unwrap_err().to_string();
        assert!(e.contains("t.csv") && e.contains("line 3"), "{e}");
        std::fs::write(&path, "").unwrap();
        assert!(split_csv(&path, 1, 1).unwrap_err().to_string().contains("no header row"));
    }
}
