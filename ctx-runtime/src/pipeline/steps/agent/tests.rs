use super::*;
use crate::chat::Role;
use crate::codes::{Code, ErrorCode};
use crate::llm::ChatRequest;
use crate::pipeline::definition::StepKind;
use crate::pipeline::steps::test_backends::{Scripted, Tools, calls};
use crate::pipeline::testing;
use crate::pipeline::{BoxError, ToolCallKind, ToolOutput};
use crate::turn::RankedDocument;

/// The fixture's agent step with `max_tool_calls` and `turn_budget_tokens`, loaded.
fn pipeline(max_tool_calls: i64, turn_budget: Option<i64>) -> (LoadedPipeline, AgentSpec) {
    let mut def = testing::def(vec![testing::agent("answer", "end")]);
    let StepKind::Agent(spec) = &mut def.steps[0].kind else { unreachable!() };
    spec.max_tool_calls = max_tool_calls;
    spec.turn_budget_tokens = turn_budget;
    let spec = spec.clone();
    (testing::loaded(def), spec)
}

async fn run(
    p: &LoadedPipeline,
    spec: &AgentSpec,
    state: &mut PipelineState,
    model: &Scripted,
    tools: &Tools,
) -> Result<AgentReport, CtxError> {
    let env = StepEnv::builder().model(model).tools(tools);
    let (transition, detail) = agent(p, "answer", spec, state, &env).await?;
    assert_eq!(transition, Transition::Next);
    let StepDetail::Agent(report) = detail else { panic!("{detail:?}") };
    // Every request's parts add up to the guard's count, cut message by message: the n-th
    // request holds the n - 1 tool-call blocks answered before it.
    for (i, r) in report.requests.iter().enumerate() {
        use crate::report::PartKind;
        assert_eq!(r.request.anatomy.parts_total(), r.request.prompt_tokens, "request {i}");
        assert!(
            r.request.anatomy.parts.iter().all(|p| p.kind != PartKind::Unsplit),
            "request {i}: {:?}",
            r.request.anatomy.parts
        );
        let blocks = r.request.anatomy.parts.iter().filter(|p| p.kind == PartKind::ToolTurn).count();
        assert!(blocks <= i, "request {i}: {blocks} tool blocks");
    }
    Ok(report)
}

/// Every sent request, counted again from scratch: prompt + max_tokens within the window, and
/// the prediction sent along is that count.
fn assert_guarded(p: &LoadedPipeline, requests: &[ChatRequest]) {
    for (i, r) in requests.iter().enumerate() {
        let prompt = p.counter().count_request(&r.messages, &r.tools).unwrap();
        assert_eq!(r.predicted_prompt_tokens, Some(prompt), "request {i}");
        assert!(prompt + r.max_tokens <= p.context_window(), "request {i}: {prompt} + {}", r.max_tokens);
    }
}

fn tool_messages(r: &ChatRequest) -> Vec<&ChatMessage> {
    r.messages.iter().filter(|m| m.role == Role::Tool).collect()
}

#[tokio::test]
async fn the_loop_ends_after_max_tool_calls_and_the_last_request_offers_no_tools() {
    let (p, spec) = pipeline(2, None);
    // The model would call a tool forever; the second reply asks for three calls at once.
    let model = Scripted::new(
        vec![
            calls(&[("c1", "search_docs")]),
            calls(&[("c2", "search_docs"), ("c3", "search_docs"), ("c4", "search_docs")]),
        ],
        "the answer",
    );
    let tools = Tools::new(vec![]);
    let mut state = PipelineState::new("How do I rotate keys?");
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    let sent = model.requests();
    assert_eq!(sent.len(), 3, "max_tool_calls + 1 requests");
    assert_eq!(report.requests.len(), 3);
    assert!(!sent[0].tools.is_empty() && !sent[1].tools.is_empty() && sent[2].tools.is_empty());
    assert_eq!(report.end, AgentEnd::ToolLimitReached);
    // Two handler calls; the two over the limit are answered with the limit message.
    assert_eq!(tools.seen().iter().map(|s| s.1.as_str()).collect::<Vec<_>>(), ["c1", "c2"]);
    let kinds: Vec<ToolCallKind> = report.tool_calls.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [ToolCallKind::Handled, ToolCallKind::Handled, ToolCallKind::OverLimit, ToolCallKind::OverLimit]);
    let results = tool_messages(&sent[2]);
    assert_eq!(results.len(), 4, "every call id is answered");
    assert_eq!(results[3].content, TOOL_LIMIT_MESSAGE);
    assert_eq!(results[3].tool_call_id.as_deref(), Some("c4"));
    assert_guarded(&p, &sent);
    assert_eq!(state.last_model_response.as_deref(), Some("the answer"));
}

