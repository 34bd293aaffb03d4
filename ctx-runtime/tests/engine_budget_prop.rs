//! The invariant: an assembled input never exceeds `input_budget.max_tokens`, counted on the
//! exact messages returned — whatever the texts (BPE-unfriendly ones included), history,
//! retrievers, ratios, placements, nesting, paging and overflow policy.

mod engine_common;

use ctx_runtime::chat::ChatMessage;
use ctx_runtime::engine::*;
use engine_common::*;
use proptest::prelude::*;

const VOCAB: &[&str] = &[
    "order",
    "the",
    "shipped",
    "{x}",
    "{}",
    "{{",
    "}}",
    "\n",
    "\n\n",
    "  ",
    "日本語",
    "🦀",
    "SELECT",
    "1234567",
    "é",
    "--",
    "fn()",
    "...",
    "ing",
    "un",
    "\t",
    "<|endoftext|>",
    "a",
    "'s",
];

fn text(max_words: usize) -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(VOCAB), prop::sample::select(&[" ", "", "\n"][..])), 0..max_words)
        .prop_map(|parts| parts.into_iter().map(|(w, sep)| format!("{w}{sep}")).collect())
}

#[derive(Debug, Clone)]
struct Case {
    budget: i64,
    system: String,
    question: String,
    history: Vec<(bool, String)>,
    docs: Vec<String>,
    ratio: Option<f64>,
    variable_placement: bool,
    nested: Option<String>,
    history_directive: bool,
    compact: bool,
    expansion: Option<(i64, f64)>,
    respect_budget: bool,
    limit: i64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (10i64..400, text(30), text(20), prop::collection::vec((any::<bool>(), text(25)), 0..6)),
        (prop::collection::vec(text(60), 0..10), prop::option::of(0.05f64..0.45), any::<bool>()),
        (prop::option::of(text(20)), any::<bool>(), any::<bool>()),
        (prop::option::of((1i64..5, 0.1f64..=1.0)), any::<bool>(), 1i64..4),
    )
        .prop_map(|(a, b, c, d)| Case {
            budget: a.0,
            system: a.1,
            question: a.2,
            history: a.3,
            docs: b.0,
            ratio: b.1,
            variable_placement: b.2,
            nested: c.0,
            history_directive: c.1,
            compact: c.2,
            expansion: d.0,
            respect_budget: d.1,
            limit: d.2,
        })
}

/// A template whose rendering is `text` exactly.
fn literal(text: &str) -> String {
    text.replace('{', "{{").replace('}', "}}")
}

fn user_template(case: &Case) -> String {
    if case.variable_placement { "Q: {input.q}\nEvidence: {context.kb}".into() } else { "Q: {input.q}".into() }
}

fn spec(case: &Case) -> EngineSpec {
    let placement = if case.variable_placement { PackPlacement::Variable } else { PackPlacement::Message };
    let mut messages = vec![
        system(&literal(&case.system)),
        MessageSpec::Context(ContextInsert { name: "kb".into(), ratio: case.ratio, placement }),
    ];
    if case.nested.is_some() {
        messages.push(MessageSpec::Context(ContextInsert { ratio: case.ratio, ..ContextInsert::new("inner") }));
    }
    if case.history_directive {
        messages.push(MessageSpec::History);
    }
    messages.push(user(&user_template(case)));
    let policy = ContextPolicySpec {
        expansion: case.expansion.map(|(max_pages, min_fill_ratio)| ExpansionSpec { max_pages, min_fill_ratio }),
        ..budget_policy(case.budget, if case.compact { "compact" } else { "error" })
    };
    let mut contexts =
        vec![ContextDeclaration { name: "main".into(), inputs: vec!["q".into()], policy: Some(policy), messages }];
    if let Some(inner) = &case.nested {
        contexts.push(ContextDeclaration {
            name: "inner".into(),
            inputs: vec![],
            policy: None,
            messages: vec![system(&literal(inner)), pack("kb2")],
        });
    }
    let retriever = |name: &str| RetrieverDecl { name: name.into(), query: String::new(), limit: case.limit };
    EngineSpec { contexts, retrievers: vec![retriever("kb"), retriever("kb2")], compactors: vec![] }
}

/// The messages when every pack is empty and there is no history: what must fit for anything to.
fn minimal(case: &Case) -> Vec<ChatMessage> {
    let mut messages = Vec::new();
    if !case.system.is_empty() {
        messages.push(ChatMessage::system(case.system.clone()));
    }
    let user = user_template(case).replace("{input.q}", &case.question).replace("{context.kb}", "");
    if !user.is_empty() {
        messages.push(ChatMessage::user(user));
    }
    messages
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn assembled_input_never_exceeds_the_budget(case in case()) {
        let docs: Vec<(String, String)> = case.docs.iter().enumerate().map(|(i, t)| (format!("d{i}"), t.clone())).collect();
        let docs: Vec<(&str, &str)> = docs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let assembler = ContextAssembler::builder(spec(&case), counter())
            .retriever("kb", CorpusRetriever::new(&docs, case.respect_budget))
            .retriever("kb2", CorpusRetriever::new(&docs, case.respect_budget))
            .build()
            .expect("the generated spec is valid");
        let history: Vec<ChatMessage> = case
            .history
            .iter()
            .map(|(from_user, t)| if *from_user { ChatMessage::user(t.clone()) } else { ChatMessage::assistant(t.clone()) })
            .collect();
        let input = AssemblyInput::new().input("q", case.question.clone()).history(history);
        let budget = case.budget as usize;
        match block_on(assembler.assemble("main", &input)) {
            Ok(out) => {
                let exact = counter().count_messages(&out.messages()).unwrap();
                prop_assert_eq!(out.report.total_tokens, exact);
                prop_assert!(exact <= budget, "{} > {}: {:?}", exact, budget, out.report);
                for pack in &out.report.packs {
                    prop_assert!(pack.tokens <= pack.allocation.unwrap_or(0), "{:?}", pack);
                }
                prop_assert!(out.report.fixed_tokens <= exact);
            }
            Err(EngineError::FixedOverBudget { context, tokens, budget: b }) => {
                prop_assert_eq!(context.as_str(), "main");
                prop_assert_eq!(b, budget);
                prop_assert_eq!(tokens, counter().count_messages(&minimal(&case)).unwrap());
                prop_assert!(tokens > budget);
            }
            Err(EngineError::InputOverBudget { tokens, budget: b, .. }) if !case.compact => {
                prop_assert!(tokens > b);
            }
            Err(EngineError::PackOverBudget { tokens, budget: b, .. }) if !case.compact => {
                prop_assert!(tokens > b);
            }
            Err(other) => prop_assert!(false, "unexpected error under {:?}: {}", case.compact, other),
        }
    }
}
