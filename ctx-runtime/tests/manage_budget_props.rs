//! Invariants of `manage_context_budget` over random states, configurations and budgets:
//!
//! - `on_over`: the serialized state is byte-identical to the state before, except that the
//!   consumed demand messages are back at the end of the inbox;
//! - `on_ok`: the old blocks are a prefix of the new ones, `node_texts` is empty, the rendered
//!   context fits the budget (counted on the rendered whole) and nothing else changed;
//! - an error changes nothing;
//! - the same inputs give the same state and report.

use std::path::Path;
use std::sync::OnceLock;

use ctx_runtime::budget::{BudgetDecision, ManageBudgetConfig, manage_context_budget, validate_manage_budget};
use ctx_runtime::pipeline::{CompactRuleSpec, ManageBudgetSpec};
use ctx_runtime::state::{InboxMessage, NodeText, PipelineState, render_context_blocks};
use ctx_runtime::tokens::{Encoding, TokenCounter};
use ctx_runtime::validation::FieldPath;
use proptest::prelude::*;

const STEP: &str = "manage_budget";

fn counter() -> TokenCounter {
    TokenCounter::for_encoding(Encoding::Cl100kBase)
}

/// A few files of the sample code base, as node texts.
fn samples() -> &'static [(String, String)] {
    static SAMPLES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/codebase");
        [
            "sql/functions/fn_RoundCurrency.sql",
            "sql/functions/fn_TaxRateOn.sql",
            "sql/schema/invoice_number_sequences.sql",
            "src/Invoicing.Services/Money.cs",
            "src/Invoicing.Domain/Entities/Payment.cs",
            "src/Invoicing.Domain/Invoicing.Domain.csproj",
            "docs/README.md",
        ]
        .iter()
        .map(|p| ((*p).to_owned(), std::fs::read_to_string(root.join(p)).expect("sample file")))
        .collect()
    })
}

fn node() -> impl Strategy<Value = NodeText> {
    let from_corpus = (0..samples().len(), any::<bool>()).prop_map(|(i, with_path)| {
        let (path, text) = &samples()[i];
        let node = NodeText::new(path.rsplit('/').next().unwrap_or(path), text.as_str());
        if with_path { node.with_path(path.as_str()) } else { node }
    });
    let random =
        ("[a-z_]{0,8}", "(SELECT|--|/\\*|\\*/|'|\"|[a-z ]|\n){0,60}").prop_map(|(id, text)| NodeText::new(id, text));
    prop_oneof![3 => from_corpus, 1 => random]
}

fn message() -> impl Strategy<Value = InboxMessage> {
    (
        prop::sample::select(vec![STEP, "other_step"]),
        prop::sample::select(vec!["compact_sql", "compact_dotnet", "unrelated"]),
        prop::option::of("[a-z]{1,6}"),
    )
        .prop_map(|(target, topic, payload)| InboxMessage::new(target, topic).payload(payload))
}

fn rule(language: &str, policy: &str, threshold: Option<f64>, inbox_key: Option<&str>) -> CompactRuleSpec {
    CompactRuleSpec::new(language, policy).threshold(threshold).inbox_key(inbox_key.map(Into::into))
}

fn config() -> impl Strategy<Value = ManageBudgetConfig> {
    let presets = vec![
        vec![],
        vec![
            rule("sql", "demand", None, Some("compact_sql")),
            rule("sql", "threshold", Some(0.4), None),
            rule("dotnet", "always", None, None),
        ],
        vec![rule("dotnet", "demand", None, Some("compact_dotnet")), rule("sql", "always", None, None)],
        vec![rule("sql", "threshold", Some(0.9), None), rule("sql", "threshold", Some(0.1), None)],
    ];
    (prop::sample::select(presets), prop::option::of(prop::sample::select(vec!["<<<New content", "=== batch ==="])))
        .prop_map(|(rules, divider)| {
            let spec = ManageBudgetSpec::new("answer", "summarize")
                .compact_code(rules)
                .divide_new_content(divider.map(Into::into));
            validate_manage_budget(&spec, &FieldPath::root()).expect("presets are valid")
        })
}

/// Context material from a few tokens to about a thousand, so that every outcome occurs.
fn context_block() -> impl Strategy<Value = String> {
    ("(Summary|of|the|invoice|totals|\n| ){1,12}", 1usize..150).prop_map(|(phrase, times)| phrase.repeat(times))
}

