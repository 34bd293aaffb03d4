//! Feature `otel`: a run's spans reach an OTLP/HTTP receiver as OpenTelemetry spans, with the
//! GenAI attributes and ctx's budget attributes as ctx wrote them, and the run → step → request
//! nesting kept.
//!
//! The receiver is this test's own, on 127.0.0.1 (an ephemeral port): it reads each
//! `POST /v1/traces` request as OTLP's protobuf `ExportTraceServiceRequest`, the wire format any
//! collector or backend receives. (Arize Phoenix, a backend that reads the GenAI conventions, was
//! not set up: the receiver checks the same bytes it would get.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use ctx::PipelineState;
use ctx::llm::offline::OfflineModel;
use ctx::pipeline::{StepDetail, StepEnv};
use ctx::report::OtlpTracing;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use tracing_subscriber::layer::SubscriberExt as _;

/// Serves OTLP/HTTP on 127.0.0.1 until the test ends, keeping every span received.
fn receiver() -> (String, Arc<Mutex<Vec<Span>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let spans = Arc::new(Mutex::new(Vec::new()));
    let kept = spans.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
                let mut stream = stream;
                loop {
                    let mut line = String::new();
                    let mut length = 0usize;
                    let mut path = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    path.push_str(line.split_whitespace().nth(1).unwrap_or_default());
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let header = line.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    assert_eq!(path, "/v1/traces");
                    let request = ExportTraceServiceRequest::decode(body.as_slice()).expect("OTLP protobuf");
                    let mut all = kept.lock().unwrap();
                    for resource in request.resource_spans {
                        for scope in resource.scope_spans {
                            all.extend(scope.spans);
                        }
                    }
                    drop(all);
                    let reply = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                    if stream.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, spans)
}

fn attribute(span: &Span, key: &str) -> Option<Value> {
    span.attributes.iter().find(|a| a.key == key).and_then(|a| a.value.clone()).and_then(|v| v.value)
}

fn int(span: &Span, key: &str) -> i64 {
    match attribute(span, key) {
        Some(Value::IntValue(n)) => n,
        other => panic!("{key}: {other:?}"),
    }
}

fn text(span: &Span, key: &str) -> String {
    match attribute(span, key) {
        Some(Value::StringValue(s)) => s,
        other => panic!("{key}: {other:?}"),
    }
}

#[test]
fn a_runs_spans_reach_an_otlp_receiver_with_their_gen_ai_attributes() {
    let (url, received) = receiver();
    let otlp = OtlpTracing::http(&url, "ctx-test").expect("the exporter is set up");
    let def = ctx::pipeline::yaml::PipelineFile::parse(
        "name: qa\nmodel: { context_window: 8192, max_tokens: 512, encoding: cl100k_base }\n\
         settings: { max_context_tokens: 2000 }\nprompts: { answer: \"Answer from the context.\" }\n\
         steps:\n- id: answer\n  action: call_model\n  prompt_key: answer\n  next: end\n",
        "qa.yaml",
    )
    .expect("the file parses");
    let pipeline = ctx::pipeline::LoadedPipeline::load_file(&def, ctx::pipeline::LoadOptions::new()).expect("it loads");
    let model = OfflineModel::new(pipeline.counter().clone());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let subscriber = tracing_subscriber::registry().with(otlp.layer());
    let reports = tracing::subscriber::with_default(subscriber, || {
        runtime.block_on(pipeline.run(PipelineState::new("How are totals rounded?"), &StepEnv::builder().model(&model)))
    })
    .expect("the run succeeds")
    .1;
    otlp.flush().expect("the spans are sent");
    let StepDetail::CallModel(call) = &reports[0].detail else { panic!("{reports:?}") };

    let spans = received.lock().unwrap();
    let named = |name: &str| spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name} in {spans:#?}"));
    let chat = named(&format!("chat {}", ctx::llm::ChatModel::model_name(&model)));
    let step = spans.iter().find(|s| s.span_id == chat.parent_span_id).expect("the request's parent");
    let run = named("run qa");
    assert_eq!(step.name, "ctx.step");
    assert_eq!(step.parent_span_id, run.span_id);
    assert_eq!(chat.trace_id, run.trace_id);
    // SPAN_KIND_CLIENT
    assert_eq!(chat.kind, 3);

    assert_eq!(text(chat, "gen_ai.operation.name"), "chat");
    assert_eq!(text(chat, "gen_ai.request.model"), ctx::llm::ChatModel::model_name(&model));
    assert_eq!(int(chat, "gen_ai.request.max_tokens"), call.request.max_output_tokens as i64);
    let usage = call.request.usage.expect("the offline model reports usage");
    assert_eq!(int(chat, "gen_ai.usage.input_tokens"), usage.prompt_tokens as i64);
    assert_eq!(int(chat, "gen_ai.usage.output_tokens"), usage.completion_tokens as i64);
    assert_eq!(int(chat, "ctx.budget.prompt_tokens"), call.request.prompt_tokens as i64);
    assert_eq!(int(chat, "ctx.budget.context_window"), 8192);
    let parts: i64 = chat
        .attributes
        .iter()
        .filter(|a| a.key.starts_with("ctx.budget.parts."))
        .map(|a| match a.value.clone().and_then(|v| v.value) {
            Some(Value::IntValue(n)) => n,
            other => panic!("{}: {other:?}", a.key),
        })
        .sum();
    assert_eq!(parts, call.request.prompt_tokens as i64);
    let worst = pipeline.contract_report().step("answer").expect("a model step").total_tokens();
    assert_eq!(int(chat, "ctx.budget.worst_case_tokens"), worst as i64);
    otlp.shutdown().expect("the exporter stops");
}