#[tokio::test]
async fn every_request_is_guarded_and_the_ledger_is_the_exact_transcript() {
    let (p, spec) = pipeline(3, None);
    let model = Scripted::always_calling(3);
    let docs = |ids: &[&str]| {
        ToolOutput::Documents(
            ids.iter().map(|id| RankedDocument::new(*id, format!("Article {id}. ").repeat(200))).collect(),
        )
    };
    let tools = Tools::new(vec![("c1", docs(&["a", "b"])), ("c2", docs(&["a", "c"])), ("c3", docs(&["b", "d"]))]);
    let mut state = PipelineState::new("What are the features?");
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    let sent = model.requests();
    assert_eq!(sent.len(), 4);
    assert_guarded(&p, &sent);
    // The ledger holds exactly the messages of the last request (reply priming aside).
    let last = sent.last().unwrap();
    let priming = p.counter().count_messages(&[]).unwrap();
    assert_eq!(report.ledger.reserved + priming, p.counter().count_messages(&last.messages).unwrap());
    assert!(report.ledger.reserved <= report.turn_budget_tokens);
    // Each article is sent once: the duplicates are reported and left out.
    let all: String = tool_messages(last).iter().map(|m| m.content.as_str()).collect();
    for id in ["a", "b", "c", "d"] {
        assert_eq!(all.matches(&format!("<document id=\"{id}\">")).count(), 1, "{id}");
    }
    assert_eq!(report.tool_calls[1].duplicates_skipped, ["a"]);
    assert_eq!(report.tool_calls[2].duplicates_skipped, ["b"]);
    assert_eq!(report.ledger.unique_documents, 4);
    // Progressive budgeting: each call is offered less than the one before.
    let budgets: Vec<usize> = tools.seen().iter().map(|s| s.2).collect();
    assert!(budgets.windows(2).all(|w| w[1] < w[0]), "{budgets:?}");
}

#[tokio::test]
async fn an_oversized_text_is_cut_at_a_token_boundary_to_exactly_what_is_left() {
    let (p, spec) = pipeline(1, Some(300));
    let model = Scripted::always_calling(1);
    let long = "The key rotation schedule is described here. ".repeat(400);
    let tools = Tools::new(vec![("c1", ToolOutput::Text(long.clone()))]);
    let mut state = PipelineState::new("How are keys rotated?");
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    let call = &report.tool_calls[0];
    assert!(call.truncated);
    // The result takes the whole room: nothing of the turn budget is left, nothing is over.
    assert_eq!(call.tokens, call.available);
    assert_eq!(report.ledger.reserved, 300);
    let sent = model.requests();
    let result = tool_messages(&sent[1])[0];
    assert!(long.starts_with(&result.content) && !result.content.is_empty());
    assert_eq!(p.counter().count(&result.content).unwrap(), call.content_budget);
    assert_eq!(report.end, AgentEnd::ToolLimitReached);
    assert_guarded(&p, &sent);
}

