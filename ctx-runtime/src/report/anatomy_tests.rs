//! The anatomy adds up to the guard's count, whatever the request holds.

use super::*;
use crate::chat::ToolCall;
use crate::tokens::Encoding;
use proptest::prelude::*;

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

fn segments(context: &[String], question: &str) -> Vec<UserSegment> {
    let rendered = crate::state::render_context_blocks(context);
    vec![
        UserSegment::new("context_blocks", "### Context:\n{}\n\n", &rendered, Some(context)),
        UserSegment::new("user_question", "### User:\n{}\n\n", question, None),
    ]
}

fn request(history: &[ChatMessage], context: &[String], question: &str) -> (Vec<ChatMessage>, Vec<UserSegment>) {
    let segs = segments(context, question);
    let user = crate::contract::render_user_message([
        ("### Context:\n{}\n\n", crate::state::render_context_blocks(context).as_str()),
        ("### User:\n{}\n\n", question),
    ]);
    (crate::contract::prompt_messages("Answer from the context.", history, user), segs)
}

fn measured(messages: &[ChatMessage], tools: &[ToolSchema], history: usize, segs: &[UserSegment]) -> RequestAnatomy {
    let c = counter();
    let prompt = c.count_request(messages, tools).unwrap();
    measure(&c, messages, tools, &Layout { history, user: segs }, (prompt, 500, 128, 8_192))
}

#[test]
fn parts_follow_the_request_and_add_up_to_its_count() {
    let history = [ChatMessage::user("What is a total?"), ChatMessage::assistant("The sum of the lines.")];
    let context = vec![
        "--- NODE ---\nid: usp_Total\ntext:\nSELECT SUM(NetAmount) FROM dbo.InvoiceLines;".to_owned(),
        "--- NODE ---\nid: Invoice.cs\ntext:\npublic decimal Total => Lines.Sum(l => l.Net);".to_owned(),
    ];
    let (messages, segs) = request(&history, &context, "How is tax rounded?");
    let a = measured(&messages, &[], 2, &segs);
    let kinds: Vec<(PartKind, &str)> = a.parts.iter().map(|p| (p.kind, p.label.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (PartKind::System, "system prompt"),
            (PartKind::History, "user message 1"),
            (PartKind::History, "assistant message 2"),
            (PartKind::Context, "node usp_Total"),
            (PartKind::Context, "node Invoice.cs"),
            (PartKind::Question, "user_question"),
            (PartKind::ChatFormat, "reply priming"),
        ]
    );
    assert_eq!(a.parts_total(), a.prompt_tokens);
    assert_eq!(a.parts[3].nodes, ["usp_Total"]);
    // A message's part is its exact cost; the system prompt is one message.
    let c = counter();
    assert_eq!(a.parts[0].tokens, c.message_costs(&messages).unwrap()[0]);
    assert_eq!(a.parts[6].tokens, 3);
    // The window adds up too.
    let window: usize = a.window_parts().iter().map(|p| p.tokens).sum();
    assert_eq!(window, 8_192);
}

#[test]
fn a_tool_call_and_its_results_are_one_block_and_tools_are_counted() {
    let call = ToolCall::new("c1", "search_docs", r#"{"query":"tax"}"#);
    let (mut messages, segs) = request(&[], &[], "q");
    messages.push(ChatMessage::assistant_tool_calls("", vec![call]));
    messages.push(ChatMessage::tool_result("c1", "Tax is rounded per line."));
    let tools = [ToolSchema::new(
        "search_docs",
        "Search the docs",
        serde_json::json!({"type":"object","properties":{"query":{"type":"string"}}}),
    )];
    let a = measured(&messages, &tools, 0, &segs);
    assert_eq!(a.parts_total(), a.prompt_tokens);
    let turn: Vec<&RequestPart> = a.parts.iter().filter(|p| p.kind == PartKind::ToolTurn).collect();
    assert_eq!(turn.len(), 1, "{:?}", a.parts);
    assert_eq!(turn[0].label, "tool call search_docs + result");
    let c = counter();
    let costs = c.message_costs(&messages).unwrap();
    assert_eq!(turn[0].tokens, costs[2] + costs[3]);
    assert_eq!(
        a.tokens_of(PartKind::Tools),
        c.count_request(&messages, &tools).unwrap() - c.count_messages(&messages).unwrap()
    );
    assert_eq!(a.parts[2].label, "context (empty)");
}

#[test]
fn segments_that_do_not_spell_the_message_leave_it_whole_and_exact() {
    let (messages, _) = request(&[], &["block".to_owned()], "q");
    let wrong = segments(&["another block".to_owned()], "q");
    let a = measured(&messages, &[], 0, &wrong);
    assert_eq!(a.parts.len(), 1);
    assert_eq!(a.parts[0].kind, PartKind::Unsplit);
    assert_eq!(a.parts_total(), a.prompt_tokens);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Seams anywhere (mid-word, in whitespace runs, inside digits): the parts are never
    /// negative and add up to the exact count.
    #[test]
    fn the_parts_add_up_for_any_text(
        blocks in proptest::collection::vec("[a-z0-9 \\n{}.]{0,40}", 0..5),
        question in "[a-zA-Z0-9 \\n?]{0,30}",
        history in proptest::collection::vec("[a-z ]{0,20}", 0..4),
    ) {
        let history: Vec<ChatMessage> = history.into_iter().enumerate()
            .map(|(i, t)| if i % 2 == 0 { ChatMessage::user(t) } else { ChatMessage::assistant(t) })
            .collect();
        let (messages, segs) = request(&history, &blocks, &question);
        let a = measured(&messages, &[], history.len(), &segs);
        prop_assert_eq!(a.parts_total(), a.prompt_tokens);
        prop_assert!(a.parts.iter().all(|p| p.kind != PartKind::Unsplit), "{:?}", a.parts);
    }
}

/// Cutting a request counts it again; a run that nobody reports on or traces must not pay that
/// on every request. The step report holds the request, and cuts it when first read.
#[tokio::test]
async fn a_request_is_cut_only_when_a_report_reads_it() {
    use crate::pipeline::{StepDetail, StepEnv, testing};
    use crate::state::PipelineState;

    let p = testing::loaded(testing::def(vec![testing::call("answer", "answer", "end")]));
    let model = crate::llm::offline::OfflineModel::new(p.counter().clone());
    let mut state = PipelineState::new("How is the total computed?");
    state.context_blocks = vec!["--- NODE ---\nid: dbo.Total\n\nSELECT SUM(Amount) FROM dbo.Orders".to_owned()];
    let (_, reports) = p.run(state, &StepEnv::builder().model(&model)).await.expect("the step runs");
    let StepDetail::CallModel(call) = &reports[0].detail else { panic!("{reports:?}") };
    assert!(!call.request.anatomy.is_cut(), "no subscriber took the span: nothing was cut on the request's path");
    let copy = call.request.anatomy.clone();
    assert_eq!(call.request.anatomy.parts_total(), call.request.prompt_tokens);
    assert!(call.request.anatomy.is_cut() && copy.is_cut(), "clones share the cut");
    assert!(call.request.anatomy.parts.iter().any(|p| p.kind == PartKind::Context && p.nodes == ["dbo.Total"]));
}
