//! Pipelines written as YAML files, the specification's form, loaded into a
//! [`PipelineDef`](super::PipelineDef) with the file, line and column of every value, so that
//! each problem — a YAML syntax error, an unknown key, a wrong type, or any rule of
//! [`validate_definition`](super::validate_definition) including the budget contract counted
//! with the real tokenizer — is reported where it was written, with the same code, message
//! and help as the `pipeline!` compile error. Behind the `yaml` feature.
//!
//! ```no_run
//! use ctx::pipeline::{LoadOptions, LoadedPipeline};
//! use ctx::pipeline::yaml::PipelineFile;
//!
//! let file = PipelineFile::load("pipelines/compaction_loop.yaml")?;
//! println!("read {:?}", file.files());
//! let pipeline = LoadedPipeline::load_file(&file, LoadOptions::from_env())?;
//! # Ok::<(), ctx::pipeline::yaml::PipelineFileError>(())
//! ```
//!
//! A service that reloads its pipelines keeps a [`PipelineCache`]: a file is read and checked
//! again only when it, a base it `extends`, a prompt file or its `config.json` changed
//! ([`SourceFile`] digests of the bytes read). The `pipeline!` macro reads files with this
//! loader while compiling (`pub pipeline Qa { file: "pipelines/qa.yaml" }`, facade feature
//! `yaml`).
//!
//! The other direction: [`to_yaml`] writes a definition as a file that
//! [`PipelineFile::decode`] (decoding only, no `config.json` read, no validation) reads back to
//! an equal definition.
//!
//! # The file
//!
//! ```yaml
//! name: CompactionLoop            # optional; default: the file's stem
//! extends: base.yaml              # optional; or a list (see below)
//! config: config.json             # the model's limits from a config.json (relative to this file)
//! # model: { model: gpt-4o, context_window: 9600, max_tokens: 800, encoding: o200k_base }
//! settings:
//!   max_context_tokens: 5000
//!   max_history_tokens: 1000
//!   budget_safety_margin_tokens: 128
//!   limits_policy: fail_fast
//!   max_turn_loops: 3             # any other key: a named integer setting
//! prompts:
//!   answer: "Answer from the context only."   # inline text
//!   sumarizer: { file: prompts/sumarizer.txt } # read relative to this file
//!   later: null                   # given at load time (LoadOptions::prompt)
//! steps:
//!   - id: manage_budget
//!     action: manage_context_budget
//!     on_ok: call_model_answer
//!     on_over: call_summarize_context
//! ```
//!
//! * `model` is inline (`model`, `context_window` or `model_context_window`, `max_tokens` or
//!   `model_max_tokens`, `encoding`), a model name (`model: gpt-4o`), or `{ config: … }`;
//!   `config: config.json` at the top level is the same as the latter. Not both.
//! * Steps: `id`, `action` (the step kind: `search_nodes`, `expand_dependency_tree`,
//!   `fetch_node_texts`, `manage_context_budget`, `call_model`, `agent`, `loop_guard`,
//!   `set_variables`, `custom`), then the kind's keys as
//!   [`STEP_SCHEMAS`](super::schema::STEP_SCHEMAS) lists them. The specification's forms:
//!   `compact_code: { rules: [ … ] }` (a bare list is accepted too); `user_parts` as a mapping
//!   `name: { source, template }` (`source` defaults to the name) or a list of
//!   `{ source, template }`; `set_variables` rules `{ set, from, transform? }` or
//!   `{ set, value }`; `fetch_node_texts` takes `evidence_tokens` or the specification's
//!   `max_tokens`. Model steps take `temperature`, `top_p`, `presence_penalty`,
//!   `frequency_penalty`, `stop` (a string or a list),
//!   `seed` and `response_format` (`json`, or `{ json_schema: { name, schema, strict } }` with
//!   `schema` a mapping or JSON text); `agent` adds `tools: [ { name, description, parameters } ]`,
//!   `max_tool_calls`, `turn_budget_tokens`, `mcp_servers: { name: { command, args, url, bearer_token_env, tools } }`
//!   (or a list of `{ name, … }`); `custom` has `outcomes: { outcome: step }`.
//! * `contexts` declares the context engine's contexts, retrievers and compactors in the
//!   engine's own form (`{ contexts: [ { name, inputs, policy, messages } ], retrievers: [ { name,
//!   query, limit } ], compactors: [ … ] }`, messages as `{ type: system, content: "…" }`); a
//!   model step with `context: NAME` assembles its request from one of them.
//! * `extends` merges files: see [the rules](self#extends).
//!
//! Problems are reported all at once: every YAML-level problem of every file of the chain; when
//! there is none, every rule of the validation. A YAML syntax error stops its file.
//!
//! # Extends
//!
//! * `extends: base.yaml` or `extends: [a.yaml, b.yaml]`, relative to the file that writes it;
//!   several bases are merged left to right (a later base wins), then the file on top.
//! * `settings` and `prompts` merge key by key, the file's own values winning.
//! * `steps` merge by `id`: the base's steps in order, a step with a base step's id replacing
//!   it in place, new steps appended in the file's order (so the first step, where a run
//!   starts, stays the base's first unless replaced).
//! * `name`, `model`, `config` and `contexts` are taken whole from the file, else from the base.
//! * Values inherited from a base keep the base file's location; a cycle
//!   (`a.yaml → b.yaml → a.yaml`, `YAML_EXTENDS_CYCLE`) or an unreadable file
//!   (`PIPELINE_FILE_UNREADABLE`) is an error naming the chain.

mod cache;
mod contexts;
mod document;
mod error;
mod export;
mod extends;
mod fields;
mod json_schema;
mod node;
mod pipeline_file;
mod sources;
mod steps;

#[cfg(test)]
mod decode_tests;
#[cfg(test)]
mod models_tests;

pub use cache::PipelineCache;
pub use document::TOP_LEVEL_KEYS;
pub use error::{Location, PipelineFileError, YamlIssue};
pub use export::to_yaml;
pub use json_schema::{CONFIG_SCHEMA_URL, PIPELINE_SCHEMA_URL, config_json_schema, json_schema};
pub use pipeline_file::{LoadedFile, LocationMap, PipelineFile};
pub use sources::SourceFile;
