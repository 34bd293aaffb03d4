//! History trimming: tool pairs, edge cases, a 217k-token conversation, and a differential
//! property test against the naive "recount after every removal" trim.

mod history_corpus;

use history_corpus::{naive_trim, no_orphans};

use std::collections::HashSet;
use std::sync::Arc;

use ctx_runtime::history::{
    HistoryError, HistoryTrimPolicy, history_tokens, message_tokens, trim_history, trim_history_in_place,
    trim_history_with,
};
use ctx_runtime::tokens::BpeBackend;
use ctx_runtime::{ChatFormat, ChatMessage, Encoding, Role, TokenCounter, ToolCall};
use proptest::prelude::*;

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

fn call(id: &str) -> ToolCall {
    ToolCall::new(id, "search_kb", format!("{{\"query\":\"{id}\"}}"))
}

fn tool_history() -> Vec<ChatMessage> {
    vec![
        ChatMessage::user("Which invoices failed last night?"),
        ChatMessage::assistant_tool_calls("", vec![call("c1"), call("c2")]),
        ChatMessage::tool_result("c1", "invoice 1041 failed: card expired; invoice 1042 failed: timeout"),
        ChatMessage::tool_result("c2", "retry queue holds 2 items"),
        ChatMessage::assistant("Two invoices failed: 1041 (card expired) and 1042 (timeout)."),
        ChatMessage::user("Retry 1042."),
    ]
}

#[test]
fn a_tool_call_and_its_results_leave_together() {
    let c = counter();
    let h = tool_history();
    // Room for everything from the first tool result on, but not for the call message.
    let max = history_tokens(&c, &h[2..]).unwrap();
    let trim = trim_history(&h, max, &c).unwrap();
    assert_eq!(trim.first_kept, 4, "the results left with their call");
    assert_eq!(trim.removed, 4);
    assert_eq!(trim.kept_tokens, history_tokens(&c, &h[4..]).unwrap());
    assert!(no_orphans(&trim.kept(&h)));
    // With room for the call too, all three stay.
    let trim = trim_history(&h, history_tokens(&c, &h[1..]).unwrap(), &c).unwrap();
    assert_eq!(trim.first_kept, 1);
}

#[test]
fn an_empty_history_costs_nothing() {
    let trim = trim_history(&[], 0, &counter()).unwrap();
    assert_eq!((trim.first_kept, trim.removed, trim.kept_tokens), (0, 0, 0));
}

#[test]
fn when_nothing_fits_everything_goes() {
    let c = counter();
    let h = tool_history();
    let smallest = h.iter().map(|m| message_tokens(&c, m).unwrap()).min().unwrap();
    let trim = trim_history(&h, smallest - 1, &c).unwrap();
    assert_eq!((trim.first_kept, trim.removed, trim.kept_tokens), (h.len(), h.len(), 0));
    assert!(trim.kept(&h).is_empty());
    // Only the newest message is too large: it goes too, nothing older is kept after a gap.
    let mut h2 = vec![ChatMessage::user("short"), ChatMessage::user("long ".repeat(500))];
    let trim = trim_history_in_place(&mut h2, 50, &c).unwrap();
    assert_eq!(trim.first_kept, 2);
    assert!(h2.is_empty());
}

#[test]
fn the_boundary_is_exact() {
    let c = counter();
    let h = tool_history();
    let suffix = history_tokens(&c, &h[4..]).unwrap();
    assert_eq!(trim_history(&h, suffix, &c).unwrap().first_kept, 4);
    assert_eq!(trim_history(&h, suffix, &c).unwrap().kept_tokens, suffix);
    assert_eq!(trim_history(&h, suffix - 1, &c).unwrap().first_kept, 5);
    let all = history_tokens(&c, &h).unwrap();
    assert_eq!(trim_history(&h, all, &c).unwrap().first_kept, 0);
    assert_eq!(trim_history(&h, all - 1, &c).unwrap().first_kept, 1);
    // The kept cost is what count_messages charges for those messages, priming aside.
    assert_eq!(suffix + 3, c.count_messages(&h[4..]).unwrap());
}

#[test]
fn in_place_trim_keeps_exactly_the_kept_slice() {
    let c = counter();
    let h = tool_history();
    let mut v = h.clone();
    let trim = trim_history_in_place(&mut v, history_tokens(&c, &h[3..]).unwrap(), &c).unwrap();
    assert_eq!(v.as_slice(), trim.kept(&h));
    assert_eq!(trim.first_kept, 4);
}

