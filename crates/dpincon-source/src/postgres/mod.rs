//! PostgreSQL as a source: a table or a query, read with `tokio-postgres`
//! through `COPY (…) TO STDOUT (FORMAT binary)` and decoded into the same
//! Arrow columns the CSV path produces, so detection, the exact counts and
//! the releases are those of a CSV export of the same rows.
//!
//! Why not `datafusion-table-providers` (the first choice): its
//! 0.15.1 `postgres` feature matches our DataFusion 55, and DataFusion's
//! `sql` feature it needs is already on in this workspace (Ballista's
//! plain `datafusion = "55"` turns on the defaults), so that was no cost.
//! But resolving it against our lock adds 80 packages (bb8, moka,
//! sea-query, rust_decimal, datafusion-federation, the hickory DNS
//! resolver, native-tls with openssl-sys, which needs the system's OpenSSL
//! headers at build time); `tokio-postgres` alone adds 19 and no C code.
//! We also need what a generic table provider does not promise: a fixed
//! row order (tuple ids, below), NULLs and empty strings exactly as the
//! CSV path reads them, and an error naming the column of an unsupported
//! type before any row is read. It is ~400 lines here.
//!
//! **Row order.** A tuple's id is its position in the result (SPEC §1).
//! SQL gives no order without ORDER BY, so the source always sorts: by
//! `order-by` when given, else (for a table) by its primary key, else by
//! every column in column order. Exact counts do not depend on the order,
//! but the stable edge order Λ, hence the projection and the releases, do;
//! sorting fixes Λ for a given table state (rows equal in every column are
//! interchangeable: swapping them maps the graph onto itself). A sort by
//! value keeps the relative order of the other rows when one row is added
//! or removed, the property the privacy proofs need (SPEC §2).
//!
//! **NULL.** SQL NULL is NULL; so is the empty string in a text column,
//! because a CSV export writes both as an empty field and the CSV path
//! reads that as NULL (SPEC §1: a NULL operand satisfies no predicate).
//!
//! **Passwords** come from the URL, else the environment variable named by
//! `password-env`, else `PGPASSWORD`. They never appear in a message, a
//! report or a ledger: everything shown is [`PostgresSource::display_name`],
//! rebuilt from the parsed URL without its password.
//!
//! TLS is not supported yet: the connection is plain (`sslmode=require`
//! is refused by the client with a clear error).

mod copy;
mod types;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use arrow::datatypes::{Field, Schema};
use arrow::record_batch::RecordBatch;
use serde::{Deserialize, Serialize};
use tokio_postgres::config::Host;
use tokio_postgres::{Config, NoTls};
use tokio_stream::StreamExt;

use crate::{SourceError, TableData};
use copy::CopyDecoder;
use types::{PgKind, SUPPORTED};

/// A PostgreSQL table or query (a suite's `postgres = { … }`, or
/// `run --data postgres://… --table T`).
#[derive(Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PostgresSource {
    /// `postgres://user[:password]@host[:port]/database[?options]`.
    /// Serialised without its password.
    #[serde(serialize_with = "serialize_redacted")]
    pub url: String,
    /// A table (`schema.table` or `table`, as SQL would name it).
    #[serde(default)]
    pub table: Option<String>,
    /// A query (read-only; its columns are the table's).
    #[serde(default)]
    pub query: Option<String>,
    /// The ORDER BY list that fixes tuple ids (default: the table's
    /// primary key, else every column).
    #[serde(default)]
    pub order_by: Option<String>,
    /// An environment variable holding the password (default `PGPASSWORD`).
    #[serde(default)]
    pub password_env: Option<String>,
}

fn serialize_redacted<S: serde::Serializer>(url: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&redact(url))
}

/// `url` without its password (and unchanged when it does not parse: a
/// URL that does not parse is never used to connect, and its password, if
/// any, is cut at the first `:` after the scheme's `//`).
pub fn redact(url: &str) -> String {
    match Config::from_str(url) {
        Ok(config) => url_of(&config),
        Err(_) => match url.split_once("://") {
            Some((scheme, rest)) => match rest.split_once('@') {
                Some((user, host)) => {
                    format!("{scheme}://{}@{host}", user.split(':').next().unwrap_or(""))
                }
                None => url.to_string(),
            },
            None => "(a PostgreSQL URL)".to_string(),
        },
    }
}

/// A URL rebuilt from `config`'s user, hosts, ports and database: never
/// the password.
fn url_of(config: &Config) -> String {
    let user = config.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                Host::Tcp(name) => name.clone(),
                Host::Unix(path) => path.display().to_string(),
            };
            match ports.get(i).or(ports.first()) {
                Some(p) => format!("{host}:{p}"),
                None => host,
            }
        })
        .collect();
    let db = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{}/{db}", hosts.join(","))
}

