//! Helpers shared by the command line's test files: a scratch directory,
//! the binary, and the small table most of them read.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Dir(pub tempfile::TempDir);

impl Dir {
    pub fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }

    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

/// Runs `dpincon-cli` with `args` and waits for it.
pub fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dpincon-cli")).args(args).output().unwrap()
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Two FD violations per Zip group, a NULL City and a NULL Age.
pub const PEOPLE: &str = "Zip,City,State,Age\n\
    10001,NYC,NY,30\n\
    10001,NYC,NY,41\n\
    10001,Boston,NY,25\n\
    02110,Boston,MA,\n\
    02110,Boston,NY,52\n\
    02110,,MA,33\n";
