//! Assembly behaviour beyond the spec's examples: templates, history, nesting, shrinking,
//! determinism and errors.

mod engine_common;

use std::sync::Arc;

use ctx_runtime::chat::{ChatMessage, Role};
use ctx_runtime::compact::{CompactRequest, FnCompactor};
use ctx_runtime::engine::*;
use ctx_runtime::error::ErrorCode;
use engine_common::*;
use serde_json::json;

fn decl(
    name: &str,
    inputs: &[&str],
    policy: Option<ContextPolicySpec>,
    messages: Vec<MessageSpec>,
) -> ContextDeclaration {
    ContextDeclaration { name: name.into(), inputs: inputs.iter().map(|s| s.to_string()).collect(), policy, messages }
}

fn kb(limit: i64) -> RetrieverDecl {
    RetrieverDecl { name: "kb".into(), query: "{input.question}".into(), limit }
}

fn build(spec: EngineSpec, retriever: Arc<CorpusRetriever>) -> ContextAssembler {
    ContextAssembler::builder(spec, counter()).retriever("kb", retriever).build().unwrap()
}

const BRACES: &str = "fn f() { {x} } and {} and {{input.question}} and }}";

#[test]
fn retrieved_text_is_inserted_verbatim_and_never_re_expanded() {
    let spec = EngineSpec {
        contexts: vec![decl(
            "c",
            &["question"],
            None,
            vec![system("Code:"), pack("kb"), user("Q: {input.question}\nSeen: {context.kb}")],
        )],
        retrievers: vec![kb(3)],
        ..Default::default()
    };
    let asm = build(spec, CorpusRetriever::new(&[("code", BRACES)], false));
    let out = block_on(asm.assemble("c", &AssemblyInput::new().input("question", "{input.question} fn"))).unwrap();
    assert_eq!(out.system_prompt, format!("Code:\n\n{BRACES}"));
    assert_eq!(out.user_message, format!("Q: {{input.question}} fn\nSeen: {BRACES}"));
}

#[test]
fn a_missing_variable_names_the_template_and_the_variable() {
    let spec = EngineSpec {
        contexts: vec![decl("c", &["question"], None, vec![system("S"), user("Q: {input.question}")])],
        ..Default::default()
    };
    let asm = ContextAssembler::builder(spec, counter()).build().unwrap();
    let err = block_on(asm.assemble("c", &AssemblyInput::new())).unwrap_err();
    assert_eq!(err.code(), "ENGINE_MISSING_VARIABLE");
    assert_eq!(
        err.to_string(),
        "context `c`: template messages[1].content \"Q: {input.question}\" uses `{input.question}`, which has no value"
    );
    let err = block_on(asm.assemble("c", &AssemblyInput::new().input("question", json!({"id": 7})))).unwrap_err();
    assert!(matches!(err, EngineError::VariableNotText { kind: "an object", .. }), "{err:?}");
    assert_eq!(err.code(), "ENGINE_VARIABLE_NOT_TEXT");
}

#[test]
fn dotted_inputs_and_scalars_render() {
    let spec = EngineSpec {
        contexts: vec![decl("c", &["order", "n", "ok"], None, vec![user("{input.order.id}/{input.n}/{input.ok}")])],
        ..Default::default()
    };
    let asm = ContextAssembler::builder(spec, counter()).build().unwrap();
    let input = AssemblyInput::new().input("order", json!({"id": "A-7"})).input("n", 3).input("ok", true);
    let out = block_on(asm.assemble("c", &input)).unwrap();
    assert_eq!(out.user_message, "A-7/3/true");
    assert_eq!(out.system_prompt, "");
    assert_eq!(out.messages(), vec![ChatMessage::user("A-7/3/true")]);
}

fn history(n: usize) -> Vec<ChatMessage> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                ChatMessage::user(format!("question number {i} about the order"))
            } else {
                ChatMessage::assistant(format!("answer number {i}: it ships tomorrow"))
            }
        })
        .collect()
}

fn chat_spec(max_tokens: i64, overflow: &str, with_directive: bool) -> EngineSpec {
    let mut messages = vec![system("You are helpful."), user("{input.question}")];
    if with_directive {
        messages.insert(1, MessageSpec::History);
    }
    EngineSpec {
        contexts: vec![decl("chat", &["question"], Some(budget_policy(max_tokens, overflow)), messages)],
        ..Default::default()
    }
}

