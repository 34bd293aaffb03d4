//! Output negotiation: flexbox_negotiation.md's three examples with exact inputs, trimming for the
//! floor, and the property that no negotiated request exceeds the window.

use ctx_runtime::history::message_tokens;
use ctx_runtime::negotiate::{NegotiationConfig, NegotiationError, NegotiationRequest, negotiate_max_output};
use ctx_runtime::{ChatMessage, Encoding, ErrorCode, TokenCounter, ToolCall, ToolSchema};
use proptest::prelude::*;
use serde_json::json;

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

const WORDS: &[&str] = &["room", "message", "history", "token", "window", "model", "answer", "question", "data"];

/// A text of exactly `n` tokens (checked).
fn exact_text(c: &TokenCounter, n: usize, seed: usize) -> String {
    let text = (0..n).map(|i| WORDS[(i * 5 + seed) % WORDS.len()]).collect::<Vec<_>>().join(" ");
    assert_eq!(c.count(&text).unwrap(), n);
    text
}

/// `count` alternating user/assistant messages of exactly `cost` tokens each as sent.
fn messages(c: &TokenCounter, count: usize, cost: usize) -> Vec<ChatMessage> {
    (0..count)
        .map(|i| {
            let make = if i % 2 == 0 { ChatMessage::user } else { ChatMessage::assistant };
            let m = make(exact_text(c, cost - 4, i)); // 3 per message + 1 for the role
            assert_eq!(message_tokens(c, &m).unwrap(), cost);
            m
        })
        .collect()
}

/// A request whose exact input is `input` tokens: `history_len` history messages and one pending
/// question of 250 tokens each, and a system prompt sized to make up the rest.
fn request(
    c: &TokenCounter,
    model: &str,
    window: Option<usize>,
    requested: usize,
    history_len: usize,
    input: usize,
) -> NegotiationRequest {
    let mut all = messages(c, history_len + 1, 250);
    let pending = all.pop().unwrap();
    // 3 reply priming + 250 per message + the system message (3 + 1 + content).
    let system_content = input - 3 - 250 * (history_len + 1) - 4;
    let req = NegotiationRequest::new(model, requested)
        .context_window(window)
        .system_prompt(Some(exact_text(c, system_content, 99)))
        .history(all)
        .pending(vec![pending]);
    let n = c.count_request(&[ChatMessage::system(req.system_prompt.clone().unwrap())], &[]).unwrap();
    assert_eq!(n + 250 * (history_len + 1), input);
    req
}

/// Example 1: plenty of room. llama3.2:3b (128K, a window from the model configuration since
/// tiktoken-rs does not know the model), 1,750 input tokens, 3,000 requested: granted as asked.
#[test]
fn example_1_plenty_of_room() {
    let c = counter();
    let req = request(&c, "llama3.2:3b", Some(128_000), 3_000, 4, 1_750);
    let n = negotiate_max_output(&req, &c).unwrap();
    assert_eq!(n.meta.input_tokens, 1_750);
    assert_eq!(c.count_request(&n.messages, &n.tools).unwrap(), 1_750);
    assert_eq!(128_000 - 1_750 - 100, 126_150); // the spec's "available"
    assert_eq!(n.max_output_tokens, 3_000);
    assert!(!n.meta.reduced);
    assert_eq!(n.meta.history_messages_dropped, 0);
}

/// Example 2: reduced. gpt-3.5-turbo (16,385 from tiktoken-rs's table), 13,000 input tokens,
/// 5,000 requested: 3,285 granted.
#[test]
fn example_2_reduced_to_fit() {
    let c = counter();
    let req = request(&c, "gpt-3.5-turbo", None, 5_000, 49, 13_000);
    let n = negotiate_max_output(&req, &c).unwrap();
    assert_eq!(n.meta.context_window, 16_385);
    assert_eq!(n.meta.input_tokens, 13_000);
    assert_eq!(n.max_output_tokens, 3_285);
    assert!(n.meta.reduced);
    assert_eq!(n.meta.history_messages_dropped, 0);
    assert_eq!(n.meta.input_tokens + n.max_output_tokens + 100, 16_385);
}

