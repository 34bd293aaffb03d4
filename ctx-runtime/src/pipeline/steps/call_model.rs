//! `call_model`: renders the prompt, checks the exact request against the window, calls the model.
//!
//! The request is laid out by the contract's own functions (`contract::render_user_message`,
//! `contract::prompt_messages`), so the prompt the contract measured at load time is the prompt
//! sent here, and the last guard (`contract::guard_request`) counts the exact messages, chat
//! overhead included, before anything leaves: a request that would overflow is never sent.
//!
//! * System prompt: the text of `prompt_key`.
//! * User message: each `user_parts` entry's template with its `{}` replaced once, verbatim, by
//!   the source's text (`PipelineState::render_source`); the value is never expanded again, so a
//!   `{}` inside a retrieved text stays as it is. Parts are concatenated in order; no parts is an
//!   empty user message, as the contract measures it.
//! * History (`use_history`): `history_dialog` trimmed oldest-first to `max_history_tokens`
//!   (`history::trim_history`), placed between the system prompt and the user message.
//! * Output limit: the step's limit in effect from the contract report (`max_output_tokens`,
//!   else `max_tokens`, else the model's `max_tokens`; lowered when `auto_clamp` clamped it).
//!
//! On success `last_model_response` holds the reply; with `use_history`, `history_dialog` keeps
//! the trimmed history followed by the user's question (`user_question`, as asked) and the reply.

use serde::Serialize;

use crate::chat::ChatMessage;
use crate::contract;
use crate::error::CtxError;
use crate::history;
use crate::llm::{ChatRequest, Usage};
use crate::pipeline::definition::CallModelSpec;
use crate::pipeline::driver::StepEnv;
use crate::pipeline::error::PipelineError;
use crate::pipeline::loaded::LoadedPipeline;
use crate::state::PipelineState;

use super::{Done, StepDetail, need};

/// What a `call_model` step sent and received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallReport {
    /// The exact prompt tokens of the request (messages and chat overhead), as the guard counted.
    pub prompt_tokens: usize,
    /// The output limit sent.
    pub max_output_tokens: usize,
    /// The model's window.
    pub context_window: usize,
    /// History messages sent.
    pub history_messages: usize,
    /// History messages dropped (oldest first) to fit `max_history_tokens`.
    pub history_removed: usize,
    /// The server's usage, when reported.
    pub usage: Option<Usage>,
    /// Why generation stopped, when reported.
    pub finish_reason: Option<String>,
}

pub(crate) async fn call_model(
    p: &LoadedPipeline,
    step: &str,
    spec: &CallModelSpec,
    state: &mut PipelineState,
    env: &StepEnv<'_>,
) -> Result<Done, CtxError> {
    let model = need(env.model_backend(), step, "call_model", "ChatModel", "model")?;
    let system = p
        .prompt(&spec.prompt_key)
        .ok_or_else(|| PipelineError::PromptWithoutText { step: step.to_owned(), key: spec.prompt_key.clone() })?;
    let values = spec
        .user_parts
        .iter()
        .map(|part| {
            state
                .render_source(&part.source)
                .ok_or_else(|| PipelineError::MissingSource { step: step.to_owned(), source_name: part.source.clone() })
        })
        .collect::<Result<Vec<String>, _>>()?;
    let user = contract::render_user_message(
        spec.user_parts.iter().zip(&values).map(|(part, value)| (part.template.as_str(), value.as_str())),
    );
    let counter = p.counter();
    let (history, removed) = if spec.use_history {
        // Load-time validation requires max_history_tokens for a step that uses history.
        let budget = p.max_history_tokens().unwrap_or(0);
        let trim = history::trim_history(&state.history_dialog, budget, counter)?;
        (trim.kept(&state.history_dialog).to_vec(), trim.removed)
    } else {
        (Vec::new(), 0)
    };
    let messages = contract::prompt_messages(system, &history, user);
    let max_tokens = p.output_tokens(step).unwrap_or(0);
    let context_window = p.context_window();
    let prompt_tokens = contract::guard_request(step, &messages, &[], max_tokens, context_window, counter)?;
    let request = ChatRequest {
        messages,
        tools: Vec::new(),
        max_tokens,
        temperature: None,
        predicted_prompt_tokens: Some(prompt_tokens),
        step_id: Some(step.to_owned()),
    };
    tracing::debug!(prompt_tokens, max_tokens, context_window, history = history.len(), removed, "call_model request");
    let response = model
        .chat(&request)
        .await
        .map_err(|source| PipelineError::Model { step: step.to_owned(), source: Box::new(source) })?;
    if response.finish_reason.as_deref() == Some("length") {
        tracing::warn!(step, max_tokens, "the reply was cut at the output limit");
    }
    let report = CallReport {
        prompt_tokens,
        max_output_tokens: max_tokens,
        context_window,
        history_messages: history.len(),
        history_removed: removed,
        usage: response.usage,
        finish_reason: response.finish_reason.clone(),
    };
    if spec.use_history {
        let mut dialog = history;
        dialog.push(ChatMessage::user(state.user_question.clone()));
        dialog.push(ChatMessage::assistant(response.content.clone()));
        state.history_dialog = dialog;
    }
    state.last_model_response = Some(response.content);
    Ok((0, StepDetail::CallModel(report)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Role;
    use crate::error::ErrorCode;
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
        UserPartSpec { source: source.into(), template: template.into() }
    }

    #[tokio::test]
    async fn renders_each_template_once_verbatim_and_sends_the_guarded_request() {
        let (p, spec) =
            pipeline(false, vec![part("context_blocks", "### Context:\n{}\n\n"), part("user_question_en", "Q: {}")]);
        let model = Model::replying("42");
        let mut state = PipelineState::new("What does {} mean in `format!`?");
        state.context_blocks = vec!["fn f() { println!(\"{}\", x) }".into(), "second".into()];
        let (t, detail) = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap();
        assert_eq!(t, 0);
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
        assert_eq!((report.prompt_tokens, report.max_output_tokens, report.context_window), (exact, 500, 16_384));
        assert_eq!(state.last_model_response.as_deref(), Some("42"));
        assert!(state.history_dialog.is_empty());
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
        // The newest history is kept, then the question and the reply are appended.
        let n = state.history_dialog.len();
        assert_eq!(&state.history_dialog[..n - 2], sent_history);
        assert_eq!(state.history_dialog[n - 2], ChatMessage::user("Why is it higher?"));
        assert_eq!(state.history_dialog[n - 1], ChatMessage::assistant("Because of tax."));
    }

    #[tokio::test]
    async fn an_overflowing_request_is_never_sent() {
        let (p, spec) = pipeline(false, vec![part("context_blocks", "{}")]);
        let model = Model::replying("never");
        let mut state = PipelineState::new("q");
        // The contract budgets 9_000 tokens of context; this context is far larger (a state
        // built outside the pipeline's own steps).
        state.context_blocks = vec!["lorem ipsum dolor sit amet ".repeat(4_000)];
        let before = state.clone();
        let err = call_model(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap_err();
        assert_eq!(err.code(), "REQUEST_EXCEEDS_CONTEXT_WINDOW");
        assert!(err.to_string().contains("`answer`"), "{err}");
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
}