/// A conversation of about 217,000 tokens (the size in llama_index#12264) is trimmed by counting
/// each text once: the tokenizer runs once per distinct text, however many messages are removed.
#[test]
fn trims_a_217k_token_conversation_counting_each_text_once() {
    let shared = counter();
    let (history, total) = history_corpus::conversation(&shared, 217_000, 12_264);
    assert!((217_000..222_000).contains(&total), "{total}");
    assert_eq!(history_tokens(&shared, &history).unwrap(), total);
    let roles: HashSet<Role> = history.iter().map(|m| m.role).collect();
    assert_eq!(roles.len(), 3, "users, assistants and tools");

    // A fresh counter with a cache large enough to never evict: every miss is one tokenization.
    let fresh =
        TokenCounter::with_backend(Arc::new(BpeBackend::new(Encoding::Cl100kBase)), ChatFormat::openai(), 1 << 20);
    // What one count of the whole conversation tokenizes: every distinct text the chat format
    // counts, once.
    let once =
        TokenCounter::with_backend(Arc::new(BpeBackend::new(Encoding::Cl100kBase)), ChatFormat::openai(), 1 << 20);
    once.count_messages(&history).unwrap();

    for max in [16_000, 100_000, 200_000] {
        let trim = trim_history(&history, max, &fresh).unwrap();
        let kept = trim.kept(&history);
        assert!(trim.removed > 0);
        assert_eq!(trim.kept_tokens, history_tokens(&shared, &kept).unwrap());
        assert!(trim.kept_tokens <= max);
        assert!(no_orphans(&kept));
        // Minimal removal: the closest earlier cut without orphans does not fit.
        let previous = (0..trim.first_kept).rev().find(|&p| no_orphans(&history[p..])).unwrap();
        assert!(history_tokens(&shared, &history[previous..]).unwrap() > max);
    }
    assert_eq!(
        fresh.cache_stats().misses,
        once.cache_stats().misses,
        "three trims tokenize each distinct text exactly once, as one count of the conversation does"
    );
}

#[derive(Debug, Clone)]
enum Group {
    User(String),
    Assistant(String),
    Tools(Vec<String>),
}

fn group() -> impl Strategy<Value = Group> {
    let text = "[a-zA-Z0-9 ,.!?é日]{0,60}";
    prop_oneof![
        text.prop_map(Group::User),
        text.prop_map(Group::Assistant),
        prop::collection::vec(text, 1..4).prop_map(Group::Tools),
    ]
}

