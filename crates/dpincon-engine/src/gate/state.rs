//! The gate's state file: each measure's epoch, with its secret threshold
//! noise ρ, kept beside the ledger (README of dpincon-release, "Gated
//! verdicts", the state). Owner-only, written whole (a temporary file,
//! fsynced, renamed over the old one, directory fsynced) before the night
//! it records is published, and read under an exclusive lock.
//!
//! A *pending* record is written before a fresh release is charged: if
//! the process dies after the charge and before the new epoch is stored,
//! the next night finds the charge in the ledger and draws the release
//! and ρ again under it. Nothing drawn before was published (publishing
//! comes after this file is written), so the redraw is free of loss, and
//! the charge is never made twice. A state lost any other way (deleted,
//! corrupt) costs a new, charged epoch: ρ is never redrawn for free once
//! a night has read it.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use dpincon_api::Measure;
use dpincon_release::{EpochSecret, MeasureGate};
use serde::{Deserialize, Serialize};

use super::GateCheck;
use crate::EngineError;

/// The file's format version.
const VERSION: u32 = 1;

/// What the file holds.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct GateState {
    version: u32,
    /// Each measure's epoch, by name (`mi`, `p`, `r`).
    pub epochs: BTreeMap<String, StoredEpoch>,
    /// A fresh release charged (or about to be) and not yet stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
}

/// One measure's running epoch. Only `secret` is secret; the rest is
/// public and appears in reports.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StoredEpoch {
    /// Its public part.
    #[serde(flatten)]
    pub public: EpochPublic,
    /// **Secret**: ρ and the nights asked.
    pub secret: EpochSecret,
}

/// What an epoch was opened with (public).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct EpochPublic {
    /// The job that opened it (its fresh release).
    pub opened_by: String,
    /// The opening release's point value, which gated nights re-serve.
    pub value: i64,
    /// ε of the opening release.
    pub release_epsilon: f64,
    /// The checks that cut its bands, and the moved setting: a change of
    /// either opens a new epoch.
    pub checks: Vec<GateCheck>,
    /// The `moved` setting it was opened under.
    pub moved: Option<u64>,
    /// The width past the release noise its moved gate got.
    pub moved_width: u64,
    /// The public question.
    pub gate: MeasureGate,
}

/// A fresh release's job, written before its charge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pending {
    /// The job id the ledger records it under.
    pub job: String,
    /// The measures it opens epochs for.
    pub measures: Vec<Measure>,
}

fn state_error(path: &Path, message: impl std::fmt::Display) -> EngineError {
    EngineError::Ledger { path: path.to_path_buf(), message: message.to_string() }
}

/// The state file, locked for this process while the value lives.
pub(crate) struct StateFile {
    path: PathBuf,
    _lock: File,
}

/// How the file was found.
pub(crate) enum Loaded {
    /// No file: the dataset's first gated night.
    Fresh(GateState),
    /// Read and valid.
    Read(GateState),
    /// Present but unreadable or not a state: every epoch is lost and
    /// reopens, charged. The reason goes to the operator only.
    Lost(GateState, String),
}

impl StateFile {
    /// Locks `path` (through `path.lock`, so the rename of the state itself
    /// never races the lock) and reads it.
    ///
    /// # Errors
    /// [`EngineError::Ledger`] when the lock cannot be taken, or when the
    /// file is readable by others than its owner (the secret would be).
    pub fn open(path: &Path) -> Result<(StateFile, Loaded), EngineError> {
        let lock_path = beside(path, "lock");
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| state_error(&lock_path, e))?;
        lock.try_lock().map_err(|_| {
            state_error(path, "the gate state is in use by another audit of this dataset")
        })?;
        let file = StateFile { path: path.to_path_buf(), _lock: lock };
        let mut bytes = Vec::new();
        match File::open(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((file, Loaded::Fresh(GateState::new())));
            }
            Err(e) => return Err(state_error(path, e)),
            Ok(mut f) => {
                refuse_shared(path, &f)?;
                f.read_to_end(&mut bytes).map_err(|e| state_error(path, e))?;
            }
        }
        let loaded = match serde_json::from_slice::<GateState>(&bytes) {
            Ok(state) if state.version == VERSION => Loaded::Read(state),
            Ok(state) => {
                Loaded::Lost(GateState::new(), format!("unknown state version {}", state.version))
            }
            // Where, never what: serde's message may quote a value, and
            // the file holds ρ.
            Err(e) => Loaded::Lost(
                GateState::new(),
                format!("not a gate state (line {}, column {})", e.line(), e.column()),
            ),
        };
        Ok((file, loaded))
    }

    /// Writes `state` whole and durably, owner-only.
    pub fn write(&self, state: &GateState) -> Result<(), EngineError> {
        let path = &self.path;
        let text = serde_json::to_vec(state).map_err(|e| state_error(path, e))?;
        let tmp = beside(path, "tmp");
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&tmp).map_err(|e| state_error(&tmp, e))?;
        f.write_all(&text).and_then(|()| f.sync_all()).map_err(|e| state_error(&tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| state_error(path, e))?;
        crate::ledger::sync_parent(path).map_err(|e| state_error(path, e))
    }
}

/// `path` with `.suffix` appended (`t.gate` → `t.gate.lock`).
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

impl GateState {
    fn new() -> GateState {
        GateState { version: VERSION, ..GateState::default() }
    }
}

/// A state others can read leaks ρ: refused, as ssh refuses a shared key.
#[cfg(unix)]
fn refuse_shared(path: &Path, file: &File) -> Result<(), EngineError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = file.metadata().map_err(|e| state_error(path, e))?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(state_error(
            path,
            format!(
                "the gate state holds secret noise and must be readable by its owner only \
                 (mode {:o}; chmod 600 it)",
                mode & 0o777
            ),
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn refuse_shared(_: &Path, _: &File) -> Result<(), EngineError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A corrupt state is lost, and the reason the operator reads quotes
    /// nothing of it (it may hold ρ).
    #[test]
    fn a_corrupt_state_is_lost_without_quoting_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gate");
        let text = r#"{"version":1,"epochs":{"r":{"secret":{"threshold_noise":"987654321"}}}}"#;
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&path).unwrap().write_all(text.as_bytes()).unwrap();
        let (_lock, loaded) = StateFile::open(&path).unwrap();
        let Loaded::Lost(_, why) = loaded else { panic!("a corrupt state must be lost") };
        assert!(why.contains("not a gate state") && !why.contains("987654321"), "{why}");
    }
}
