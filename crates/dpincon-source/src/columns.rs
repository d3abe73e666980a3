//! A table handed over as columns of chunks rather than as batches (a
//! Polars DataFrame's Series, each exported as Polars holds it: the
//! frame's own stream first rechunks every column into one batch, a copy
//! the frame then keeps). The columns are cut into record batches wherever
//! any column's chunk ends and each column is sliced there: no buffer is
//! copied, and the rows keep their order.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{FieldRef, Schema};
use arrow::record_batch::{RecordBatch, RecordBatchIterator};

use crate::{SourceError, TableData, read_batches};

/// One column: its field and its chunks, in row order.
pub type ChunkedColumn = (FieldRef, Vec<ArrayRef>);

/// Reads `columns` as one table called `path` (in errors and reports), as
/// [`read_batches`] reads a stream. Columns of different lengths, or none
/// at all, are a [`SourceError::Read`].
pub fn read_columns(
    path: impl Into<PathBuf>,
    columns: Vec<ChunkedColumn>,
) -> Result<TableData, SourceError> {
    let path = path.into();
    let read_error = |message: String| SourceError::Read { path: path.clone(), message };
    let rows = |chunks: &[ArrayRef]| chunks.iter().map(|a| a.len()).sum::<usize>();
    let Some((first, first_chunks)) = columns.first() else {
        return Err(read_error("the table has no columns".into()));
    };
    let height = rows(first_chunks);
    if let Some((field, chunks)) = columns.iter().find(|(_, c)| rows(c) != height) {
        return Err(read_error(format!(
            "column '{}' has {} rows where column '{}' has {height}",
            field.name(),
            rows(chunks),
            first.name()
        )));
    }
    // Every row at which some column's chunk ends: between two of them,
    // each column's rows lie in one chunk.
    let mut cuts: Vec<usize> = columns
        .iter()
        .flat_map(|(_, chunks)| {
            chunks.iter().scan(0, |end, a| {
                *end += a.len();
                Some(*end)
            })
        })
        .filter(|&end| end > 0)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let schema = Arc::new(Schema::new(columns.iter().map(|(f, _)| f.clone()).collect::<Vec<_>>()));
    // Per column: the chunk the next row is in, and its offset there.
    let mut at = vec![(0usize, 0usize); columns.len()];
    let mut start = 0;
    let mut batches = Vec::with_capacity(cuts.len());
    for end in cuts {
        let len = end - start;
        let arrays = columns
            .iter()
            .zip(&mut at)
            .map(|((_, chunks), (chunk, offset))| {
                while chunks[*chunk].len() == *offset {
                    (*chunk, *offset) = (*chunk + 1, 0);
                }
                let slice = chunks[*chunk].slice(*offset, len);
                *offset += len;
                slice
            })
            .collect();
        let batch = RecordBatch::try_new(schema.clone(), arrays)
            .map_err(|e| read_error(format!("cannot assemble the columns: {e}")))?;
        batches.push(batch);
        start = end;
    }
    read_batches(path, RecordBatchIterator::new(batches.into_iter().map(Ok), schema))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field};

    fn ints(values: &[i64]) -> ArrayRef {
        Arc::new(Int64Array::from(values.to_vec()))
    }

    fn strs(values: &[&str]) -> ArrayRef {
        Arc::new(StringArray::from(values.to_vec()))
    }

    fn field(name: &str, t: DataType) -> FieldRef {
        Arc::new(Field::new(name, t, true))
    }

    /// Chunks ending at different rows (and an empty one) give batches cut
    /// at every end, the rows in order, and buffers shared, not copied.
    #[test]
    fn columns_chunked_differently_become_batches_in_row_order() {
        let a = vec![ints(&[0, 1, 2]), ints(&[]), ints(&[3, 4, 5, 6])];
        let b = vec![strs(&["r0", "r1"]), strs(&["r2", "r3", "r4", "r5", "r6"])];
        let columns =
            vec![(field("A", DataType::Int64), a.clone()), (field("B", DataType::Utf8), b)];
        let table = read_columns("frame", columns).unwrap();
        assert_eq!(table.rows, 7);
        let sizes: Vec<usize> = table.batches.iter().map(RecordBatch::num_rows).collect();
        assert_eq!(sizes, [2, 1, 4], "cut at 2 (B) and 3 (A)");
        let mut seen = Vec::new();
        for batch in &table.batches {
            let a = batch.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let b = batch.column(1).as_any().downcast_ref::<StringArray>().unwrap();
            for i in 0..batch.num_rows() {
                assert_eq!(b.value(i), format!("r{}", a.value(i)));
                seen.push(a.value(i));
            }
        }
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
        // The last batch's A is a slice of the third chunk's own buffer.
        let last = table.batches[2].column(0).to_data();
        assert_eq!(last.buffers()[0].as_ptr(), a[2].to_data().buffers()[0].as_ptr());
    }

    #[test]
    fn unequal_columns_or_none_are_refused_by_name() {
        let columns = vec![
            (field("A", DataType::Int64), vec![ints(&[1, 2, 3])]),
            (field("B", DataType::Int64), vec![ints(&[1, 2])]),
        ];
        let err = read_columns("frame", columns).unwrap_err().to_string();
        assert!(err.contains("'frame'") && err.contains("column 'B' has 2 rows"), "{err}");
        let err = read_columns("frame", vec![]).unwrap_err().to_string();
        assert!(err.contains("no columns"), "{err}");
    }

    #[test]
    fn a_table_with_no_rows_reads_as_empty() {
        let columns = vec![(field("A", DataType::Int64), vec![ints(&[])])];
        let table = read_columns("frame", columns).unwrap();
        assert_eq!((table.rows, table.batches.len()), (0, 0));
    }
}
