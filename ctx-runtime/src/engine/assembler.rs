//! [`ContextAssembler`]: validated declarations plus the retrievers and compactors they use.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::EngineError;
use super::report::AssemblyReport;
use super::retriever::RetrieverDyn;
use super::summarize::Summarizer;
use crate::chat::{ChatMessage, Role};
use crate::codes::{Code, ErrorCode};
use crate::compact::{BUILTIN_COMPACTORS, Compactor, CompactorError, CompactorRegistry, is_language_name};
use crate::tokens::TokenCounter;
use crate::validation::{ConfigIssue, ConfigIssues, FieldPath, did_you_mean};
use ctx_spec::engine::Template;
use ctx_spec::engine::validate_spec;
use ctx_spec::engine::{EngineSpec, MessageSpec, PackPlacement, RetrieverDecl};
use ctx_spec::engine::{Policy, pack_ratios};

/// What one assembly is given at run time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AssemblyInput {
    /// The values of `{input.<name>}` (strings, numbers, booleans; objects for dotted paths).
    #[serde(default)]
    pub inputs: serde_json::Map<String, Value>,
    /// The conversation so far, oldest first.
    #[serde(default)]
    pub history: Vec<ChatMessage>,
    /// The user message when the declaration has no `user` message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_message: Option<String>,
    /// A system prompt put before the declaration's own system messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_system_prompt: Option<String>,
}

impl AssemblyInput {
    /// An empty input.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `{input.<name>}`.
    #[must_use]
    pub fn input(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.inputs.insert(name.into(), value.into());
        self
    }

    /// Sets the history.
    #[must_use]
    pub fn history(mut self, history: Vec<ChatMessage>) -> Self {
        self.history = history;
        self
    }

    /// Sets the fallback user message.
    #[must_use]
    pub fn user_message(mut self, text: impl Into<String>) -> Self {
        self.user_message = Some(text.into());
        self
    }

    /// Sets the base system prompt.
    #[must_use]
    pub fn base_system_prompt(mut self, text: impl Into<String>) -> Self {
        self.base_system_prompt = Some(text.into());
        self
    }
}

/// An assembled input: a system prompt, a history message list and a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ContextAssembly {
    /// The leading system messages and packs, joined by a blank line.
    pub system_prompt: String,
    /// Everything between the system prompt and the user message, in order.
    pub history: Vec<ChatMessage>,
    /// The last `user` message, or the input's fallback.
    pub user_message: String,
    /// What was fetched, compacted and counted.
    pub report: AssemblyReport,
}

impl ContextAssembly {
    /// The messages to send: the system prompt (when not empty), the history, the user message
    /// (when not empty). `report.total_tokens` is the exact count of exactly these.
    pub fn messages(&self) -> Vec<ChatMessage> {
        assembled_messages(&self.system_prompt, &self.history, &self.user_message, false, false)
    }
}

/// The one rendering of the three parts into messages. An empty system prompt or user message is
/// left out unless `keep_system` / `keep_user` say a pack will fill it (to measure its overhead
/// before packs are filled).
pub(super) fn assembled_messages(
    system: &str,
    history: &[ChatMessage],
    user: &str,
    keep_system: bool,
    keep_user: bool,
) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(history.len() + 2);
    if keep_system || !system.is_empty() {
        messages.push(ChatMessage::system(system));
    }
    messages.extend(history.iter().cloned());
    if keep_user || !user.is_empty() {
        messages.push(ChatMessage::user(user));
    }
    messages
}

/// A declaration compiled for running: parsed templates, resolved packs and ratios.
#[derive(Debug)]
pub(super) struct Compiled {
    pub name: String,
    pub policy: Option<Policy>,
    pub directives: Vec<Directive>,
    /// One per `context` directive, in order.
    pub packs: Vec<PackDef>,
}

#[derive(Debug)]
pub(super) enum Directive {
    Text { role: Role, template: Template, label: String },
    Pack { pack: usize },
    History,
}

#[derive(Debug)]
pub(super) struct PackDef {
    pub name: String,
    pub ratio: f64,
    pub placement: PackPlacement,
    pub is_context: bool,
}

pub(super) struct RetrieverEntry {
    pub decl: RetrieverDecl,
    pub query: Template,
    pub limit: usize,
    /// `None` when the retrievers are given to each assembly
    /// ([`ContextAssemblerBuilder::retrievers_at_assembly`]).
    pub implementation: Option<Arc<dyn RetrieverDyn>>,
}

/// Assembles declared contexts into budgeted messages. Built once, used concurrently.
pub struct ContextAssembler {
    pub(super) counter: TokenCounter,
    pub(super) contexts: BTreeMap<String, Compiled>,
    pub(super) retrievers: BTreeMap<String, RetrieverEntry>,
    pub(super) compactors: CompactorRegistry,
    pub(super) summarizers: BTreeMap<String, Summarizer>,
    pub(super) default_policy: Policy,
}

