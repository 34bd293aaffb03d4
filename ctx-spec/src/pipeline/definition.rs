//! A pipeline definition as plain values: what `pipeline!` parsed, or what a loader read.
//!
//! Values are kept *as written* (numbers as `i64`, names as strings) so that validation can say
//! what is wrong with them; the validation functions turn them into typed configurations. The
//! `pipeline!` macro builds the same values at compile time, keeping a map from each
//! [`FieldPath`](crate::validation::FieldPath) to the token it came from.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::engine::EngineSpec;
use crate::params::{ModelParams, ResponseFormat};

/// The reserved target that ends a run.
pub const END: &str = "end";

/// A whole pipeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PipelineDef {
    /// The pipeline's name (the generated type's name).
    pub name: String,
    /// The model's limits, written inline or read from a `config.json` at load time: the model
    /// of every `call_model` and `agent` step that names none.
    pub model: ModelSource,
    /// `models { small { … }, strong { … } }`: named models besides the default, in declaration
    /// order, each with the keys of `model { … }`; a step names one with `model: small`. Without
    /// a `model` block (an empty inline one) every model step must name one of these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<(String, ModelSpec)>,
    /// `settings { … }`.
    pub settings: SettingsSpec,
    /// `prompts { … }`, in declaration order.
    pub prompts: Vec<PromptSpec>,
    /// `steps { … }`, in declaration order; the first one is where a run starts.
    pub steps: Vec<StepDef>,
    /// `contexts { … }`: the context engine's declarations (contexts, retrievers, compactors),
    /// in the engine's own vocabulary, which `call_model { context: NAME }` and
    /// `agent { context: NAME }` steps assemble their requests from. Empty by default.
    #[serde(default, skip_serializing_if = "EngineSpec::is_empty")]
    pub contexts: EngineSpec,
}

/// Where the model's limits come from; by default an empty inline `model { }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ModelSource {
    /// Written in the pipeline.
    Inline(ModelSpec),
    /// Read from this `config.json` path when the pipeline is loaded.
    ConfigFile(String),
}

/// `model { … }` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelSpec {
    /// A model name known to ctx's model table (gives encoding and window).
    pub model: Option<String>,
    /// `context_window` (`model_context_window` in `config.json`).
    pub context_window: Option<i64>,
    /// `max_tokens` (`model_max_tokens` in `config.json`): the default output limit.
    pub max_tokens: Option<i64>,
    /// `encoding`: `cl100k_base` or `o200k_base`.
    pub encoding: Option<String>,
    /// `tokenizer` (or `gguf`): the model's own files — a Hugging Face `tokenizer.json` (with the
    /// `tokenizer_config.json` beside it) or a `.gguf` model file — so prompts are counted with
    /// the model's tokenizer and chat template (feature `hf`); the window comes from a GGUF's
    /// metadata when not written. Relative to the crate when compiled, to
    /// `LoadOptions::base_dir` when loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
    /// `price: { input, cached_input, cache_write, output }`: the model's prices in US dollars
    /// per million tokens, over ctx's dated price table ([`Price`](crate::config::Price)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<PriceSpec>,
}

/// `price: { … }` of a model as written: US dollars per million tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PriceSpec {
    /// `input`: uncached input tokens (required).
    pub input: Option<f64>,
    /// `cached_input`: input read from the prompt cache (default: `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    /// `cache_write`: input written to the prompt cache (default: `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
    /// `output`: output tokens (required).
    pub output: Option<f64>,
}