#[tokio::test]
async fn a_batch_the_budget_cannot_hold_is_left_out_and_the_model_answers() {
    // A budget that holds the question and the first call's result but not a second batch.
    let (p, spec) = pipeline(4, Some(120));
    let model = Scripted::always_calling(4);
    let tools = Tools::new(vec![("c1", ToolOutput::Text("word ".repeat(500)))]);
    let mut state = PipelineState::new("q");
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    assert_eq!(report.end, AgentEnd::BudgetExhausted);
    let sent = model.requests();
    assert_eq!(sent.len(), 3);
    assert!(sent[2].tools.is_empty());
    // The dropped batch (c2) is not in the transcript: every call sent has its result.
    assert!(sent[2].messages.iter().all(|m| m.tool_calls.iter().all(|c| c.id == "c1")));
    assert_eq!(tool_messages(&sent[2]).len(), 1);
    assert_guarded(&p, &sent);
}

#[tokio::test]
async fn an_unknown_tool_is_answered_and_counts_as_a_call() {
    let (p, spec) = pipeline(1, None);
    let model = Scripted::new(vec![calls(&[("x1", "delete_everything")])], "ok");
    let tools = Tools::new(vec![]);
    let mut state = PipelineState::new("q");
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    assert!(tools.seen().is_empty());
    assert_eq!(report.tool_calls[0].kind, ToolCallKind::UnknownTool);
    let result = tool_messages(&model.requests()[1])[0].content.clone();
    assert_eq!(result, "unknown tool `delete_everything`; the tools are `search_docs`");
    assert_eq!(report.end, AgentEnd::ToolLimitReached);
}

/// Handlers that parse their arguments as `{"query": String}`.
struct Typed;

impl crate::pipeline::ToolHandlers for Typed {
    async fn call(&self, _step: &str, request: crate::pipeline::ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
        #[derive(serde::Deserialize)]
        struct Args {
            #[allow(dead_code)]
            query: String,
        }
        let _: Args = request.args()?;
        Ok(ToolOutput::Text("found".into()))
    }
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_reported_to_the_model_not_fatal() {
    let (p, spec) = pipeline(2, None);
    let mut bad = calls(&[("c1", "search_docs")]);
    bad.tool_calls[0].arguments = r#"{"q": 1}"#.into();
    let model = Scripted::new(vec![bad, calls(&[("c2", "search_docs")])], "ok");
    let mut state = PipelineState::new("q");
    let env = StepEnv::builder().model(&model).tools(&Typed);
    let (_, detail) = agent(&p, "answer", &spec, &mut state, &env).await.unwrap();
    let StepDetail::Agent(report) = detail else { panic!("{detail:?}") };
    let kinds: Vec<ToolCallKind> = report.tool_calls.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [ToolCallKind::InvalidArguments, ToolCallKind::Handled]);
    let sent = model.requests();
    let first = tool_messages(&sent[1])[0].content.clone();
    assert!(first.starts_with("invalid arguments for `search_docs`: missing field `query`"), "{first}");
    assert_eq!(tool_messages(&sent[2])[1].content, "found");
    assert_eq!(report.end, AgentEnd::ToolLimitReached);
}

