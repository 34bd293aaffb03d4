//! [`PipelineFile`]: a YAML pipeline file read into a [`PipelineDef`], validated, and every
//! problem reported at the file, line and column of the offending value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::document::{Decoded, decode};
use super::error::{Location, PipelineFileError, YamlIssue};
use super::extends::Chain;
use super::fields::Sink;
use super::sources::{NotUtf8, SourceFile, Sources};
use crate::codes::{Code, ErrorCode};
use crate::config::{ConfigFile, ConfigFileError};
use crate::contract::{Clamp, ClampTarget};
use crate::pipeline::definition::PipelineDef;
use crate::pipeline::graph::step_path;
use crate::pipeline::validate::{ValidateOptions, validate_with_config_report};
use crate::validation::{ConfigIssue, FieldPath};

/// Where each field of a definition was written, by [`FieldPath`] (`steps[2].compact_code[0].threshold`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocationMap(BTreeMap<FieldPath, Location>);

impl LocationMap {
    /// The location recorded for exactly `path`.
    pub fn get(&self, path: &FieldPath) -> Option<&Location> {
        self.0.get(path)
    }

    /// The location of `path`, or of its nearest ancestor that has one (the root always has
    /// one in a map built by [`PipelineFile`]).
    pub fn nearest(&self, path: &FieldPath) -> Option<&Location> {
        let mut segments = path.0.clone();
        loop {
            if let Some(at) = self.0.get(&FieldPath(segments.clone())) {
                return Some(at);
            }
            segments.pop()?;
        }
    }

    /// Every recorded path and its location, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&FieldPath, &Location)> {
        self.0.iter()
    }

    /// How many paths are recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no path is recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A pipeline file, loaded: its definition, the files it was made from, and where each value
/// was written.
#[derive(Debug, Clone)]
pub struct LoadedFile {
    path: PathBuf,
    def: PipelineDef,
    files: Vec<PathBuf>,
    sources: Vec<SourceFile>,
    locations: LocationMap,
    clamps: Vec<Clamp>,
    warnings: Vec<ConfigIssue>,
}

impl LoadedFile {
    /// The definition (its `extends` chain merged, prompt files read, the `config.json` path
    /// made absolute).
    pub fn definition(&self) -> &PipelineDef {
        &self.def
    }

    /// The definition, by value.
    pub fn into_definition(self) -> PipelineDef {
        self.def
    }

    /// Every file the definition depends on, in the order read: the pipeline file, its
    /// `extends` chain, the prompt files, then the `config.json`.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// Every file the definition depends on with a digest of the bytes read, in the order read
    /// (see [`SourceFile::is_current`]).
    pub fn sources(&self) -> &[SourceFile] {
        &self.sources
    }

    /// Where each field was written.
    pub fn locations(&self) -> &LocationMap {
        &self.locations
    }

    /// `issue` located at its field (or nearest written ancestor), same code, message and help.
    pub fn locate(&self, issue: &ConfigIssue) -> YamlIssue {
        locate(&self.locations, &self.path, issue)
    }

    /// The pipeline file itself (the first of [`files`](Self::files)).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The warnings of the checks, located: what is valid but may fail a run, such as a
    /// variable read where some path has not set it (`VARIABLE_MAYBE_UNSET`, see the `dataflow`
    /// rules). The clamps are apart ([`Self::clamps`]): they depend on the limits policy.
    pub fn warnings(&self) -> Vec<YamlIssue> {
        self.warnings.iter().map(|w| self.locate(w)).collect()
    }

    /// What `auto_clamp` lowered when the file was checked, in the order made: empty under
    /// `fail_fast`, or when the contract could not be checked yet (a `config.json` read only at
    /// load, prompts given at load). A pipeline loaded with the same policy makes the same clamps.
    pub fn clamps(&self) -> &[Clamp] {
        &self.clamps
    }