/// `settings { … }` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SettingsSpec {
    /// `max_context_tokens`: the global budget of `context_blocks`.
    pub max_context_tokens: Option<i64>,
    /// `max_history_tokens`: the budget of `history_dialog` when a step uses history.
    pub max_history_tokens: Option<i64>,
    /// `budget_safety_margin_tokens` (default 128).
    pub budget_safety_margin_tokens: Option<i64>,
    /// `limits_policy`: `fail_fast` (default) or `auto_clamp`.
    pub limits_policy: Option<String>,
    /// `compactors: [yaml, …]`: the user compactor languages `compact_code` rules may name
    /// besides the built-in ones; each must be registered when the pipeline is loaded.
    #[serde(default)]
    pub compactors: Vec<String>,
    /// `node_frame: "…"`: the template nodes are wrapped in (placeholders `{id}`, `{path}`,
    /// `{language}`, `{compact}`, `{text}`); `None` keeps the spec's `--- NODE ---` header.
    #[serde(default)]
    pub node_frame: Option<String>,
    /// `history_trim`: how history over `max_history_tokens` is cut, `oldest_first` (default)
    /// or `fold` ([`HistoryTrimPolicy`](crate::config::HistoryTrimPolicy)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_trim: Option<String>,
    /// `history_low_water_percent`: the share of `max_history_tokens` a `fold` cuts back to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_low_water_percent: Option<i64>,
    /// `max_cost_per_run`: the most a run may spend, in US dollars; needs a price for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_per_run: Option<f64>,
    /// `billed_token_ratio`: the most tokens the provider is assumed to bill per token ctx
    /// counts (prompt and output alike), a number >= 1 (default 1). The run-time spend caps
    /// price each request at the larger of it and the highest ratio the provider's reported
    /// usage has shown for that model in the conversation; before any usage is seen, it is the
    /// only guard against a provider that counts more than ctx does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billed_token_ratio: Option<f64>,
    /// `carry_context: true`: a conversation keeps `context_blocks` from one question to the
    /// next (as the specification's turns do), so a `manage_context_budget` step meets the
    /// earlier context and its `on_over` can summarise it. Without it each question of a
    /// conversation starts with an empty context. `None` is `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry_context: Option<bool>,
    /// `max_question_tokens`: the budget of the question (`user_question`, `user_question_en`),
    /// a term of the contract of every step that renders it; a run whose question is longer is
    /// refused before any request. `None`: the room the window leaves (see the contract).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_question_tokens: Option<i64>,
    /// `max_variable_tokens`: the budget of each variable a `user_parts` entry renders, a term of
    /// the contract of every step that renders it. `None`: the room the window leaves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_variable_tokens: Option<i64>,
    /// Any other named setting, e.g. `max_turn_loops`, by name.
    pub extra: BTreeMap<String, i64>,
}

/// One prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PromptSpec {
    /// Its key (`prompt_key` refers to it).
    pub key: String,
    /// Its text, or `None` when it is provided at load time.
    pub text: Option<String>,
}

/// One step: its id and what it does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StepDef {
    /// The step id, unique in the pipeline.
    pub id: String,
    /// The step kind and its configuration.
    pub kind: StepKind,
}

/// The kinds of step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StepKind {
    /// `search_nodes { top_k, next }`: fills `search_results` from the search backend.
    SearchNodes(SearchNodesSpec),
    /// `expand_dependency_tree { max_depth, next }`: adds the dependencies of the hits.
    ExpandDependencyTree(ExpandSpec),
    /// `fetch_node_texts { evidence_tokens, next }`: loads hit texts into `node_texts` within an
    /// evidence budget.
    FetchNodeTexts(FetchSpec),
    /// `manage_context_budget { … }`.
    ManageContextBudget(ManageBudgetSpec),
    /// `call_model { … }`.
    CallModel(CallModelSpec),
    /// `agent { … }`: `call_model` with tools, looping over the model's tool calls.
    Agent(AgentSpec),
    /// `loop_guard { … }`.
    LoopGuard(LoopGuardSpec),
    /// `set_variables { rules, next }`.
    SetVariables(SetVariablesSpec),
    /// A user-written step with named outcomes.
    Custom(CustomSpec),
}

/// `search_nodes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchNodesSpec {
    /// How many hits to keep.
    pub top_k: i64,
    /// The next step.
    pub next: String,
}

/// `expand_dependency_tree`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExpandSpec {
    /// How many dependency levels to follow.
    pub max_depth: i64,
    /// The next step.
    pub next: String,
}