#[tokio::test]
async fn signed_thinking_stays_on_its_tool_calls_unchanged_in_every_later_request() {
    let (p, spec) = pipeline(3, None);
    let signed = |n: usize| {
        crate::chat::SignedThinking::new(serde_json::json!({
            "type": "thinking", "thinking": format!("step {n}: search again"), "signature": format!("sig-{n}==")
        }))
    };
    let mut first = calls(&[("c1", "search_docs")]);
    first.thinking = vec![signed(1)];
    let mut second = calls(&[("c2", "search_docs"), ("c3", "search_docs")]);
    second.thinking = vec![
        signed(2),
        crate::chat::SignedThinking::new(serde_json::json!({"type": "redacted_thinking", "data": "x"})),
    ];
    let model = Scripted::new(vec![first.clone(), second.clone()], "done");
    let tools = Tools::new(vec![]);
    let mut state = PipelineState::new("Why?");
    run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_guarded(&p, &requests);
    // Each assistant message of calls carries exactly the blocks its reply had, in order, and is
    // followed by its results: one unit, in every request after it.
    for r in &requests[1..] {
        let assistants: Vec<&ChatMessage> = r.messages.iter().filter(|m| !m.tool_calls.is_empty()).collect();
        assert_eq!(assistants[0].thinking, first.thinking);
        if let Some(a) = assistants.get(1) {
            assert_eq!(a.thinking, second.thinking);
        }
        for a in assistants {
            let at = r.messages.iter().position(|m| std::ptr::eq(m, a)).unwrap();
            let results: Vec<&str> = r.messages[at + 1..at + 1 + a.tool_calls.len()]
                .iter()
                .filter_map(|m| m.tool_call_id.as_deref())
                .collect();
            let ids: Vec<&str> = a.tool_calls.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(results, ids);
        }
    }
    assert_eq!(requests[2].messages.iter().filter(|m| !m.thinking.is_empty()).count(), 2);
}

#[tokio::test]
async fn history_keeps_the_question_and_the_answer_not_the_tool_turns() {
    let (p, spec) = pipeline(2, None);
    let model = Scripted::always_calling(1);
    let tools = Tools::new(vec![]);
    let mut state = PipelineState::new("Why?");
    state.history_dialog = vec![ChatMessage::user("earlier"), ChatMessage::assistant("reply")];
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    assert_eq!(report.end, AgentEnd::Answered);
    assert_eq!(report.history_messages, 2);
    assert_eq!(
        state.history_dialog,
        vec![
            ChatMessage::user("earlier"),
            ChatMessage::assistant("reply"),
            ChatMessage::user("Why?"),
            ChatMessage::assistant("done")
        ]
    );
}

#[tokio::test]
async fn a_handler_error_names_step_and_tool_and_changes_nothing() {
    let (p, spec) = pipeline(2, None);
    let model = Scripted::always_calling(2);
    let mut tools = Tools::new(vec![]);
    tools.fail = Some("index offline".into());
    let mut state = PipelineState::new("q");
    state.history_dialog = vec![ChatMessage::user("earlier"), ChatMessage::assistant("reply")];
    let before = state.clone();
    let err = run(&p, &spec, &mut state, &model, &tools).await.unwrap_err();
    assert_eq!(err.code(), "AGENT_TOOL_FAILED");
    let text = err.to_string();
    for part in ["step `answer`", "tool `search_docs`", "call `c1`", "index offline"] {
        assert!(text.contains(part), "{part} missing from {text}");
    }
    // A handler returns its own error with `?`; the step is named once, by the step.
    assert_eq!(text, "step `answer`: tool `search_docs` failed on call `c1`: index offline");
    assert_eq!(state, before);
}

/// A tool that fails with an error of ctx's own: the step's error is still `AGENT_TOOL_FAILED`
/// (one behaviour for every error a handler returns, as `ToolHandlers::call` and the guide say),
/// and the tool's own error, with its code, is its source.
#[tokio::test]
async fn a_ctx_error_from_a_tool_is_agent_tool_failed_with_the_original_as_source() {
    struct Failing;
    impl crate::pipeline::ToolHandlers for Failing {
        async fn call(&self, _step: &str, _request: crate::pipeline::ToolRequest<'_>) -> Result<ToolOutput, BoxError> {
            let inner: CtxError =
                PipelineError::MissingSource { step: "lookup".into(), source_name: "notes".into() }.into();
            Err(inner.into())
        }
    }
    let (p, spec) = pipeline(2, None);
    let model = Scripted::always_calling(1);
    let mut state = PipelineState::new("q");
    let before = state.clone();
    let env = StepEnv::builder().model(&model).tools(&Failing);
    let err = agent(&p, "answer", &spec, &mut state, &env).await.unwrap_err();
    assert_eq!(err.code(), "AGENT_TOOL_FAILED");
    let mut chain = std::error::Error::source(&err);
    let source = loop {
        match chain {
            Some(e) => match e.downcast_ref::<CtxError>() {
                Some(inner) => break inner,
                None => chain = e.source(),
            },
            None => panic!("the tool's CtxError is not in the source chain of {err:?}"),
        }
    };
    assert_eq!(source.code(), "PIPELINE_MISSING_SOURCE");
    assert_eq!(state, before);
}

