//! Bearer tokens, client side: every RPC carries `authorization: Bearer
//! <token>`. Tokens come from files or environment variables, never from a
//! command-line argument (those show in `ps` and shell history).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use crate::ClientError;

/// The environment variable holding a client's token when no file is given.
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
    pub fn new(text: &str) -> Result<Token, ClientError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ClientError::Config("the token is empty".into()));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ClientError::Config(
                "the token must be printable ASCII without spaces".into(),
            ));
        }
        Ok(Token(text.into()))
    }

    /// The token from `file` when given, else from `DPINCON_TOKEN`.
    pub fn load(file: Option<&Path>) -> Result<Token, ClientError> {
        Token::load_from(file, TOKEN_ENV)
    }

    /// The token from `file` when given, else from the variable `env`.
    pub fn load_from(file: Option<&Path>, env: &str) -> Result<Token, ClientError> {
        match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|source| ClientError::Io { path: path.to_path_buf(), source })?;
                Token::new(&text)
            }
            None => match std::env::var(env) {
                Ok(text) => Token::new(&text),
                Err(_) => {
                    Err(ClientError::Config(format!("no token: give a token file or set {env}")))
                }
            },
        }
    }

    /// The `authorization` header value: `Bearer <token>` (secret).
    pub fn header(&self) -> String {
        format!("Bearer {}", self.0)
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
    fn tokens_are_printable_and_never_shown() {
        let token = Token::new("s3cret\n").unwrap();
        let sent = AddToken::new(&token).call(Request::new(())).unwrap();
        assert_eq!(sent.metadata().get("authorization").unwrap(), "Bearer s3cret");
        assert!(Token::new("  ").is_err());
        assert!(Token::new("a b").is_err());
        assert_eq!(format!("{token:?}"), "Token(<redacted>)");
    }
}
