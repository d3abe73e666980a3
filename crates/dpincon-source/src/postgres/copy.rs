//! Decoding `COPY … TO STDOUT (FORMAT binary)` into Arrow columns.
//!
//! The format (PostgreSQL docs, "COPY", Binary Format): an 11-byte
//! signature, a 32-bit flags word, a 32-bit header-extension length and
//! that many bytes; then one tuple after another: a 16-bit field count
//! (−1 ends the data), and per field a 32-bit length (−1 is NULL) and that
//! many bytes in the type's binary `send` format. All integers big-endian.

use arrow::array::ArrayRef;

use super::types::{ColumnBuilder, PgKind};

const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// Why a stream could not be decoded: a message, and the column and
/// 0-based row (tuple id) it concerns when it concerns one.
#[derive(Debug)]
pub(crate) struct DecodeError {
    pub(crate) column: Option<usize>,
    pub(crate) row: u64,
    pub(crate) message: String,
}

/// Decodes a binary COPY stream chunk by chunk, in row order.
pub(crate) struct CopyDecoder {
    kinds: Vec<PgKind>,
    builders: Vec<ColumnBuilder>,
    pending: Vec<u8>,
    header_done: bool,
    finished: bool,
    rows: u64,
}

impl CopyDecoder {
    pub(crate) fn new(kinds: Vec<PgKind>) -> Self {
        let builders = kinds.iter().map(|&k| ColumnBuilder::new(k)).collect();
        CopyDecoder {
            kinds,
            builders,
            pending: Vec::new(),
            header_done: false,
            finished: false,
            rows: 0,
        }
    }

    /// Rows decoded so far.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// Feeds the next chunk; decodes every complete tuple in it.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<(), DecodeError> {
        self.pending.extend_from_slice(chunk);
        let mut at = 0;
        if !self.header_done {
            match self.header(&self.pending)? {
                Some(len) => {
                    at = len;
                    self.header_done = true;
                }
                None => return Ok(()),
            }
        }
        while !self.finished {
            match self.tuple(at)? {
                Some(next) => at = next,
                None => break,
            }
        }
        self.pending.drain(..at);
        Ok(())
    }

    /// The columns, once the trailer has arrived.
    pub(crate) fn finish(self) -> Result<Vec<ArrayRef>, DecodeError> {
        if !self.finished || !self.pending.is_empty() {
            return Err(self.error(None, "the COPY stream ended in the middle of the data".into()));
        }
        Ok(self.builders.into_iter().map(ColumnBuilder::finish).collect())
    }

    fn error(&self, column: Option<usize>, message: String) -> DecodeError {
        DecodeError { column, row: self.rows, message }
    }

    /// The header's length, once all of it is in `buf`.
    fn header(&self, buf: &[u8]) -> Result<Option<usize>, DecodeError> {
        if buf.len() < 19 {
            return Ok(None);
        }
        if &buf[..11] != SIGNATURE {
            return Err(self.error(None, "not a binary COPY stream (bad signature)".into()));
        }
        let extension = i32::from_be_bytes([buf[15], buf[16], buf[17], buf[18]]);
        let len = 19
            + usize::try_from(extension).map_err(|_| {
                self.error(None, format!("binary COPY header extension length {extension}"))
            })?;
        Ok((buf.len() >= len).then_some(len))
    }

    /// Decodes the tuple at `at` if it is complete; its end, else `None`.
    fn tuple(&mut self, at: usize) -> Result<Option<usize>, DecodeError> {
        let buf = &self.pending;
        let Some(count) = buf.get(at..at + 2) else {
            return Ok(None);
        };
        let count = i16::from_be_bytes([count[0], count[1]]);
        if count == -1 {
            self.finished = true;
            return Ok(Some(at + 2));
        }
        if count as usize != self.kinds.len() {
            let expected = self.kinds.len();
            return Err(self.error(None, format!("a tuple of {count} fields, expected {expected}")));
        }
        // Find the fields first: a tuple is appended whole or not at all.
        let mut fields = Vec::with_capacity(self.kinds.len());
        let mut p = at + 2;
        for _ in 0..self.kinds.len() {
            let Some(len) = buf.get(p..p + 4) else {
                return Ok(None);
            };
            let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
            p += 4;
            if len < 0 {
                fields.push(None);
                continue;
            }
            let end = p + len as usize;
            if end > buf.len() {
                return Ok(None);
            }
            fields.push(Some(p..end));
            p = end;
        }
        for (column, field) in fields.into_iter().enumerate() {
            let builder = &mut self.builders[column];
            match field {
                None => builder.append_null(),
                Some(range) => {
                    if let Err(e) = builder.append(self.kinds[column], &self.pending[range]) {
                        let message = e.to_string();
                        return Err(DecodeError { column: Some(column), row: self.rows, message });
                    }
                }
            }
        }
        self.rows += 1;
        Ok(Some(p))
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::Int32Type;

    use super::*;

    fn stream(rows: &[&[Option<&[u8]>]]) -> Vec<u8> {
        let mut s = SIGNATURE.to_vec();
        s.extend(0i32.to_be_bytes());
        s.extend(0i32.to_be_bytes());
        for row in rows {
            s.extend((row.len() as i16).to_be_bytes());
            for field in *row {
                match field {
                    None => s.extend((-1i32).to_be_bytes()),
                    Some(b) => {
                        s.extend((b.len() as i32).to_be_bytes());
                        s.extend(*b);
                    }
                }
            }
        }
        s.extend((-1i16).to_be_bytes());
        s
    }

    #[test]
    fn tuples_split_anywhere_decode_the_same() {
        let one = 1i32.to_be_bytes();
        let two = 2i32.to_be_bytes();
        let data = stream(&[&[Some(&one), Some(b"ab")], &[None, Some(b"")], &[Some(&two), None]]);
        for chunk in 1..data.len() {
            let mut d = CopyDecoder::new(vec![PgKind::Int4, PgKind::Text]);
            for piece in data.chunks(chunk) {
                d.feed(piece).unwrap();
            }
            assert_eq!(d.rows(), 3);
            let columns = d.finish().unwrap();
            let ints = columns[0].as_primitive::<Int32Type>();
            assert_eq!(ints.iter().collect::<Vec<_>>(), [Some(1), None, Some(2)]);
            let texts = columns[1].as_string::<i32>();
            // The empty string is NULL, as an empty CSV field is.
            assert_eq!(texts.iter().collect::<Vec<_>>(), [Some("ab"), None, None]);
            assert_eq!(texts.null_count(), 2);
        }
    }

    #[test]
    fn truncated_and_malformed_streams_are_errors() {
        let data = stream(&[&[Some(&7i32.to_be_bytes())]]);
        let mut d = CopyDecoder::new(vec![PgKind::Int4]);
        d.feed(&data[..data.len() - 2]).unwrap();
        assert!(d.finish().is_err());
        let mut d = CopyDecoder::new(vec![PgKind::Int4]);
        let e = d.feed(&stream(&[&[Some(b"abc")]])).unwrap_err();
        assert_eq!((e.column, e.row), (Some(0), 0));
        let mut d = CopyDecoder::new(vec![PgKind::Int4, PgKind::Int4]);
        assert!(d.feed(&data).is_err());
        assert!(CopyDecoder::new(vec![]).feed(b"PGCOPY\nXXXXXXXXXXXXXXXXXX").is_err());
    }
}