/// `fetch_node_texts`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FetchSpec {
    /// `evidence_tokens`: the evidence budget, total tokens of the fetched texts. Serialized
    /// definitions written before the key was renamed spell it `max_tokens`; both are read.
    #[serde(alias = "max_tokens")]
    pub evidence_tokens: i64,
    /// The next step.
    pub next: String,
}

/// `manage_context_budget`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ManageBudgetSpec {
    /// `compact_code` rules, in order.
    pub compact_code: Vec<CompactRuleSpec>,
    /// `divide_new_content`: a divider put before each appended batch.
    pub divide_new_content: Option<String>,
    /// Where to go when the batch was appended.
    pub on_ok: String,
    /// Where to go when it did not fit.
    pub on_over: String,
}

/// One `compact_code` rule as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CompactRuleSpec {
    /// `sql` or `dotnet`.
    pub language: String,
    /// `always`, `threshold` or `demand`.
    pub policy: String,
    /// For `threshold`: a fraction of `max_context_tokens` in (0, 1].
    pub threshold: Option<f64>,
    /// For `demand`: the inbox topic that requests compaction.
    pub inbox_key: Option<String>,
}

/// `call_model`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallModelSpec {
    /// The system prompt's key.
    pub prompt_key: String,
    /// `model: NAME`: one of the pipeline's named `models`; `None` is the default `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `max_output_tokens` (wins over `max_tokens`).
    pub max_output_tokens: Option<i64>,
    /// `max_tokens`.
    pub max_tokens: Option<i64>,
    /// The user message, assembled from state fields through templates. Empty means the
    /// default, [`DEFAULT_USER_PARTS`]: the context, then the question (see
    /// [`CallModelSpec::parts`]).
    pub user_parts: Vec<UserPartSpec>,
    /// Whether `history_dialog` is sent (trimmed to `max_history_tokens`).
    pub use_history: bool,
    /// Sampling parameters sent with the request (`temperature`, `top_p`, `stop`, `seed`,
    /// `response_format`).
    #[serde(default, skip_serializing_if = "ModelParams::is_empty")]
    pub params: ModelParams,
    /// `context: NAME`: the request is the assembly of this context of the pipeline's
    /// `contexts` (its messages, packs and history fitted into its input budget, the text of
    /// `prompt_key` as the base system prompt) instead of `user_parts` and `use_history`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The next step.
    pub next: String,
}

/// The user message of a `call_model` step that declares no `user_parts`: the specification's
/// layout, `### Context:` with the context blocks, then `### User:` with the question.
pub const DEFAULT_USER_PARTS: [(&str, &str); 2] =
    [("context_blocks", "### Context:\n{}\n\n"), ("user_question_en", "### User:\n{}\n\n")];

static DEFAULT_PARTS: LazyLock<Vec<UserPartSpec>> = LazyLock::new(|| {
    DEFAULT_USER_PARTS
        .iter()
        .map(|(source, template)| UserPartSpec { source: (*source).to_owned(), template: (*template).to_owned() })
        .collect()
});

impl CallModelSpec {
    /// The user parts the step renders: those written, or [`DEFAULT_USER_PARTS`] when none are,
    /// so a step never sends an empty user message. The contract measures the same parts.
    pub fn parts(&self) -> &[UserPartSpec] {
        if self.user_parts.is_empty() { &DEFAULT_PARTS } else { &self.user_parts }
    }
}

