//! The shared bearer token: every RPC of the CLI, the coordinator and the
//! workers carries `authorization: Bearer <token>`.
//!
//! The token is read from a file (`--token-file`) or the `DPINCON_TOKEN`
//! environment variable, never from a command-line argument (those show in
//! `ps` and shell history). Servers compare it in constant time so response
//! timing does not reveal how much of a guess was right.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::ClusterError;

/// The environment variable holding the token when no file is given.
pub const TOKEN_ENV: &str = "DPINCON_TOKEN";

/// A shared secret. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(Arc<str>);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// A token from its text (surrounding whitespace, e.g. a file's final
    /// newline, is dropped). It must be printable ASCII to fit in a header.
    pub fn new(text: &str) -> Result<Token, ClusterError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ClusterError::Config("the token is empty".into()));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ClusterError::Config(
                "the token must be printable ASCII without spaces".into(),
            ));
        }
        Ok(Token(text.into()))
    }

    /// The token from `file` when given, else from `DPINCON_TOKEN`.
    pub fn load(file: Option<&Path>) -> Result<Token, ClusterError> {
        match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| ClusterError::Io { path: path.to_path_buf(), source })?;
                Token::new(&text)
            }
            None => match std::env::var(TOKEN_ENV) {
                Ok(text) => Token::new(&text),
                Err(_) => Err(ClusterError::Config(format!(
                    "no token: give --token-file PATH or set {TOKEN_ENV}"
                ))),
            },
        }
    }

    fn header(&self) -> String {
        format!("Bearer {}", self.0)
    }
}

/// Compares in time that depends only on the lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Server side: refuses every call without the right token.
#[derive(Debug, Clone)]
pub struct RequireToken {
    expected: Arc<[u8]>,
}

impl RequireToken {
    /// Accepts calls bearing `token`.
    pub fn new(token: &Token) -> Self {
        RequireToken { expected: token.header().into_bytes().into() }
    }
}

impl Interceptor for RequireToken {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let given = request.metadata().get("authorization").map(|v| v.as_bytes());
        match given {
            Some(given) if constant_time_eq(given, &self.expected) => Ok(request),
            Some(_) => Err(Status::unauthenticated("wrong token")),
            None => Err(Status::unauthenticated("missing bearer token")),
        }
    }
}

/// Client side: adds the token to every call.
#[derive(Debug, Clone)]
pub struct AddToken {
    value: MetadataValue<tonic::metadata::Ascii>,
}

impl AddToken {
    /// Sends `token`.
    pub fn new(token: &Token) -> Self {
        AddToken { value: token.header().parse().expect("tokens are printable ASCII") }
    }
}

impl Interceptor for AddToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request.metadata_mut().insert("authorization", self.value.clone());
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_right_token_passes_and_others_do_not() {
        let token = Token::new("s3cret\n").unwrap();
        let mut server = RequireToken::new(&token);
        let mut client = AddToken::new(&token);
        let ok = client.call(Request::new(())).unwrap();
        assert!(server.call(ok).is_ok());
        let wrong = AddToken::new(&Token::new("s3cres").unwrap()).call(Request::new(())).unwrap();
        assert_eq!(server.call(wrong).unwrap_err().code(), tonic::Code::Unauthenticated);
        assert_eq!(server.call(Request::new(())).unwrap_err().code(), tonic::Code::Unauthenticated);
        assert!(Token::new("  ").is_err());
        assert!(Token::new("a b").is_err());
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
    }
}
