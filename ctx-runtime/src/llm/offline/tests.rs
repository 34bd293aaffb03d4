use proptest::prelude::*;

use super::*;
use crate::chat::ChatMessage;

fn node(id: &str, text: &str) -> String {
    format!("{NODE_MARKER}\nid: {id}\npath: {id}\nlanguage: sql\ncompact: false\ntext:\n{text}")
}

fn context() -> String {
    [
        node(
            "db/usp_GetOrderTotals.sql",
            "CREATE PROCEDURE usp_GetOrderTotals @CustomerId INT AS\nBEGIN\n  SELECT o.Id, SUM(l.Price * l.Quantity) AS Total\n  FROM Orders o JOIN OrderLines l ON l.OrderId = o.Id\n  WHERE o.CustomerId = @CustomerId\n  GROUP BY o.Id\nEND",
        ),
        node(
            "src/Customer.cs",
            "public class Customer\n{\n    public int Id { get; set; }\n    public string Name { get; set; }\n}",
        ),
        node("src/Shipping.cs", "public decimal ShippingCost(decimal weight) => weight * 1.5m;"),
    ]
    .join("\n\n")
}

fn request(system: &str, question: &str, max_tokens: usize) -> ChatRequest {
    let user = format!("### Context:\n{}\n\n### User:\n{question}\n\n", context());
    ChatRequest::new(vec![ChatMessage::system(system), ChatMessage::user(user)], max_tokens)
}

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

const QUESTION: &str = "How is the order total of a customer computed?";

#[test]
fn names_itself_and_picks_the_task_from_the_system_prompt() {
    let model = OfflineModel::default();
    assert_eq!(model.model_name(), "offline-extractive");
    assert_eq!(model.task_for(&request("Summarise the context.", QUESTION, 10)), OfflineTask::Summarize);
    assert_eq!(model.task_for(&request("Write a SUMMARY.", QUESTION, 10)), OfflineTask::Summarize);
    assert_eq!(model.task_for(&request("Answer the question.", QUESTION, 10)), OfflineTask::Answer);
    let fixed = OfflineModel::default().with_task(OfflineTask::Summarize);
    assert_eq!(fixed.task_for(&request("Answer the question.", QUESTION, 10)), OfflineTask::Summarize);
}

#[test]
fn answers_quote_the_best_lines_with_their_node_ids() {
    let model = OfflineModel::default();
    let reply = model.reply(&request("Answer from the context.", QUESTION, 200)).expect("reply");
    let lines: Vec<&str> = reply.content.lines().collect();
    assert_eq!(lines[0], ANSWER_NOTICE);
    assert!(lines[1].starts_with("[db/usp_GetOrderTotals.sql] "), "{}", reply.content);
    assert!(reply.content.contains("[db/usp_GetOrderTotals.sql] SELECT o.Id, SUM(l.Price * l.Quantity) AS Total"));
    assert!(reply.content.contains("[src/Customer.cs] public class Customer"), "{}", reply.content);
    assert!(!reply.content.contains("Shipping"), "unrelated lines are not quoted: {}", reply.content);
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(model.reply(&request("Answer from the context.", QUESTION, 200)).expect("reply"), reply);
}

#[test]
fn a_question_without_overlap_gets_an_honest_answer() {
    let reply = OfflineModel::default().reply(&request("Answer.", "kubernetes helm chart?", 100)).expect("reply");
    assert_eq!(reply.content, NO_MATCH_ANSWER);
}

#[test]
fn summaries_keep_relevant_lines_inside_their_node_blocks() {
    let model = OfflineModel::default();
    let reply = model.reply(&request("Summarize the context for the question.", QUESTION, 60)).expect("reply");
    let c = counter();
    assert!(c.count(&reply.content).expect("count") <= 60);
    assert!(reply.content.starts_with("--- NODE ---\nid: db/usp_GetOrderTotals.sql\ntext:\n"), "{}", reply.content);
    assert!(!reply.content.contains("Shipping"), "{}", reply.content);
    assert!(!reply.content.contains("BEGIN"), "lines without shared terms are dropped: {}", reply.content);
    // A summary is context again: the next request still sees its node ids.
    let again = ParsedRequest::parse(&[ChatMessage::user(format!("{}\n### User:\nq", reply.content))]);
    assert_eq!(again.nodes.first().and_then(|n| n.id.as_deref()), Some("db/usp_GetOrderTotals.sql"));
    // Kept lines stay in document order.
    let create = reply.content.find("CREATE PROCEDURE usp_GetOrderTotals").expect("kept");
    let where_ = reply.content.find("WHERE o.CustomerId").expect("kept");
    assert!(create < where_);
    // Fewer lines is the model's choice, not a reply cut short: a pipeline warns about `length`.
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
    // With room for everything relevant, every matching line of every node is kept.
    let roomy = model.reply(&request("Summarize.", QUESTION, 500)).expect("reply");
    assert!(roomy.content.contains("AS Total"), "{}", roomy.content);
    assert!(
        roomy.content.contains("--- NODE ---\nid: src/Customer.cs\ntext:\npublic class Customer"),
        "{}",
        roomy.content
    );
    assert_eq!(roomy.finish_reason.as_deref(), Some("stop"));
}