/// `agent`: a `call_model` step that offers tools to the model and runs the calls it requests
/// through the caller's `ToolHandlers` (ctx-runtime), at most `max_tool_calls` of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AgentSpec {
    /// Everything a `call_model` step has; `next` is the agent's only transition.
    pub call: CallModelSpec,
    /// The tools the model may call, in declaration order.
    pub tools: Vec<ToolSpec>,
    /// The most tool calls one run of the step executes (at least 1); the step makes at most
    /// `max_tool_calls + 1` model requests.
    pub max_tool_calls: i64,
    /// The turn's budget for the whole transcript (conversation, tool calls and results); by
    /// default the window less the output limit, the tool schemas, the chat format's reply
    /// priming and the safety margin.
    pub turn_budget_tokens: Option<i64>,
    /// `mcp_servers: [ files { command: "…", args: […] } ]`: MCP servers whose tools the model
    /// may also call. Their tools are listed when the pipeline is loaded (ctx-runtime's `mcp`
    /// feature) and added after `tools`, each then checked like a declared one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<McpServerSpec>,
}

/// One MCP server of an `agent` step, as written: how to reach it (a command spawned with its
/// standard input and output as the transport, or a Streamable HTTP URL) and which of its tools
/// the step offers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct McpServerSpec {
    /// The server's name in the pipeline, in messages and reports (1 to 64 ASCII letters,
    /// digits, `_` or `-`).
    pub name: String,
    /// `command`: the program to spawn (found on `PATH` when not a path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `args`: the command's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// `url`: a Streamable HTTP endpoint (`http://…`; an `https://` one is refused), instead of a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `bearer_token_env`: with a `url`, the name of the environment variable whose value is
    /// sent as `Authorization: Bearer …` with every request to the server. The pipeline names
    /// the variable, never the secret; it is read when the server is connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env: Option<String>,
    /// `tools: [read_file, …]`: only these tools of the server are offered; all when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

impl McpServerSpec {
    /// A server named `name` with no transport yet.
    pub fn new(name: impl Into<String>) -> Self {
        McpServerSpec { name: name.into(), ..McpServerSpec::default() }
    }
}

/// One tool of an `agent` step, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The function name the model calls (`^[a-zA-Z0-9_-]{1,64}$`).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON schema of the arguments, as written (an `object` schema).
    pub parameters: String,
}

impl ToolSpec {
    /// The schema sent to the model, or the JSON error of `parameters` (validation reports it
    /// as `INVALID_TOOL_PARAMETERS` before any run).
    pub fn schema(&self) -> Result<crate::chat::ToolSchema, serde_json::Error> {
        Ok(crate::chat::ToolSchema::new(
            self.name.clone(),
            self.description.clone(),
            serde_json::from_str(&self.parameters)?,
        ))
    }
}

impl AgentSpec {
    /// The schemas of every tool whose parameters parse, in declaration order.
    pub fn schemas(&self) -> Vec<crate::chat::ToolSchema> {
        self.tools.iter().filter_map(|t| t.schema().ok()).collect()
    }
}

/// One user part: a state field rendered through a template with one `{}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserPartSpec {
    /// The state field (`context_blocks`, `user_question_en`, a variable name…).
    pub source: String,
    /// The template, holding exactly one `{}`.
    pub template: String,
}

/// `loop_guard`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoopGuardSpec {
    /// The setting holding the maximum number of loops.
    pub max_turn_loops_from_settings: String,
    /// Where to go while loops remain.
    pub on_allow: String,
    /// Where to go when they are used up.
    pub on_deny: String,
}

/// `set_variables`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SetVariablesSpec {
    /// The rules, applied in order, all or nothing.
    pub rules: Vec<SetRuleSpec>,
    /// The next step.
    pub next: String,
}

/// One `set_variables` rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SetRuleSpec {
    /// The field or variable to set.
    pub set: String,
    /// Where the value comes from.
    pub value: SetValueSpec,
}

/// The value of a `set_variables` rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum SetValueSpec {
    /// `from: field` with an optional `transform`.
    From {
        /// The source field.
        from: String,
        /// A named transform, e.g. `to_context_blocks`.
        transform: Option<String>,
    },
    /// `value: literal` (`null` clears).
    Value(serde_json::Value),
}

/// A user-written step: the caller's handler returns one of `outcomes`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CustomSpec {
    /// Outcome name → next step, in declaration order.
    pub outcomes: Vec<(String, String)>,
}

