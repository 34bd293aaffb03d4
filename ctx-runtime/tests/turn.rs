//! Progressive budgeting of an agent turn: the spec's worked example with exact token inputs,
//! packing policies, logs, and properties of the ledger and the packer.

use std::io::Write;
use std::sync::{Arc, Mutex};

use ctx_runtime::compact::{CompactError, CompactRequest, FnCompactor};
use ctx_runtime::history::{history_tokens, message_tokens};
use ctx_runtime::turn::{
    DocumentFormat, Inclusion, Partial, PartialPolicy, RankedDocument, TurnBudgetConfig, TurnError, TurnLedger,
    dedup_by_id, pack_documents,
};
use ctx_runtime::{ChatMessage, Encoding, ErrorCode, TokenCounter, ToolCall};
use proptest::prelude::*;

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

/// Words that are one cl100k token alone and after a space, so a text of n of them joined by
/// spaces is exactly n tokens (checked, not assumed).
const WORDS: &[&str] = &[
    "system", "process", "data", "user", "workflow", "form", "record", "field", "value", "business", "model",
    "service", "account", "report", "task", "request", "status", "change", "list", "table", "role", "access",
];

fn exact_text(c: &TokenCounter, n: usize, seed: usize) -> String {
    let mut text = String::with_capacity(n * 8);
    for i in 0..n {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(WORDS[(i * 7 + seed * 13 + i / 5) % WORDS.len()]);
    }
    assert_eq!(c.count(&text).unwrap(), n, "exact_text({n}) must count {n}");
    text
}

/// A message of exactly `cost` tokens as a request sees it ([`message_tokens`]).
fn message_of(c: &TokenCounter, make: fn(String) -> ChatMessage, cost: usize, seed: usize) -> ChatMessage {
    let frame = message_tokens(c, &make(String::new())).unwrap();
    let m = make(exact_text(c, cost - frame, seed));
    assert_eq!(message_tokens(c, &m).unwrap(), cost);
    m
}

fn call(id: &str, query: &str) -> ToolCall {
    ToolCall::new(id, "retrieve_context", format!("{{\"query\":\"{query}\"}}"))
}

/// A `MakeWriter` that keeps everything logged.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

