//! The errors of a pipeline file: every problem located by file, line and column.

use std::fmt;
use std::path::{Path, PathBuf};

use super::sources::SourceFile;
use crate::codes::{Code, ErrorCode};

/// Where a value was written: a file and a 1-based line and column (in characters). Line and
/// column are 0 when the problem concerns the file as a whole (it cannot be read).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct Location {
    /// The file, as the loader opened it (the top file's path joined with relative references).
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

impl Location {
    /// A location in `file`.
    pub fn new(file: impl Into<PathBuf>, line: usize, column: usize) -> Self {
        Location { file: file.into(), line, column }
    }

    /// The file as a whole (line and column 0).
    pub fn whole_file(file: &Path) -> Self {
        Location::new(file, 0, 0)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A problem of the whole file (it cannot be read) has no line to point at.
        match self.line {
            0 => write!(f, "{}", self.file.display()),
            line => write!(f, "{}:{line}:{}", self.file.display(), self.column),
        }
    }
}

/// One problem of a pipeline file, located: a YAML syntax error, an unknown key, a wrong type,
/// an `extends` cycle, or a rule of [`validate_definition`](crate::pipeline::validate_definition)
/// mapped back to where the offending value was written (same code, message and help).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct YamlIssue {
    /// The file the value is in (a base file for values inherited through `extends`).
    pub file: PathBuf,
    /// The line, from 1 (0: the whole file).
    pub line: usize,
    /// The column, from 1 (0: the whole file).
    pub column: usize,
    /// Stable machine-readable code (`YAML_UNKNOWN_KEY`, `INVALID_TOP_K`, …).
    pub code: Code,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

impl YamlIssue {
    /// An issue at `at` without help.
    pub fn new(at: &Location, code: Code, message: impl Into<String>) -> Self {
        YamlIssue { file: at.file.clone(), line: at.line, column: at.column, code, message: message.into(), help: None }
    }

    /// Adds a "how to fix it" line.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a help line when there is one.
    #[must_use]
    pub fn with_help_opt(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    /// Where the issue is.
    pub fn location(&self) -> Location {
        Location::new(&self.file, self.line, self.column)
    }
}

impl fmt::Display for YamlIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.location(), self.code, self.message)?;
        if let Some(help) = &self.help {
            write!(f, " (help: {help})")?;
        }
        Ok(())
    }
}

/// Why a pipeline file could not be loaded: every problem found, each located. Never empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} problem(s) in pipeline file {}:\n{}", issues.len(), file.display(), render(issues))]
pub struct PipelineFileError {
    file: PathBuf,
    issues: Vec<YamlIssue>,
    sources: Vec<SourceFile>,
}

impl PipelineFileError {
    /// The error of the pipeline file `file`; `issues` must not be empty.
    #[doc(hidden)]
    pub fn new(file: &Path, issues: Vec<YamlIssue>) -> Self {
        debug_assert!(!issues.is_empty());
        PipelineFileError { file: file.to_owned(), issues, sources: Vec::new() }
    }

    /// The error, with the files read before it was found.
    pub(crate) fn with_sources(mut self, sources: Vec<SourceFile>) -> Self {
        self.sources = sources;
        self
    }

    /// Every file read before the problems were found, with a digest of the bytes read (also
    /// the files that could not be read): fixing any of them may fix the pipeline.
    pub fn sources(&self) -> &[SourceFile] {
        &self.sources
    }

    /// The pipeline file that was loaded (the top of the `extends` chain).
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Every problem, in the order found: files from the base of the `extends` chain up, each
    /// file top to bottom.
    pub fn issues(&self) -> &[YamlIssue] {
        &self.issues
    }
}

impl ErrorCode for PipelineFileError {
    /// The issues' code when they all share one, else `PIPELINE_FILE_INVALID`.
    fn code(&self) -> Code {
        match self.issues.as_slice() {
            [first, rest @ ..] if rest.iter().all(|i| i.code == first.code) => first.code,
            _ => Code::PipelineFileInvalid,
        }
    }
}

fn render(issues: &[YamlIssue]) -> String {
    issues.iter().map(|i| format!("  - {i}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_render_with_their_location_and_share_a_code() {
        let at = Location::new("p.yaml", 3, 5);
        let a = YamlIssue::new(&at, Code::YamlUnknownKey, "unknown key `x`").with_help("remove it");
        assert_eq!(a.to_string(), "p.yaml:3:5: YAML_UNKNOWN_KEY: unknown key `x` (help: remove it)");
        let err = PipelineFileError::new(Path::new("p.yaml"), vec![a.clone()]);
        assert_eq!(err.code(), "YAML_UNKNOWN_KEY");
        let b = YamlIssue::new(&at, Code::YamlWrongType, "no");
        let err = PipelineFileError::new(Path::new("p.yaml"), vec![a, b]);
        assert_eq!(err.code(), "PIPELINE_FILE_INVALID");
        assert!(err.to_string().starts_with("2 problem(s) in pipeline file p.yaml"));
        let whole = YamlIssue::new(&Location::whole_file(Path::new("p.yaml")), Code::PipelineFileUnreadable, "gone");
        assert_eq!(whole.to_string(), "p.yaml: PIPELINE_FILE_UNREADABLE: gone");
    }
}