impl StepKind {
    /// The kind's keyword in the DSL (`manage_context_budget`, …).
    pub fn keyword(&self) -> &'static str {
        match self {
            StepKind::SearchNodes(_) => "search_nodes",
            StepKind::ExpandDependencyTree(_) => "expand_dependency_tree",
            StepKind::FetchNodeTexts(_) => "fetch_node_texts",
            StepKind::ManageContextBudget(_) => "manage_context_budget",
            StepKind::CallModel(_) => "call_model",
            StepKind::Agent(_) => "agent",
            StepKind::LoopGuard(_) => "loop_guard",
            StepKind::SetVariables(_) => "set_variables",
            StepKind::Custom(_) => "custom",
        }
    }

    /// Every transition as (key, target step id), in a stable order. Targets may be [`END`].
    pub fn transitions(&self) -> Vec<(&str, &str)> {
        match self {
            StepKind::SearchNodes(s) => vec![("next", &s.next)],
            StepKind::ExpandDependencyTree(s) => vec![("next", &s.next)],
            StepKind::FetchNodeTexts(s) => vec![("next", &s.next)],
            StepKind::ManageContextBudget(s) => vec![("on_ok", &s.on_ok), ("on_over", &s.on_over)],
            StepKind::CallModel(s) => vec![("next", &s.next)],
            StepKind::Agent(s) => vec![("next", &s.call.next)],
            StepKind::LoopGuard(s) => vec![("on_allow", &s.on_allow), ("on_deny", &s.on_deny)],
            StepKind::SetVariables(s) => vec![("next", &s.next)],
            StepKind::Custom(s) => s.outcomes.iter().map(|(o, t)| (o.as_str(), t.as_str())).collect(),
        }
    }
}

impl PipelineDef {
    /// Whether the pipeline declares a default model: a `model` block that says anything, or a
    /// `config.json`. Without `models` there is always one (an empty block is its own error).
    pub fn has_default_model(&self) -> bool {
        self.models.is_empty() || self.model != ModelSource::default()
    }

    /// The declared named model `name` (`models { name { … } }`), if there is one.
    pub fn named_model(&self, name: &str) -> Option<&ModelSpec> {
        self.models.iter().find(|(n, _)| n == name).map(|(_, spec)| spec)
    }
}

impl StepKind {
    /// The request keys of a `call_model` or `agent` step (`None` for any other kind).
    pub fn model_request(&self) -> Option<&CallModelSpec> {
        match self {
            StepKind::CallModel(spec) => Some(spec),
            StepKind::Agent(agent) => Some(&agent.call),
            _ => None,
        }
    }
}

impl Default for ModelSource {
    fn default() -> Self {
        ModelSource::Inline(ModelSpec::default())
    }
}

impl Default for SetValueSpec {
    /// `value: null`.
    fn default() -> Self {
        SetValueSpec::Value(serde_json::Value::Null)
    }
}