/// progressive_budgeting.md, "Example: 3 Tool Calls in One Turn": a 10,000-token conversation,
/// 252,000 tokens available for the first call, articles A 36K, B 20K, C 15K; then A again with
/// D 25K and E 20K; then F 22K and G 18K. Every input has the exact count the spec gives; what our
/// accounting adds on top (the tool-call messages, the document frames and separators, the tool
/// message overhead) is measured, and every figure the ledger reports equals an exact recount of
/// the transcript as it stands.
#[test]
fn spec_worked_example_three_calls_article_a_twice() {
    let c = counter();
    let conversation = vec![
        message_of(&c, ChatMessage::system, 1_200, 1),
        message_of(&c, ChatMessage::user, 3_000, 2),
        message_of(&c, ChatMessage::assistant, 5_700, 3),
        message_of(&c, ChatMessage::user, 100, 4), // the question of this turn
    ];
    assert_eq!(history_tokens(&c, &conversation).unwrap(), 10_000);
    let sizes =
        [("A", 36_000), ("B", 20_000), ("C", 15_000), ("D", 25_000), ("E", 20_000), ("F", 22_000), ("G", 18_000)];
    let article = |id: &str| {
        let (i, (_, n)) = sizes.iter().enumerate().find(|(_, (a, _))| *a == id).unwrap();
        RankedDocument::new(id, exact_text(&c, *n, 10 + i))
    };
    let calls = [
        (call("call_1", "Comindware features"), vec![article("A"), article("B"), article("C")]),
        (call("call_2", "Comindware integrations"), vec![article("A"), article("D"), article("E")]),
        (call("call_3", "Comindware architecture"), vec![article("F"), article("G")]),
    ];

    let config = TurnBudgetConfig::new(262_000, 272_000);
    let mut ledger = TurnLedger::with_messages(config, c.clone(), &conversation).unwrap();
    assert_eq!(ledger.available(), 252_000, "the spec's first budget");
    let mut transcript = conversation.clone();
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt().with_writer(logs.clone()).with_ansi(false).finish();
    // tracing caches each callsite's interest for the whole process, and while at most one
    // dispatcher exists it asks the subscriber of the thread that reaches the callsite first: a
    // test running in parallel without a subscriber would silence the callsite here too. With a
    // second dispatcher alive, the interest is asked of every live dispatcher, this one included.
    let _anchor = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());

    let mut rows = Vec::new();
    tracing::subscriber::with_default(subscriber, || {
        for (tool_call, ranked) in &calls {
            let assistant = ChatMessage::assistant_tool_calls("", vec![tool_call.clone()]);
            ledger.add_message(&assistant).unwrap();
            transcript.push(assistant);
            let reserved_before = ledger.reserved();
            assert_eq!(reserved_before, history_tokens(&c, &transcript).unwrap(), "exact, incremental");
            let budget = ledger.call_budget(tool_call).unwrap();
            let packed = ledger.pack(&budget, ranked, None).unwrap();
            let message = ledger.record(&tool_call.id, &packed).unwrap();
            assert_eq!(packed.tokens, c.count(&message.content).unwrap());
            assert!(packed.tokens <= budget.content_tokens);
            transcript.push(message);
            assert_eq!(ledger.reserved(), history_tokens(&c, &transcript).unwrap());
            let returned: usize = packed.included.iter().map(|d| c.count(&d.text).unwrap()).sum();
            rows.push((reserved_before, budget.available, returned, packed));
        }
    });

    // Which articles each call returned: A only once.
    let ids = |k: usize| rows[k].3.included.iter().map(|d| d.id.as_str()).collect::<Vec<_>>();
    assert_eq!(ids(0), ["A", "B", "C"]);
    assert_eq!(ids(1), ["D", "E"]);
    assert_eq!(rows[1].3.duplicates, ["A"]);
    assert_eq!(ids(2), ["F", "G"]);
    assert!(rows.iter().all(|r| r.3.included.iter().all(|d| d.inclusion == Inclusion::Whole)));
    // The articles' own tokens are the spec's: 71K, 45K (A skipped), 40K; 156K in all.
    assert_eq!([rows[0].2, rows[1].2, rows[2].2], [71_000, 45_000, 40_000]);

    // Reserved before each call: the spec's 10K, 81K, 126K plus what the spec does not count.
    let call_msgs: Vec<usize> = calls
        .iter()
        .map(|(tc, _)| message_tokens(&c, &ChatMessage::assistant_tool_calls("", vec![tc.clone()])).unwrap())
        .collect();
    // A result's cost in the transcript: its framing names the function of the call it answers.
    let costs = c.message_costs(&transcript).unwrap();
    let result_msgs: Vec<usize> = costs.iter().skip(4).skip(1).step_by(2).copied().collect();
    assert_eq!(rows[0].0, 10_000 + call_msgs[0]);
    assert_eq!(rows[1].0, 10_000 + call_msgs[0] + result_msgs[0] + call_msgs[1]);
    assert_eq!(rows[2].0, rows[1].0 + result_msgs[1] + call_msgs[2]);
    let framing: Vec<usize> = (0..3).map(|k| result_msgs[k] - rows[k].2).collect();
    for (k, f) in framing.iter().enumerate() {
        // Document frames, separators, the tool message's role, id and overhead: measured, small.
        assert!(*f > 0 && *f < 40 * rows[k].3.included.len(), "call {k}: framing {f}");
    }
    assert_eq!(rows[1].0 - call_msgs[0] - call_msgs[1] - framing[0], 81_000, "the spec's 81K");
    assert_eq!(rows[2].0 - call_msgs.iter().sum::<usize>() - framing[0] - framing[1], 126_000, "the spec's 126K");
    eprintln!("call | reserved before | available | articles returned | result message");
    for (k, r) in rows.iter().enumerate() {
        eprintln!("{} | {} | {} | {} | {}", k + 1, r.0, r.1, r.2, result_msgs[k]);
    }

    // The turn ends with seven unique documents, in the order first seen.
    let seen: Vec<&str> = ledger.documents().iter().map(|d| d.id.as_str()).collect();
    assert_eq!(seen, ["A", "B", "C", "D", "E", "F", "G"]);
    let b = ledger.breakdown();
    assert_eq!((b.conversation, b.unique_documents, b.calls), (10_000, 7, 3));
    assert_eq!(b.reserved, 10_000 + 156_000 + call_msgs.iter().sum::<usize>() + framing.iter().sum::<usize>());
    assert!(ledger.reserved() <= 262_000);

    // The spec's log breakdown, one line per call.
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let budget_lines: Vec<&str> = text.lines().filter(|l| l.contains("retrieval budget")).collect();
    assert_eq!(budget_lines.len(), 3);
    for (k, line) in budget_lines.iter().enumerate() {
        assert!(line.contains(&format!("reserved={}", rows[k].0)), "{line}");
        assert!(line.contains("conversation=10000"), "{line}");
        assert!(line.contains(&format!("unique_documents={}", [0, 3, 5][k])), "{line}");
        assert!(line.contains(&format!("accumulated_tools={}", rows[k].0 - 10_000)), "{line}");
    }

    // The fallback check at 80% of the window, on the exact final request.
    let verdict = ledger.fallback_check(&transcript, &[]).unwrap();
    assert_eq!(verdict.request_tokens, c.count_request(&transcript, &[]).unwrap());
    assert_eq!(verdict.threshold, 217_600);
    assert!(!verdict.exceeded);
}