/// Example 3: the floor. deepseek-coder:6.7b (16,000), 15,500 input tokens, 3,000 requested. The
/// spec grants the 500-token floor and overflows the window by 100; we drop the oldest history
/// message (250 tokens) so the floor fits, and grant what is then available.
#[test]
fn example_3_floor_without_overflow() {
    let c = counter();
    let req = request(&c, "deepseek-coder:6.7b", Some(16_000), 3_000, 59, 15_500);
    let mut untrimmed = vec![ChatMessage::system(req.system_prompt.clone().unwrap())];
    untrimmed.extend(req.history.iter().cloned());
    untrimmed.extend(req.pending.iter().cloned());
    let full_input = c.count_request(&untrimmed, &[]).unwrap();
    assert_eq!(full_input, 15_500);
    let spec_grant = 500.max(3_000.min(16_000usize.saturating_sub(full_input + 100)));
    assert_eq!(spec_grant, 500);
    assert!(full_input + spec_grant + 100 > 16_000, "the spec's answer overflows the window");
    let n = negotiate_max_output(&req, &c).unwrap();
    assert_eq!(n.meta.history_messages_dropped, 1);
    assert_eq!(n.meta.input_tokens, 15_250);
    assert_eq!(n.max_output_tokens, 650);
    assert!(n.meta.reduced);
    assert_eq!(&n.messages[1..n.messages.len() - 1], &req.history[1..]);
    assert_eq!(n.messages.last(), req.pending.last(), "the question is never trimmed");
    assert!(c.count_request(&n.messages, &n.tools).unwrap() + n.max_output_tokens + 100 <= 16_000);
}

#[test]
fn memories_and_tool_schemas_are_counted_as_sent() {
    let c = counter();
    let tools = vec![ToolSchema::new(
        "search_kb",
        "Search the knowledge base.",
        json!({"type": "object", "properties": {"query": {"type": "string", "description": "What to find"}}}),
    )];
    let req = NegotiationRequest::new("support-model", 1_000)
        .context_window(Some(4_096))
        .system_prompt(Some("You are a support agent.".into()))
        .memories(vec!["The user is on the Pro plan.".into(), "Prefers short answers.".into()])
        .pending(vec![ChatMessage::user("Can I export invoices?")])
        .tools(tools.clone());
    let n = negotiate_max_output(&req, &c).unwrap();
    assert_eq!(n.messages.len(), 3);
    assert!(n.messages[1].content.contains("Prefers short answers."));
    let exact = c.count_request(&n.messages, &tools).unwrap();
    assert_eq!(n.meta.input_tokens, exact);
    assert!(exact > c.count_messages(&n.messages).unwrap(), "the tool schema costs tokens");
    let request = n.into_chat_request();
    assert_eq!((request.max_tokens, request.predicted_prompt_tokens), (1_000, Some(exact)));
}

#[test]
fn the_oldest_tool_call_leaves_with_its_results() {
    let c = counter();
    let call = ToolCall::new("c1", "search_kb", "{\"query\":\"invoices\"}");
    let history = vec![
        ChatMessage::assistant_tool_calls("", vec![call]),
        ChatMessage::tool_result("c1", exact_text(&c, 300, 1)),
        ChatMessage::assistant(exact_text(&c, 100, 2)),
    ];
    let pending = vec![ChatMessage::user("and now?")];
    let base = NegotiationRequest::new("m", 800).pending(pending).context_window(Some(1_000));
    let fixed = c.count_request(&base.pending, &[]).unwrap();
    // Room for the floor only once the call message is gone; its result must go with it.
    let req = base.history(history);
    let n = negotiate_max_output(&req, &c).unwrap();
    assert_eq!(n.meta.history_messages_dropped, 2);
    assert_eq!(n.meta.input_tokens, fixed + message_tokens(&c, &req.history[2]).unwrap());
    assert!(n.meta.input_tokens + n.max_output_tokens + 100 <= 1_000);
}