// The definition structs are `#[non_exhaustive]`, so adding a key is not a breaking change: code
// outside this crate (a user's, the `pipeline!` expansion's, ctx-runtime's) starts from
// `default()` or a constructor and sets fields with these setters, one per field, named after it.
// ctx-runtime's growing structs (configs, options, replies) use the same macro, hence the export;
// it is not part of the API (hidden, and named through `ctx_spec::setters!` only by ctx's crates).
#[doc(hidden)]
#[macro_export]
macro_rules! setters {
    ($ty:ident { $($field:ident: $t:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                #[must_use]
                pub fn $field(mut self, value: $t) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters!(PipelineDef { name: String, model: ModelSource, models: Vec<(String, ModelSpec)>, settings: SettingsSpec, prompts: Vec<PromptSpec>, steps: Vec<StepDef> });
setters!(ModelSpec { model: Option<String>, context_window: Option<i64>, max_tokens: Option<i64>, encoding: Option<String>, tokenizer: Option<String>, price: Option<PriceSpec> });
setters!(PriceSpec { input: Option<f64>, cached_input: Option<f64>, cache_write: Option<f64>, output: Option<f64> });
setters!(SettingsSpec { max_context_tokens: Option<i64>, max_history_tokens: Option<i64>, budget_safety_margin_tokens: Option<i64>, limits_policy: Option<String>, compactors: Vec<String>, node_frame: Option<String>, carry_context: Option<bool>, history_trim: Option<String>, history_low_water_percent: Option<i64>, max_cost_per_run: Option<f64>, billed_token_ratio: Option<f64>, max_question_tokens: Option<i64>, max_variable_tokens: Option<i64>, extra: BTreeMap<String, i64> });
setters!(ModelParams { temperature: Option<f64>, top_p: Option<f64>, presence_penalty: Option<f64>, frequency_penalty: Option<f64>, stop: Vec<String>, seed: Option<i64>, response_format: Option<ResponseFormat> });
// Apart from the lines above, so the keys added with the context engine stand on their own.
setters!(PipelineDef { contexts: EngineSpec });
setters!(CallModelSpec { context: Option<String> });
setters!(PromptSpec { key: String, text: Option<String> });
setters!(StepDef { id: String, kind: StepKind });
setters!(SearchNodesSpec { top_k: i64, next: String });
setters!(ExpandSpec { max_depth: i64, next: String });
setters!(FetchSpec { evidence_tokens: i64, next: String });
setters!(ManageBudgetSpec { compact_code: Vec<CompactRuleSpec>, divide_new_content: Option<String>, on_ok: String, on_over: String });
setters!(CompactRuleSpec { language: String, policy: String, threshold: Option<f64>, inbox_key: Option<String> });
setters!(CallModelSpec { prompt_key: String, model: Option<String>, max_output_tokens: Option<i64>, max_tokens: Option<i64>, user_parts: Vec<UserPartSpec>, use_history: bool, params: ModelParams, next: String });
setters!(AgentSpec { call: CallModelSpec, tools: Vec<ToolSpec>, max_tool_calls: i64, turn_budget_tokens: Option<i64> });
setters!(ToolSpec { name: String, description: String, parameters: String });
setters!(AgentSpec { mcp_servers: Vec<McpServerSpec> });
setters!(McpServerSpec { name: String, command: Option<String>, args: Vec<String>, url: Option<String>, bearer_token_env: Option<String>, tools: Vec<String> });
setters!(UserPartSpec { source: String, template: String });
setters!(LoopGuardSpec { max_turn_loops_from_settings: String, on_allow: String, on_deny: String });
setters!(SetVariablesSpec { rules: Vec<SetRuleSpec>, next: String });
setters!(SetRuleSpec { set: String, value: SetValueSpec });
setters!(CustomSpec { outcomes: Vec<(String, String)> });

impl PipelineDef {
    /// A pipeline named `name` with an empty inline model, no settings, prompts or steps; add
    /// them with the setters ([`model`](Self::model), [`settings`](Self::settings), …).
    ///
    /// ```
    /// use ctx::definition::{
    ///     CallModelSpec, END, ModelSource, ModelSpec, PipelineDef, PromptSpec, SettingsSpec, StepDef, StepKind,
    /// };
    ///
    /// let model = ModelSpec::default().model(Some("gpt-4o".into())).max_tokens(Some(1_024));
    /// let def = PipelineDef::new("Qa")
    ///     .model(ModelSource::Inline(model))
    ///     .settings(SettingsSpec::default().max_context_tokens(Some(9_000)))
    ///     .prompts(vec![PromptSpec::new("answer", Some("Answer briefly.".into()))])
    ///     .steps(vec![StepDef::new("answer", StepKind::CallModel(CallModelSpec::new("answer", END)))]);
    /// let issues = ctx::definition::validate_definition(&def, &Default::default());
    /// assert!(issues.is_empty(), "{issues:?}");
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        PipelineDef { name: name.into(), ..PipelineDef::default() }
    }
}

impl PromptSpec {
    /// A prompt with its text, or `None` when the text is given at load time.
    pub fn new(key: impl Into<String>, text: Option<String>) -> Self {
        PromptSpec { key: key.into(), text }
    }
}

impl StepDef {
    /// A step `id` of kind `kind`.
    pub fn new(id: impl Into<String>, kind: StepKind) -> Self {
        StepDef { id: id.into(), kind }
    }
}

impl SearchNodesSpec {
    /// `search_nodes { top_k, next }`.
    pub fn new(top_k: i64, next: impl Into<String>) -> Self {
        SearchNodesSpec { top_k, next: next.into() }
    }
}

impl ExpandSpec {
    /// `expand_dependency_tree { max_depth, next }`.
    pub fn new(max_depth: i64, next: impl Into<String>) -> Self {
        ExpandSpec { max_depth, next: next.into() }
    }
}

impl FetchSpec {
    /// `fetch_node_texts { evidence_tokens, next }`.
    pub fn new(evidence_tokens: i64, next: impl Into<String>) -> Self {
        FetchSpec { evidence_tokens, next: next.into() }
    }
}

impl ManageBudgetSpec {
    /// `manage_context_budget { on_ok, on_over }` without rules or divider.
    pub fn new(on_ok: impl Into<String>, on_over: impl Into<String>) -> Self {
        ManageBudgetSpec { on_ok: on_ok.into(), on_over: on_over.into(), ..ManageBudgetSpec::default() }
    }
}

impl CompactRuleSpec {
    /// `{ language, policy }` without `threshold` or `inbox_key`.
    pub fn new(language: impl Into<String>, policy: impl Into<String>) -> Self {
        CompactRuleSpec { language: language.into(), policy: policy.into(), ..CompactRuleSpec::default() }
    }
}

impl CallModelSpec {
    /// `call_model { prompt_key, next }` with the default user parts, no history and the
    /// model's default output limit.
    pub fn new(prompt_key: impl Into<String>, next: impl Into<String>) -> Self {
        CallModelSpec { prompt_key: prompt_key.into(), next: next.into(), ..CallModelSpec::default() }
    }
}

impl AgentSpec {
    /// `agent { … }`: `call` plus `tools`, at most `max_tool_calls` of them per run.
    pub fn new(call: CallModelSpec, tools: Vec<ToolSpec>, max_tool_calls: i64) -> Self {
        AgentSpec { call, tools, max_tool_calls, turn_budget_tokens: None, mcp_servers: Vec::new() }
    }
}

impl ToolSpec {
    /// A tool: its name, its description and the JSON schema of its arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: impl Into<String>) -> Self {
        ToolSpec { name: name.into(), description: description.into(), parameters: parameters.into() }
    }
}

impl UserPartSpec {
    /// `source => "template with one {}"`.
    pub fn new(source: impl Into<String>, template: impl Into<String>) -> Self {
        UserPartSpec { source: source.into(), template: template.into() }
    }
}

impl LoopGuardSpec {
    /// `loop_guard { max_turn_loops_from_settings, on_allow, on_deny }`.
    pub fn new(setting: impl Into<String>, on_allow: impl Into<String>, on_deny: impl Into<String>) -> Self {
        LoopGuardSpec {
            max_turn_loops_from_settings: setting.into(),
            on_allow: on_allow.into(),
            on_deny: on_deny.into(),
        }
    }
}

impl SetVariablesSpec {
    /// `set_variables { rules, next }`.
    pub fn new(rules: Vec<SetRuleSpec>, next: impl Into<String>) -> Self {
        SetVariablesSpec { rules, next: next.into() }
    }
}

impl SetRuleSpec {
    /// `set <- value`.
    pub fn new(set: impl Into<String>, value: SetValueSpec) -> Self {
        SetRuleSpec { set: set.into(), value }
    }
}

impl CustomSpec {
    /// A custom step with its `(outcome, next step)` pairs.
    pub fn new(outcomes: Vec<(String, String)>) -> Self {
        CustomSpec { outcomes }
    }
}