impl std::fmt::Debug for ContextAssembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextAssembler")
            .field("counter", &self.counter.backend_id())
            .field("contexts", &self.contexts.keys().collect::<Vec<_>>())
            .field("retrievers", &self.retrievers.keys().collect::<Vec<_>>())
            .field("compactors", &self.compactors)
            .field("summarizers", &self.summarizers.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Collects the implementations an [`EngineSpec`] needs, then validates everything at once.
pub struct ContextAssemblerBuilder {
    spec: EngineSpec,
    counter: TokenCounter,
    retrievers: BTreeMap<String, Arc<dyn RetrieverDyn>>,
    compactors: CompactorRegistry,
    summarizers: BTreeMap<String, Summarizer>,
    /// Registrations refused (a built-in or repeated name), reported by `build` with the rest.
    refused: Vec<CompactorError>,
    /// Whether the retrievers come with each assembly instead of being registered here.
    retrievers_at_assembly: bool,
}

// By name, as `ContextAssembler` prints: the retrievers and summarizers are user code.
impl std::fmt::Debug for ContextAssemblerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextAssemblerBuilder")
            .field("counter", &self.counter.backend_id())
            .field("contexts", &self.spec.contexts.iter().map(|c| c.name.as_str()).collect::<Vec<_>>())
            .field("retrievers", &self.retrievers.keys().collect::<Vec<_>>())
            .field("compactors", &self.compactors)
            .field("summarizers", &self.summarizers.keys().collect::<Vec<_>>())
            .field("refused", &self.refused)
            .field("retrievers_at_assembly", &self.retrievers_at_assembly)
            .finish()
    }
}

impl ContextAssemblerBuilder {
    /// Registers the implementation of the declared retriever `name`.
    #[must_use]
    pub fn retriever(mut self, name: impl Into<String>, retriever: Arc<dyn RetrieverDyn>) -> Self {
        self.retrievers.insert(name.into(), retriever);
        self
    }

    /// Registers a compactor under `name` (declare it in [`EngineSpec::compactors`] too). A
    /// built-in name, a name registered before or not a plain name is reported by
    /// [`build`](Self::build).
    #[must_use]
    pub fn compactor(mut self, name: impl Into<String>, compactor: Arc<dyn Compactor>) -> Self {
        let name = name.into();
        if self.summarizers.contains_key(&name) {
            self.refused.push(CompactorError::Duplicate(name));
        } else if let Err(refused) = self.compactors.register_arc(name, compactor) {
            self.refused.push(refused);
        }
        self
    }

    /// Registers a model summariser under `name` (declare it in [`EngineSpec::compactors`] too);
    /// the same naming rules as [`compactor`](Self::compactor).
    #[must_use]
    pub fn summarizer(mut self, name: impl Into<String>, summarizer: Summarizer) -> Self {
        let name = name.into();
        if BUILTIN_COMPACTORS.contains(&name.as_str()) {
            self.refused.push(CompactorError::Builtin(name));
        } else if !is_language_name(&name) {
            self.refused.push(CompactorError::BadName(name));
        } else if self.compactors.contains(&name) || self.summarizers.contains_key(&name) {
            self.refused.push(CompactorError::Duplicate(name));
        } else {
            self.summarizers.insert(name, summarizer);
        }
        self
    }

    /// Uses `registry` as the user compactors (replacing any registered before): how a pipeline
    /// hands its contexts the compactors its `LoadOptions` registered.
    #[must_use]
    pub fn compactors(mut self, registry: CompactorRegistry) -> Self {
        self.compactors = registry;
        self
    }

    /// The retrievers are not registered here but given to each assembly
    /// ([`ContextAssembler::assemble_with`]): one implementation answers every declared
    /// retriever, each request naming its retriever. How a pipeline's model step assembles a
    /// context with the retriever of the run's environment.
    #[must_use]
    pub fn retrievers_at_assembly(mut self) -> Self {
        self.retrievers_at_assembly = true;
        self
    }

