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

use super::{REQUEST_ATTRIBUTES, error_type, record_response, request_span};
use crate::llm::offline::{OFFLINE_PROVIDER_NAME, OfflineModel};
use crate::llm::{ChatResponse, ModelError, ModelParams, ResponseFormat};
use crate::pipeline::{StepDetail, StepEnv, testing};
use crate::report::RequestAnatomy;
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
    let usage = call.request.usage.expect("the offline model reports usage");

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
    assert_eq!(field("gen_ai.provider.name"), OFFLINE_PROVIDER_NAME);
    assert_eq!(field("gen_ai.request.model"), crate::llm::ChatModel::model_name(&model));
    assert_eq!(field("gen_ai.request.max_tokens"), call.request.max_output_tokens.to_string());
    assert_eq!(field("gen_ai.usage.input_tokens"), usage.prompt_tokens.to_string());
    assert_eq!(field("gen_ai.usage.output_tokens"), usage.completion_tokens.to_string());
    assert_eq!(field("ctx.step.id"), "answer");
    assert_eq!(field("ctx.budget.prompt_tokens"), call.request.prompt_tokens.to_string());
    assert_eq!(field("ctx.budget.context_window"), p.context_window().to_string());
    let worst = p.contract_report().step("answer").unwrap().total_tokens();
    assert_eq!(field("ctx.budget.worst_case_tokens"), worst.to_string());
    // The parts add up to the prompt, as in the report.
    let parts: usize =
        f.iter().filter(|(k, _)| k.starts_with("ctx.budget.parts.")).map(|(_, v)| v.parse::<usize>().unwrap()).sum();
    assert_eq!(parts, call.request.prompt_tokens);
    assert_eq!(Some(field("ctx.response.finish_reason")), call.request.finish_reason.as_deref());
    // Every documented attribute is there, except the sampling parameters this step leaves unset,
    // the output type (no response format) and the error's type (no error).
    for name in REQUEST_ATTRIBUTES {
        let unset = [
            "gen_ai.request.temperature",
            "gen_ai.request.top_p",
            "gen_ai.request.presence_penalty",
            "gen_ai.request.frequency_penalty",
            "gen_ai.request.seed",
            "gen_ai.output.type",
            "error.type",
        ];
        assert_eq!(f.contains_key(*name), !unset.contains(name), "{name}");
    }
}

/// Parameters that set every optional attribute.
fn every_param() -> ModelParams {
    let mut params = ModelParams::default();
    params.temperature = Some(0.25);
    params.top_p = Some(0.5);
    params.presence_penalty = Some(0.125);
    params.frequency_penalty = Some(-0.5);
    params.seed = Some(7);
    params.stop = vec!["END".to_owned(), "\n\n".to_owned()];
    params.response_format = Some(ResponseFormat::JsonObject);
    params
}

fn frame() -> RequestAnatomy {
    RequestAnatomy::frame(100, 50, 10, 1000)
}

#[test]
fn a_request_records_its_parameters_its_output_type_and_its_finish_reason_or_error_type() {
    let spans = Spans::default();
    let _default = subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let ok = request_span("m", "openai", "s", &frame(), &every_param(), Some(500));
    let reply = ChatResponse { finish_reason: Some("length".to_owned()), ..ChatResponse::default() };
    record_response(&ok, 100, &Ok(reply));
    let failed = request_span("m", "anthropic", "s", &frame(), &ModelParams::default(), None);
    let error = ModelError::Http {
        model: "m".into(),
        status: 429,
        message: "slow down".into(),
        error_type: None,
        error_code: None,
    };
    record_response(&failed, 100, &Err(error));
    drop((ok, failed));

    let spans = spans.0.lock().unwrap();
    let [ok, failed] = [&spans[0].fields, &spans[1].fields];
    for (name, value) in [
        ("gen_ai.provider.name", "openai"),
        ("gen_ai.request.temperature", "0.25"),
        ("gen_ai.request.top_p", "0.5"),
        ("gen_ai.request.presence_penalty", "0.125"),
        ("gen_ai.request.frequency_penalty", "-0.5"),
        ("gen_ai.request.seed", "7"),
        ("gen_ai.output.type", "json"),
        ("gen_ai.usage.input_tokens", "100"),
        ("ctx.response.finish_reason", "length"),
    ] {
        assert_eq!(ok.get(name).map(String::as_str), Some(value), "{name}: {ok:#?}");
    }
    assert!(!ok.contains_key("error.type"), "{ok:#?}");
    assert_eq!(failed["gen_ai.provider.name"], "anthropic");
    assert_eq!(failed["error.type"], "429");
    assert_eq!(failed["otel.status_code"], "ERROR");
    assert!(!failed.contains_key("gen_ai.usage.input_tokens"), "{failed:#?}");
}