impl fmt::Debug for PostgresSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresSource")
            .field("url", &redact(&self.url))
            .field("table", &self.table)
            .field("query", &self.query)
            .field("order_by", &self.order_by)
            .field("password_env", &self.password_env)
            .finish()
    }
}

impl PostgresSource {
    /// Whether `data` names a PostgreSQL server rather than a file.
    pub fn is_url(data: &str) -> bool {
        data.starts_with("postgres://") || data.starts_with("postgresql://")
    }

    /// What reports, ledgers and errors call this source: the URL without
    /// its password, and the table or query.
    pub fn display_name(&self) -> String {
        let url = redact(&self.url);
        match (&self.table, &self.query) {
            (Some(t), _) => format!("{url} table {t}"),
            (None, Some(q)) => {
                format!("{url} query {}", q.split_whitespace().collect::<Vec<_>>().join(" "))
            }
            (None, None) => url,
        }
    }

    fn error(&self, message: impl Into<String>) -> SourceError {
        SourceError::Postgres { source_name: self.display_name(), message: message.into() }
    }

    /// Checks the settings without connecting: a URL that parses, one of
    /// `table` and `query`.
    pub fn validate(&self) -> Result<(), SourceError> {
        self.config().map(drop)?;
        match (&self.table, &self.query) {
            (Some(_), Some(_)) => Err(self.error("give `table` or `query`, not both")),
            (None, None) => Err(self.error("give `table` or `query`")),
            (Some(t), None) if t.trim().is_empty() => Err(self.error("`table` is empty")),
            (None, Some(q)) if q.trim().is_empty() => Err(self.error("`query` is empty")),
            _ => Ok(()),
        }
    }

    fn config(&self) -> Result<Config, SourceError> {
        if !Self::is_url(&self.url) {
            return Err(self.error("the URL must start with postgres:// or postgresql://"));
        }
        // tokio-postgres's parse errors quote no part of the URL.
        let mut config = Config::from_str(&self.url)
            .map_err(|e| self.error(format!("not a PostgreSQL URL: {e}")))?;
        if config.get_password().is_none() {
            let var = self.password_env.as_deref().unwrap_or("PGPASSWORD");
            match std::env::var(var) {
                Ok(p) => {
                    config.password(p);
                }
                Err(_) if self.password_env.is_some() => {
                    return Err(self.error(format!("password-env: ${var} is not set")));
                }
                Err(_) => {}
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        Ok(config)
    }

    /// Reads the rows, sorted (module docs), into Arrow batches.
    pub async fn read(&self) -> Result<TableData, SourceError> {
        self.validate()?;
        let config = self.config()?;
        let (client, connection) = config
            .connect(NoTls)
            .await
            .map_err(|e| self.error(format!("cannot connect: {}", describe(&e))))?;
        let connection = tokio::spawn(connection);
        let result = self.read_with(&client).await;
        drop(client);
        connection.abort();
        result
    }

    async fn read_with(&self, client: &tokio_postgres::Client) -> Result<TableData, SourceError> {
        let db = |e: tokio_postgres::Error| describe(&e);
        let select = match (&self.table, &self.query) {
            (Some(table), _) => {
                // The server parses the name (quotes, case folding, search
                // path) and answers NULL for a missing table.
                let row = client
                    .query_one("SELECT to_regclass($1)::text", &[table])
                    .await
                    .map_err(|e| self.error(format!("table '{table}': {}", db(e))))?;
                let Some(name) = row.get::<_, Option<String>>(0) else {
                    return Err(self.error(format!("table '{table}' does not exist")));
                };
                let order = match &self.order_by {
                    Some(o) => Some(o.clone()),
                    None => primary_key(client, &name).await.map_err(|e| self.error(db(e)))?,
                };
                (format!("SELECT * FROM {name}"), order)
            }
            (None, Some(query)) => {
                let query = query.trim().trim_end_matches(';');
                (format!("SELECT * FROM ({query}) AS dpincon_query"), self.order_by.clone())
            }
            (None, None) => unreachable!("validated"),
        };
        let (from, order) = select;
        let statement = client
            .prepare(&from)
            .await
            .map_err(|e| self.error(format!("cannot read: {}", db(e))))?;
        let mut fields = Vec::new();
        let mut kinds = Vec::new();
        for column in statement.columns() {
            let kind = PgKind::of(column.type_()).ok_or_else(|| {
                self.error(format!(
                    "column '{}' has type {}, which dpincon cannot read (supported: {SUPPORTED}); \
                     cast it in a `query`",
                    column.name(),
                    column.type_().name()
                ))
            })?;
            fields.push(Field::new(column.name(), kind.arrow_type(), true));
            kinds.push(kind);
        }
        // Every column by position when no key orders the rows.
        let order = order.unwrap_or_else(|| {
            (1..=kinds.len()).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
        });
        let sql = format!("COPY ({from} ORDER BY {order}) TO STDOUT (FORMAT binary)");
        let stream = client
            .copy_out(sql.as_str())
            .await
            .map_err(|e| self.error(format!("cannot read: {}", db(e))))?;
        let mut decoder = CopyDecoder::new(kinds);
        tokio::pin!(stream);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.error(format!("reading rows: {}", db(e))))?;
            decoder.feed(&chunk).map_err(|e| self.decode_error(&fields, e))?;
            if decoder.rows() > u64::from(u32::MAX) {
                let path = PathBuf::from(self.display_name());
                return Err(SourceError::TooManyRows { path, rows: decoder.rows() });
            }
        }
        if decoder.rows() == 0 {
            return Err(self
                .error("no rows: there is nothing to measure (nothing was released or charged)"));
        }
        let rows = decoder.rows() as u32;
        let columns = decoder.finish().map_err(|e| self.decode_error(&fields, e))?;
        let arrow_schema = Arc::new(Schema::new(fields));
        let batch = RecordBatch::try_new(arrow_schema.clone(), columns)
            .map_err(|e| self.error(e.to_string()))?;
        Ok(TableData {
            path: PathBuf::from(self.display_name()),
            arrow_schema,
            batches: vec![batch],
            rows,
        })
    }