#[tokio::test]
async fn missing_backends_are_named() {
    let (p, spec) = pipeline(2, None);
    let model = Scripted::always_calling(1);
    let mut state = PipelineState::new("q");
    let err = agent(&p, "answer", &spec, &mut state, &StepEnv::builder().model(&model)).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_MISSING_BACKEND");
    assert!(err.to_string().contains("ToolHandlers") && err.to_string().contains(".tools("), "{err}");
    let tools = Tools::new(vec![]);
    let err = agent(&p, "answer", &spec, &mut state, &StepEnv::builder().tools(&tools)).await.unwrap_err();
    assert_eq!(err.code(), "PIPELINE_MISSING_BACKEND");
    assert!(model.requests().is_empty());
}

#[test]
fn the_contract_reports_the_tool_schemas_the_turn_budget_and_the_request_bound() {
    let (p, spec) = pipeline(3, None);
    let budget = p.contract_report().step("answer").unwrap();
    let schemas = spec.schemas();
    let tools = p.counter().format().count_tools(p.counter(), &schemas).unwrap();
    assert!(tools > 0);
    assert_eq!(budget.tool_schema_tokens, tools);
    assert_eq!(budget.max_model_requests, 4);
    let priming = p.counter().count_messages(&[]).unwrap();
    assert_eq!(budget.turn_budget_tokens, Some(16_384 - 600 - 128 - tools - priming));
}

#[test]
fn the_run_bound_on_model_requests_and_the_graph_label() {
    let (p, _) = pipeline(3, None);
    // One step, visited once, making at most four requests.
    assert_eq!((p.step_bound(), p.model_request_bound()), (1, 4));
    let mermaid = crate::pipeline::to_mermaid(p.definition());
    assert!(mermaid.contains("answer<br/><i>agent, at most 3 tool calls</i>"), "{mermaid}");
    let calls_only = testing::loaded(testing::def(vec![testing::call("answer", "answer", "end")]));
    assert_eq!(calls_only.model_request_bound(), 1);
}

/// Asked without tools after the limit, a model that answers *and* asks for a stray tool call
/// has answered: the text is kept (the call cannot run, no tools were offered). Only a reply with
/// no text is the typed error.
#[tokio::test]
async fn an_answer_with_a_stray_tool_call_after_the_limit_is_kept() {
    let (p, spec) = pipeline(1, None);
    let mut stray = calls(&[("c2", "search_docs")]);
    stray.content = "Rotate the keys from the admin console.".into();
    let model = Scripted::stubborn(vec![calls(&[("c1", "search_docs")]), stray], "unused");
    let tools = Tools::new(vec![]);
    let mut state = PipelineState::new("How do I rotate keys?");
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    assert_eq!(report.end, AgentEnd::ToolLimitReached);
    assert_eq!(report.requests.len(), 2);
    assert_eq!(report.requests[1].tool_calls_requested, 1, "the stray call is reported");
    assert_eq!(state.last_model_response.as_deref(), Some("Rotate the keys from the admin console."));

    let model = Scripted::stubborn(vec![calls(&[("c1", "search_docs")]), calls(&[("c2", "search_docs")])], "unused");
    let mut state = PipelineState::new("How do I rotate keys?");
    let before = state.clone();
    let err = run(&p, &spec, &mut state, &model, &tools).await.unwrap_err();
    assert_eq!(err.code(), Code::AgentToolCallsAfterLimit);
    assert!(!err.to_string().contains("  "), "one space between words: {err}");
    assert_eq!(state, before, "a failed step changes nothing");
}

