//! What each step reports: [`StepDetail`], by kind, with the reports of the model steps
//! ([`CallReport`], [`AgentReport`] and its [`ModelRequestReport`]s, each request a
//! [`SentRequest`]) and of `fetch_node_texts`
//! ([`FetchReport`]). The step actions (the files beside this one) write them; the driver, the
//! trace and the run report read them.

use serde::Serialize;

use crate::budget::BudgetReport;
use crate::engine::AssemblyReport;
use crate::llm::{Spend, Usage};
use crate::negotiate::NegotiationMeta;
use crate::pipeline::Transition;
use crate::report::LazyAnatomy;
use crate::turn::LedgerBreakdown;

/// What a step did, by kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub enum StepDetail {
    /// `search_nodes`: the query sent and the hits kept.
    SearchNodes {
        /// The query (`user_question_en`, or `user_question` when that is empty).
        query: String,
        /// How many hits were kept (after `top_k` and de-duplication).
        hits: usize,
    },
    /// `expand_dependency_tree`: the dependency ids added, in the order added.
    ExpandDependencyTree {
        /// The ids added to `search_results`.
        added: Vec<String>,
    },
    /// `fetch_node_texts`.
    FetchNodeTexts(FetchReport),
    /// `manage_context_budget`: the budget module's report (also emitted as the
    /// `MANAGE_CONTEXT_BUDGET` trace event).
    ManageContextBudget(BudgetReport),
    /// `call_model`: what was sent and received.
    CallModel(CallReport),
    /// `agent`: every model request and tool call of the turn, and how the loop ended.
    Agent(AgentReport),
    /// `loop_guard`.
    LoopGuard {
        /// The loops allowed so far, after this step.
        count: u32,
        /// The limit from the settings.
        limit: u64,
        /// Whether it took `on_allow`.
        allowed: bool,
    },
    /// `set_variables`: the targets set, in rule order.
    SetVariables {
        /// The fields and variables set.
        set: Vec<String>,
    },
    /// `custom`: the outcome returned.
    Custom {
        /// The outcome name.
        outcome: String,
    },
}

/// The transition and the detail of a step that succeeded.
pub(crate) type Done = (Transition, StepDetail);

/// One model request a step sent, as the step reports it: its exact prompt, the output limit
/// and how it was negotiated, what the server said of it, its parts and its cost. A
/// `call_model` step's [`CallReport`] and each request of an `agent` step
/// ([`ModelRequestReport`]) hold one as `request`; serialised, its fields stand beside theirs
/// (`{"prompt_tokens": …, "max_output_tokens": …, …, "context_window": …}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SentRequest {
    /// The exact prompt tokens (messages, the tool schemas when offered, and chat overhead), as
    /// the guard counted them before the request left.
    pub prompt_tokens: usize,
    /// The output limit sent (the negotiated one).
    pub max_output_tokens: usize,
    /// How the output limit was negotiated: the exact input, the limit requested and granted,
    /// whether it was reduced and how much history was dropped for the floor.
    pub negotiation: NegotiationMeta,
    /// The server's usage, when reported (with the prompt-cache reads and writes, when the
    /// provider reports them).
    pub usage: Option<Usage>,
    /// Why generation stopped, when reported.
    pub finish_reason: Option<String>,
    /// The request cut into its parts, adding up to `prompt_tokens` (cut when first read).
    pub anatomy: LazyAnatomy,
    /// What the request cost at the model's price, when it has one.
    pub spend: Option<Spend>,
}

/// What a `call_model` step sent and received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CallReport {
    /// The request: its exact prompt, output limit, negotiation, usage, parts and cost.
    #[serde(flatten)]
    pub request: SentRequest,
    /// The model's window.
    pub context_window: usize,
    /// History messages sent.
    pub history_messages: usize,
    /// History messages dropped, oldest first: those over `max_history_tokens`, plus those
    /// negotiation dropped to make room for the output floor
    /// (`request.negotiation.history_messages_dropped`).
    pub history_removed: usize,
    /// What the trim to `max_history_tokens` dropped (`settings.history_trim`, the tokens before
    /// and after, each message), when it dropped something; the messages negotiation dropped for
    /// the output floor are in `request.negotiation`.
    pub history_trim: Option<crate::history::HistoryTrimReport>,
    /// For a step that assembles a declared context (`context: NAME`): what the assembly
    /// fetched, compacted and counted, pack by pack.
    pub context: Option<AssemblyReport>,
    /// The fetched texts this step found waiting in `node_texts` and appended to the context
    /// before rendering it, as `manage_context_budget` appends them (its report, under this
    /// step's id); `None` when no text was waiting or the step does not render the context.
    pub evidence: Option<BudgetReport>,
}

/// How an agent step's loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentEnd {
    /// The model answered while it could still call tools.
    Answered,
    /// `max_tool_calls` calls ran; the model answered a request without tools.
    ToolLimitReached,
    /// The turn's budget could not hold the model's last batch of calls; it was left out and the
    /// model answered a request without tools.
    BudgetExhausted,
    /// The next request with tools could have passed a spend cap, and the same request without
    /// tools fitted: the model was asked for its answer without them.
    SpendCapReached,
}