    fn decode_error(&self, fields: &[Field], e: copy::DecodeError) -> SourceError {
        match e.column {
            Some(c) => SourceError::Encode {
                column: fields[c].name().clone(),
                row: e.row,
                message: format!("{} (in {})", e.message, self.display_name()),
            },
            None => self.error(format!("row {}: {}", e.row, e.message)),
        }
    }
}

/// The server's own message when it sent one ("password authentication
/// failed for user …"), else the client's with its cause (connection refused).
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => d.message().to_string(),
        None => match std::error::Error::source(e) {
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        },
    }
}

/// The primary key of `table` (a name `to_regclass` accepted) as an ORDER
/// BY list of quoted columns, if it has one.
async fn primary_key(
    client: &tokio_postgres::Client,
    table: &str,
) -> Result<Option<String>, tokio_postgres::Error> {
    let rows = client
        .query(
            "SELECT quote_ident(a.attname) FROM pg_index i \
             JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) ON true \
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum \
             WHERE i.indrelid = ($1::text)::regclass AND i.indisprimary ORDER BY k.n",
            &[&table],
        )
        .await?;
    let columns: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    Ok((!columns.is_empty()).then(|| columns.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        let url = "postgres://audit:s3cret@db.internal:6543/warehouse?connect_timeout=5";
        let source = PostgresSource {
            url: url.into(),
            table: Some("public.tax".into()),
            query: None,
            order_by: None,
            password_env: None,
        };
        let shown = [
            redact(url),
            source.display_name(),
            format!("{source:?}"),
            serde_json::to_string(&source).unwrap(),
            source.error("x").to_string(),
        ];
        for s in &shown {
            assert!(!s.contains("s3cret"), "{s}");
        }
        assert_eq!(
            source.display_name(),
            "postgres://audit@db.internal:6543/warehouse table public.tax"
        );
        // A URL that does not parse is cut before its password too.
        assert!(!redact("postgres://a:s3cret@h:notaport/db").contains("s3cret"));
    }

    #[test]
    fn settings_are_checked_without_connecting() {
        let source = |url: &str, table: Option<&str>, query: Option<&str>| PostgresSource {
            url: url.into(),
            table: table.map(String::from),
            query: query.map(String::from),
            order_by: None,
            password_env: None,
        };
        assert!(source("postgres://u@h/db", Some("t"), None).validate().is_ok());
        assert!(source("postgres://u@h/db", Some("t"), Some("select 1")).validate().is_err());
        assert!(source("postgres://u@h/db", None, None).validate().is_err());
        assert!(source("mysql://u@h/db", Some("t"), None).validate().is_err());
        let mut s = source("postgres://u@h/db", Some("t"), None);
        s.password_env = Some("DPINCON_TEST_SURELY_UNSET_VARIABLE".into());
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("DPINCON_TEST_SURELY_UNSET_VARIABLE"), "{e}");
    }
}
