//! `call_model`: renders the prompt, negotiates the output limit against the exact request,
//! checks the request against the window, calls the model.
//!
//! The request is laid out by the contract's own functions (`contract::render_user_message`,
//! `contract::prompt_messages`), so the prompt the contract measured at load time is the prompt
//! sent here.
//!
//! * Evidence: when the user message renders `context_blocks`, the texts a `fetch_node_texts`
//!   step left in `node_texts` are appended to the context first, as `manage_context_budget`
//!   appends them (`evidence.rs`; [`CallReport::evidence`] says what was appended).
//! * System prompt: the text of `prompt_key`.
//! * User message: each `user_parts` entry's template with its `{}` replaced once, verbatim, by
//!   the source's text (`PipelineState::render_source`); the value is never expanded again, so a
//!   `{}` inside a retrieved text stays as it is. Parts are concatenated in order; a step that
//!   declares none renders the default parts (`DEFAULT_USER_PARTS`: the context, then the
//!   question), as the contract measures them.
//! * Sampling parameters (`temperature`, `top_p`, `stop`, `seed`, `response_format`) are sent
//!   as declared; they do not change the prompt's count.
//! * History (`use_history`): `history_dialog` trimmed oldest-first to `max_history_tokens`
//!   (`history::trim_history`), placed between the system prompt and the user message.
//! * Output limit: negotiated (`negotiate::negotiate_max_output`, flexbox_negotiation.md) from
//!   the step's limit in effect in the contract report (`max_output_tokens`, else `max_tokens`,
//!   else the model's `max_tokens`; lowered when `auto_clamp` clamped it):
//!   `max(floor, min(requested, window − input − margin))`, `input` the exact count of the
//!   request, chat overhead included, and `margin` the settings' `budget_safety_margin_tokens`.
//!   The contract already proves that the budgets leave room for the requested output, so the
//!   limit is only lowered when the state holds more than the budgets (BPE merging across a
//!   template's seams, or a context set by a custom step); when even the floor would not fit,
//!   more of the oldest history is dropped (a tool call with its results), and when none is left
//!   to drop the step fails with the negotiation's error.
//! * With a token sink in the run's environment the reply is streamed to it as it is generated
//!   (`ChatModel::chat_stream`); the request, the report and the state are the same.
//! * The last guard (`contract::guard_request`) counts the exact messages that were negotiated
//!   before anything leaves: a request that would overflow is never sent.
//! * Spend caps (`pipeline::spend`): a request whose worst cost could pass what the run or the
//!   conversation has left is not sent (`PIPELINE_SPEND_CAP_REACHED`); one that is sent is priced
//!   and recorded in `state.spend`.
//!
//! On success `last_model_response` holds the reply; with `use_history`, `history_dialog` keeps
//! the history that was sent followed by the user's question (`user_question`, as asked) and the
//! reply. On any error the state is unchanged.

use crate::error::CtxError;
use crate::pipeline::Transition;
use crate::pipeline::definition::CallModelSpec;
use crate::pipeline::env::{StepEnv, need_model};
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;

use super::report::{CallReport, Done, StepDetail};
use super::{evidence, request};

