//! The Restate service: a virtual object keyed by conversation whose `ask` handler runs the
//! pipeline one journaled step at a time.

use std::sync::Arc;
use std::time::Duration;

use restate_sdk::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::net::TcpListener;

use crate::error::CtxError;
use crate::llm::ModelError;
use crate::pipeline::{PipelineError, Snapshot};
use crate::state::PipelineState;

use super::steps::{StepRecord, StepRunner};

/// The service name the object is registered under (`/<SERVICE_NAME>/<conversation>/ask` on the
/// engine's ingress).
pub const SERVICE_NAME: &str = "CtxPipeline";

/// The key of the object state that holds the conversation's [`PipelineState`].
const STATE_KEY: &str = "state";

/// The input of `ask`: the next question of the conversation. A client posts it as JSON to the
/// engine's ingress, at `/<SERVICE_NAME>/<conversation>/ask`:
///
/// ```
/// use ctx::durable::{Ask, SERVICE_NAME};
///
/// let ingress = "http://127.0.0.1:8080";
/// let url = format!("{ingress}/{SERVICE_NAME}/alice/ask");
/// let body = serde_json::to_string(&Ask::new("How is the invoice total computed?"))?;
/// assert_eq!(url, "http://127.0.0.1:8080/CtxPipeline/alice/ask");
/// assert_eq!(body, r#"{"question":"How is the invoice total computed?"}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Ask {
    /// The question.
    pub question: String,
}

impl Ask {
    /// The input asking `question`.
    pub fn new(question: impl Into<String>) -> Self {
        Ask { question: question.into() }
    }
}

/// The output of `ask`: the state the run ended with and every step's report, as an in-process
/// [`Pipeline::run`](crate::pipeline::Pipeline::run) returns them (reports serialised).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The final state (also kept as the conversation's state).
    pub state: PipelineState,
    /// Every step's [`StepReport`](crate::pipeline::StepReport), in order.
    pub reports: Vec<Value>,
}

/// A pipeline served as the Restate virtual object [`SERVICE_NAME`], keyed by conversation.
///
/// Handlers: `ask` (exclusive: one run per conversation at a time) runs a question and keeps the
/// final state; `state` (shared) reads the conversation's state; `clear` forgets it.
#[derive(Clone)]
pub struct PipelineObject {
    steps: Arc<dyn StepRunner>,
}

impl std::fmt::Debug for PipelineObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PipelineObject").field("pipeline", &self.steps.name()).finish()
    }
}

impl PipelineObject {
    /// Serves `steps` (usually a [`DurableSteps`](super::DurableSteps)).
    pub fn new(steps: impl StepRunner) -> Self {
        PipelineObject { steps: Arc::new(steps) }
    }

    /// The Restate endpoint serving this object, to bind more services to or to serve another
    /// way (for example with `HttpServer::serve_with_cancel`).
    pub fn endpoint(self) -> Endpoint {
        Endpoint::builder().bind(self).build()
    }

    /// Serves the object over HTTP/2 on `listener` until the process gets Ctrl-C (SIGINT).
    /// Register the listener's URL with the engine (`POST /deployments` on its admin API).
    pub async fn serve(self, listener: TcpListener) {
        HttpServer::new(self.endpoint()).serve(listener).await;
    }
}

/// A step that failed on something another attempt may fix (the model server unreachable, rate
/// limited, a 5xx) is retried by the engine with its retry policy; every other error is final:
/// the run fails and the conversation keeps its state.
fn handler_error(error: CtxError) -> HandlerError {
    if is_transient(&error) { HandlerError::from(error) } else { TerminalError::new(error.to_string()).into() }
}

/// Whether the engine should try the step again: a model call that failed in a way another
/// attempt may not (after the client's own retries, judged by the last attempt's error).
pub(super) fn is_transient(error: &CtxError) -> bool {
    let model = |e: &ModelError| e.root().is_retryable();
    match error {
        CtxError::Model(e) => model(e),
        CtxError::Pipeline(PipelineError::Model { source, .. }) => model(source),
        _ => false,
    }
}

#[restate_sdk::object(
    name = "CtxPipeline",
    invocation_retry_policy(initial_interval = "100ms", max_interval = "2s", factor = 2.0)
)]
impl PipelineObject {
    /// Runs `question` in the conversation named by the object key, one journaled step at a time,
    /// and keeps the final state as the conversation's.
    #[handler]
    async fn ask(&self, ctx: ObjectContext<'_>, ask: Json<Ask>) -> HandlerResult<Json<RunOutcome>> {
        let kept = ctx.get::<Json<PipelineState>>(STATE_KEY).await?.map(Json::into_inner);
        let mut snapshot = self.steps.start(self.steps.follow_up(kept.as_ref(), ask.into_inner().question));
        let bound = self.steps.step_bound();
        let mut reports = Vec::new();
        while !snapshot.is_finished() {
            if reports.len() as u64 >= bound {
                let error = PipelineError::StepBoundExceeded { pipeline: self.steps.name().to_owned(), bound };
                return Err(TerminalError::new(error.to_string()).into());
            }
            let name = format!("{} #{}", snapshot.next_step, reports.len());
            let record = self.journaled_step(&ctx, snapshot, name).await?;
            reports.push(record.report);
            snapshot = record.snapshot;
        }
        ctx.set(STATE_KEY, Json(snapshot.state.clone()));
        Ok(Json(RunOutcome { state: snapshot.state, reports }))
    }

    /// The conversation's state, if it answered a question.
    #[handler]
    async fn state(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Option<PipelineState>>> {
        Ok(Json(ctx.get::<Json<PipelineState>>(STATE_KEY).await?.map(Json::into_inner)))
    }

    /// Forgets the conversation's history and variables.
    #[handler]
    async fn clear(&self, ctx: ObjectContext<'_>) -> HandlerResult<()> {
        ctx.clear(STATE_KEY);
        Ok(())
    }
}

impl PipelineObject {
    /// One step as a journaled action: performed once, its record replayed ever after.
    async fn journaled_step(
        &self,
        ctx: &ObjectContext<'_>,
        snapshot: Snapshot,
        name: String,
    ) -> HandlerResult<StepRecord> {
        let steps = Arc::clone(&self.steps);
        let record = ctx
            .run(|| async move { steps.step(&snapshot).await.map(Json).map_err(handler_error) })
            .retry_policy(step_retry_policy())
            .name(name)
            .await?;
        Ok(record.into_inner())
    }
}

/// Retries of a step whose error may pass: quick at first (a model server restarting), then at
/// most every 10 s; the step is never given up while the engine keeps the invocation.
fn step_retry_policy() -> RunRetryPolicy {
    RunRetryPolicy::new()
        .initial_delay(Duration::from_millis(100))
        .exponentiation_factor(2.0)
        .max_delay(Duration::from_secs(10))
}