fn state() -> impl Strategy<Value = PipelineState> {
    (
        prop::collection::vec(context_block(), 0..4),
        prop::collection::vec(node(), 0..5),
        prop::collection::vec(message(), 0..3),
        prop::collection::vec(message(), 0..4),
    )
        .prop_map(|(context, nodes, inbox, consumed)| {
            let mut s = PipelineState::new("How is the invoice total computed?");
            s.context_blocks = context;
            s.node_texts = nodes;
            s.inbox = inbox;
            s.inbox_last_consumed = consumed;
            s
        })
}

fn json(state: &PipelineState) -> String {
    serde_json::to_string(state).expect("state serializes")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn the_state_after_the_step_is_exactly_what_the_decision_allows(
        before in state(),
        cfg in config(),
        max in 1usize..4_000,
    ) {
        let mut after = before.clone();
        let result = manage_context_budget(STEP, &cfg, max, &mut after, &counter());

        // Determinism: the same inputs give the same state and the same report.
        let mut again = before.clone();
        let result_again = manage_context_budget(STEP, &cfg, max, &mut again, &counter());
        prop_assert_eq!(json(&after), json(&again));
        prop_assert_eq!(format!("{result:?}"), format!("{result_again:?}"));

        let demands: Vec<InboxMessage> = before
            .inbox_last_consumed
            .iter()
            .filter(|m| m.target_step_id == STEP && cfg.demand_keys().any(|k| k == m.topic))
            .cloned()
            .collect();
        match result {
            Err(_) => prop_assert_eq!(json(&after), json(&before)),
            Ok(report) if report.decision == BudgetDecision::Over => {
                let mut expected = before.clone();
                expected.inbox.extend(demands.iter().cloned());
                prop_assert_eq!(json(&after), json(&expected));
                prop_assert_eq!(&report.reenqueued, &demands);
                prop_assert!(report.candidate_tokens > max);
            }
            Ok(report) => {
                prop_assert!(after.context_blocks.starts_with(&before.context_blocks));
                prop_assert!(after.node_texts.is_empty());
                let rendered = render_context_blocks(&after.context_blocks);
                let tokens = counter().count(&rendered).unwrap();
                prop_assert!(tokens <= max, "{} tokens in a budget of {}", tokens, max);
                prop_assert_eq!(report.context_tokens_after, tokens);
                let appended = after.context_blocks.len() - before.context_blocks.len();
                let divider = usize::from(cfg.divide_new_content().is_some() && !before.node_texts.is_empty());
                prop_assert_eq!(appended, before.node_texts.len() + divider);
                prop_assert!(report.reenqueued.is_empty());
                // Nothing but the context and the buffer changed.
                let mut expected = before.clone();
                expected.context_blocks = after.context_blocks.clone();
                expected.node_texts.clear();
                prop_assert_eq!(json(&after), json(&expected));
            }
        }
    }
}

/// Text that stresses pre-tokenization at its end: whitespace runs of every kind, digits,
/// punctuation followed by line breaks, letters, marks, emoji.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "\u{a0}",
        "\u{3000}",
        "a",
        "Z",
        "é",
        "\u{301}",
        "7",
        "123",
        "'s",
        ".",
        "--",
        "/",
        "//",
        "*/",
        "<<<",
        "😀",
        "中文",
        "\u{200b}",
        "-- NODE ---",
    ]);
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

/// A block start after which a block boundary is a piece boundary: not whitespace, not `/`.
fn clean_start() -> impl Strategy<Value = String> {
    (prop::sample::select(vec!["-", "<", "a", "Z", "7", "é", "\u{301}", "😀", "'", "\"", "#", "="]), hostile_text())
        .prop_map(|(first, rest)| format!("{first}{rest}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// For the OpenAI patterns, `"\n\n"` followed by a clean start is a piece boundary, so the
    /// count of a context and the count of a node framed as `--- NODE ---` add up there (what
    /// callers that count blocks one by one may rely on).
    #[test]
    fn block_boundaries_split_pieces(x in hostile_text(), y in clean_start()) {
        use ctx_runtime::tokens::{ChatFormat, TiktokenBackend};
        for encoding in Encoding::ALL {
            let counters = [
                TokenCounter::for_encoding(encoding),
                TokenCounter::with_backend(std::sync::Arc::new(TiktokenBackend::new(encoding)), ChatFormat::openai(), 64),
            ];
            for c in counters {
                let a = format!("{x}\n\n");
                let whole = c.count(&format!("{a}{y}")).unwrap();
                prop_assert_eq!(whole, c.count(&a).unwrap() + c.count(&y).unwrap(), "{} on {:?} + {:?}", c.backend_id(), a, y);
            }
        }
    }
}
