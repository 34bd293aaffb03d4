//! History trimming on any conversation and budget: never panics; what is kept fits and is
//! reported with its exact cost; no tool result is kept without its call; removing one message
//! fewer would not fit.

#![no_main]

use arbitrary::Arbitrary;
use ctx_runtime::history::{history_tokens, trim_history};
use ctx_runtime::{ChatMessage, Encoding, Role, TokenCounter, ToolCall};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Msg {
    User(String),
    Assistant(String),
    Calls(Vec<(u8, String)>),
    Result(u8, String),
}

fn build(messages: Vec<Msg>) -> Vec<ChatMessage> {
    messages
        .into_iter()
        .take(40)
        .map(|m| match m {
            Msg::User(t) => ChatMessage::user(t),
            Msg::Assistant(t) => ChatMessage::assistant(t),
            Msg::Calls(calls) => ChatMessage::assistant_tool_calls(
                "",
                calls
                    .into_iter()
                    .take(3)
                    .map(|(id, args)| ToolCall::new(format!("c{}", id % 8), "search", args))
                    .collect(),
            ),
            Msg::Result(id, t) => ChatMessage::tool_result(format!("c{}", id % 8), t),
        })
        .collect()
}

fuzz_target!(|input: (u16, Vec<Msg>)| {
    let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
    let max = usize::from(input.0);
    let history = build(input.1);
    let trim = trim_history(&history, max, &counter).expect("counting never fails on a str");
    let kept = trim.kept(&history);
    assert_eq!(trim.first_kept, trim.removed);
    assert_eq!(kept.len() + trim.removed, history.len());
    assert_eq!(trim.kept_tokens, history_tokens(&counter, &kept).unwrap(), "kept_tokens is not exact");
    assert!(trim.kept_tokens <= max, "kept {} > {max}", trim.kept_tokens);
    // No kept tool result whose call was dropped, and no allowed cut keeping more fits.
    for cut in 0..=trim.first_kept {
        if !orphans_nothing(&history, cut) {
            assert!(cut != trim.first_kept, "the kept part separates a result from its call");
            continue;
        }
        if cut < trim.first_kept {
            let tokens = history_tokens(&counter, &history[cut..]).unwrap();
            assert!(tokens > max, "dropping only {cut} messages ({tokens} tokens) would fit {max}");
        }
    }
});

/// Whether keeping `history[cut..]` keeps every result whose call was made before it with its
/// call, and does not start with a tool result. Keeping everything or nothing is always allowed
/// (a history that starts with a result is the caller's, not the trim's doing).
fn orphans_nothing(history: &[ChatMessage], cut: usize) -> bool {
    if cut == 0 || cut == history.len() {
        return true;
    }
    if history[cut].role == Role::Tool {
        return false;
    }
    let mut caller: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (j, m) in history.iter().enumerate() {
        for c in &m.tool_calls {
            caller.insert(c.id.as_str(), j);
        }
        if j >= cut
            && m.role == Role::Tool
            && let Some(&a) = m.tool_call_id.as_deref().and_then(|id| caller.get(id))
            && a < cut
        {
            return false;
        }
    }
    true
}