impl AgentEnd {
    /// How the loop ended, in words, for traces and reports (`answered at max_tool_calls`).
    pub fn describe(self) -> &'static str {
        match self {
            AgentEnd::Answered => "answered",
            AgentEnd::ToolLimitReached => "answered at max_tool_calls",
            AgentEnd::BudgetExhausted => "answered when the turn budget could not hold more calls",
            AgentEnd::SpendCapReached => "answered before a spend cap",
        }
    }
}

/// One model request of an agent step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ModelRequestReport {
    /// The request: its exact prompt, output limit, negotiation, usage, parts and cost.
    #[serde(flatten)]
    pub request: SentRequest,
    /// Whether the tools were offered.
    pub tools_offered: bool,
    /// How many tool calls the reply requested.
    pub tool_calls_requested: usize,
}

/// What became of one tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallKind {
    /// The handler ran.
    Handled,
    /// The model named a tool the step does not declare; the result says so (it counts as a call).
    UnknownTool,
    /// The handler found the arguments did not fit the tool's type
    /// ([`ToolRequest::args`](crate::pipeline::ToolRequest::args)); the result says why, so the
    /// model may call again (it counts as a call).
    InvalidArguments,
    /// Beyond `max_tool_calls`: answered with
    /// [`TOOL_LIMIT_MESSAGE`](crate::pipeline::TOOL_LIMIT_MESSAGE), nothing ran.
    OverLimit,
}

/// One tool call of an agent step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolCallReport {
    /// The tool.
    pub name: String,
    /// The call id.
    pub call_id: String,
    /// What became of it.
    pub kind: ToolCallKind,
    /// Tokens the turn had left before the call.
    pub available: usize,
    /// Tokens the result's content could use (after its frame and the rest of its batch).
    pub content_budget: usize,
    /// The exact cost of the result message in the transcript.
    pub tokens: usize,
    /// Documents included, in order.
    pub documents_included: Vec<String>,
    /// Documents skipped because the turn already held them.
    pub duplicates_skipped: Vec<String>,
    /// Documents that did not fit.
    pub left_out: Vec<String>,
    /// Whether the result (a text, or a document) was cut at a token boundary.
    pub truncated: bool,
}

/// What an agent step sent, ran and received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AgentReport {
    /// Every model request, in order (at most `max_tool_calls + 1`).
    pub requests: Vec<ModelRequestReport>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallReport>,
    /// The turn ledger at the end.
    pub ledger: LedgerBreakdown,
    /// The turn's budget.
    pub turn_budget_tokens: usize,
    /// The exact cost of the tool schemas sent with each request that offers tools.
    pub tool_schema_tokens: usize,
    /// The model's window.
    pub context_window: usize,
    /// History messages sent.
    pub history_messages: usize,
    /// History messages dropped (over `max_history_tokens`, or for the output floor).
    pub history_removed: usize,
    /// What the trim to `max_history_tokens` dropped, when it dropped something (see
    /// [`CallReport::history_trim`]).
    pub history_trim: Option<crate::history::HistoryTrimReport>,
    /// How the loop ended.
    pub end: AgentEnd,
    /// For a step that assembles a declared context (`context: NAME`): what the assembly
    /// fetched, compacted and counted, pack by pack.
    pub context: Option<AssemblyReport>,
    /// The fetched texts this step found waiting in `node_texts` and appended to the context
    /// before rendering it, as `manage_context_budget` appends them (its report, under this
    /// step's id); `None` when no text was waiting or the step does not render the context.
    pub evidence: Option<BudgetReport>,
}

/// Why a hit's text was not fetched. Serialised in snake case (`not_found`,
/// `{"over_budget":{"remaining":…}}`), as every other name a report writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The store has no text for it.
    NotFound,
    /// Its text is empty or only whitespace.
    Empty,
    /// Its text has more tokens than the `remaining` budget, and either `remaining` is below
    /// [`MIN_TRUNCATED_TOKENS`](crate::pipeline::MIN_TRUNCATED_TOKENS) or the start that fits is only whitespace, so not even a
    /// truncated start of it was kept.
    OverBudget {
        /// The budget left when it was tried.
        remaining: usize,
    },
    /// The budget was used up before its turn.
    BudgetExhausted,
}

/// A hit whose text was not fetched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SkippedNode {
    /// The node id.
    pub id: String,
    /// Why.
    pub reason: SkipReason,
}

/// A hit whose text was cut at a token boundary to fit what was left of the evidence budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TruncatedNode {
    /// The node id.
    pub id: String,
    /// The exact token count of the whole text.
    pub original_tokens: usize,
    /// The exact token count of the prefix kept in `node_texts`.
    pub kept_tokens: usize,
}

/// What `fetch_node_texts` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FetchReport {
    /// The ids whose texts are now in `node_texts`, in rank order (truncated ones included).
    pub fetched: Vec<String>,
    /// The sum of their token counts (each text counted on its own, as kept).
    pub tokens: usize,
    /// The evidence budget (`evidence_tokens`).
    pub budget: usize,
    /// The fetched hits whose text was cut to fit, in rank order.
    pub truncated: Vec<TruncatedNode>,
    /// The hits left out, in rank order.
    pub skipped: Vec<SkippedNode>,
}