/// The fixture's agent step (`max_tool_calls: 2`), priced at $2.00 / $8.00 per million tokens,
/// with a run cap of `cap` billionths of a dollar when given.
fn priced(cap: Option<u64>) -> (LoadedPipeline, AgentSpec) {
    let (p, spec) = pipeline(2, None);
    let mut def = p.definition().clone();
    let crate::pipeline::definition::ModelSource::Inline(m) = &mut def.model else { unreachable!() };
    *m = m.clone().price(Some(crate::pipeline::definition::PriceSpec::default().input(Some(2.0)).output(Some(8.0))));
    let opts = match cap {
        Some(cap) => crate::pipeline::LoadOptions::new().max_cost_per_run(cap as f64 / 1e9),
        None => crate::pipeline::LoadOptions::new(),
    };
    (LoadedPipeline::load(def, opts).unwrap_or_else(|e| panic!("{e}")), spec)
}

#[tokio::test]
async fn a_spend_cap_asks_for_the_answer_without_tools_when_that_fits_and_stops_when_not() {
    let script = || Scripted::new(vec![calls(&[("c1", "search_docs")])], "the answer");
    let tools = Tools::new(vec![]);
    // Uncapped: one tool call, then the answer to a request that still offers the tools.
    let (p, spec) = priced(None);
    let model = script();
    let report = run(&p, &spec, &mut PipelineState::new("q?"), &model, &tools).await.unwrap();
    let sent = model.requests();
    assert_eq!((sent.len(), report.end), (2, AgentEnd::Answered));
    assert!(!sent[1].tools.is_empty());
    let price = p.price().unwrap();
    let first = report.requests[0].request.spend.unwrap().nano_usd;
    // The second request at worst, with its tools and without them.
    let with_tools = price.worst_nano_usd(report.requests[1].request.prompt_tokens, sent[1].max_tokens);
    let plain_prompt = p.counter().count_request(&sent[1].messages, &[]).unwrap();
    let plain = price.worst_nano_usd(plain_prompt, sent[1].max_tokens);
    assert!(plain < with_tools, "{plain} < {with_tools}");

    // A cap the request with tools could pass and the one without fits: the model is asked for
    // its answer without tools.
    let (p, spec) = priced(Some(first + plain));
    let model = script();
    let mut state = PipelineState::new("q?");
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    let sent = model.requests();
    assert_eq!((sent.len(), report.end), (2, AgentEnd::SpendCapReached));
    assert!(sent[1].tools.is_empty());
    let spent: u64 = report.requests.iter().map(|r| r.request.spend.unwrap().nano_usd).sum();
    assert_eq!(state.spend.run_nano_usd, spent);
    assert!(spent <= first + plain);

    // One billionth less: neither fits, the step stops with what was spent and what is left;
    // the state keeps nothing but the spend of the first request.
    let (p, spec) = priced(Some(first + plain - 1));
    let model = script();
    let mut state = PipelineState::new("q?");
    let before = state.clone();
    let err = run(&p, &spec, &mut state, &model, &tools).await.unwrap_err();
    assert_eq!(err.code(), Code::PipelineSpendCapReached);
    let crate::error::CtxError::Pipeline(PipelineError::SpendCapReached { spent_nano_usd, cap_nano_usd, .. }) = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!((*spent_nano_usd, *cap_nano_usd), (first, first + plain - 1));
    assert_eq!(model.requests().len(), 1);
    assert_eq!(state.spend.run_nano_usd, first);
    state.spend = before.spend.clone();
    assert_eq!(state, before);
}

