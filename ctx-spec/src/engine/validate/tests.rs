use super::*;
use crate::engine::declaration::{
    CompactorSpec, ContextInsert, ExpansionSpec, InputBudgetSpec, PackBudgetSpec, PackPlacement, RetrieverDecl,
};

fn system(t: &str) -> MessageSpec {
    MessageSpec::System { content: t.into() }
}

fn user(t: &str) -> MessageSpec {
    MessageSpec::User { content: t.into() }
}

fn pack(name: &str, ratio: Option<f64>) -> MessageSpec {
    MessageSpec::Context(ContextInsert { ratio, ..ContextInsert::new(name) })
}

fn retriever(name: &str, query: &str) -> RetrieverDecl {
    RetrieverDecl { name: name.into(), query: query.into(), limit: 3 }
}

fn policy() -> ContextPolicySpec {
    ContextPolicySpec {
        input_budget: Some(InputBudgetSpec { max_tokens: 200 }),
        pack_budget: Some(PackBudgetSpec { default_ratio: Some(0.5) }),
        overflow: Some("compact".into()),
        compactor: Some(CompactorSpec { name: "truncate".into() }),
        expansion: Some(ExpansionSpec { max_pages: 3, min_fill_ratio: 1.0 }),
    }
}

fn good() -> EngineSpec {
    EngineSpec {
        contexts: vec![
            ContextDeclaration {
                name: "support".into(),
                inputs: vec!["question".into()],
                policy: Some(policy()),
                messages: vec![
                    system("Use the context."),
                    pack("kb_search", None),
                    pack("faq", None),
                    MessageSpec::History,
                    user("{context.kb_search}\n\nQuestion: {input.question} {{not a var}}"),
                ],
            },
            ContextDeclaration {
                name: "faq".into(),
                inputs: vec!["question".into()],
                policy: None,
                messages: vec![system("FAQ:"), pack("faq_search", None)],
            },
        ],
        retrievers: vec![retriever("kb_search", "{input.question}"), retriever("faq_search", "faq {input.question}")],
        compactors: vec!["summarize".into()],
    }
}

/// (code, path) of every issue, in order.
fn found(spec: &EngineSpec) -> Vec<(&'static str, String)> {
    validate_spec(spec).into_iter().map(|i| (i.code.as_str(), i.path.to_string())).collect()
}

fn issue<'a>(issues: &'a [ConfigIssue], code: &str) -> &'a ConfigIssue {
    issues.iter().find(|i| i.code == code).unwrap_or_else(|| panic!("no {code} in {issues:#?}"))
}

#[test]
fn a_good_spec_has_no_issues() {
    assert_eq!(found(&good()), vec![]);
}

#[test]
fn policy_values_out_of_range_are_reported_with_their_paths() {
    let mut spec = good();
    spec.contexts[0].policy = Some(ContextPolicySpec {
        input_budget: Some(InputBudgetSpec { max_tokens: 0 }),
        pack_budget: Some(PackBudgetSpec { default_ratio: Some(1.5) }),
        overflow: Some("compress".into()),
        compactor: Some(CompactorSpec { name: "sumarize".into() }),
        expansion: Some(ExpansionSpec { max_pages: 0, min_fill_ratio: 0.0 }),
    });
    let issues = validate_spec(&spec);
    let summary: Vec<_> = issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect();
    let p = "contexts[0].policy";
    for (code, path) in [
        ("ENGINE_INVALID_BUDGET", format!("{p}.input_budget.max_tokens")),
        ("ENGINE_RATIO_RANGE", format!("{p}.pack_budget.default_ratio")),
        ("ENGINE_INVALID_OVERFLOW", format!("{p}.overflow")),
        ("ENGINE_UNKNOWN_COMPACTOR", format!("{p}.compactor")),
        ("ENGINE_MAX_PAGES", format!("{p}.expansion.max_pages")),
        ("ENGINE_MIN_FILL_RATIO", format!("{p}.expansion.min_fill_ratio")),
        ("ENGINE_RATIO_SUM", format!("{p}.pack_budget.default_ratio")),
    ] {
        assert!(summary.contains(&(code, path.clone())), "missing {code} at {path} in {summary:#?}");
    }
    assert_eq!(
        issue(&issues, "ENGINE_UNKNOWN_COMPACTOR").help.as_deref().map(|h| h.starts_with("did you mean `summarize`")),
        Some(true)
    );
    assert!(issue(&issues, "ENGINE_INVALID_OVERFLOW").help.as_deref().unwrap_or("").contains("compact, error"));
}

