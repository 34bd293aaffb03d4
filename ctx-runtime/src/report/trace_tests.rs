//! The spans a run leaves, read by a `tracing` layer as `tracing-opentelemetry` reads them: their
//! names, their parents and their fields.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Subscriber, subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use super::REQUEST_ATTRIBUTES;
use crate::llm::offline::OfflineModel;
use crate::pipeline::{StepDetail, StepEnv, testing};
use crate::state::PipelineState;

#[derive(Debug)]
struct Seen {
    id: u64,
    name: &'static str,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let parent = ctx.span(id).and_then(|s| s.parent()).map(|p| p.id().into_u64());
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let seen = Seen { id: id.into_u64(), name: attrs.metadata().name(), parent, fields };
        self.0.lock().unwrap().push(seen);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some(seen) = spans.iter_mut().rev().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

#[tokio::test]
async fn a_run_leaves_a_run_span_a_step_span_and_a_gen_ai_chat_span_with_its_budget() {
    let p = testing::loaded(testing::def(vec![testing::call("answer", "answer", "end")]));
    let model = OfflineModel::new(p.counter().clone());
    let spans = Spans::default();
    let _default = subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let (_, reports) =
        p.run(PipelineState::new("How are totals rounded?"), &StepEnv::builder().model(&model)).await.unwrap();
    let StepDetail::CallModel(call) = &reports[0].detail else { panic!("{reports:?}") };
    let usage = call.usage.expect("the offline model reports usage");

    let spans = spans.0.lock().unwrap();
    let one = |name: &str| -> &Seen {
        let found: Vec<&Seen> = spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "{name}: {spans:#?}");
        found[0]
    };
    let (run, step, chat) = (one("ctx.run"), one("ctx.step"), one("gen_ai.chat"));
    assert_eq!((step.parent, chat.parent), (Some(run.id), Some(step.id)));
    assert_eq!(run.fields["ctx.pipeline"], p.name());

    let f = &chat.fields;
    let field = |name: &str| f.get(name).unwrap_or_else(|| panic!("{name} missing: {f:#?}")).as_str();
    assert_eq!(field("otel.name"), format!("chat {}", crate::llm::ChatModel::model_name(&model)));
    assert_eq!(field("otel.kind"), "client");
    assert_eq!(field("gen_ai.operation.name"), "chat");
    assert_eq!(field("gen_ai.request.model"), crate::llm::ChatModel::model_name(&model));
    assert_eq!(field("gen_ai.request.max_tokens"), call.max_output_tokens.to_string());
    assert_eq!(field("gen_ai.usage.input_tokens"), usage.prompt_tokens.to_string());
    assert_eq!(field("gen_ai.usage.output_tokens"), usage.completion_tokens.to_string());
    assert_eq!(field("ctx.step.id"), "answer");
    assert_eq!(field("ctx.budget.prompt_tokens"), call.prompt_tokens.to_string());
    assert_eq!(field("ctx.budget.context_window"), p.context_window().to_string());
    let worst = p.contract_report().step("answer").unwrap().total_tokens();
    assert_eq!(field("ctx.budget.worst_case_tokens"), worst.to_string());
    // The parts add up to the prompt, as in the report.
    let parts: usize =
        f.iter().filter(|(k, _)| k.starts_with("ctx.budget.parts.")).map(|(_, v)| v.parse::<usize>().unwrap()).sum();
    assert_eq!(parts, call.prompt_tokens);
    // Every documented attribute is there, except the sampling parameters this step leaves unset.
    for name in REQUEST_ATTRIBUTES {
        let unset = ["gen_ai.request.temperature", "gen_ai.request.top_p", "gen_ai.request.seed"];
        assert_eq!(f.contains_key(*name), !unset.contains(name), "{name}");
    }
}
