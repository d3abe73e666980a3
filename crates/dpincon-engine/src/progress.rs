//! A job's phases and the progress it reports through them: shared by the
//! loader, the job and every front end that draws or forwards progress.

/// The phases of a job, in order. Serialised (and shown to a
/// coordinator's clients) as [`Phase::key`], its one spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Phase {
    /// Parsing the constraints and reading the table.
    Read,
    /// Finding the conflicts.
    Detect,
    /// The pass over the edge stream and the releases.
    Measure,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 3] = [Phase::Read, Phase::Detect, Phase::Measure];

    /// The phase's key: `read`, `detect`, `measure`.
    pub fn key(self) -> &'static str {
        match self {
            Phase::Read => "read",
            Phase::Detect => "detect",
            Phase::Measure => "measure",
        }
    }

    /// A short human name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "reading table",
            Phase::Detect => "detecting conflicts",
            Phase::Measure => "measuring and releasing",
        }
    }
}

impl From<Phase> for &'static str {
    fn from(phase: Phase) -> Self {
        phase.key()
    }
}

/// A phase key that names no [`Phase`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown phase '{0}' (use read, detect or measure)")]
pub struct UnknownPhase(pub String);

impl TryFrom<String> for Phase {
    type Error = UnknownPhase;

    fn try_from(key: String) -> Result<Self, UnknownPhase> {
        Phase::ALL.into_iter().find(|p| p.key() == key).ok_or(UnknownPhase(key))
    }
}

/// Receives progress; the CLI draws it, services forward it.
pub trait Progress: Sync {
    /// A phase starts.
    fn start(&self, phase: Phase);
    /// A phase ends.
    fn finish(&self, phase: Phase, seconds: f64);
}

/// Progress that goes nowhere.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: Phase) {}
    fn finish(&self, _: Phase, _: f64) {}
}

#[cfg(test)]
mod tests {
    use super::{Phase, UnknownPhase};

    /// A phase is written as its key and read back from it; another word
    /// is refused.
    #[test]
    fn phases_are_serialised_as_their_keys() {
        for phase in Phase::ALL {
            let json = serde_json::to_string(&phase).unwrap();
            assert_eq!(json, format!("\"{}\"", phase.key()));
            assert_eq!(serde_json::from_str::<Phase>(&json).unwrap(), phase);
        }
        let keys: Vec<&str> = Phase::ALL.iter().map(|p| p.key()).collect();
        assert_eq!(keys, ["read", "detect", "measure"]);
        let unknown = serde_json::from_str::<Phase>("\"Read\"").unwrap_err().to_string();
        assert!(unknown.contains(&UnknownPhase("Read".into()).to_string()), "{unknown}");
    }
}