    /// `clamp` as a located warning (`BUDGET_AUTO_CLAMPED`) at the value it lowers: the
    /// `max_context_tokens` setting, or the step's `max_output_tokens` (the step itself when its
    /// limit is the model's default). The message gives the value before and after and why.
    pub fn clamp_warning(&self, clamp: &Clamp) -> YamlIssue {
        let (path, what) = match clamp.target {
            ClampTarget::MaxContextTokens => {
                (FieldPath::root().key("settings").key("max_context_tokens"), "settings.max_context_tokens".to_owned())
            }
            ClampTarget::MaxOutputTokens => {
                let at =
                    self.def.steps.iter().position(|s| s.id == clamp.step_id).map_or_else(FieldPath::root, step_path);
                (at.key("max_output_tokens"), format!("the output limit of step `{}`", clamp.step_id))
            }
        };
        let message = format!("auto_clamp lowers {what} from {} to {}: {}", clamp.before, clamp.after, clamp.reason);
        let issue = ConfigIssue::new(Code::BudgetAutoClamped, path, message).with_help(format!(
            "write {} here to run as written, or give the model a larger window; auto_clamp is for dev and test only",
            clamp.after
        ));
        self.locate(&issue)
    }
}

fn locate(locations: &LocationMap, file: &Path, issue: &ConfigIssue) -> YamlIssue {
    let at = locations.nearest(&issue.path).cloned().unwrap_or_else(|| Location::whole_file(file));
    YamlIssue::new(&at, issue.code, issue.message.clone()).with_help_opt(issue.help.clone())
}

/// Loads YAML pipeline files (see the [module documentation](super) for the format).
#[derive(Debug, Clone, Copy)]
pub struct PipelineFile;

impl PipelineFile {
    /// Reads the pipeline file at `path` with its `extends` chain, prompt files and
    /// `config.json`, decodes it and runs [`validate_definition`](crate::pipeline::validate_definition)
    /// (graph, steps, the budget contract with the real tokenizer). Every problem is reported at
    /// once, located.
    pub fn load(path: impl AsRef<Path>) -> Result<LoadedFile, PipelineFileError> {
        Self::load_with(path, &ValidateOptions::default())
    }

    /// [`Self::load`] with validation options (the environment's limits policy, or no token
    /// counting).
    pub fn load_with(path: impl AsRef<Path>, opts: &ValidateOptions) -> Result<LoadedFile, PipelineFileError> {
        let path = &absolute(path.as_ref());
        let mut sources = Sources::default();
        match sources.read(path) {
            Ok(text) => Self::parse_with(&text, path, opts),
            Err(e) => Err(PipelineFileError::new(
                path,
                vec![YamlIssue::new(
                    &match NotUtf8::of(&e) {
                        Some(at) => Location::new(path, at.line, at.column),
                        None => Location::whole_file(path),
                    },
                    Code::PipelineFileUnreadable,
                    format!("cannot read pipeline file `{}`: {e}", path.display()),
                )],
            )
            .with_sources(sources.into_vec())),
        }
    }

    /// [`Self::load`] of `text`, as if read from `path` (files it names are read relative to
    /// `path`'s directory).
    pub fn parse(text: &str, path: impl AsRef<Path>) -> Result<LoadedFile, PipelineFileError> {
        Self::parse_with(text, path.as_ref(), &ValidateOptions::default())
    }

    fn parse_with(text: &str, path: &Path, opts: &ValidateOptions) -> Result<LoadedFile, PipelineFileError> {
        let path = &absolute(path);
        let parts = Self::decode_parts(text, path);
        let complete = parts.sink.graph_complete;
        let poisoned = parts.sink.poisoned.clone();
        let mut issues = parts.issues.clone();
        let (mut file, config) = Self::assemble(parts, path)?;
        // A definition with problems still has every value that could be read, placeholders at
        // poisoned paths: the rules run on it so that every problem is reported at once, less
        // those that only echo a problem of decoding.
        let (found, report) = validate_with_config_report(&file.def, config.as_ref(), opts);
        for issue in &found {
            let echo = poisoned_at(&poisoned, &issue.path) || (!complete && issue.code.follows_from_graph());
            if !echo {
                issues.push(file.locate(issue));
            }
        }
        if !issues.is_empty() {
            return Err(PipelineFileError::new(path, issues).with_sources(file.sources.clone()));
        }
        file.clamps = report.map(|r| r.clamps).unwrap_or_default();
        file.warnings = crate::pipeline::definition_warnings(&file.def);
        Ok(file)
    }