pub(crate) async fn call_model(
    p: &LoadedPipeline,
    step: &str,
    spec: &CallModelSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let model = need_model(p, env, step, "call_model")?;
    let evidence = evidence::take_pending(p, step, state)?;
    let rendered = request::render(p, (step, "call_model"), spec, state, env).await?;
    let context_window = p.step_model(step).config.context_window;
    let history = rendered.history;
    let (assembly, kept_history) = rendered.context.unzip();
    let guarded = request::negotiate_and_guard(
        p,
        step,
        (&rendered.system, rendered.requested),
        history.clone(),
        (vec![rendered.user], &rendered.segments),
        Vec::new(),
    )?;
    let meta = &guarded.negotiated.meta;
    let max_tokens = guarded.negotiated.max_output_tokens;
    let prompt_tokens = guarded.prompt_tokens;
    // Negotiation drops from the front of the history it was given; what is left was sent.
    let sent_history = history.get(meta.history_messages_dropped..).unwrap_or(&[]);
    let history_removed = rendered.history_over_budget.saturating_add(meta.history_messages_dropped);
    tracing::info!(
        target: "ctx::pipeline",
        step,
        prompt_tokens,
        requested = meta.requested_max_tokens,
        max_tokens,
        reduced = meta.reduced,
        context_window,
        history = sent_history.len(),
        history_removed,
        history_dropped_for_output = meta.history_messages_dropped,
        "call_model request negotiated"
    );
    request::within_caps(p, step, &state.spend, &guarded)?;
    let (response, sent) = request::send_priced(p, model, step, guarded, &spec.params, env, &mut state.spend).await?;
    let report = CallReport {
        request: sent,
        context_window,
        history_messages: sent_history.len(),
        history_removed,
        history_trim: rendered.history_trim,
        context: assembly,
        evidence,
    };
    if spec.use_history {
        state.history_dialog = request::extended_history(sent_history, &state.user_question, &response.content);
    } else if let Some(Some(kept)) = kept_history {
        // A context that draws the pipeline's history: the conversation goes on from what it kept.
        state.history_dialog = request::extended_history(&kept, &state.user_question, &response.content);
    }
    state.last_model_response = Some(response.content);
    Ok((Transition::Next, StepDetail::CallModel(report)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{ChatMessage, Role};
    use crate::codes::ErrorCode;
    use crate::llm::Usage;
    use crate::pipeline::definition::{StepKind, UserPartSpec};
    use crate::pipeline::steps::test_backends::Model;
    use crate::pipeline::testing;

    fn pipeline(use_history: bool, parts: Vec<UserPartSpec>) -> (LoadedPipeline, CallModelSpec) {
        let mut def = testing::def(vec![testing::call("answer", "answer", "end")]);
        let StepKind::CallModel(spec) = &mut def.steps[0].kind else { unreachable!() };
        spec.use_history = use_history;
        spec.user_parts = parts;
        spec.max_output_tokens = Some(500);
        let spec = spec.clone();
        (testing::loaded(def), spec)
    }

    fn part(source: &str, template: &str) -> UserPartSpec {
        UserPartSpec::new(source, template)
    }

    #[tokio::test]
    async fn renders_each_template_once_verbatim_and_sends_the_guarded_request() {
        let (p, spec) =
            pipeline(false, vec![part("context_blocks", "### Context:\n{}\n\n"), part("user_question_en", "Q: {}")]);
        let model = Model::replying("42");
        let mut state = PipelineState::new("What does {} mean in `format!`?");
        state.context_blocks = vec!["fn f() { println!(\"{}\", x) }".into(), "second".into()];
        let (t, detail) = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        assert_eq!(t, Transition::Next);
        let sent = model.requests();
        assert_eq!(sent.len(), 1);
        let request = &sent[0];
        assert_eq!(request.messages[0].role, Role::System);
        assert_eq!(request.messages[0].content, "Answer the question.");
        // The `{}` inside the values stay as they are: each template is filled once.
        assert_eq!(
            request.messages[1].content,
            "### Context:\nfn f() { println!(\"{}\", x) }\n\nsecond\n\nQ: What does {} mean in `format!`?"
        );
        assert_eq!(request.max_tokens, 500);
        assert_eq!(request.step_id.as_deref(), Some("answer"));
        let exact = p.counter().count_messages(&request.messages).unwrap();
        assert_eq!(request.predicted_prompt_tokens, Some(exact));
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        assert_eq!(
            (report.request.prompt_tokens, report.request.max_output_tokens, report.context_window),
            (exact, 500, 16_384)
        );
        // A small input leaves the requested output as it is.
        let n = &report.request.negotiation;
        assert_eq!((n.input_tokens, n.requested_max_tokens, n.adjusted_max_tokens), (exact, 500, 500));
        assert_eq!((n.reduced, n.history_messages_dropped, n.safety_margin), (false, 0, 128));
        assert_eq!(state.last_model_response.as_deref(), Some("42"));
        assert!(state.history_dialog.is_empty());
        // The request's parts: the system prompt, the two context blocks, the question and the
        // reply priming, adding up to the guard's count.
        let kinds: Vec<_> = report.request.anatomy.parts.iter().map(|p| p.kind).collect();
        use crate::report::PartKind::*;
        assert_eq!(kinds, [System, Context, Context, Question, ChatFormat]);
        assert_eq!(report.request.anatomy.parts_total(), exact);
    }

    #[tokio::test]
    async fn the_report_shows_cached_tokens_and_what_the_request_cost() {
        let (p, spec) = pipeline(false, vec![part("user_question", "{}")]);
        // The test pipeline's model has no name and no price: usage is reported, spend is not.
        let mut model = Model::replying("42");
        model.usage = Some(Usage::new(2_000, 10).with_cache(Some(1_536), None));
        let env = StepEnv::builder().model(&model);
        let (_, detail) = call_model(&p, "answer", &spec, &mut PipelineState::new("Q?"), &env).await.unwrap();
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        assert_eq!(report.request.usage.and_then(|u| u.cache_read_tokens), Some(1_536));
        assert_eq!(report.request.spend, None);
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["usage"]["cache_read_tokens"], 1_536);

        // With a price: from the usage, cache reads at the cached rate.
        let mut def = p.definition().clone();
        let crate::pipeline::definition::ModelSource::Inline(m) = &mut def.model else { unreachable!() };
        *m = m.clone().price(Some(
            crate::pipeline::definition::PriceSpec::default()
                .input(Some(2.0))
                .cached_input(Some(0.5))
                .output(Some(8.0)),
        ));
        let priced = testing::loaded(def);
        let (_, detail) = call_model(&priced, "answer", &spec, &mut PipelineState::new("Q?"), &env).await.unwrap();
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        let spend = report.request.spend.expect("priced");
        assert!(spend.reported);
        assert_eq!(spend.nano_usd, 464 * 2_000 + 1_536 * 500 + 10 * 8_000);
        // Without usage: ctx's exact counts, all input uncached.
        let silent = Model::replying("42");
        let env = StepEnv::builder().model(&silent);
        let (_, detail) = call_model(&priced, "answer", &spec, &mut PipelineState::new("Q?"), &env).await.unwrap();
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        let spend = report.request.spend.expect("priced");
        assert!(!spend.reported);
        assert_eq!(spend.billed.input, report.request.prompt_tokens);
        assert_eq!(spend.billed.output, priced.counter().count("42").unwrap());
    }

    #[tokio::test]
    async fn history_is_trimmed_to_its_budget_and_extended_with_the_turn() {
        let (p, spec) = pipeline(true, vec![part("user_question", "{}")]);
        let model = Model::replying("Because of tax.");
        let mut state = PipelineState::new("Why is it higher?");
        // Far more history than max_history_tokens (2_000) allows.
        let old = "An earlier answer about invoices and their totals. ".repeat(60);
        for i in 0..20 {
            state.history_dialog.push(ChatMessage::user(format!("question {i}")));
            state.history_dialog.push(ChatMessage::assistant(old.clone()));
        }
        let (_, detail) = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        assert!(report.history_removed > 0);
        let request = &model.requests()[0];
        let sent_history = &request.messages[1..request.messages.len() - 1];
        assert_eq!(sent_history.len(), report.history_messages);
        assert!(crate::history::history_tokens(p.counter(), sent_history).unwrap() <= 2_000);
        // One part per history message sent, each its exact cost.
        let history_parts: Vec<usize> = report
            .request
            .anatomy
            .parts
            .iter()
            .filter(|p| p.kind == crate::report::PartKind::History)
            .map(|p| p.tokens)
            .collect();
        assert_eq!(history_parts, p.counter().message_costs(sent_history).unwrap());
        assert_eq!(report.request.anatomy.parts_total(), report.request.prompt_tokens);
        // The newest history is kept, then the question and the reply are appended.
        let n = state.history_dialog.len();
        assert_eq!(&state.history_dialog[..n - 2], sent_history);
        assert_eq!(state.history_dialog[n - 2], ChatMessage::user("Why is it higher?"));
        assert_eq!(state.history_dialog[n - 1], ChatMessage::assistant("Because of tax."));
    }

    #[tokio::test]
    async fn a_fold_cuts_the_history_to_its_low_water_mark_and_the_next_turns_keep_its_prefix() {
        let (p, spec) = pipeline(true, vec![part("user_question", "{}")]);
        let mut def = p.definition().clone();
        def.settings = def.settings.clone().history_trim(Some("fold".into())).history_low_water_percent(Some(40));
        let p = testing::loaded(def);
        assert_eq!(p.history_trim(), crate::config::HistoryTrimPolicy::Fold { low_water_percent: 40 });
        let model = Model::replying("An answer of a few words about invoices.");
        let mut state = PipelineState::new("Why is it higher?");
        let old = "An earlier answer about invoices and their totals. ".repeat(30);
        for i in 0..12 {
            state.history_dialog.push(ChatMessage::user(format!("question {i}")));
            state.history_dialog.push(ChatMessage::assistant(old.clone()));
        }
        let env = StepEnv::builder().model(&model);
        call_model(&p, "answer", &spec, &mut state, &env).await.unwrap();
        let sent = |r: &crate::llm::ChatRequest| r.messages[1..r.messages.len() - 1].to_vec();
        let first = sent(&model.requests()[0]);
        // Over its budget (2,000), the history was cut to 40% of it in one go.
        assert!(crate::history::history_tokens(p.counter(), &first).unwrap() <= 800);
        // The following turns fit, so they send the same prefix and append to it.
        for turn in 1..4 {
            state.user_question = format!("And question {turn}?");
            call_model(&p, "answer", &spec, &mut state, &env).await.unwrap();
            let history = sent(&model.requests()[turn]);
            assert_eq!(&history[..first.len()], &first[..], "turn {turn}");
            assert_eq!(history.len(), first.len() + 2 * turn);
        }
    }

    #[tokio::test]
    async fn a_step_without_user_parts_sends_the_context_and_the_question_with_its_parameters() {
        let (p, mut spec) = pipeline(false, Vec::new());
        spec.params = crate::llm::ModelParams::default()
            .temperature(Some(0.2))
            .stop(vec!["###".into()])
            .seed(Some(7))
            .response_format(Some(crate::llm::ResponseFormat::JsonObject));
        let p = {
            let mut def = p.definition().clone();
            def.steps[0].kind = StepKind::CallModel(spec.clone());
            testing::loaded(def)
        };
        let model = Model::replying("{}");
        let mut state = PipelineState::new("How are totals rounded?");
        state.context_blocks = vec!["fn round() {}".into()];
        call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        let request = &model.requests()[0];
        assert_eq!(
            request.messages[1].content,
            "### Context:\nfn round() {}\n\n### User:\nHow are totals rounded?\n\n"
        );
        assert_eq!(request.params, spec.params);
        // The contract measured the same default parts.
        let exact = p.counter().count_messages(&request.messages).unwrap();
        assert_eq!(request.predicted_prompt_tokens, Some(exact));
    }

    /// A context of about `tokens` tokens (exact count returned): more than `max_context_tokens`
    /// allows, as a custom step or a caller-built state can leave it.
    fn context_of(p: &LoadedPipeline, tokens: usize) -> (String, usize) {
        let text = "lorem ipsum dolor sit amet ".repeat(tokens / 5);
        let n = p.counter().count(&text).unwrap();
        (text, n)
    }

    /// A context over `max_context_tokens` (put there by other means than
    /// `manage_context_budget`) is a term over its budget: the request is not sent, and the
    /// state is unchanged. Within the budgets the contract proves, negotiation never has to cut
    /// the output below its limit or drop history (its own tests, `tests/negotiate.rs`, drive it
    /// directly).
    #[tokio::test]
    async fn a_context_over_its_budget_is_refused_before_the_request() {
        let (p, spec) = pipeline(true, vec![part("context_blocks", "{}"), part("user_question", "\n{}")]);
        let model = Model::replying("never");
        let mut state = PipelineState::new("q");
        let (context, tokens) = context_of(&p, 14_500);
        assert!(tokens > p.max_context_tokens());
        state.context_blocks = vec![context];
        let before = state.clone();
        let err = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap_err();
        assert_eq!(err.code(), "PIPELINE_INPUT_OVER_BUDGET");
        let message = err.to_string();
        for part in ["step `answer`", "`context_blocks`", &format!("is {tokens} tokens"), "budget of 9000"] {
            assert!(message.contains(part), "{part} missing from: {message}");
        }
        assert!(model.requests().is_empty());
        assert_eq!(state, before);
    }

    #[tokio::test]
    async fn an_overflowing_request_is_never_sent() {
        let (p, spec) = pipeline(true, vec![part("context_blocks", "{}")]);
        let model = Model::replying("never");
        let mut state = PipelineState::new("q");
        state.history_dialog = vec![ChatMessage::user("earlier"), ChatMessage::assistant("reply")];
        // Even without history, this context leaves no room for the output floor.
        let (context, _) = context_of(&p, 20_000);
        state.context_blocks = vec![context];
        let before = state.clone();
        let err = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap_err();
        // Over `max_context_tokens`: refused before negotiation would have to.
        assert_eq!(err.code(), "PIPELINE_INPUT_OVER_BUDGET");
        assert!(err.to_string().contains("step `answer`"), "{err}");
        assert!(model.requests().is_empty());
        assert_eq!(state, before);
    }

    #[tokio::test]
    async fn a_model_failure_names_the_step_and_changes_nothing() {
        let (p, spec) = pipeline(true, vec![part("user_question", "{}")]);
        let model = Model::failing();
        let mut state = PipelineState::new("q");
        let before = state.clone();
        let err = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap_err();
        assert_eq!(err.code(), "MODEL_CALL_FAILED");
        assert!(err.to_string().contains("step `answer`") && err.to_string().contains("server down"), "{err}");
        assert_eq!(state, before);
        let err = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder()).await.unwrap_err();
        assert_eq!(err.code(), "PIPELINE_MISSING_BACKEND");
    }

    /// `fetch → answer`, the answer step with `parts`: the step takes the fetched texts.
    fn after_fetch(parts: Vec<UserPartSpec>) -> (LoadedPipeline, CallModelSpec) {
        // A fetch straight before a step that leaves the context out is refused at load
        // (`DATAFLOW_EVIDENCE_UNUSED`); such a step still meets texts a custom step or the caller
        // left in `node_texts`, so it is loaded on its own.
        let renders = parts.is_empty() || parts.iter().any(|p| p.source == "context_blocks");
        let answer = testing::call("answer", "answer", "end");
        let mut def = match renders {
            true => testing::def(vec![testing::fetch("fetch", "answer"), answer]),
            false => testing::def(vec![answer]),
        };
        let StepKind::CallModel(spec) = &mut def.steps.last_mut().unwrap().kind else { unreachable!() };
        spec.user_parts = parts;
        spec.max_output_tokens = Some(500);
        let spec = spec.clone();
        let p = testing::loaded(def);
        assert!(p.takes_fetched_texts("answer") == spec.parts().iter().any(|p| p.source == "context_blocks"));
        (p, spec)
    }

    /// Two fetched texts, as `fetch_node_texts` leaves them in `node_texts`.
    fn fetched(state: &mut PipelineState) {
        use crate::state::NodeText;
        state.node_texts = vec![
            NodeText::new("rounding.md", "Invoice totals are rounded half-even to the cent.")
                .with_path("docs/rounding.md"),
            NodeText::new("usp_Total", "SELECT SUM(NetAmount) FROM dbo.InvoiceLines;").with_path("sql/usp_Total.sql"),
        ];
    }

    /// `state` after a `manage_context_budget` step with no rule took its `node_texts`.
    fn after_budget_step(p: &LoadedPipeline, state: &PipelineState) -> PipelineState {
        let spec = crate::pipeline::definition::ManageBudgetSpec::new("answer", "answer");
        let cfg = crate::budget::validate_manage_budget(&spec, &crate::FieldPath::root()).unwrap();
        let mut expected = state.clone();
        let report = crate::budget::manage_context_budget_with(
            "manage_budget",
            &cfg,
            p.max_context_tokens(),
            &mut expected,
            p.counter(),
            p.budget_options(),
        )
        .unwrap();
        assert_eq!(report.decision, crate::budget::BudgetDecision::Ok);
        expected
    }

    #[tokio::test]
    async fn fetched_texts_reach_the_request_as_manage_context_budget_appends_them() {
        // The default parts render the context: `search → fetch → answer` answers from the texts.
        let (p, spec) = after_fetch(Vec::new());
        let model = Model::replying("Half-even.");
        let mut state = PipelineState::new("How are invoice totals rounded?");
        state.context_blocks = vec!["An earlier block.".into()];
        fetched(&mut state);
        let expected = after_budget_step(&p, &state);
        let (_, detail) = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        assert_eq!(state.context_blocks, expected.context_blocks);
        assert_eq!(state.context_blocks.len(), 3);
        assert!(state.context_blocks[1].starts_with("--- NODE ---\nid: rounding.md\npath: docs/rounding.md\n"));
        assert!(state.node_texts.is_empty());
        let context = crate::state::render_context_blocks(&expected.context_blocks);
        let request = &model.requests()[0];
        assert_eq!(
            request.messages[1].content,
            format!("### Context:\n{context}\n\n### User:\nHow are invoice totals rounded?\n\n")
        );
        // The report says who appended what, with the budget action's exact counts.
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        let evidence = report.evidence.as_ref().expect("the evidence was appended");
        assert_eq!((evidence.step_id.as_str(), evidence.decision), ("answer", crate::budget::BudgetDecision::Ok));
        let ids: Vec<&str> = evidence.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["rounding.md", "usp_Total"]);
        assert_eq!(evidence.context_tokens_before, p.counter().count("An earlier block.").unwrap());
        assert_eq!(evidence.context_tokens_after, p.counter().count(&context).unwrap());
        // The anatomy shows the context node by node, as after a manage_context_budget step.
        use crate::report::PartKind;
        let nodes: Vec<Vec<String>> = report
            .request
            .anatomy
            .parts
            .iter()
            .filter(|p| p.kind == PartKind::Context)
            .map(|p| p.nodes.clone())
            .collect();
        assert!(nodes.contains(&vec!["rounding.md".to_owned()]) && nodes.contains(&vec!["usp_Total".to_owned()]));
        assert_eq!(report.request.anatomy.parts_total(), report.request.prompt_tokens);
    }

    #[tokio::test]
    async fn a_step_that_does_not_render_the_context_leaves_the_fetched_texts_alone() {
        let (p, spec) = after_fetch(vec![part("user_question", "Q: {}")]);
        let model = Model::replying("42");
        let mut state = PipelineState::new("q");
        fetched(&mut state);
        let before = state.node_texts.clone();
        let (_, detail) = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        assert_eq!(state.node_texts, before);
        assert!(state.context_blocks.is_empty());
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        assert_eq!(report.evidence, None);
        assert_eq!(model.requests()[0].messages[1].content, "Q: q");
    }

    #[tokio::test]
    async fn fetched_texts_that_do_not_fit_beside_the_context_fail_the_step_and_change_nothing() {
        let (p, spec) = after_fetch(Vec::new());
        let model = Model::replying("never");
        let mut state = PipelineState::new("q");
        // A context carried from an earlier question, just under max_context_tokens (9,000).
        let (context, tokens) = context_of(&p, 8_990);
        assert!((8_900..=9_000).contains(&tokens), "{tokens}");
        state.context_blocks = vec![context];
        fetched(&mut state);
        let before = state.clone();
        let err = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap_err();
        assert_eq!(err.code(), "PIPELINE_EVIDENCE_OVER_BUDGET");
        let message = err.to_string();
        for needle in
            ["step `answer`", "2 fetched node(s)", &format!("from {tokens} to "), "(9000)", "manage_context_budget"]
        {
            assert!(message.contains(needle), "{needle:?} in {message}");
        }
        assert!(model.requests().is_empty());
        assert_eq!(state, before);
    }

    #[tokio::test]
    async fn the_default_parts_send_no_context_header_without_a_context() {
        let (p, spec) = pipeline(false, Vec::new());
        let model = Model::replying("42");
        let mut state = PipelineState::new("How are totals rounded?");
        let (_, detail) = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        let request = &model.requests()[0];
        assert_eq!(request.messages[1].content, "### User:\nHow are totals rounded?\n\n");
        let StepDetail::CallModel(report) = detail else { panic!("{detail:?}") };
        use crate::report::PartKind;
        let kinds: Vec<_> = report.request.anatomy.parts.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [PartKind::System, PartKind::Question, PartKind::ChatFormat]);
        assert_eq!(report.request.anatomy.parts_total(), p.counter().count_messages(&request.messages).unwrap());
        // Parts a step writes are sent as written, an empty context's header included: the
        // default parts' request is the shorter one, within what the contract measured.
        let written =
            vec![part("context_blocks", "### Context:\n{}\n\n"), part("user_question_en", "### User:\n{}\n\n")];
        let (p, spec) = pipeline(false, written);
        let (_, detail) = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        let with_header = &model.requests()[1];
        assert_eq!(with_header.messages[1].content, "### Context:\n\n\n### User:\nHow are totals rounded?\n\n");
        let StepDetail::CallModel(written) = detail else { panic!("{detail:?}") };
        assert!(
            report.request.prompt_tokens < written.request.prompt_tokens,
            "{} < {}",
            report.request.prompt_tokens,
            written.request.prompt_tokens
        );
    }
}
