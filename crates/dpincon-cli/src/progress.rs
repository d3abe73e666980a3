//! Progress on standard error for long phases; silent when it is not a
//! terminal (indicatif hides its bars then).

use std::time::Duration;

use dpincon_engine::{Phase, Progress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A spinner per phase.
pub struct Bar {
    bar: ProgressBar,
}

impl Bar {
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]")
                .expect("valid template"),
        );
        Bar { bar }
    }

    /// A spinner whose lines name `dataset` (one per dataset of an audit).
    pub fn for_dataset(dataset: &str) -> Self {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix}: {msg} [{elapsed_precise}]")
                .expect("valid template"),
        );
        bar.set_prefix(dataset.to_string());
        Bar { bar }
    }
}

impl Progress for Bar {
    fn start(&self, phase: Phase) {
        self.bar.set_message(phase.name());
        self.bar.enable_steady_tick(Duration::from_millis(120));
    }

    fn finish(&self, phase: Phase, seconds: f64) {
        self.bar.println(format!("{}{} done in {seconds:.2} s", self.label(), phase.name()));
        if phase == Phase::Measure {
            self.bar.finish_and_clear();
        }
    }
}

impl Bar {
    /// A remote job's state, e.g. `running: detect` (audit --coordinator).
    pub fn status(&self, line: &str) {
        self.bar.set_message(line.to_string());
        self.bar.enable_steady_tick(Duration::from_millis(120));
    }

    /// The remote job ended.
    pub fn done(&self) {
        self.bar.finish_and_clear();
    }

    fn label(&self) -> String {
        let prefix = self.bar.prefix();
        if prefix.is_empty() { String::new() } else { format!("{prefix}: ") }
    }
}