    /// Decodes `text`, as if read from `path`, into its definition — the `extends` chain merged
    /// and prompt files read — and stops there: the `config.json` is neither read nor checked
    /// (its path is resolved against the file that names it) and the rules of
    /// [`validate_definition`](crate::pipeline::validate_definition) do not run. YAML-level
    /// problems (syntax, unknown or missing keys, wrong types) are still reported, located. The
    /// inverse of [`to_yaml`](super::to_yaml).
    pub fn decode(text: &str, path: impl AsRef<Path>) -> Result<PipelineDef, PipelineFileError> {
        let path = path.as_ref();
        let parts = Self::decode_parts(text, path);
        match parts.decoded {
            Some(decoded) if parts.issues.is_empty() => Ok(decoded.def),
            _ => Err(Self::failed(path, parts.issues, parts.sources)),
        }
    }

    /// The decoded definition (when the top level could be read), the files read, where each
    /// value was written, and the problems of decoding.
    fn decode_parts(text: &str, path: &Path) -> Parts {
        let mut chain = Chain::new(path);
        let merged = chain.load_text(path, text);
        let mut sink = Sink::default();
        let decoded = match merged {
            Some(root) => {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                decode(&mut sink, &root, &stem)
            }
            None => None,
        };
        let mut issues = chain.issues;
        issues.append(&mut sink.issues);
        let mut sources = chain.sources;
        sources.append(std::mem::take(&mut sink.sources));
        Parts { decoded, sources, sink, issues }
    }

    fn failed(path: &Path, issues: Vec<YamlIssue>, sources: Sources) -> PipelineFileError {
        let issues = if issues.is_empty() {
            // Not reached: a document that does not decode has reported why.
            vec![YamlIssue::new(
                &Location::whole_file(path),
                Code::PipelineFileInvalid,
                "the file could not be decoded",
            )]
        } else {
            issues
        };
        PipelineFileError::new(path, issues).with_sources(sources.into_vec())
    }

    /// Reads and decodes `text` with its `extends` chain, prompt files and `config.json`, without
    /// the validation rules; any problem of decoding is an error.
    #[cfg(test)]
    pub(crate) fn read(text: &str, path: &Path) -> Result<(LoadedFile, Option<ConfigFile>), PipelineFileError> {
        let parts = Self::decode_parts(text, path);
        if !parts.issues.is_empty() {
            return Err(Self::failed(path, parts.issues, parts.sources));
        }
        Self::assemble(parts, path)
    }

    /// The loaded file of `parts` and the `config.json` it names, read; an error when the top
    /// level could not be decoded or the `config.json` cannot be read (with the problems of
    /// decoding found so far).
    fn assemble(parts: Parts, path: &Path) -> Result<(LoadedFile, Option<ConfigFile>), PipelineFileError> {
        let Parts { decoded, mut sources, sink, mut issues } = parts;
        let Some(decoded) = decoded else { return Err(Self::failed(path, issues, sources)) };
        let config = match &decoded.config {
            Some((file, at)) => {
                let read = sources.read(file).map_err(|source| ConfigFileError::Read { path: file.clone(), source });
                match read.and_then(|text| ConfigFile::from_json_str(&text, file)) {
                    Ok(c) => Some(c),
                    Err(e) => {
                        issues.push(
                            YamlIssue::new(at, e.code(), e.to_string())
                                .with_help("the `config` path is relative to the YAML file that names it"),
                        );
                        return Err(Self::failed(path, issues, sources));
                    }
                }
            }
            None => None,
        };
        let locations = LocationMap(sink.locations);
        let sources = sources.into_vec();
        let files = sources.iter().map(|s| s.path.clone()).collect();
        Ok((
            LoadedFile {
                path: path.to_owned(),
                def: decoded.def,
                files,
                sources,
                locations,
                clamps: Vec::new(),
                warnings: Vec::new(),
            },
            config,
        ))
    }
}

/// `path` made absolute (not canonical: links are kept as named), the one form every location
/// takes: files reached from it through `extends`, prompts and `config` are resolved the same
/// way, so a problem's file reads alike whether the loader was given `main.yaml` or a path.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// What decoding a file gives.
struct Parts {
    decoded: Option<Decoded>,
    sources: Sources,
    sink: Sink,
    issues: Vec<YamlIssue>,
}

/// Whether `path` or one of its ancestors could not be read.
fn poisoned_at(poisoned: &std::collections::BTreeSet<FieldPath>, path: &FieldPath) -> bool {
    let mut segments = path.0.clone();
    loop {
        if poisoned.contains(&FieldPath(segments.clone())) {
            return true;
        }
        if segments.pop().is_none() {
            return false;
        }
    }
}
