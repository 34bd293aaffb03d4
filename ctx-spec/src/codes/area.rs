//! The areas codes are grouped by (`ctx explain` lists them so): a leaf of the registry, which
//! `registry.rs` names for every code and `mod.rs` answers [`Code::area`](super::Code::area) with.

use std::fmt;

/// The part of ctx a code belongs to. A code's string does not always start with its area's name
/// (the strings predate the registry and never change); [`Code::area`](super::Code::area) is the
/// reliable grouping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Area {
    /// The step graph: ids, transitions, reachability, cycles.
    Graph,
    /// The values of one step: search, fetch, sampling parameters, sources, templates, loops.
    Step,
    /// `set_variables` rules.
    Variables,
    /// Prompts: declared, provided at load time, read from files.
    Prompt,
    /// `agent` steps and their tools.
    Agent,
    /// Settings and configuration files.
    Settings,
    /// The model's configuration: window, encoding, model files, clients.
    Model,
    /// The budget contract every model step is checked against.
    Contract,
    /// `manage_context_budget` and its compaction rules and compactors.
    Budget,
    /// Pipeline files in YAML.
    Yaml,
    /// Token counting and chat templates.
    Tokens,
    /// Running a pipeline.
    Run,
    /// Calls to a model server.
    Client,
    /// Output negotiation and history trimming.
    Negotiation,
    /// Turn budgets of tool results.
    Turn,
    /// The context engine (`context_engine!`).
    Engine,
    /// Retrieval (the BM25 index).
    Retrieve,
    /// Data declared or produced that nothing consumes: evidence no request carries, hits no
    /// step fetches, a reply replaced unread, a variable, prompt, model, context or setting
    /// nothing uses.
    Dataflow,
}

impl Area {
    /// The area's name in lower case, as `ctx explain` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Area::Graph => "graph",
            Area::Step => "step",
            Area::Variables => "variables",
            Area::Prompt => "prompt",
            Area::Agent => "agent",
            Area::Settings => "settings",
            Area::Model => "model",
            Area::Contract => "contract",
            Area::Budget => "budget",
            Area::Yaml => "yaml",
            Area::Tokens => "tokens",
            Area::Run => "run",
            Area::Client => "client",
            Area::Negotiation => "negotiation",
            Area::Turn => "turn",
            Area::Engine => "engine",
            Area::Retrieve => "retrieve",
            Area::Dataflow => "dataflow",
        }
    }
}

impl fmt::Display for Area {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