#[tokio::test]
async fn an_agent_that_renders_the_context_appends_the_fetched_texts_first_and_one_that_does_not_leaves_them() {
    // The default user parts render the context.
    let mut def = testing::def(vec![testing::fetch("fetch", "answer"), testing::agent("answer", "end")]);
    let StepKind::Agent(spec) = &mut def.steps[1].kind else { unreachable!() };
    spec.call.user_parts = Vec::new();
    let spec = spec.clone();
    let p = testing::loaded(def);
    let model = Scripted::new(vec![], "the answer");
    let tools = Tools::new(vec![]);
    let mut state = PipelineState::new("When does the deploy run?");
    state.node_texts = vec![crate::state::NodeText::new("deploy.md", "The deploy runs at noon.")];
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    let evidence = report.evidence.as_ref().expect("appended");
    assert_eq!((evidence.step_id.as_str(), evidence.nodes.len()), ("answer", 1));
    assert!(state.node_texts.is_empty());
    assert_eq!(state.context_blocks.len(), 1);
    let block = &state.context_blocks[0];
    assert!(block.starts_with("--- NODE ---\nid: deploy.md\n") && block.ends_with("text:\nThe deploy runs at noon."));
    let sent = model.requests();
    let user = &sent[0].messages.last().unwrap().content;
    assert!(user.starts_with("### Context:\n--- NODE ---\nid: deploy.md\n"), "{user}");
    assert!(user.ends_with("### User:\nWhen does the deploy run?\n\n"), "{user}");
    let nodes: Vec<&[String]> = report.requests[0]
        .request
        .anatomy
        .parts
        .iter()
        .filter(|p| p.kind == crate::report::PartKind::Context)
        .map(|p| p.nodes.as_slice())
        .collect();
    assert_eq!(nodes, [["deploy.md".to_owned()].as_slice()]);

    // The fixture's own parts (the question only) leave the texts where they are (texts a
    // custom step or the caller left: straight after a fetch, such a step is refused at load).
    let mut def = testing::def(vec![testing::agent("answer", "end")]);
    let StepKind::Agent(spec) = &mut def.steps[0].kind else { unreachable!() };
    let spec = spec.clone();
    let p = testing::loaded(def);
    assert!(!p.takes_fetched_texts("answer"));
    let model = Scripted::new(vec![], "the answer");
    let mut state = PipelineState::new("When does the deploy run?");
    state.node_texts = vec![crate::state::NodeText::new("deploy.md", "The deploy runs at noon.")];
    let report = run(&p, &spec, &mut state, &model, &tools).await.unwrap();
    assert_eq!(report.evidence, None);
    assert_eq!(state.node_texts.len(), 1);
    assert!(state.context_blocks.is_empty());
}

#[tokio::test]
async fn a_tools_only_agent_runs_without_a_context_budget_and_its_worst_case_counts_no_context() {
    // The fixture's agent sends the question as its user message: no request renders the context.
    let mut def = testing::def(vec![testing::agent("answer", "end")]);
    // A declared question budget: by default the question takes the room the window leaves,
    // which would hide what the context budget costs.
    def.settings.max_question_tokens = Some(500);
    let with_budget = testing::loaded(def.clone());
    def.settings.max_context_tokens = None;
    let p = testing::loaded(def);
    assert_eq!(p.max_context_tokens(), 0);
    let worst = p.contract_report().step("answer").unwrap();
    let before = with_budget.contract_report().step("answer").unwrap();
    assert_eq!((worst.context_tokens, before.context_tokens), (0, 9_000));
    assert_eq!(before.total_tokens() - worst.total_tokens(), 9_000);
    let StepKind::Agent(spec) = &p.definition().steps[0].kind else { unreachable!() };
    let model = Scripted::new(vec![calls(&[("c1", "search_docs")])], "the answer");
    let tools = Tools::new(vec![]);
    let mut state = PipelineState::new("How do I rotate keys?");
    let report = run(&p, spec, &mut state, &model, &tools).await.unwrap();
    assert_eq!(report.requests.len(), 2);
    assert_guarded(&p, &model.requests());
    assert_eq!(state.last_model_response.as_deref(), Some("the answer"));
}