fn build(groups: &[Group]) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    for (n, g) in groups.iter().enumerate() {
        match g {
            Group::User(t) => out.push(ChatMessage::user(t.clone())),
            Group::Assistant(t) => out.push(ChatMessage::assistant(t.clone())),
            Group::Tools(results) => {
                let calls: Vec<ToolCall> = (0..results.len()).map(|k| call(&format!("c{n}_{k}"))).collect();
                // Signed thinking rides on the message of its calls (Anthropic's extended thinking).
                let thinking = ctx_runtime::chat::SignedThinking::new(
                    serde_json::json!({"type": "thinking", "thinking": format!("plan {n}"), "signature": format!("s{n}")}),
                );
                out.push(ChatMessage::assistant_tool_calls("", calls.clone()).with_thinking(vec![thinking]));
                for (c, r) in calls.iter().zip(results) {
                    out.push(ChatMessage::tool_result(c.id.clone(), r.clone()));
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The incremental trim keeps exactly what the naive recount-everything trim keeps.
    #[test]
    fn incremental_trim_equals_the_naive_trim(groups in prop::collection::vec(group(), 0..12), slack in 0usize..400) {
        let c = counter();
        let h = build(&groups);
        let total = history_tokens(&c, &h).unwrap();
        let max = slack.min(total + 5);
        let trim = trim_history(&h, max, &c).unwrap();
        prop_assert_eq!(trim.first_kept, naive_trim(&h, max, &c));
        prop_assert_eq!(trim.kept_tokens, history_tokens(&c, &trim.kept(&h)).unwrap());
        prop_assert!(trim.kept_tokens <= max);
        prop_assert!(no_orphans(&trim.kept(&h)));
    }

    /// With a leading system message: it is always kept and counted, the rest is trimmed as the
    /// naive trim of what follows it would, under the budget the system message leaves; when it
    /// alone is over the budget, the trim is an error.
    #[test]
    fn a_leading_system_message_is_kept_and_the_rest_trimmed_naively(
        system in "[a-zA-Z ,.]{0,40}",
        groups in prop::collection::vec(group(), 0..10),
        slack in 0usize..400,
    ) {
        let c = counter();
        let mut h = vec![ChatMessage::system(system)];
        h.extend(build(&groups));
        let total = history_tokens(&c, &h).unwrap();
        let max = slack.min(total + 5);
        let system_tokens = message_tokens(&c, &h[0]).unwrap();
        match trim_history(&h, max, &c) {
            Err(HistoryError::SystemOverBudget { system_tokens: s, max_tokens }) => {
                prop_assert_eq!((s, max_tokens), (system_tokens, max));
                prop_assert!(system_tokens > max);
            }
            Err(other) => prop_assert!(false, "{other}"),
            Ok(trim) => {
                prop_assert!(system_tokens <= max);
                let kept = trim.kept(&h);
                prop_assert_eq!(&kept[0], &h[0]);
                prop_assert_eq!(trim.first_kept, naive_with_system(&h, max, &c));
                prop_assert_eq!(trim.kept_tokens, history_tokens(&c, &kept).unwrap());
                prop_assert!(trim.kept_tokens <= max);
                prop_assert!(no_orphans(&kept[1..]));
                prop_assert_eq!(trim.removed + kept.len(), h.len());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Both policies, on random histories with tool units (calls with their signed thinking and
    /// results) and random budgets: the kept part is within the budget (exactly counted), an
    /// unedited suffix of the history starting at a cut that separates no call from its results, and a fold drops at least what oldest-first drops —
    /// down to its low-water mark unless that would leave nothing the budget could hold.
    #[test]
    fn both_policies_stay_within_the_budget_and_keep_units_whole(
        system in proptest::option::of("[a-zA-Z ,.]{0,40}"),
        groups in prop::collection::vec(group(), 0..12),
        slack in 0usize..500,
        low_water in 1u8..100,
    ) {
        let c = counter();
        let mut h: Vec<ChatMessage> = system.into_iter().map(ChatMessage::system).collect();
        let head = h.len();
        h.extend(build(&groups));
        let total = history_tokens(&c, &h).unwrap();
        let max = slack.min(total + 5);
        let fold = HistoryTrimPolicy::Fold { low_water_percent: low_water };
        for policy in [HistoryTrimPolicy::OldestFirst, fold] {
            match trim_history_with(&h, max, policy, &c) {
                Err(HistoryError::SystemOverBudget { .. }) => {
                    prop_assert!(head == 1 && message_tokens(&c, &h[0]).unwrap() > max);
                }
                Err(other) => prop_assert!(false, "{other}"),
                Ok(trim) => {
                    let kept = trim.kept(&h);
                    prop_assert_eq!(trim.kept_tokens, history_tokens(&c, &kept).unwrap());
                    prop_assert!(trim.kept_tokens <= max, "{:?}: {} > {}", policy, trim.kept_tokens, max);
                    prop_assert!(no_orphans(&kept[head..]));
                    prop_assert_eq!(&kept[..head], &h[..head]);
                    prop_assert_eq!(&kept[head..], &h[trim.first_kept..]);
                    let oldest = trim_history(&h, max, &c).unwrap();
                    prop_assert!(trim.first_kept >= oldest.first_kept);
                    if policy == fold && oldest.removed > 0 && trim.first_kept < h.len() && trim != oldest {
                        prop_assert!(trim.kept_tokens <= fold.cut_to(max));
                    }
                    if total <= max {
                        prop_assert_eq!(trim.removed, 0, "{:?}: a history within its budget is kept whole", policy);
                    }
                }
            }
        }
    }
}

/// The naive trim of `history[1..]` with `history[0]` (a system message) always in front.
fn naive_with_system(history: &[ChatMessage], max: usize, counter: &TokenCounter) -> usize {
    (1..history.len())
        .find(|&first| {
            let kept: Vec<ChatMessage> = history[..1].iter().chain(&history[first..]).cloned().collect();
            no_orphans(&history[first..]) && history_tokens(counter, &kept).unwrap() <= max
        })
        .unwrap_or(history.len())
}