/// A document larger than everything left can never push a result over: it is left out, or cut
/// at a token boundary to exactly the room left, and the question stays whole.
#[test]
fn a_result_larger_than_the_remaining_budget_never_overflows() {
    let c = counter();
    let question = ChatMessage::user("Summarise every incident report from 2023, please.");
    let huge = RankedDocument::new("all-reports", exact_text(&c, 30_000, 3));
    for policy in [PartialPolicy::Skip, PartialPolicy::Truncate] {
        let config = TurnBudgetConfig::new(5_000, 8_192).with_partial(policy);
        let mut ledger = TurnLedger::with_messages(config, c.clone(), std::slice::from_ref(&question)).unwrap();
        let tc = call("c1", "incidents 2023");
        let assistant = ChatMessage::assistant_tool_calls("", vec![tc.clone()]);
        ledger.add_message(&assistant).unwrap();
        let budget = ledger.call_budget(&tc).unwrap();
        let (message, packed) = ledger.answer_call(&tc, std::slice::from_ref(&huge), None).unwrap();
        let transcript = [question.clone(), assistant, message];
        assert_eq!(ledger.reserved(), history_tokens(&c, &transcript).unwrap());
        assert!(ledger.reserved() <= 5_000);
        assert_eq!(transcript[0], question);
        match policy {
            PartialPolicy::Skip => {
                assert!(packed.included.is_empty());
                assert_eq!(packed.left_out, ["all-reports"]);
            }
            _ => {
                assert_eq!(packed.included[0].inclusion, Inclusion::Truncated);
                assert!(packed.tokens <= budget.content_tokens);
                assert!(packed.tokens + 10 >= budget.content_tokens, "{} of {}", packed.tokens, budget.content_tokens);
                assert!(huge.text.starts_with(
                    packed.included[0].text.trim_end_matches(&DocumentFormat::default().truncation_marker)
                ));
            }
        }
    }
}

#[test]
fn compaction_is_checked_and_a_failure_changes_nothing() {
    let c = counter();
    let config = TurnBudgetConfig::new(2_000, 8_192).with_partial(PartialPolicy::Compact);
    let mut ledger = TurnLedger::new(config, c.clone()).unwrap();
    let big = [RankedDocument::new("kb-1", exact_text(&c, 5_000, 1))];

    let honest = FnCompactor::new(|r: &CompactRequest<'_>| {
        Ok(r.text.split(' ').take(r.max_tokens.unwrap_or(0) / 2).collect::<Vec<_>>().join(" "))
    });
    let b = ledger.call_budget(&call("c1", "q")).unwrap();
    let p = ledger.pack(&b, &big, Some(&honest)).unwrap();
    assert_eq!(p.included[0].inclusion, Inclusion::Compacted { truncated: false });
    assert!(p.tokens <= b.content_tokens);

    // A compactor that ignores the limit is cut to fit and flagged.
    let greedy = FnCompactor::new(|r: &CompactRequest<'_>| Ok(format!("{} {}", r.text, r.text)));
    let p = ledger.pack(&b, &big, Some(&greedy)).unwrap();
    assert_eq!(p.included[0].inclusion, Inclusion::Compacted { truncated: true });
    assert!(p.tokens <= b.content_tokens);

    let failing = FnCompactor::new(|r: &CompactRequest<'_>| {
        Err(CompactError::Other(format!("model down while compacting {}", r.id)))
    });
    let before = ledger.breakdown();
    let err = ledger.answer_call(&call("c1", "q"), &big, Some(&failing)).unwrap_err();
    assert!(matches!(err, TurnError::Compactor { ref document_id, .. } if document_id == "kb-1"));
    assert_eq!(err.code(), "TURN_COMPACTOR_FAILED");
    assert_eq!(ledger.breakdown(), before);
}