#[test]
fn ratio_range_and_sum_rules() {
    for bad in [0.0, -0.1, 1.01, f64::NAN] {
        let mut spec = good();
        spec.contexts[0].messages[1] = pack("kb_search", Some(bad));
        let f = found(&spec);
        assert!(f.contains(&("ENGINE_RATIO_RANGE", "contexts[0].messages[1].ratio".into())), "{bad}: {f:?}");
    }
    let mut spec = good();
    spec.contexts[0].messages[1] = pack("kb_search", Some(0.6));
    spec.contexts[0].messages[2] = pack("faq", Some(0.6));
    assert_eq!(found(&spec), vec![("ENGINE_RATIO_SUM", "contexts[0].messages".into())]);
    // Decimal ratios that sum to 1 in exact arithmetic pass despite float rounding.
    let ratios = [0.2, 0.4, 0.3, 0.1];
    assert!(ratios.iter().sum::<f64>() > 1.0, "the float sum really is over 1");
    let mut spec = good();
    spec.contexts[1].messages = ["a", "b", "c", "d"].iter().zip(ratios).map(|(n, r)| pack(n, Some(r))).collect();
    spec.retrievers = ["a", "b", "c", "d", "kb_search"].iter().map(|n| retriever(n, "{input.question}")).collect();
    assert_eq!(found(&spec), vec![]);
    // Without a default ratio, a pack left no share is named.
    let mut spec = good();
    spec.contexts[0].policy = None;
    spec.contexts[0].messages[1] = pack("kb_search", Some(1.0));
    assert_eq!(found(&spec), vec![("ENGINE_RATIO_SUM", "contexts[0].messages[2].name".into())]);
}

#[test]
fn unknown_packs_and_variables_get_suggestions() {
    let mut spec = good();
    spec.contexts[0].messages[1] = pack("kb_serch", None);
    spec.contexts[0].messages[4] = user("{input.qestion} {context.kb_serch} {context.nope} {foo.bar} {input}");
    let issues = validate_spec(&spec);
    let summary: Vec<_> =
        issues.iter().map(|i| (i.code.as_str(), i.path.to_string(), i.help.clone().unwrap_or_default())).collect();
    let content = "contexts[0].messages[4].content".to_owned();
    assert_eq!(
        summary,
        vec![
            ("ENGINE_UNKNOWN_PACK", "contexts[0].messages[1].name".into(), "did you mean `kb_search`?".into()),
            (
                "ENGINE_UNKNOWN_VARIABLE",
                content.clone(),
                "did you mean `input.question`? or add `qestion` to the context's `inputs`".into()
            ),
            (
                "ENGINE_UNKNOWN_VARIABLE",
                content.clone(),
                "add a `context` directive for it, with `placement: variable` to send it only here".into()
            ),
            (
                "ENGINE_UNKNOWN_VARIABLE",
                content.clone(),
                "variables are `{input.<name>}` and `{context.<pack>}`".into()
            ),
            ("ENGINE_UNKNOWN_VARIABLE", content, "variables are `{input.<name>}` and `{context.<pack>}`".into()),
        ]
    );
    // `{context.kb_serch}` names the (unknown) pack as written, so only the directive is flagged.
    assert!(issues[1].message.contains("`{input.qestion}`"), "{}", issues[1].message);
}

#[test]
fn template_syntax_errors_carry_positions() {
    let mut spec = good();
    spec.contexts[0].messages[0] = system("Hello {} and {input.question");
    let issues = validate_spec(&spec);
    let syntax: Vec<_> = issues.iter().filter(|i| i.code == "ENGINE_TEMPLATE_SYNTAX").collect();
    assert_eq!(syntax.len(), 2, "{issues:#?}");
    assert_eq!(syntax[0].path.to_string(), "contexts[0].messages[0].content");
    assert!(syntax[0].message.contains("empty variable name `{}` at line 1, column 7"), "{}", syntax[0].message);
    assert!(syntax[1].message.contains("unclosed `{` at line 1, column 14"), "{}", syntax[1].message);
}

