//! Bearer tokens, coordinator side: every RPC carries `authorization:
//! Bearer <token>` (`dpincon_client::Token`), one of the coordinator's
//! client tokens ([`ClientTokens`], a file with one named entry per line,
//! so one client can be revoked by deleting its line). Compared in constant
//! time (`subtle`) so response timing does not reveal how much of a guess
//! was right.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use subtle::ConstantTimeEq;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use dpincon_client::Token;

use crate::ClusterError;

/// Compares in time that depends only on the lengths (`subtle`).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    bool::from(a.ct_eq(b))
}

/// The name of the client whose token a request bore, put in the request's
/// extensions by [`RequireClient`]: jobs belong to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientName(pub String);

/// The coordinator's client tokens: `NAME TOKEN` per line (`#` comments and
/// blank lines ignored). Names must be unique, and so must tokens.
#[derive(Clone)]
pub struct ClientTokens {
    entries: Arc<[(String, Vec<u8>)]>,
}

impl fmt::Debug for ClientTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.entries.iter().map(|e| e.0.as_str()).collect();
        write!(f, "ClientTokens({names:?}, tokens redacted)")
    }
}

impl ClientTokens {
    /// Parses the file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<ClientTokens, ClusterError> {
        let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| ClusterError::Config(format!("{origin} line {}: {why}", i + 1));
            let mut parts = line.split_whitespace();
            let (Some(name), Some(token), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(bad("expected `NAME TOKEN`"));
            };
            let token = Token::new(token).map_err(|e| bad(&e.to_string()))?;
            if token.header().len() < "Bearer ".len() + 16 {
                return Err(bad("a token needs at least 16 characters"));
            }
            let header = token.header().into_bytes();
            if entries.iter().any(|(n, _)| n == name) {
                return Err(bad(&format!("client '{name}' is listed twice")));
            }
            if entries.iter().any(|(_, t)| constant_time_eq(t, &header)) {
                return Err(bad("this token is already another client's"));
            }
            entries.push((name.to_string(), header));
        }
        if entries.is_empty() {
            return Err(ClusterError::Config(format!("{origin}: no client token")));
        }
        Ok(ClientTokens { entries: entries.into() })
    }

    /// Reads the file `path`.
    pub fn load(path: &Path) -> Result<ClientTokens, ClusterError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ClusterError::Io { path: path.to_path_buf(), source })?;
        ClientTokens::parse(&text, &path.display().to_string())
    }

    /// Whether `token` is one of the client tokens.
    pub fn contains(&self, token: &Token) -> bool {
        self.name_of(token.header().as_bytes()).is_some()
    }

    /// The client bearing the header value `given`. Every entry is compared
    /// (no early exit) so timing tells neither which entry nor how close.
    fn name_of(&self, given: &[u8]) -> Option<String> {
        let mut found = None;
        for (name, expected) in self.entries.iter() {
            if constant_time_eq(given, expected) {
                found = Some(name.clone());
            }
        }
        found
    }
}

/// Coordinator side: refuses calls without a client token; records the
/// client's name ([`ClientName`]) for the handlers.
#[derive(Debug, Clone)]
pub struct RequireClient {
    tokens: ClientTokens,
}

impl RequireClient {
    /// Accepts calls bearing one of `tokens`.
    pub fn new(tokens: ClientTokens) -> Self {
        RequireClient { tokens }
    }
}

impl Interceptor for RequireClient {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        let given = request.metadata().get("authorization").map(|v| v.as_bytes().to_vec());
        match given {
            Some(given) => match self.tokens.name_of(&given) {
                Some(name) => {
                    request.extensions_mut().insert(ClientName(name));
                    Ok(request)
                }
                None => Err(Status::unauthenticated("wrong token")),
            },
            None => Err(Status::unauthenticated("missing bearer token")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpincon_client::auth::AddToken;

    #[test]
    fn tokens_are_printable_and_never_shown() {
        let tokens = ClientTokens::parse("alice aaaaaaaaaaaaaaaaaaaa\n", "tokens").unwrap();
        let anonymous = RequireClient::new(tokens).call(Request::new(())).unwrap_err();
        assert_eq!(anonymous.code(), tonic::Code::Unauthenticated);
    }

    #[test]
    fn client_tokens_name_their_client_and_refuse_others() {
        let file = "# clients\nalice aaaaaaaaaaaaaaaaaaaa\n\nbob   bbbbbbbbbbbbbbbbbbbb\n";
        let tokens = ClientTokens::parse(file, "tokens").unwrap();
        let mut server = RequireClient::new(tokens.clone());
        let call = |t: &str| AddToken::new(&Token::new(t).unwrap()).call(Request::new(())).unwrap();
        let ok = server.call(call("bbbbbbbbbbbbbbbbbbbb")).unwrap();
        assert_eq!(ok.extensions().get::<ClientName>(), Some(&ClientName("bob".into())));
        let err = server.call(call("bbbbbbbbbbbbbbbbbbbc")).unwrap_err();
        assert_eq!(err.code(), tonic::Code::Unauthenticated);
        assert!(tokens.contains(&Token::new("aaaaaaaaaaaaaaaaaaaa").unwrap()));
        assert!(!format!("{tokens:?}").contains("aaaa"));
        for (bad, why) in [
            ("alice short\n", "16 characters"),
            ("alice aaaaaaaaaaaaaaaaaaaa extra\n", "NAME TOKEN"),
            ("a aaaaaaaaaaaaaaaaaaaa\nb aaaaaaaaaaaaaaaaaaaa\n", "another client's"),
            ("a aaaaaaaaaaaaaaaaaaaa\na bbbbbbbbbbbbbbbbbbbb\n", "twice"),
            ("# nobody\n", "no client token"),
        ] {
            let err = ClientTokens::parse(bad, "tokens").unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }
}
