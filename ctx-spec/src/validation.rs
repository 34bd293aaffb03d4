//! The vocabulary of configuration validation, shared by the runtime and the `pipeline!` macro.
//!
//! A validation function never stops at the first problem: it returns every [`ConfigIssue`] it
//! finds, each with the [`FieldPath`] of the offending value (`steps.manage_budget.compact_code[1].threshold`).
//! The macro keeps a map from field paths to the tokens it parsed, so the very same rule, written
//! once here, becomes a compile error under the right token; at load time it becomes a
//! [`ConfigIssues`] error naming the field.

use std::fmt;

use crate::codes::{Code, ErrorCode};

// The one "did you mean" of ctx lives with the model table, its first user, in ctx-tokens;
// every rule here suggests through it.
pub use ctx_tokens::names::{Likeness, did_you_mean, did_you_mean_by};

/// One segment of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum PathSegment {
    /// A named key: a step id, a setting, a field.
    Key(String),
    /// A position in a list.
    Index(usize),
}

/// Where in a configuration a value lives, e.g. `steps.fetch.max_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct FieldPath(pub Vec<PathSegment>);

impl FieldPath {
    /// The empty path (the configuration as a whole).
    pub fn root() -> Self {
        FieldPath(Vec::new())
    }

    /// This path extended by a key.
    #[must_use]
    pub fn key(&self, key: impl Into<String>) -> Self {
        let mut segments = self.0.clone();
        segments.push(PathSegment::Key(key.into()));
        FieldPath(segments)
    }

    /// This path extended by a list index.
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(PathSegment::Index(index));
        FieldPath(segments)
    }

    /// Parses the dotted form written by [`fmt::Display`] (`a.b[2].c`). Used by tests and tools.
    /// Text that is not a well-formed `[…]` suffix (an unmatched `]`, text after a `]`) is kept
    /// as a key rather than rejected.
    pub fn parse(text: &str) -> Self {
        let mut segments = Vec::new();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
            if !name.is_empty() {
                segments.push(PathSegment::Key(name.to_owned()));
            }
            while !rest.is_empty() {
                match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
                    Some((inner, after)) => {
                        segments.push(match inner.parse() {
                            Ok(i) => PathSegment::Index(i),
                            Err(_) => PathSegment::Key(inner.to_owned()),
                        });
                        rest = after;
                    }
                    None => {
                        segments.push(PathSegment::Key(rest.to_owned()));
                        rest = "";
                    }
                }
            }
        }
        FieldPath(segments)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for segment in &self.0 {
            match segment {
                PathSegment::Key(k) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                PathSegment::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        if first {
            f.write_str("<root>")?;
        }
        Ok(())
    }
}

/// One problem found in a configuration.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct ConfigIssue {
    /// Stable machine-readable code, e.g. `UNKNOWN_STEP_TARGET` or `PIPELINE_BUDGET_MISCONFIG`
    /// (serialized as its string).
    pub code: Code,
    /// The offending value's location.
    pub path: FieldPath,
    /// What is wrong, in one sentence that names the value.
    pub message: String,
    /// How to fix it, when there is something better to say than the message.
    pub help: Option<String>,
}

impl ConfigIssue {
    /// A new issue without help text.
    pub fn new(code: Code, path: FieldPath, message: impl Into<String>) -> Self {
        ConfigIssue { code, path, message: message.into(), help: None }
    }

    /// Adds a "how to fix it" line.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`: {}", self.code, self.path, self.message)?;
        if let Some(help) = &self.help {
            write!(f, " (help: {help})")?;
        }
        Ok(())
    }
}

/// Every problem found in one configuration, reported together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} configuration problem(s) in {source_name}:\n{}", issues.len(), render(issues))]
#[non_exhaustive]
pub struct ConfigIssues {
    /// What was validated: a file path, a pipeline name.
    pub source_name: String,
    /// The problems, in the order found. Never empty.
    pub issues: Vec<ConfigIssue>,
}

