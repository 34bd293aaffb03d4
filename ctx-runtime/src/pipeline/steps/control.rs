//! `loop_guard` and `custom`: steps that only choose where to go (and, for `custom`, whatever
//! the caller's handler does).

use crate::error::CtxError;
use crate::pipeline::Transition;
use crate::pipeline::definition::{CustomSpec, LoopGuardSpec};
use crate::pipeline::env::{CustomSteps, StepEnv, need};
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;

use super::report::{Done, StepDetail};

/// `on_allow` (transition 0) while `state.loop_counts[step] < limit`, counting the loop;
/// `on_deny` (transition 1) once the limit is reached. The limit is the setting named by
/// `max_turn_loops_from_settings`. Counts belong to the run: start each new question with a
/// fresh state (or cleared `loop_counts`).
pub(crate) fn loop_guard(
    p: &LoadedPipeline,
    step: &str,
    spec: &LoopGuardSpec,
    state: &mut PipelineState,
) -> Result<Done, CtxError> {
    // Load-time validation guarantees the setting exists; a missing one allows nothing.
    let limit = p.setting(&spec.max_turn_loops_from_settings).unwrap_or(0);
    let count = state.loop_counts.get(step).copied().unwrap_or(0);
    let allowed = u64::from(count) < limit && count < u32::MAX;
    let count = if allowed { count + 1 } else { count };
    if allowed {
        state.loop_counts.insert(step.to_owned(), count);
    }
    // A loop taken or refused is a decision a person reads in the log, as the budget's is.
    tracing::info!(
        target: "ctx::pipeline",
        step,
        count,
        limit,
        allowed,
        "loop_guard `{step}`: {}",
        if allowed { format!("loop {count} of {limit}, on_allow") } else { format!("{limit} loop(s) used, on_deny") }
    );
    let transition = if allowed { Transition::OnAllow } else { Transition::OnDeny };
    Ok((transition, StepDetail::LoopGuard { count, limit, allowed }))
}

