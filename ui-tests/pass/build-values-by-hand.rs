//! A user's crate with `ctx` as its one dependency (default features) builds by hand every
//! value a program or a test of its own commonly makes: messages, tool calls and schemas, a
//! state with history and retrieved texts, a model's request and reply, the budget, retry and
//! negotiation options, a saved run. (The model clients' configurations, behind the `openai` and
//! `anthropic` features, and the index options of `bm25` are shown by their doc examples.) Those structs are `#[non_exhaustive]` (a new field is not a
//! breaking change), so this is done with their constructors and setters alone; their fields
//! stay readable.

use std::collections::BTreeMap;

use ctx::budget::BudgetOptions;
use ctx::config::{LimitsPolicy, ModelConfig, Settings};
use ctx::llm::{ChatRequest, ChatResponse, ModelParams, Usage};
use ctx::negotiate::{NegotiationConfig, NegotiationRequest};
use ctx::definition::ValidateOptions;
use ctx::pipeline::Snapshot;
use ctx::{
    ChatMessage, ConfigIssue, ConfigIssues, Encoding, FieldPath, InboxMessage, NodeText, PipelineState, Role, ToolCall,
    ToolSchema,
};

fn main() {
    let call = ToolCall::new("call_1", "search", r#"{"query":"budget"}"#);
    let parameters = r#"{"type":"object","properties":{"query":{"type":"string"}}}"#.parse().unwrap();
    let tool = ToolSchema::new("search", "Searches the docs.", parameters);
    let history = vec![
        ChatMessage::user("What does the contract check?"),
        ChatMessage::assistant_tool_calls("", vec![call.clone()]),
        ChatMessage::tool_result("call_1", "The budget of every request."),
        ChatMessage::new(Role::Assistant, "Every request's budget.").with_name("bot"),
    ];
    let node = NodeText::new("a.md", "# A").with_path("docs/a.md").metadata(BTreeMap::new());
    let state = PipelineState::new("And the output?")
        .history_dialog(history.clone())
        .node_texts(vec![node])
        .inbox(vec![InboxMessage::new("manage", "compact").payload(Some("now".into()))]);
    assert_eq!((state.history_dialog.len(), state.node_texts[0].path.as_deref()), (4, Some("docs/a.md")));

    let request = ChatRequest::new(history.clone(), 256)
        .tools(vec![tool.clone()])
        .params(ModelParams::default().temperature(Some(0.0)))
        .step_id(Some("answer".into()));
    let reply = ChatResponse::new("Its output limit too.")
        .tool_calls(vec![call])
        .usage(Some(Usage::new(120, 6)))
        .finish_reason(Some("stop".into()));
    assert_eq!((request.max_tokens, reply.content.as_str()), (256, "Its output limit too."));

    let model = ModelConfig::new(16_384, Encoding::Cl100kBase).model(Some("gpt-4o".into())).max_tokens(Some(1_024));
    let settings = Settings::new(9_000).max_history_tokens(Some(2_000)).policy(LimitsPolicy::AutoClamp);
    assert_eq!((model.context_window, settings.safety_margin_tokens), (16_384, 128));

    let negotiation = NegotiationRequest::new("gpt-4o", 1_000)
        .context_window(Some(16_384))
        .history(history)
        .pending(vec![ChatMessage::user("Thanks.")])
        .tools(vec![tool])
        .config(NegotiationConfig::default().floor(200));
    assert_eq!(negotiation.config.floor, 200);
    // A field the constructor takes is a setter too: a copy asking for less, for another model.
    let smaller = negotiation.clone().model("gpt-4o-mini".into()).requested_max_tokens(500);
    assert_eq!((smaller.requested_max_tokens, negotiation.requested_max_tokens), (500, 1_000));

    let _budget = BudgetOptions::default();
    let _validate = ValidateOptions::default().check_tokens(false);
    let saved = Snapshot::new("answer", state);
    assert!(!saved.is_finished());
    let issues = ConfigIssues::new("config.json", vec![ConfigIssue::new(ctx::Code::ConfigInvalid, FieldPath::root(), "bad")]);
    assert_eq!(issues.issues.len(), 1);
}
