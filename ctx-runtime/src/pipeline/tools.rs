//! The tools of `agent` steps: what the caller plugs in to run the calls the model requests.
//!
//! The step hands each call to [`ToolHandlers::call`] with the budget the turn ledger gives it
//! (tokens its result may use, after the conversation and every earlier call and result of the
//! turn). A handler returns a [`ToolOutput`]: ranked documents, which the ledger packs
//! (de-duplicated by id across the turn, whole documents first, the one that does not fit cut at
//! a token boundary), or a text, which is cut at a token boundary to what is left. Either way a
//! result never takes more than its budget, so a handler that ignores the budget cannot make a
//! request overflow.

use std::future::Future;

use serde::de::DeserializeOwned;

use crate::error::CtxError;
use crate::state::PipelineState;
use crate::turn::{CallBudget, RankedDocument};

use super::error::{BoxError, PipelineError, StepFuture};

/// Runs the tool calls of `agent` steps, implemented with a plain `async fn` (its future must be
/// `Send`, which the trait's `impl Future + Send` makes the compiler check where it is written).
/// A [`StepEnv`](super::StepEnv) holds it as [`dyn ToolHandlersDyn`](ToolHandlersDyn).
///
/// ```
/// use ctx::pipeline::{ToolHandlers, ToolOutput, ToolRequest};
/// use ctx::pipeline::BoxError;
/// use ctx::turn::RankedDocument;
///
/// #[derive(serde::Deserialize)]
/// struct Search { query: String }
///
/// struct Docs;
///
/// impl ToolHandlers for Docs {
///     async fn call(&self, _step_id: &str, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
///         let args: Search = request.args()?;
///         // A real handler asks its retriever for at most `request.budget.content_tokens`.
///         Ok(ToolOutput::Documents(vec![RankedDocument::new("kb-1", format!("About {}", args.query))]))
///     }
/// }
/// ```
pub trait ToolHandlers: Send + Sync {
    /// Runs tool `request.name` for agent step `step_id`. Any error converts with `?` (an I/O
    /// error, a client's, a [`CtxError`]): the step fails with `AGENT_TOOL_FAILED`, naming the
    /// step, the tool and the call once; an error of [`ToolRequest::args`] is instead told to
    /// the model, which may call again.
    fn call(
        &self,
        step_id: &str,
        request: ToolRequest<'_>,
    ) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send;
}

crate::dyn_twin::dyn_twin! {
    /// [`ToolHandlers`] as a trait object (`&dyn ToolHandlersDyn`), as a
    /// [`StepEnv`](super::StepEnv) holds it. Every `ToolHandlers` implements it; implement
    /// `ToolHandlers`, never this. `dyn ToolHandlersDyn` is a `ToolHandlers` too.
    pub trait ToolHandlersDyn: Send + Sync {
        impl<T: ToolHandlers>;
        async fn call(&self, step_id: &str, request: ToolRequest<'_>) -> Result<ToolOutput, BoxError>
            => dyn_call -> StepFuture<'a, ToolOutput>;
    }
}

/// One tool call the model requested, with what its result may use.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolRequest<'a> {
    /// The tool (function) name, one the step declares.
    pub name: &'a str,
    /// The call id the result answers.
    pub call_id: &'a str,
    /// The arguments, as the exact JSON text the model produced.
    pub arguments: &'a str,
    /// From the turn ledger: `content_tokens` is what this call's result may hold (a larger one
    /// is cut), `breakdown` where the rest of the turn went.
    pub budget: CallBudget,
    /// The state as the step found it.
    pub state: &'a PipelineState,
    /// The agent step's id.
    pub step_id: &'a str,
}

impl ToolRequest<'_> {
    /// The arguments parsed as `T`; an error names the step, the tool, the call and what in the
    /// arguments did not fit `T`. Returned from [`ToolHandlers::call`], it does not fail the
    /// step: the call is answered with the reason, so the model can call again within its limit.
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, CtxError> {
        serde_json::from_str(self.arguments).map_err(|e| {
            PipelineError::ToolArguments {
                step: self.step_id.to_owned(),
                tool: self.name.to_owned(),
                call_id: self.call_id.to_owned(),
                reason: e.to_string(),
            }
            .into()
        })
    }
}

/// What a tool returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOutput {
    /// Retrieved documents, best first: packed by the turn ledger (each id once per turn, whole
    /// documents first, then the best one that does not fit, cut at a token boundary).
    Documents(Vec<RankedDocument>),
    /// A text, cut at a token boundary to what the call may use (with a trace event) when larger.
    Text(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes::ErrorCode;
    use crate::tokens::{Encoding, TokenCounter};
    use crate::turn::{TurnBudgetConfig, TurnLedger};

    #[derive(Debug, serde::Deserialize)]
    struct Search {
        query: String,
    }

    fn request<'a>(state: &'a PipelineState, arguments: &'a str) -> ToolRequest<'a> {
        let ledger =
            TurnLedger::new(TurnBudgetConfig::new(1_000, 4_000), TokenCounter::for_encoding(Encoding::Cl100kBase))
                .unwrap();
        let call = crate::chat::ToolCall::new("c1", "search", arguments);
        ToolRequest {
            name: "search",
            call_id: "c1",
            arguments,
            budget: ledger.call_budget(&call).unwrap(),
            state,
            step_id: "answer",
        }
    }

    #[test]
    fn typed_arguments_parse_and_a_mismatch_names_step_tool_and_call() {
        let state = PipelineState::new("q");
        let ok: Search = request(&state, r#"{"query":"keys"}"#).args().unwrap();
        assert_eq!(ok.query, "keys");
        let err = request(&state, r#"{"q":1}"#).args::<Search>().unwrap_err();
        assert_eq!(err.code(), "AGENT_TOOL_ARGUMENTS");
        let text = err.to_string();
        for part in ["`answer`", "`search`", "`c1`", "missing field `query`"] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
    }
}