/// Runs the caller's handler on a copy of the state; keeps the copy only when the returned
/// outcome is declared and `loop_counts` is untouched.
pub(crate) async fn custom(
    step: &str,
    spec: &CustomSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let handler = need(env.custom_backend(), step, "custom", "CustomSteps", "custom")?;
    let mut scratch = state.clone();
    let outcome =
        handler.run(step, &mut scratch).await.map_err(|e| CtxError::from_backend(step, "the custom step", e))?;
    let Some(position) = spec.outcomes.iter().position(|(name, _)| *name == outcome) else {
        let declared = spec.outcomes.iter().map(|(n, _)| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        return Err(PipelineError::UnknownOutcome { step: step.to_owned(), outcome, declared }.into());
    };
    if scratch.loop_counts != state.loop_counts {
        return Err(PipelineError::LoopCountsChanged { step: step.to_owned() }.into());
    }
    *state = scratch;
    Ok((Transition::Outcome(position), StepDetail::Custom { outcome }))
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::codes::ErrorCode;
    use crate::pipeline::testing;

    #[test]
    fn guard_allows_up_to_the_limit_then_denies() {
        let p = testing::loaded(testing::compaction_loop());
        let spec = LoopGuardSpec::new("max_turn_loops", "summarize", "answer");
        let mut state = PipelineState::new("q");
        let mut taken = Vec::new();
        for _ in 0..5 {
            taken.push(loop_guard(&p, "g", &spec, &mut state).unwrap().0);
        }
        // max_turn_loops = 3.
        use Transition::{OnAllow, OnDeny};
        assert_eq!(taken, [OnAllow, OnAllow, OnAllow, OnDeny, OnDeny]);
        assert_eq!(state.loop_counts.get("g"), Some(&3));
        let (_, detail) = loop_guard(&p, "g", &spec, &mut state).unwrap();
        assert_eq!(detail, StepDetail::LoopGuard { count: 3, limit: 3, allowed: false });
        // Another guard counts on its own.
        assert_eq!(loop_guard(&p, "h", &spec, &mut state).unwrap().0, Transition::OnAllow);
    }

    use crate::pipeline::BoxError;

    struct Handler(&'static str, bool);

    impl crate::pipeline::env::CustomSteps for Handler {
        async fn run(&self, step_id: &str, state: &mut PipelineState) -> Result<String, BoxError> {
            state.variables.insert("ran".into(), serde_json::Value::from(step_id));
            if self.1 {
                state.loop_counts.clear();
            }
            Ok(self.0.to_owned())
        }
    }

    fn routes() -> CustomSpec {
        CustomSpec::new(vec![("simple".into(), "answer".into()), ("complex".into(), "search".into())])
    }

    #[tokio::test]
    async fn custom_follows_the_declared_outcome() {
        let h = Handler("complex", false);
        let mut state = PipelineState::new("q");
        let (t, detail) = custom("route", &routes(), &mut state, &StepEnv::builder().custom(&h)).await.unwrap();
        assert_eq!(t, Transition::Outcome(1));
        assert_eq!(detail, StepDetail::Custom { outcome: "complex".into() });
        assert_eq!(state.variables.get("ran"), Some(&serde_json::Value::from("route")));
    }

    #[tokio::test]
    async fn an_undeclared_outcome_is_an_error_and_changes_nothing() {
        let h = Handler("maybe", false);
        let mut state = PipelineState::new("q");
        let before = state.clone();
        let err = custom("route", &routes(), &mut state, &StepEnv::builder().custom(&h)).await.unwrap_err();
        assert_eq!(err.code(), "PIPELINE_UNKNOWN_OUTCOME");
        let text = err.to_string();
        assert!(text.contains("`route`") && text.contains("`maybe`") && text.contains("`simple`, `complex`"), "{text}");
        assert_eq!(state, before);
    }

    #[tokio::test]
    async fn a_handler_may_not_touch_loop_counts() {
        let h = Handler("simple", true);
        let mut state = PipelineState::new("q");
        state.loop_counts.insert("g".into(), 2);
        let before = state.clone();
        let err = custom("route", &routes(), &mut state, &StepEnv::builder().custom(&h)).await.unwrap_err();
        assert_eq!(err.code(), "PIPELINE_LOOP_COUNTS_CHANGED");
        assert_eq!(state, before);
    }

    /// A custom step returns its own error with `?` (no `PipelineError::Backend` to build): the
    /// run fails naming the step once; an error of ctx's own passes through with its code.
    #[tokio::test]
    async fn a_handler_returns_its_own_error_and_the_step_is_named_once() {
        struct Failing(fn() -> BoxError);
        impl crate::pipeline::env::CustomSteps for Failing {
            async fn run(&self, _step_id: &str, _state: &mut PipelineState) -> Result<String, BoxError> {
                std::fs::read_to_string("/nonexistent/ctx-route-table")?;
                Err((self.0)())
            }
        }
        let mut state = PipelineState::new("q");
        let failing = Failing(|| "unreachable".into());
        let err = custom("route", &routes(), &mut state, &StepEnv::builder().custom(&failing)).await.unwrap_err();
        assert_eq!(err.code(), "PIPELINE_BACKEND_FAILED");
        let text = err.to_string();
        assert!(text.starts_with("step `route`: the custom step failed: "), "{text}");
        assert_eq!(text.matches("`route`").count(), 1, "{text}");

        struct Ours;
        impl crate::pipeline::env::CustomSteps for Ours {
            async fn run(&self, step_id: &str, _state: &mut PipelineState) -> Result<String, BoxError> {
                Err(PipelineError::MissingSource { step: step_id.to_owned(), source_name: "tenant".into() }.into())
            }
        }
        let err = custom("route", &routes(), &mut state, &StepEnv::builder().custom(&Ours)).await.unwrap_err();
        assert_eq!(err.code(), "PIPELINE_MISSING_SOURCE");
        assert_eq!(err.to_string().matches("`route`").count(), 1, "{err}");
    }
}