#[test]
fn the_final_document_list_is_unique() {
    let docs = vec![
        RankedDocument::new("A", "a"),
        RankedDocument::new("B", "b"),
        RankedDocument::new("A", "a again"),
        RankedDocument::new("C", "c"),
        RankedDocument::new("B", "b again"),
    ];
    let unique = dedup_by_id(docs);
    assert_eq!(
        unique.iter().map(|d| (d.id.as_str(), d.text.as_str())).collect::<Vec<_>>(),
        [("A", "a"), ("B", "b"), ("C", "c")]
    );
}

fn doc_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,200}",
        "[a-zA-Z0-9 \\n{}<>\"=_.,;:é日本語]{0,300}",
        Just("word ".repeat(300)),
        Just("\n\n".repeat(50)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Whatever the documents, budget and policy: the rendered result counts at most the budget,
    /// documents appear once, whole documents are untouched and in rank order.
    #[test]
    fn packing_never_exceeds_the_budget(
        docs in prop::collection::vec(("[a-e]", doc_text()), 0..8),
        budget in 0usize..400,
        policy in 0usize..3,
        min_partial in 0usize..40,
        separator in prop_oneof![Just(""), Just("\n\n"), Just(" | ")],
    ) {
        let c = counter();
        let ranked: Vec<RankedDocument> = docs.into_iter().map(|(id, t)| RankedDocument::new(id, t)).collect();
        let format = DocumentFormat { separator: separator.to_owned(), ..DocumentFormat::default() };
        let compactor = FnCompactor::new(|r: &CompactRequest<'_>| Ok(r.text.chars().rev().collect()));
        let partial = [Partial::Skip, Partial::Truncate, Partial::Compact(&compactor)][policy];
        let p = pack_documents(&ranked, &|id| id == "e", budget, &format, partial, min_partial, &c).unwrap();
        prop_assert_eq!(p.tokens, c.count(&p.rendered).unwrap());
        prop_assert!(p.tokens <= budget);
        let ids: Vec<&str> = p.included.iter().map(|d| d.id.as_str()).collect();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), ids.len());
        prop_assert!(!ids.contains(&"e"));
        let blocks: Vec<String> = p.included.iter().map(|d| format.render(&d.id, &d.text)).collect();
        prop_assert_eq!(&p.rendered, &blocks.join(&format.separator));
        let whole: Vec<&str> = p.included.iter().filter(|d| d.inclusion == Inclusion::Whole).map(|d| d.id.as_str()).collect();
        let mut in_rank: Vec<&str> = Vec::new();
        for d in &ranked {
            if whole.contains(&d.id.as_str()) && !in_rank.contains(&d.id.as_str()) {
                in_rank.push(&d.id);
            }
        }
        prop_assert_eq!(whole, in_rank);
    }

    /// Over any sequence of calls, the ledger's incremental total equals an exact recount of the
    /// transcript, never exceeds the budget, and no document is returned twice.
    #[test]
    fn the_ledger_is_an_exact_running_recount(
        calls in prop::collection::vec(prop::collection::vec(("[a-h]", doc_text()), 0..5), 1..6),
        budget in 40usize..1_500,
        truncate in any::<bool>(),
    ) {
        let c = counter();
        let policy = if truncate { PartialPolicy::Truncate } else { PartialPolicy::Skip };
        let question = ChatMessage::user("what changed?");
        let config = TurnBudgetConfig { min_partial_tokens: 0, ..TurnBudgetConfig::new(budget, 4_096).with_partial(policy) };
        let mut ledger = TurnLedger::with_messages(config, c.clone(), std::slice::from_ref(&question)).unwrap();
        let mut transcript = vec![question];
        for (k, docs) in calls.into_iter().enumerate() {
            let tc = call(&format!("c{k}"), "q");
            let assistant = ChatMessage::assistant_tool_calls("", vec![tc.clone()]);
            ledger.add_message(&assistant).unwrap();
            transcript.push(assistant);
            let ranked: Vec<RankedDocument> = docs.into_iter().map(|(id, t)| RankedDocument::new(id, t)).collect();
            match ledger.answer_call(&tc, &ranked, None) {
                Ok((message, _)) => transcript.push(message),
                Err(TurnError::BudgetExhausted { .. }) => break,
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            }
            prop_assert_eq!(ledger.reserved(), history_tokens(&c, &transcript).unwrap());
            prop_assert!(ledger.reserved() <= budget);
        }
        let ids: Vec<&str> = ledger.documents().iter().map(|d| d.id.as_str()).collect();
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), ids.len());
    }
}
