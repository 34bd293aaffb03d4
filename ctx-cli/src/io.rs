//! What every subcommand reads and writes the same way: the `--format` of its output, the options
//! a pipeline file is loaded with, the load itself (problems printed, the command ended) and the
//! HTML pages `explain --html` and `run --report` write.
//!
//! Kept apart from `main.rs` so the subcommands and the dispatcher both stand on it: `main.rs`
//! calls the subcommands, and the subcommands never reach back into `main.rs`.

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::ValueEnum;
use ctx::config::LimitsPolicy;
use ctx::definition::ValidateOptions;
use ctx::pipeline::yaml::{LoadedFile, PipelineFile};

use crate::render::render;

/// How `check` and `explain` print: for people or for CI.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Rendered like rustc's diagnostics, or as tables.
    Text,
    /// One JSON value, for tools.
    Json,
}

/// The options a service loads with (`LoadOptions::from_env`): the `PIPELINE_LIMITS_POLICY`
/// of this process wins over the file's policy, so a check passes or fails, and clamps, as the
/// service will.
pub(crate) fn validate_options() -> ValidateOptions {
    ValidateOptions::default().env_limits_policy(LimitsPolicy::env_value())
}

/// A file loaded for a command that needs it whole: its problems are printed and end the command.
pub(crate) fn load(file: &Path) -> Result<LoadedFile, String> {
    PipelineFile::load_with(file, &validate_options()).map_err(|e| {
        render(e.issues());
        format!("{} has {} problem(s)", file.display(), e.issues().len())
    })
}

/// Writes a report page, naming the file when it cannot: the page is the command's output, so a
/// failed write fails the command rather than vanishing.
pub(crate) fn write_html(path: &Path, html: &str) -> Result<(), String> {
    std::fs::write(path, html).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Set once a write to standard output has failed: nothing more is written there.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Set when that failure was not the reader going away: the command then exits 2.
static STDOUT_FAILED: AtomicBool = AtomicBool::new(false);

/// Writes `args` to standard output, as `print!` does, except when the write fails, where
/// `print!` panics. A reader that has gone away (`ctx graph f.yaml | head`: `head` has the lines
/// it wanted) is not an error, as for other command-line tools: the rest of the output is
/// dropped and the command ends as it would have (a run still finishes, and its servers are
/// stopped). Any other failure (a full disk behind a redirection) is reported once, and the
/// command exits 2 ([`stdout_failed`]), the exit of every other error of the command line.
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            eprintln!("error: writing to standard output: {e}");
            STDOUT_FAILED.store(true, Ordering::Relaxed);
        }
    }
}

/// Whether writing the output failed for a reason other than its reader going away.
pub(crate) fn stdout_failed() -> bool {
    STDOUT_FAILED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_that_cannot_be_written_names_its_file() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("missing").join("report.html");
        let message = write_html(&path, "<html></html>").expect_err("no such directory");
        assert!(message.contains(&path.display().to_string()), "{message}");
    }
}
