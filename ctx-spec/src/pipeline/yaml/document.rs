//! The top level of a pipeline file — `name`, `model` or `config`, `settings`, `prompts`,
//! `steps`, `contexts` — decoded into a [`PipelineDef`], every value's location recorded.

use std::path::{Path, PathBuf};

use super::error::YamlIssue;
use super::fields::{Fields, Sink};
use super::node::Node;
use super::steps::{decode_steps, decoding};
use crate::codes::Code;
use crate::engine::EngineSpec;
use crate::pipeline::decode::{read_model, read_models, read_settings};
use crate::pipeline::definition::{ModelSource, ModelSpec, PipelineDef, PromptSpec, SettingsSpec};
use crate::validation::FieldPath;

/// Every key the top level of a pipeline file may hold.
pub const TOP_LEVEL_KEYS: [&str; 9] =
    ["name", "extends", "model", "models", "config", "settings", "prompts", "steps", "contexts"];

/// The keys of a prompt written as a mapping: one of the two.
pub(crate) const PROMPT_KEYS: [&str; 2] = ["file", "text"];

/// The decoded definition, with the `config.json` it names (resolved against the file that
/// names it) and where that was written.
pub(crate) struct Decoded {
    pub def: PipelineDef,
    pub config: Option<(PathBuf, super::error::Location)>,
}

/// Decodes a merged document (its `extends` already applied); `name` defaults to `default_name`.
pub(crate) fn decode(sink: &mut Sink, root: &Node, default_name: &str) -> Option<Decoded> {
    let top = FieldPath::root();
    sink.locate(&top, root);
    let f = Fields::read(sink, root, "the pipeline file", &TOP_LEVEL_KEYS)?;
    let name = f.text(sink, "name", &top).unwrap_or_else(|| default_name.to_owned());
    let (model, config) = model(sink, &f);
    let models = match f.get("models") {
        Some(n) => models(sink, n),
        None => Some(Vec::new()),
    };
    let settings = match f.get("settings") {
        Some(n) => settings(sink, n),
        None => Some(SettingsSpec::default()),
    };
    let prompts = match f.get("prompts") {
        Some(n) => prompts(sink, n),
        None => Some(Vec::new()),
    };
    let steps = match f.require(sink, "steps") {
        Some(n) => decode_steps(sink, n),
        None => None,
    };
    let contexts = match f.get("contexts") {
        Some(n) => super::contexts::decode_contexts(sink, n),
        None => Some(EngineSpec::default()),
    };
    let def = PipelineDef {
        name,
        model: model?,
        models: models?,
        settings: settings?,
        prompts: prompts?,
        steps: steps?,
        contexts: contexts?,
    };
    Some(Decoded { def, config })
}

/// `config: config.json`, `model: { config: … }`, or `model: { model, context_window, … }`
/// (or `model: gpt-4o`, a name from the model table).
fn model(sink: &mut Sink, f: &Fields<'_>) -> (Option<ModelSource>, Option<(PathBuf, super::error::Location)>) {
    let path = FieldPath::root().key("model");
    let mut config_node = f.get("config");
    let mut spec = ModelSpec::default();
    if let Some(node) = f.get("model") {
        sink.locate(&path, node);
        if let Some(name) = node.as_text() {
            spec.model = Some(name.to_owned());
        } else {
            // The keys of `model` are read by the schema rows the macro shares; `config` is YAML's.
            let read = decoding(sink, |tree, dec| {
                let value = tree.value(node);
                let (spec, block) = read_model(dec, &value, &path, &["config"])?;
                let tokenizer_at = dec.locations.get(&path.key("tokenizer")).map(|at| tree.at(*at).file.clone());
                Some((spec, block.get("config").is_some(), tokenizer_at))
            });
            let Some((read, has_config, tokenizer_at)) = read else { return (None, None) };
            spec = read;
            // The model's own files, relative to the YAML file that names them.
            if let (Some(file), Some(named_in)) = (&spec.tokenizer, tokenizer_at) {
                spec.tokenizer = Some(relative_to(&named_in, Path::new(file)).to_string_lossy().into_owned());
            }
            if has_config {
                let inner = node.as_map().and_then(|m| m.iter().find(|(k, _)| k.as_text() == Some("config")));
                if config_node.is_some() || spec != ModelSpec::default() {
                    let at = inner.map_or(&node.at, |(_, v)| &v.at);
                    sink.issues.push(
                        YamlIssue::new(at, Code::YamlConflictingKeys, "the model is given twice")
                            .with_help("write the model's limits inline or name a `config.json`, not both"),
                    );
                    return (None, None);
                }
                config_node = inner.map(|(_, v)| v);
            }
        }
    }
    let Some(node) = config_node else { return (Some(ModelSource::Inline(spec)), None) };
    if f.get("model").is_some() && f.get("config").is_some() {
        sink.issues.push(
            YamlIssue::new(&node.at, Code::YamlConflictingKeys, "the model is given twice")
                .with_help("write the model's limits inline or name a `config.json`, not both"),
        );
        return (None, None);
    }
    sink.locate(&path, node);
    let Some(file) = sink.text(node, &path.key("config"), "`config`") else { return (None, None) };
    let resolved = relative_to(&node.at.file, Path::new(&file));
    (Some(ModelSource::ConfigFile(resolved.to_string_lossy().into_owned())), Some((resolved, node.at.clone())))
}

