//! What every reader shares with Arrow's and Parquet's: the batch size,
//! and their error messages made fit for a user (no wrapping layers, no
//! row data).

/// Rows per record batch (DataFusion's default batch size).
pub(crate) const BATCH_ROWS: usize = 8192;

/// Arrow and Parquet wrap their messages in layers of context; keep the
/// part that names the line and column.
pub(crate) fn clean_message(message: &str) -> String {
    let joined = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "caused by")
        .collect::<Vec<_>>()
        .join(": ");
    // The caller names the file; the layers repeat themselves.
    let mut rest = joined.as_str();
    for layer in ["Arrow error: ", "Csv error: ", "Parquet error: ", "External error: "] {
        while let Some(after) = rest.strip_prefix(layer) {
            rest = after;
        }
    }
    let mut message = rest.to_string();
    if ["Corrupt footer", "EOF", "at least 8 bytes"].iter().any(|m| message.contains(m)) {
        message += " (the file is truncated or not Parquet)";
    }
    // Arrow quotes the whole offending row; the line number is enough, and
    // a private row has no business in an error message.
    match message.find(" Row data: ") {
        Some(i) => message[..i].trim_end_matches('.').to_string() + ".",
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_lose_wrapping_and_row_data() {
        let raw = "Arrow error: Parser error: Error while parsing value 'x1' as type 'Int64' \
                   for column 2 at line 7. Row data: '[Ann,x1,NY]'\ncaused by\nsomething";
        let clean = clean_message(raw);
        assert!(clean.contains("line 7") && clean.contains("column 2"), "{clean}");
        assert!(!clean.contains("Ann") && !clean.contains("Row data"), "{clean}");
        let raw = "Arrow error: Csv error: Encountered unequal lengths between records on CSV file. Expected 2 \
                   records, found 1 records at line 3";
        assert_eq!(
            clean_message(raw),
            "Encountered unequal lengths between records on CSV file. Expected 2 records, \
             found 1 records at line 3"
        );
        let raw = "Parquet error: Parquet error: Invalid Parquet file. Corrupt footer";
        assert_eq!(
            clean_message(raw),
            "Invalid Parquet file. Corrupt footer (the file is truncated or not Parquet)"
        );
    }
}