#[test]
fn no_room_for_the_floor_is_a_typed_error() {
    let c = counter();
    let req = NegotiationRequest::new("tiny-model", 1_000)
        .context_window(Some(600))
        .system_prompt(Some(exact_text(&c, 200, 3)))
        .history(messages(&c, 4, 250))
        .pending(vec![ChatMessage::user("hi")]);
    let err = negotiate_max_output(&req, &c).unwrap_err();
    assert_eq!(err.code(), "NEGOTIATION_NO_ROOM");
    let NegotiationError::NoRoomForFloor { fixed_input, needed, context_window, .. } = err else { unreachable!() };
    let head = [ChatMessage::system(req.system_prompt.clone().unwrap()), req.pending[0].clone()];
    assert_eq!(fixed_input, c.count_request(&head, &[]).unwrap());
    assert_eq!((needed, context_window), (fixed_input + 600, 600));
}

fn history_strategy() -> impl Strategy<Value = Vec<ChatMessage>> {
    let text = "[a-zA-Z0-9 .,é]{0,120}";
    let group = prop_oneof![
        text.prop_map(|t| vec![ChatMessage::user(t)]),
        text.prop_map(|t| vec![ChatMessage::assistant(t)]),
        (text, text, 0u32..1000).prop_map(|(a, r, id)| {
            let call = ToolCall::new(format!("c{id}"), "lookup", format!("{{\"q\":\"{a}\"}}"));
            vec![ChatMessage::assistant_tool_calls("", vec![call]), ChatMessage::tool_result(format!("c{id}"), r)]
        }),
    ];
    prop::collection::vec(group, 0..10).prop_map(|g| g.into_iter().flatten().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// No negotiated request exceeds the window, counted on the exact messages and tools it sends.
    #[test]
    fn a_negotiated_request_never_exceeds_the_window(
        system in proptest::option::of("[a-z ]{0,300}"),
        memories in prop::collection::vec("[a-z ]{1,60}", 0..3),
        history in history_strategy(),
        question in "[a-z ?]{1,80}",
        with_tool in any::<bool>(),
        window in 50usize..2_500,
        requested in 1usize..2_000,
        margin in 0usize..200,
        floor in 1usize..700,
    ) {
        let c = counter();
        let tools = if with_tool {
            vec![ToolSchema::new("lookup", "Look a record up.", json!({"type": "object", "properties": {"q": {"type": "string", "description": "The key"}}}))]
        } else {
            vec![]
        };
        let req = NegotiationRequest::new("any-model", requested).context_window(Some(window)).system_prompt(system).memories(memories).history(history).pending(vec![ChatMessage::user(question)]).tools(tools).config(NegotiationConfig::default().safety_margin(margin).floor(floor));
        let floor = floor.min(requested);
        match negotiate_max_output(&req, &c) {
            Ok(n) => {
                let sent = c.count_request(&n.messages, &n.tools).unwrap();
                prop_assert_eq!(sent, n.meta.input_tokens);
                prop_assert!(sent + n.max_output_tokens + margin <= window);
                prop_assert!(n.max_output_tokens >= floor && n.max_output_tokens <= requested);
                prop_assert_eq!(n.meta.reduced, n.max_output_tokens < requested);
                // The kept history is a suffix of the original, the question is last.
                let kept = &req.history[n.meta.history_messages_dropped..];
                prop_assert_eq!(&n.messages[n.messages.len() - 1 - kept.len()..n.messages.len() - 1], kept);
                prop_assert_eq!(n.messages.last(), req.pending.last());
                if n.meta.history_messages_dropped > 0 {
                    // Dropping happened only because the floor did not fit with the whole history.
                    let mut full = n.messages[..n.messages.len() - 1 - kept.len()].to_vec();
                    full.extend(req.history.iter().cloned());
                    full.extend(req.pending.iter().cloned());
                    prop_assert!(c.count_request(&full, &req.tools).unwrap() + margin + floor > window);
                }
            }
            Err(NegotiationError::NoRoomForFloor { fixed_input, .. }) => {
                prop_assert!(fixed_input + margin + floor > window);
            }
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        }
    }
}
