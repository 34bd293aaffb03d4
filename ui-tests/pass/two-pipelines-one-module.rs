//! A user's crate with `ctx` as its one dependency: two pipelines in one module, each with a
//! custom step `route` (their outcome enums are `BillingRouteOutcome` and
//! `ShippingRouteOutcome`), and a third pipeline built by hand with the definition types'
//! constructors and setters (they are `#[non_exhaustive]`, so a new key is not a breaking
//! change). All three run, with the offline model.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use ctx::llm::offline::OfflineModel;
use ctx::definition::{
    CallModelSpec, END, ModelSource, ModelSpec, PipelineDef, PromptSpec, SettingsSpec, StepDef, StepKind, UserPartSpec,
};
use ctx::pipeline::{LoadOptions, LoadedPipeline, Snapshot, StepEnv};
use ctx::{PipelineState, pipeline::BoxError};

ctx::pipeline! {
    /// Invoice questions.
    pub pipeline Billing {
        model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer the invoice question." }
        steps {
            route: custom { outcomes { invoices => answer, other => end } },
            answer: call_model { prompt_key: answer, user_parts: [ user_question => "{}" ], next: end },
        }
    }
}

ctx::pipeline! {
    /// Parcel questions: the same step ids, other outcomes.
    pub pipeline Shipping {
        model { context_window: 8_192, max_tokens: 512, encoding: cl100k_base }
        settings { max_context_tokens: 2_000 }
        prompts { answer: "Answer the parcel question." }
        steps {
            route: custom { outcomes { parcels => answer, elsewhere => end } },
            answer: call_model { prompt_key: answer, user_parts: [ user_question => "{}" ], next: end },
        }
    }
}

struct Desk;

impl BillingCustom for Desk {
    async fn route(&self, state: &mut PipelineState) -> Result<BillingRouteOutcome, BoxError> {
        Ok(if state.user_question.contains("invoice") { BillingRouteOutcome::Invoices } else { BillingRouteOutcome::Other })
    }
}

impl ShippingCustom for Desk {
    async fn route(&self, state: &mut PipelineState) -> Result<ShippingRouteOutcome, BoxError> {
        Ok(if state.user_question.contains("parcel") { ShippingRouteOutcome::Parcels } else { ShippingRouteOutcome::Elsewhere })
    }
}

/// The offline model and these backends answer at once: polling until ready never waits.
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

fn main() {
    let billing = Billing::new().expect("checked when compiled");
    let shipping = Shipping::new().expect("checked when compiled");
    let model = OfflineModel::new(billing.pipeline().counter().clone());

    let env = BillingEnv { model: &model, custom: &Desk };
    let (state, reports) = block_on(billing.run(PipelineState::new("What does invoice 7 total?"), &env)).unwrap();
    assert_eq!(reports.len(), 2);
    assert!(state.last_model_response.is_some());

    let env = ShippingEnv { model: &model, custom: &Desk };
    let (state, reports) = block_on(shipping.run(PipelineState::new("What does invoice 7 total?"), &env)).unwrap();
    assert_eq!((reports.len(), state.last_model_response), (1, None), "`elsewhere` ends the run");

    // A definition by hand: constructors for what a step needs, setters for the rest.
    let def = PipelineDef::new("ByHand")
        .model(ModelSource::Inline(
            ModelSpec::default().context_window(Some(8_192)).max_tokens(Some(512)).encoding(Some("cl100k_base".into())),
        ))
        .settings(SettingsSpec::default().max_context_tokens(Some(2_000)))
        .prompts(vec![PromptSpec::new("answer", Some("Answer briefly.".into()))])
        .steps(vec![StepDef::new(
            "answer",
            StepKind::CallModel(
                CallModelSpec::new("answer", END).user_parts(vec![UserPartSpec::new("user_question", "{}")]),
            ),
        )]);
    let by_hand = LoadedPipeline::load(def, LoadOptions::new()).expect("a valid definition loads");
    let env = StepEnv::builder().model(&model).build();
    let mut run = Snapshot::start(&by_hand, PipelineState::new("Where is parcel 42?"));
    let reports = block_on(by_hand.resume(&mut run, &env)).unwrap();
    assert_eq!(reports.len(), 1);
    assert!(run.is_finished());
}