impl ConfigIssues {
    /// The problems `issues` found in `source_name` (a file path, a pipeline name).
    pub fn new(source_name: impl Into<String>, issues: Vec<ConfigIssue>) -> Self {
        ConfigIssues { source_name: source_name.into(), issues }
    }

    /// `Ok(())` when `issues` is empty, else the error naming `source_name`.
    pub fn check(source_name: impl Into<String>, issues: Vec<ConfigIssue>) -> Result<(), ConfigIssues> {
        if issues.is_empty() { Ok(()) } else { Err(ConfigIssues { source_name: source_name.into(), issues }) }
    }
}

impl ErrorCode for ConfigIssues {
    fn code(&self) -> Code {
        shared_code(&self.issues).unwrap_or(Code::ConfigInvalid)
    }
}

/// The code of `issues` when they all have the same one: an error made of several issues can
/// only claim one specific code when no issue would be misnamed by it.
pub(crate) fn shared_code(issues: &[ConfigIssue]) -> Option<Code> {
    match issues {
        [first, rest @ ..] if rest.iter().all(|i| i.code == first.code) => Some(first.code),
        _ => None,
    }
}

/// A positive `i64` as `usize`, or `None` when it is not positive or does not fit: how a
/// written count (a window, a budget, a limit) is read by every rule that takes one.
pub(crate) fn positive(value: i64) -> Option<usize> {
    if value > 0 { usize::try_from(value).ok() } else { None }
}

/// A non-negative `i64` as `usize`, or `None` when it is negative or does not fit.
pub(crate) fn non_negative(value: i64) -> Option<usize> {
    usize::try_from(value).ok()
}

/// `issues` one a line, indented, for an error message.
pub(crate) fn render(issues: &[ConfigIssue]) -> String {
    issues.iter().map(|i| format!("  - {i}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_conversions_reject_out_of_range_values() {
        assert_eq!(positive(0), None);
        assert_eq!(positive(-3), None);
        assert_eq!(positive(7), Some(7));
        assert_eq!(non_negative(0), Some(0));
        assert_eq!(non_negative(-1), None);
    }

    #[test]
    fn path_display_and_parse_round_trip() {
        let p = FieldPath::root().key("steps").key("manage").key("compact_code").index(1).key("threshold");
        assert_eq!(p.to_string(), "steps.manage.compact_code[1].threshold");
        assert_eq!(FieldPath::parse(&p.to_string()), p);
        assert_eq!(FieldPath::root().to_string(), "<root>");
    }

    #[test]
    fn malformed_paths_parse_without_panicking() {
        // Each of these used to slice out of range or inside a character.
        let k = |s: &str| PathSegment::Key(s.to_owned());
        assert_eq!(FieldPath::parse("a[1]]").0, [k("a"), PathSegment::Index(1), k("]")]);
        assert_eq!(FieldPath::parse("a[1]é]").0, [k("a"), PathSegment::Index(1), k("é]")]);
        assert_eq!(FieldPath::parse("a[x").0, [k("a"), k("[x")]);
        assert_eq!(FieldPath::parse("[é]").0, [k("é")]);
    }

    #[test]
    fn issues_report_all_and_pick_a_code() {
        assert!(ConfigIssues::check("x", vec![]).is_ok());
        let a = ConfigIssue::new(Code::InvalidValue, FieldPath::root().key("a"), "bad a").with_help("fix a");
        let b = ConfigIssue::new(Code::InvalidSetting, FieldPath::root().key("b"), "bad b");
        let err = ConfigIssues::check("pipeline.yaml", vec![a.clone(), b]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("2 configuration problem(s) in pipeline.yaml"), "{text}");
        assert!(text.contains("INVALID_VALUE: `a`: bad a (help: fix a)"), "{text}");
        assert_eq!(err.code(), "CONFIG_INVALID");
        let one = ConfigIssues::check("p", vec![a]).unwrap_err();
        assert_eq!(one.code(), Code::InvalidValue);
    }
}
