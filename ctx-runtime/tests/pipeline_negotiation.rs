//! Output negotiation in a pipeline's `call_model` step: whatever the state holds, a request is
//! either sent with `prompt + output + margin <= window` (the output as requested when it fits,
//! else what is left of the window, never below the floor) or refused before it leaves with the
//! state unchanged (a context over `max_context_tokens` before negotiation, as an input over its
//! budget).

mod pipeline_support;

use ctx_runtime::pipeline::*;
use ctx_runtime::state::PipelineState;
use ctx_runtime::{ChatMessage, ErrorCode};
use pipeline_support::{ScriptedModel, Summaries};
use proptest::prelude::*;

const WINDOW: usize = 4_096;
const MARGIN: usize = 128;
const PROMPT: &str = "Answer the question from the context.";

fn pipeline(max_output_tokens: usize) -> LoadedPipeline {
    let def = PipelineDef::new("Negotiated")
        .model(ModelSource::Inline(
            ModelSpec::default().context_window(Some(WINDOW as i64)).encoding(Some("cl100k_base".into())),
        ))
        .settings(
            SettingsSpec::default()
                .max_context_tokens(Some(2_000))
                .max_history_tokens(Some(300))
                .budget_safety_margin_tokens(Some(MARGIN as i64)),
        )
        .prompts(vec![PromptSpec::new("answer", Some(PROMPT.into()))])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::CallModel(
                CallModelSpec::new("answer", END)
                    .max_output_tokens(Some(max_output_tokens as i64))
                    .user_parts(vec![
                        UserPartSpec::new("context_blocks", "### Context:\n{}\n\n"),
                        UserPartSpec::new("user_question", "### User:\n{}\n\n"),
                    ])
                    .use_history(true),
            ),
        )]);
    LoadedPipeline::load(def, LoadOptions::new()).unwrap()
}

const WORDS: &[&str] = &["invoice", "tax", "total", "line", "rate", "net", "gross", "country", "round", "sum"];

fn words(n: usize, seed: usize) -> String {
    (0..n).map(|i| WORDS[(i * 7 + seed) % WORDS.len()]).collect::<Vec<_>>().join(" ")
}

fn run(
    p: &LoadedPipeline,
    state: &mut PipelineState,
    model: &ScriptedModel,
) -> Result<StepOutcome, ctx_runtime::CtxError> {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(run_step(p, 0, state, &StepEnv::builder().model(model)))
}

/// The request's input is small: the output is the one requested, and nothing is dropped.
#[test]
fn a_small_input_keeps_the_requested_output() {
    let p = pipeline(1_000);
    let model = ScriptedModel::new("unused", Summaries::Short);
    let mut state = PipelineState::new("How is tax computed?");
    state.context_blocks = vec![words(200, 1)];
    state.history_dialog = vec![ChatMessage::user("Hi"), ChatMessage::assistant("Hello.")];
    let outcome = run(&p, &mut state, &model).unwrap();
    let StepDetail::CallModel(report) = outcome.report.detail else { panic!() };
    let sent = &model.requests()[0];
    assert_eq!(sent.max_tokens, 1_000);
    assert_eq!(report.request.negotiation.input_tokens, p.counter().count_messages(&sent.messages).unwrap());
    assert!(!report.request.negotiation.reduced);
    assert_eq!((report.history_messages, report.history_removed), (2, 0));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_request_never_overflows_and_a_refused_one_changes_nothing(
        requested in 1usize..1_500,
        // Half the cases near the window's edge, where output is reduced and history dropped.
        context_words in prop_oneof![0usize..4_500, 3_000usize..3_500],
        history in proptest::collection::vec(0usize..60, 0..12),
    ) {
        let p = pipeline(requested);
        let model = ScriptedModel::new("unused", Summaries::Short);
        let mut state = PipelineState::new("How is the tax total computed?");
        state.context_blocks = vec![words(context_words, 3)];
        state.history_dialog = history
            .iter()
            .enumerate()
            .map(|(i, &n)| if i % 2 == 0 { ChatMessage::user(words(n, i)) } else { ChatMessage::assistant(words(n, i)) })
            .collect();
        let before = state.clone();
        let floor = requested.min(OUTPUT_FLOOR_TOKENS);
        match run(&p, &mut state, &model) {
            Ok(outcome) => {
                let StepDetail::CallModel(report) = outcome.report.detail else { panic!() };
                let sent = model.requests();
                prop_assert_eq!(sent.len(), 1);
                let prompt = p.counter().count_messages(&sent[0].messages).unwrap();
                let out = sent[0].max_tokens;
                prop_assert_eq!((report.request.prompt_tokens, report.request.negotiation.input_tokens), (prompt, prompt));
                prop_assert!(prompt + out + MARGIN <= WINDOW, "{prompt} + {out} + {MARGIN}");
                prop_assert!(out <= requested && out >= floor);
                // As asked, else all that is left of the window, else the floor.
                prop_assert!(out == requested || out == WINDOW - prompt - MARGIN || out == floor);
                prop_assert_eq!(report.request.negotiation.reduced, out < requested);
                prop_assert_eq!(report.history_messages + report.history_removed, history.len());
            }
            // A context over `max_context_tokens` is refused before negotiation sees it.
            Err(err) if err.code() == "PIPELINE_INPUT_OVER_BUDGET" => {
                prop_assert!(p.counter().count(&words(context_words, 3)).unwrap() > 2_000);
                prop_assert!(model.requests().is_empty());
                prop_assert_eq!(&state, &before);
            }
            Err(err) => {
                prop_assert_eq!(err.code(), "NEGOTIATION_NO_ROOM");
                prop_assert!(model.requests().is_empty());
                prop_assert_eq!(&state, &before);
                // Refused only when even the request without history leaves no room for the floor.
                let user = format!("### Context:\n{}\n\n### User:\n{}\n\n", words(context_words, 3), before.user_question);
                let bare = p.counter().count_messages(&[ChatMessage::system(PROMPT), ChatMessage::user(user)]).unwrap();
                prop_assert!(bare + MARGIN + floor > WINDOW, "{bare}");
            }
        }
    }
}