#[test]
fn history_is_trimmed_oldest_first_and_no_more_than_needed() {
    let full = history(10);
    let asm = ContextAssembler::builder(chat_spec(120, "compact", true), counter()).build().unwrap();
    let input = AssemblyInput::new().input("question", "Where is it?").history(full.clone());
    let out = block_on(asm.assemble("chat", &input)).unwrap();
    let kept = out.history.len();
    assert!(kept > 0 && kept < full.len(), "kept {kept}");
    assert_eq!(out.history, full[full.len() - kept..], "a suffix: the newest messages");
    assert_eq!(out.report.history_dropped, full.len() - kept);
    assert!(out.report.total_tokens <= 120);
    // Keeping one more (older) message would not have fitted.
    let mut more = out.messages();
    more.insert(1, full[full.len() - kept - 1].clone());
    assert!(counter().count_messages(&more).unwrap() > 120);
}

#[test]
fn history_over_budget_under_error_is_an_error() {
    let asm = ContextAssembler::builder(chat_spec(120, "error", true), counter()).build().unwrap();
    let input = AssemblyInput::new().input("question", "Where is it?").history(history(10));
    match block_on(asm.assemble("chat", &input)).unwrap_err() {
        EngineError::InputOverBudget { context, tokens, budget, history_messages } => {
            assert_eq!((context.as_str(), budget, history_messages), ("chat", 120, 10));
            assert!(tokens > 120);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn history_goes_where_declared_or_after_the_system_prompt() {
    let h = history(2);
    let input = AssemblyInput::new().input("question", "Q").history(h.clone());
    for with_directive in [true, false] {
        let asm = ContextAssembler::builder(chat_spec(1_000, "error", with_directive), counter()).build().unwrap();
        let out = block_on(asm.assemble("chat", &input)).unwrap();
        let expected =
            vec![ChatMessage::system("You are helpful."), h[0].clone(), h[1].clone(), ChatMessage::user("Q")];
        assert_eq!(out.messages(), expected);
    }
    // A few-shot pair after the system prompt: history without a directive still comes first.
    let spec = EngineSpec {
        contexts: vec![decl(
            "c",
            &[],
            None,
            vec![
                system("S"),
                user("example q"),
                MessageSpec::Assistant { content: "example a".into() },
                user("real q"),
            ],
        )],
        ..Default::default()
    };
    let asm = ContextAssembler::builder(spec, counter()).build().unwrap();
    let out = block_on(asm.assemble("c", &AssemblyInput::new().history(h.clone()))).unwrap();
    let roles: Vec<_> = out.messages().iter().map(|m| (m.role, m.content.clone())).collect();
    assert_eq!(
        roles,
        vec![
            (Role::System, "S".into()),
            (Role::User, h[0].content.clone()),
            (Role::Assistant, h[1].content.clone()),
            (Role::User, "example q".into()),
            (Role::Assistant, "example a".into()),
            (Role::User, "real q".into()),
        ]
    );
}

#[test]
fn base_prompt_and_user_fallback() {
    let spec = EngineSpec {
        contexts: vec![decl("c", &[], None, vec![system("Rules."), MessageSpec::History])],
        ..Default::default()
    };
    let asm = ContextAssembler::builder(spec, counter()).build().unwrap();
    let input = AssemblyInput::new().base_system_prompt("Base.").user_message("Hi");
    let out = block_on(asm.assemble("c", &input)).unwrap();
    assert_eq!((out.system_prompt.as_str(), out.user_message.as_str()), ("Base.\n\nRules.", "Hi"));
}

const FAQ_HEADER: &str = "Frequently asked questions about returns, refunds, exchanges, deliveries, gift cards and \
    store credit, as answered by our support team:";

const FAQ: [(&str, &str); 3] = [
    ("f1", "Returns: within 30 days of delivery."),
    ("f2", "Refunds: issued 14 days after the return arrives."),
    ("f3", "Exchanges: free for a different size."),
];

fn nested_spec(max_tokens: i64, overflow: &str) -> EngineSpec {
    let policy = ContextPolicySpec {
        pack_budget: Some(PackBudgetSpec { default_ratio: Some(0.5) }),
        ..budget_policy(max_tokens, overflow)
    };
    EngineSpec {
        contexts: vec![
            decl(
                "support",
                &["question"],
                Some(policy),
                vec![system("Support."), pack("faq"), pack("kb"), user("{input.question}")],
            ),
            decl("faq", &["question"], None, vec![system(FAQ_HEADER), pack("faq_search")]),
        ],
        retrievers: vec![
            kb(2),
            RetrieverDecl { name: "faq_search".into(), query: "{input.question}".into(), limit: 3 },
        ],
        compactors: vec![],
    }
}

fn nested(max_tokens: i64, overflow: &str) -> Result<ContextAssembly, EngineError> {
    let asm = ContextAssembler::builder(nested_spec(max_tokens, overflow), counter())
        .retriever("kb", CorpusRetriever::new(&[("k1", "Order 7 ships on Monday.")], true))
        .retriever("faq_search", CorpusRetriever::new(&FAQ, true))
        .build()?;
    block_on(asm.assemble("support", &AssemblyInput::new().input("question", "days")))
}

#[test]
fn a_nested_context_is_rendered_as_a_pack() {
    let out = nested(400, "error").unwrap();
    let faq = format!(
        "{FAQ_HEADER}\n\nReturns: within 30 days of delivery.\n\nRefunds: issued 14 days after the return arrives."
    );
    // The kb corpus has no "days": that pack is empty and leaves no trace.
    assert_eq!(out.system_prompt, format!("Support.\n\n{faq}"));
    let report = &out.report.packs[0];
    assert_eq!((report.name.as_str(), report.kind), ("faq", PackKind::Context));
    assert_eq!(report.tokens, counter().count(&faq).unwrap());
    assert_eq!(report.packs[0].name, "faq_search");
    assert_eq!(report.packs[0].included, ["f1", "f2"]);
    assert!(report.packs[0].allocation.unwrap() < report.allocation.unwrap());
}

#[test]
fn a_nested_context_over_its_allocation_is_compacted_or_an_error() {
    // 50 tokens leave the faq pack less than its own header: under `compact` the header is
    // truncated into the allocation and its retriever is never asked.
    let header = counter().count(FAQ_HEADER).unwrap();
    let out = nested(50, "compact").unwrap();
    let faq = &out.report.packs[0];
    assert!(faq.allocation.unwrap() < header, "{faq:?}");
    assert!(faq.compacted && faq.tokens <= faq.allocation.unwrap(), "{faq:?}");
    assert_eq!(faq.packs[0].pages, 0);
    assert!(out.system_prompt.starts_with("Support.\n\nFrequently asked"), "{}", out.system_prompt);
    assert!(out.report.total_tokens <= 50);
    let err = nested(50, "error").unwrap_err();
    assert_eq!(err.code(), "ENGINE_PACK_OVER_BUDGET");
    match err {
        EngineError::PackOverBudget { context, pack, tokens, budget } => {
            assert_eq!((context.as_str(), pack.as_str(), tokens), ("support", "faq", header));
            assert_eq!(Some(budget), faq.allocation);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_pack_used_twice_is_shrunk_until_the_whole_fits() {
    // The pack is sent as a message *and* quoted in the user message: its allocation assumed one
    // copy, the rendered whole holds two, and only the exact count of the whole shows it.
    let policy = ContextPolicySpec {
        pack_budget: Some(PackBudgetSpec { default_ratio: Some(1.0) }),
        ..budget_policy(80, "compact")
    };
    let spec = EngineSpec {
        contexts: vec![decl(
            "c",
            &["question"],
            Some(policy),
            vec![system("S"), pack("kb"), user("Quote: {context.kb}")],
        )],
        retrievers: vec![kb(1)],
        ..Default::default()
    };
    let sentence = "The parcel left the depot at 9am and should reach the pickup point before noon on Thursday. ";
    let asm = build(spec.clone(), CorpusRetriever::new(&[("k", &sentence.repeat(4))], false));
    let out = block_on(asm.assemble("c", &AssemblyInput::new().input("question", "parcel"))).unwrap();
    assert!(out.report.shrink_rounds >= 1, "{:?}", out.report);
    assert!(out.report.total_tokens <= 80);
    assert_eq!(out.report.total_tokens, counter().count_messages(&out.messages()).unwrap());
    let mut spec = spec;
    spec.contexts[0].policy.as_mut().unwrap().overflow = Some("error".into());
    // Under `error`, a pack that fits its allocation once but not twice is an error.
    let asm = build(spec, CorpusRetriever::new(&[("k", &sentence.repeat(2))], false));
    let err = block_on(asm.assemble("c", &AssemblyInput::new().input("question", "parcel"))).unwrap_err();
    assert_eq!(err.code(), "ENGINE_INPUT_OVER_BUDGET");
}

#[test]
fn assembly_is_deterministic() {
    let docs: Vec<(String, String)> =
        (0..12).map(|i| (format!("d{i:02}"), format!("Document {i} about shipping and returns, part {i}."))).collect();
    let docs: Vec<(&str, &str)> = docs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let run = || {
        let mut spec = nested_spec(150, "compact");
        spec.contexts[0].policy.as_mut().unwrap().expansion = Some(ExpansionSpec { max_pages: 4, min_fill_ratio: 1.0 });
        let asm = ContextAssembler::builder(spec, counter())
            .retriever("kb", CorpusRetriever::new(&docs, false))
            .retriever("faq_search", CorpusRetriever::new(&FAQ, true))
            .build()
            .unwrap();
        let input = AssemblyInput::new().input("question", "shipping returns days").history(history(6));
        serde_json::to_string(&block_on(asm.assemble("support", &input)).unwrap()).unwrap()
    };
    let first = run();
    assert_eq!(first, run());
    assert!(first.contains("\"compacted\":true"), "the example does compact: {first}");
}

#[test]
fn repeated_ids_across_pages_are_skipped_and_paging_is_bounded() {
    struct SamePage;
    impl Retriever for SamePage {
        async fn retrieve(&self, _: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
            Ok(ContextPack::new(vec![ContextPackBlock::new("a", "alpha"), ContextPackBlock::new("b", "beta")]))
        }
    }
    let policy = ContextPolicySpec {
        expansion: Some(ExpansionSpec { max_pages: 4, min_fill_ratio: 1.0 }),
        ..budget_policy(500, "error")
    };
    let spec = EngineSpec {
        contexts: vec![decl("c", &["question"], Some(policy), vec![pack("kb"), user("{input.question}")])],
        retrievers: vec![kb(2)],
        ..Default::default()
    };
    let asm = ContextAssembler::builder(spec, counter()).retriever("kb", Arc::new(SamePage)).build().unwrap();
    let out = block_on(asm.assemble("c", &AssemblyInput::new().input("question", "q"))).unwrap();
    let pack = &out.report.packs[0];
    assert_eq!((pack.pages, pack.included.clone()), (4, vec!["a".to_owned(), "b".to_owned()]));
    assert_eq!(out.system_prompt, "alpha\n\nbeta");
}

#[test]
fn errors_name_what_failed() {
    struct Failing;
    impl Retriever for Failing {
        async fn retrieve(&self, _: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError> {
            Err("index offline".into())
        }
    }
    let spec = EngineSpec {
        contexts: vec![decl("c", &["question"], None, vec![pack("kb"), user("{input.question}")])],
        retrievers: vec![kb(2)],
        ..Default::default()
    };
    let asm = ContextAssembler::builder(spec, counter()).retriever("kb", Arc::new(Failing)).build().unwrap();
    let err = block_on(asm.assemble("c", &AssemblyInput::new().input("question", "q"))).unwrap_err();
    assert_eq!(err.to_string(), "context `c`: retriever `kb` failed at offset 0: index offline");
    let err = block_on(asm.assemble("nope", &AssemblyInput::new())).unwrap_err();
    assert_eq!(err.to_string(), "no context named `nope` is declared (declared: c)");
}

#[test]
fn a_compactor_over_its_budget_is_rejected() {
    let policy =
        ContextPolicySpec { compactor: Some(CompactorSpec { name: "noop".into() }), ..budget_policy(40, "compact") };
    let spec = EngineSpec {
        contexts: vec![decl("c", &["question"], Some(policy), vec![pack("kb"), user("{input.question}")])],
        retrievers: vec![kb(1)],
        compactors: vec!["noop".into()],
    };
    let noop = FnCompactor::new(|r: &CompactRequest<'_>| Ok(r.text.to_owned()));
    let asm = ContextAssembler::builder(spec, counter())
        .retriever("kb", CorpusRetriever::new(&[("k", &"many words here ".repeat(40))], false))
        .compactor("noop", Arc::new(noop))
        .build()
        .unwrap();
    let err = block_on(asm.assemble("c", &AssemblyInput::new().input("question", "words"))).unwrap_err();
    assert!(
        matches!(&err, EngineError::CompactorOverBudget { compactor, pack, .. } if compactor == "noop" && pack == "kb"),
        "{err:?}"
    );
    assert_eq!(err.code(), "ENGINE_COMPACTOR_OVER_BUDGET");
}

#[test]
fn build_checks_registrations_against_the_spec() {
    let spec = EngineSpec {
        contexts: vec![decl("c", &["question"], None, vec![pack("kb"), user("{input.question}")])],
        retrievers: vec![kb(2)],
        compactors: vec!["summarize".into()],
    };
    let err = ContextAssembler::builder(spec, counter())
        .retriever("kbb", CorpusRetriever::new(&[], true))
        .build()
        .unwrap_err();
    let EngineError::Config(issues) = err else { panic!("{err:?}") };
    let codes: Vec<_> = issues.issues.iter().map(|i| i.code).collect();
    assert_eq!(
        codes,
        ["ENGINE_RETRIEVER_NOT_REGISTERED", "ENGINE_UNDECLARED_RETRIEVER", "ENGINE_COMPACTOR_NOT_REGISTERED"]
    );
}

#[test]
fn the_spec_round_trips_through_json() {
    let spec = nested_spec(100, "compact");
    let text = serde_json::to_string(&spec).unwrap();
    assert_eq!(serde_json::from_str::<EngineSpec>(&text).unwrap(), spec);
    assert!(text.contains(r#"{"type":"context","name":"faq"}"#), "{text}");
}