#[test]
fn retriever_rules() {
    let mut spec = good();
    spec.retrievers[0].limit = 0;
    spec.retrievers[1].query = "{input.topic} {context.kb_search}".into();
    let f = found(&spec);
    assert_eq!(
        f,
        vec![
            ("ENGINE_RETRIEVER_LIMIT", "retrievers[0].limit".into()),
            ("ENGINE_UNKNOWN_VARIABLE", "retrievers[1].query".into()),
            ("ENGINE_UNKNOWN_VARIABLE", "contexts[1].messages[1].name".into()),
        ]
    );
    let issues = validate_spec(&spec);
    assert!(issues[2].message.contains("context `faq` does not declare input `topic`"), "{}", issues[2].message);
}

#[test]
fn names_history_and_nesting_rules() {
    let mut spec = good();
    spec.contexts[1].messages.push(MessageSpec::History);
    spec.contexts[1].messages.push(pack("support", None));
    spec.contexts[0].messages.push(MessageSpec::History);
    spec.retrievers.push(retriever("faq", "{input.question}"));
    spec.retrievers.push(retriever("kb_search", "{input.question}"));
    let f = found(&spec);
    for expected in [
        ("ENGINE_DUPLICATE_NAME", "retrievers[2].name"),
        ("ENGINE_DUPLICATE_NAME", "retrievers[3].name"),
        ("ENGINE_DUPLICATE_HISTORY", "contexts[0].messages[5]"),
        ("ENGINE_NESTED_HISTORY", "contexts[0].messages[2].name"),
        ("ENGINE_NESTED_HISTORY", "contexts[1].messages[3].name"),
        ("ENGINE_NESTED_CYCLE", "contexts[0].messages[2].name"),
        ("ENGINE_NESTED_CYCLE", "contexts[1].messages[3].name"),
    ] {
        assert!(f.contains(&(expected.0, expected.1.to_owned())), "missing {expected:?} in {f:#?}");
    }
}

#[test]
fn a_self_nesting_context_is_a_cycle() {
    let mut spec = good();
    spec.contexts[1].messages.push(pack("faq", Some(0.1)));
    let f = found(&spec);
    assert!(f.contains(&("ENGINE_NESTED_CYCLE", "contexts[1].messages[2].name".into())), "{f:?}");
    assert!(!f.iter().any(|(code, _)| *code == "ENGINE_DUPLICATE_PACK"), "{f:?}");
}

#[test]
fn paths_nest_under_a_base() {
    let mut spec = good();
    spec.retrievers[0].limit = -1;
    let base = FieldPath::root().key("steps").index(2).key("engine");
    let issues = validate_spec_at(&spec, &base);
    assert_eq!(issues[0].path.to_string(), "steps[2].engine.retrievers[0].limit");
}

#[test]
fn empty_names_inputs_and_messages() {
    let spec = EngineSpec {
        contexts: vec![ContextDeclaration {
            name: String::new(),
            inputs: vec!["a b".into()],
            policy: None,
            messages: vec![],
        }],
        retrievers: vec![],
        compactors: vec![String::new()],
    };
    let f = found(&spec);
    assert_eq!(
        f,
        vec![
            ("ENGINE_EMPTY_NAME", "contexts[0].name".into()),
            ("ENGINE_EMPTY_NAME", "compactors[0]".into()),
            ("ENGINE_NO_MESSAGES", "contexts[0].messages".into()),
            ("ENGINE_INVALID_INPUT", "contexts[0].inputs[0]".into()),
        ]
    );
}

#[test]
fn placement_variable_packs_are_known_to_templates() {
    let mut spec = good();
    spec.contexts[0].messages[1] =
        MessageSpec::Context(ContextInsert { placement: PackPlacement::Variable, ..ContextInsert::new("kb_search") });
    assert_eq!(found(&spec), vec![]);
}