    /// Validates the spec ([`validate_spec`]) and the registrations, and compiles the templates.
    pub fn build(self) -> Result<ContextAssembler, EngineError> {
        let spec = &self.spec;
        let mut issues = validate_spec(spec);
        for (k, decl) in spec.retrievers.iter().enumerate() {
            if !self.retrievers_at_assembly && !self.retrievers.contains_key(&decl.name) {
                issues.push(
                    ConfigIssue::new(
                        Code::EngineRetrieverNotRegistered,
                        FieldPath::root().key("retrievers").index(k).key("name"),
                        format!("retriever `{}` is declared but no implementation is registered", decl.name),
                    )
                    .with_help(format!("call `.retriever(\"{}\", …)` on the builder", decl.name)),
                );
            }
        }
        for name in self.retrievers.keys() {
            if !spec.retrievers.iter().any(|r| &r.name == name) {
                issues.push(
                    ConfigIssue::new(
                        Code::EngineUndeclaredRetriever,
                        FieldPath::root().key("retrievers"),
                        format!("a retriever is registered as `{name}` but not declared"),
                    )
                    .with_help("declare it in `retrievers` with its query and limit"),
                );
            }
        }
        let registered = || self.compactors.user_names().chain(self.summarizers.keys().map(String::as_str));
        for (k, name) in spec.compactors.iter().enumerate() {
            if !self.compactors.contains(name) && !self.summarizers.contains_key(name) {
                let mut help = format!("call `.compactor(\"{name}\", …)` (or `.summarizer`) on the builder");
                if let Some(near) = did_you_mean(name, registered()) {
                    help = format!("did you mean `{near}`, which is registered? Or {help}");
                }
                issues.push(
                    ConfigIssue::new(
                        Code::EngineCompactorNotRegistered,
                        FieldPath::root().key("compactors").index(k),
                        format!("compactor `{name}` is declared but not registered"),
                    )
                    .with_help(help),
                );
            }
        }
        for refused in &self.refused {
            let name = refused.name();
            let path = match spec.compactors.iter().position(|c| c == name) {
                Some(k) => FieldPath::root().key("compactors").index(k),
                None => FieldPath::root().key("compactors"),
            };
            issues.push(
                ConfigIssue::new(refused.code(), path, format!("cannot register compactor `{name}`: {refused}"))
                    .with_help("register each compactor once, under a name of its own that is not built in"),
            );
        }
        ConfigIssues::check("context engine", issues)?;

        let mut retrievers = BTreeMap::new();
        for decl in &spec.retrievers {
            let implementation = self.retrievers.get(&decl.name).cloned();
            let (true, Ok(query)) =
                (implementation.is_some() || self.retrievers_at_assembly, Template::parse(&decl.query))
            else {
                continue; // unreachable after validation; skipping keeps this panic-free
            };
            let limit = usize::try_from(decl.limit).unwrap_or(1).max(1);
            let entry = RetrieverEntry { decl: decl.clone(), query, limit, implementation };
            retrievers.insert(decl.name.clone(), entry);
        }
        let mut contexts = BTreeMap::new();
        for decl in &spec.contexts {
            let ratios = pack_ratios(decl);
            let mut directives = Vec::with_capacity(decl.messages.len());
            let mut packs = Vec::new();
            for (j, message) in decl.messages.iter().enumerate() {
                let text = |role: Role, content: &str| {
                    let label = format!("messages[{j}].content {content:?}");
                    Template::parse(content).ok().map(|template| Directive::Text { role, template, label })
                };
                let directive = match message {
                    MessageSpec::System { content } => text(Role::System, content),
                    MessageSpec::User { content } => text(Role::User, content),
                    MessageSpec::Assistant { content } => text(Role::Assistant, content),
                    MessageSpec::History => Some(Directive::History),
                    MessageSpec::Context(insert) => {
                        let pack = packs.len();
                        packs.push(PackDef {
                            name: insert.name.clone(),
                            ratio: ratios.get(pack).copied().unwrap_or(0.0),
                            placement: insert.placement,
                            is_context: spec.contexts.iter().any(|c| c.name == insert.name),
                        });
                        Some(Directive::Pack { pack })
                    }
                };
                directives.extend(directive);
            }
            let policy = decl.policy.as_ref().map(Policy::from_spec);
            contexts.insert(decl.name.clone(), Compiled { name: decl.name.clone(), policy, directives, packs });
        }
        Ok(ContextAssembler {
            counter: self.counter,
            contexts,
            retrievers,
            compactors: self.compactors,
            summarizers: self.summarizers,
            default_policy: Policy::default(),
        })
    }
}

impl ContextAssembler {
    /// A builder for `spec`, counting with `counter` (the target model's tokenizer and chat format).
    pub fn builder(spec: EngineSpec, counter: TokenCounter) -> ContextAssemblerBuilder {
        ContextAssemblerBuilder {
            spec,
            counter,
            retrievers: BTreeMap::new(),
            compactors: CompactorRegistry::new(),
            summarizers: BTreeMap::new(),
            refused: Vec::new(),
            retrievers_at_assembly: false,
        }
    }

    /// The counter assemblies are measured with.
    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// Whether the declarations name any retriever (a pipeline then needs one to assemble).
    pub fn has_retrievers(&self) -> bool {
        !self.retrievers.is_empty()
    }
}