#[test]
fn usage_is_the_exact_count_of_request_and_reply() {
    let model = OfflineModel::default();
    let mut req = request("Answer.", QUESTION, 50);
    req.tools.push(crate::chat::ToolSchema::new(
        "search",
        "Search the code.",
        serde_json::json!({"type": "object", "properties": {"q": {"type": "string"}}}),
    ));
    // Offered a tool, it calls it first; the completion is the call's arguments.
    let reply = model.reply(&req).expect("reply");
    let c = counter();
    let usage = reply.usage.expect("usage");
    assert_eq!(usage.prompt_tokens, c.count_request(&req.messages, &req.tools).expect("count"));
    let call = reply.tool_calls.first().expect("a tool call").clone();
    assert_eq!(usage.completion_tokens, c.count(&call.arguments).expect("count"));
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    // With its result in, it answers from it.
    req.messages.push(ChatMessage::assistant_tool_calls("", vec![call.clone()]));
    req.messages.push(ChatMessage::tool_result(
        call.id,
        "<document id=\"db/orders.sql\">\nSELECT SUM(total) FROM Orders\n</document>",
    ));
    let reply = model.reply(&req).expect("reply");
    let usage = reply.usage.expect("usage");
    assert!(reply.tool_calls.is_empty());
    assert!(reply.content.contains("[db/orders.sql] SELECT SUM(total) FROM Orders"), "{}", reply.content);
    assert_eq!(usage.prompt_tokens, c.count_request(&req.messages, &req.tools).expect("count"));
    assert_eq!(usage.completion_tokens, c.count(&reply.content).expect("count"));
}

#[test]
fn every_limit_is_respected_and_reported() {
    let model = OfflineModel::default();
    let c = counter();
    let full = model.reply(&request("Answer.", QUESTION, 10_000)).expect("reply");
    let full_tokens = c.count(&full.content).expect("count");
    for system in ["Answer.", "Summarise."] {
        for max in 0..=full_tokens + 3 {
            let reply = model.reply(&request(system, QUESTION, max)).expect("reply");
            let n = c.count(&reply.content).expect("count");
            assert!(n <= max, "{system} max {max}: {n} tokens\n{}", reply.content);
            assert_eq!(reply.usage.map(|u| u.completion_tokens), Some(n));
        }
    }
    // Leaving a line out is an answer that ends where the model ended it; only a reply cut at a
    // token boundary (not even the notice fits) is `length`.
    let short = model.reply(&request("Answer.", QUESTION, full_tokens - 1)).expect("reply");
    assert_eq!(short.finish_reason.as_deref(), Some("stop"));
    let cut = model.reply(&request("Answer.", QUESTION, 2)).expect("reply");
    assert_eq!(cut.finish_reason.as_deref(), Some("length"));
}

#[tokio::test]
async fn streaming_hands_over_the_reply_in_pieces() {
    let model = OfflineModel::default();
    let req = request("Answer.", QUESTION, 200);
    let mut pieces = Vec::new();
    let reply = model.chat_stream(&req, &mut |p| pieces.push(p.to_owned())).await.expect("reply");
    assert!(pieces.len() > 1);
    assert_eq!(pieces.concat(), reply.content);
    assert_eq!(model.chat(&req).await.expect("reply"), reply);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any context, any question, any limit: the reply fits and its usage is its exact count.
    #[test]
    fn never_exceeds_max_tokens(
        texts in proptest::collection::vec("[a-zA-Z_ (){};=\n]{0,80}", 0..6),
        question in "[a-zA-Z ]{0,30}",
        max in 0usize..120,
        summarise in any::<bool>(),
    ) {
        let nodes: Vec<String> = texts.iter().enumerate().map(|(i, t)| node(&format!("n{i}"), t)).collect();
        let user = format!("### Context:\n{}\n\n### User:\n{question}", nodes.join("\n\n"));
        let system = if summarise { "Summarise." } else { "Answer." };
        let req = ChatRequest::new(vec![ChatMessage::system(system), ChatMessage::user(user)], max);
        let reply = OfflineModel::default().reply(&req).expect("reply");
        let n = counter().count(&reply.content).expect("count");
        prop_assert!(n <= max);
        prop_assert_eq!(reply.usage.map(|u| u.completion_tokens), Some(n));
    }
}