/// `path` resolved against the directory of `file` (the file that names it), made absolute.
pub(crate) fn relative_to(file: &Path, path: &Path) -> PathBuf {
    let joined = match file.parent() {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_owned(),
    };
    std::path::absolute(&joined).unwrap_or(joined)
}

/// `models: { small: { … }, strong: { … } }`, each read by the rows of `model` the macro shares;
/// a model's files are relative to the YAML file that names them, as the default model's.
fn models(sink: &mut Sink, node: &Node) -> Option<Vec<(String, ModelSpec)>> {
    let path = FieldPath::root().key("models");
    sink.locate(&path, node);
    let read = decoding(sink, |tree, dec| {
        let models = read_models(dec, &tree.value(node), &path)?;
        let files: Vec<_> = models
            .iter()
            .map(|(name, _)| dec.locations.get(&path.key(name).key("tokenizer")).map(|at| tree.at(*at).file.clone()))
            .collect();
        Some((models, files))
    });
    let (mut models, files) = read?;
    for ((_, spec), named_in) in models.iter_mut().zip(files) {
        if let (Some(file), Some(named_in)) = (&spec.tokenizer, named_in) {
            spec.tokenizer = Some(relative_to(&named_in, Path::new(file)).to_string_lossy().into_owned());
        }
    }
    Some(models)
}

/// `settings:`, read by the schema rows the macro shares.
fn settings(sink: &mut Sink, node: &Node) -> Option<SettingsSpec> {
    let path = FieldPath::root().key("settings");
    sink.locate(&path, node);
    decoding(sink, |tree, dec| read_settings(dec, &tree.value(node), &path))
}

/// `prompts: { key: "text" | { file: path } | { text: "…" } | null }`; a `file` is read
/// relative to the YAML file that names it, `null` is a prompt given at load time.
fn prompts(sink: &mut Sink, node: &Node) -> Option<Vec<PromptSpec>> {
    let path = FieldPath::root().key("prompts");
    sink.locate(&path, node);
    if node.is_null() {
        return Some(Vec::new());
    }
    let names: Vec<&str> = node.as_map().unwrap_or_default().iter().filter_map(|(k, _)| k.as_text()).collect();
    let f = Fields::read(sink, node, "`prompts`", &names)?;
    let mut out = Some(Vec::new());
    for (key, _, value) in f.keys() {
        let at = path.key(key);
        sink.locate(&at, value);
        let text = if value.is_null() {
            Some(None)
        } else if let Some(t) = value.as_text() {
            Some(Some(t.to_owned()))
        } else {
            Fields::read(sink, value, format!("prompt `{key}`"), &PROMPT_KEYS).and_then(|p| {
                match (p.get("file"), p.get("text")) {
                    (Some(file), None) => {
                        let name = sink.text(file, &at, &format!("`file` of prompt `{key}`"))?;
                        let resolved = relative_to(&file.at.file, Path::new(&name));
                        match sink.sources.read(&resolved) {
                            Ok(t) => Some(Some(t)),
                            Err(e) => {
                                sink.issues.push(
                                    YamlIssue::new(
                                        &file.at,
                                        Code::PromptFileUnreadable,
                                        format!("cannot read prompt file `{}`: {e}", resolved.display()),
                                    )
                                    .with_help("the path is relative to the YAML file that names it"),
                                );
                                None
                            }
                        }
                    }
                    (None, Some(text)) => Some(Some(sink.text(text, &at, &format!("`text` of prompt `{key}`"))?)),
                    _ => {
                        sink.issues.push(
                            YamlIssue::new(
                                &value.at,
                                Code::YamlMissingKey,
                                format!("prompt `{key}` needs one of `file` or `text`"),
                            )
                            .with_help("write `file: prompts/x.txt` or `text: \"…\"`"),
                        );
                        None
                    }
                }
            })
        };
        match text {
            Some(text) => out.as_mut().map(|o| o.push(PromptSpec { key: key.to_owned(), text })),
            None => out.take().map(|_| ()),
        };
    }
    out
}