#[test]
fn an_error_type_is_the_http_status_or_the_kind_of_failure() {
    let timeout = ModelError::Timeout { model: "m".into(), phase: "connect", limit: std::time::Duration::from_secs(1) };
    assert_eq!(error_type(&timeout), "timeout");
    let last = Box::new(ModelError::Http {
        model: "m".into(),
        status: 503,
        message: String::new(),
        error_type: None,
        error_code: None,
    });
    assert_eq!(error_type(&ModelError::RetriesExhausted { model: "m".into(), attempts: 3, last }), "503");
    assert_eq!(error_type(&ModelError::EmptyChoices { model: "m".into() }), "empty_choices");
}

/// With feature `otel`: what `tracing-opentelemetry` hands the exporter, arrays included.
#[cfg(feature = "otel")]
mod otel {
    use std::sync::{Arc, Mutex};

    use opentelemetry::trace::TracerProvider as _;
    use opentelemetry::{Array, StringValue, Value};
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
    use tracing::subscriber;
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::{ChatResponse, every_param, frame, record_response, request_span};

    #[derive(Debug, Clone, Default)]
    struct Exported(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Exported {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.0.lock().unwrap().extend(batch);
            Ok(())
        }
    }

    fn strings(values: &[&str]) -> Value {
        Value::Array(Array::String(values.iter().map(|v| StringValue::from(v.to_string())).collect()))
    }

    #[test]
    fn finish_reasons_and_stop_sequences_are_string_arrays_and_the_rest_keeps_its_type() {
        let exported = Exported::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(exported.clone()).build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("ctx-test"));
        subscriber::with_default(tracing_subscriber::registry().with(layer), || {
            let span = request_span("m", "openai", "s", &frame(), &every_param(), Some(500));
            let reply = ChatResponse { finish_reason: Some("stop".to_owned()), ..ChatResponse::default() };
            record_response(&span, 100, &Ok(reply));
        });
        provider.force_flush().expect("flushed");
        let spans = exported.0.lock().unwrap();
        assert_eq!(spans.len(), 1, "{spans:#?}");
        let attribute =
            |key: &str| spans[0].attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.clone());
        assert_eq!(attribute("gen_ai.response.finish_reasons"), Some(strings(&["stop"])));
        assert_eq!(attribute("gen_ai.request.stop_sequences"), Some(strings(&["END", "\n\n"])));
        assert_eq!(attribute("gen_ai.provider.name"), Some(Value::from("openai")));
        assert_eq!(attribute("gen_ai.request.seed"), Some(Value::I64(7)));
        assert_eq!(attribute("gen_ai.request.max_tokens"), Some(Value::I64(50)));
        assert_eq!(attribute("gen_ai.request.temperature"), Some(Value::F64(0.25)));
        assert_eq!(attribute("gen_ai.usage.input_tokens"), Some(Value::I64(100)));
        assert_eq!(attribute("ctx.budget.worst_case_tokens"), Some(Value::I64(500)));
        assert_eq!(spans[0].name, "chat m");
    }
}
