//! Lowering, error reporting and expansion snapshots of `context_engine!` and `turn_budget!`.
//! Where each error lands (its span) is checked by the trybuild cases in `ui-tests/cases/`.

use ctx_spec::engine::{
    CompactorSpec, ContextDeclaration, ContextInsert, ContextPolicySpec, EngineSpec, ExpansionSpec, InputBudgetSpec,
    MessageSpec, PackBudgetSpec, PackPlacement, RetrieverDecl,
};
use ctx_spec::turn::{DocumentFormat, PartialPolicy, TurnBudgetConfig, TurnBudgetSpec};
use expect_test::{ExpectFile, expect_file};
use proc_macro2::TokenStream;
use quote::quote;

use super::header::{EngineInput, TurnInput};
use crate::ctxt::Ctxt;

/// The decoded spec of an engine body, and every error (of its shape and of the rules) as text.
fn engine(body: TokenStream) -> (EngineSpec, Vec<String>) {
    let EngineInput(header) = syn::parse2(quote!(fn engine { #body })).expect("header parses");
    let cx = Ctxt::new();
    let lowered = super::engine::lower(&cx, &header);
    super::shared::report(
        &cx,
        &lowered.spans,
        super::engine::without_echoes(ctx_spec::engine::validate_spec(&lowered.spec)),
    );
    (lowered.spec, errors(cx))
}

fn turn(body: TokenStream) -> (TurnBudgetSpec, Vec<String>) {
    let TurnInput(header) = syn::parse2(quote!(fn turn { #body })).expect("header parses");
    let cx = Ctxt::new();
    let (spec, spans) = super::turn::lower(&cx, &header);
    if let Err(issues) = spec.resolve(&ctx_spec::validation::FieldPath::root()) {
        super::shared::report(&cx, &spans, issues);
    }
    (spec, errors(cx))
}

fn errors(cx: Ctxt) -> Vec<String> {
    match cx.check() {
        Ok(()) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    }
}

/// The first line of each error (the message without its help).
fn firsts(errors: &[String]) -> Vec<&str> {
    errors.iter().map(|e| e.lines().next().unwrap_or("")).collect()
}

#[test]
fn a_full_engine_lowers_to_the_runtime_spec() {
    let (spec, errors) = engine(quote! {
        compactors: [summarize, "code-outline"],
        retrievers {
            kb_search { query: "{input.question}", limit: 3 },
            faq_search: { query: "faq {input.question}", limit: 2 },
        }
        contexts {
            support {
                inputs: [question],
                policy {
                    input_budget { max_tokens: 4_000 },
                    pack_budget { default_ratio: 0.25 },
                    overflow: compact,
                    compactor { type: summarize },
                    expansion { max_pages: 3, min_fill_ratio: 1 },
                },
                messages: [
                    system: "Use the context.",
                    context: kb_search { ratio: 0.5 },
                    context: faq { placement: variable },
                    history,
                    assistant: "Noted.",
                    user: "{context.faq}\n\nQuestion: {input.question}",
                ],
            }
            faq {
                inputs: [question],
                policy { compactor: truncate },
                messages: [system: "FAQ:", context: faq_search],
            }
        }
    });
    assert_eq!(errors, Vec::<String>::new());
    let expected = EngineSpec {
        contexts: vec![
            ContextDeclaration {
                name: "support".into(),
                inputs: vec!["question".into()],
                policy: Some(ContextPolicySpec {
                    input_budget: Some(InputBudgetSpec { max_tokens: 4_000 }),
                    pack_budget: Some(PackBudgetSpec { default_ratio: Some(0.25) }),
                    overflow: Some("compact".into()),
                    compactor: Some(CompactorSpec { name: "summarize".into() }),
                    expansion: Some(ExpansionSpec { max_pages: 3, min_fill_ratio: 1.0 }),
                }),
                messages: vec![
                    MessageSpec::System { content: "Use the context.".into() },
                    MessageSpec::Context(ContextInsert { ratio: Some(0.5), ..ContextInsert::new("kb_search") }),
                    MessageSpec::Context(ContextInsert {
                        placement: PackPlacement::Variable,
                        ..ContextInsert::new("faq")
                    }),
                    MessageSpec::History,
                    MessageSpec::Assistant { content: "Noted.".into() },
                    MessageSpec::User { content: "{context.faq}\n\nQuestion: {input.question}".into() },
                ],
            },
            ContextDeclaration {
                name: "faq".into(),
                inputs: vec!["question".into()],
                policy: Some(ContextPolicySpec {
                    compactor: Some(CompactorSpec { name: "truncate".into() }),
                    ..Default::default()
                }),
                messages: vec![
                    MessageSpec::System { content: "FAQ:".into() },
                    MessageSpec::Context(ContextInsert::new("faq_search")),
                ],
            },
        ],
        retrievers: vec![
            RetrieverDecl { name: "kb_search".into(), query: "{input.question}".into(), limit: 3 },
            RetrieverDecl { name: "faq_search".into(), query: "faq {input.question}".into(), limit: 2 },
        ],
        compactors: vec!["summarize".into(), "code-outline".into()],
    };
    assert_eq!(spec, expected);
}

#[test]
fn runtime_rules_are_reported_with_their_help_all_at_once() {
    let (_, errors) = engine(quote! {
        retrievers { kb_search { query: "{input.question}", limit: 3 } }
        contexts {
            support {
                inputs: [question],
                policy {
                    pack_budget { default_ratio: 1.5 },
                    compactor: sumarize,
                    expansion { max_pages: 0, min_fill_ratio: 0.0 },
                },
                messages: [context: kb_serch { ratio: 0.6 }, context: kb_search { ratio: 0.6 }, user: "{input.qestion}"],
            }
        }
    });
    assert_eq!(
        firsts(&errors),
        [
            "pack_budget.default_ratio is 1.5, it must be in (0, 1] [ENGINE_RATIO_RANGE]",
            "unknown compactor `sumarize` [ENGINE_UNKNOWN_COMPACTOR]",
            "expansion.max_pages is 0, it must be at least 1 [ENGINE_MAX_PAGES]",
            "expansion.min_fill_ratio is 0, it must be in (0, 1] [ENGINE_MIN_FILL_RATIO]",
            "`kb_serch` is neither a declared retriever nor a declared context [ENGINE_UNKNOWN_PACK]",
            "template \"{input.qestion}\" uses `{input.qestion}`, but `qestion` is not a declared input [ENGINE_UNKNOWN_VARIABLE]",
            "the pack ratios of context `support` sum to 1.2, more than 1 [ENGINE_RATIO_SUM]",
        ]
    );
    assert!(errors[1].contains("did you mean `summarize`?") || errors[1].contains("help: known: "), "{}", errors[1]);
    assert!(errors[4].ends_with("help: did you mean `kb_search`?"), "{}", errors[4]);
}

/// Every path the engine's rules report has its own token: the nearest-ancestor fallback is
/// never what places an issue of a value that was written.
#[test]
fn every_runtime_issue_path_is_recorded_exactly() {
    let EngineInput(header) = syn::parse2(quote! {
        fn engine {
            compactors: [""],
            retrievers {
                kb { query: "{input.topic} {context.x}", limit: 0 },
                support { query: "{input.question}", limit: 1 },
            }
            contexts {
                support {
                    inputs: [question, "bad input"],
                    policy {
                        input_budget { max_tokens: 0 },
                        pack_budget { default_ratio: 0.0 },
                        overflow: compress,
                        compactor: nope,
                        expansion { max_pages: 0, min_fill_ratio: 2.0 },
                    },
                    messages: [
                        system: "{input.qestion} {oops",
                        context: kb { ratio: 1.0 },
                        context: faq,
                        context: kb,
                        context: missing,
                        history,
                        history,
                        user: "{context.nope}",
                    ],
                }
                faq { inputs: [question], messages: [history, context: support { ratio: 0.5 }] }
                empty { messages: [] }
                sums { messages: [context: kb { ratio: 0.7 }, context: empty { ratio: 0.7 }] }
                shares { messages: [context: kb { ratio: 1.0 }, context: empty] }
            }
        }
    })
    .expect("header parses");
    let cx = Ctxt::new();
    let lowered = super::engine::lower(&cx, &header);
    assert!(cx.check().is_ok(), "no syntax errors in this declaration");
    let issues = ctx_spec::engine::validate_spec(&lowered.spec);
    let mut codes: Vec<&str> = issues.iter().map(|i| i.code.as_str()).collect();
    codes.sort_unstable();
    codes.dedup();
    let every_engine_code = [
        "ENGINE_DUPLICATE_HISTORY",
        "ENGINE_DUPLICATE_NAME",
        "ENGINE_DUPLICATE_PACK",
        "ENGINE_EMPTY_NAME",
        "ENGINE_INVALID_BUDGET",
        "ENGINE_INVALID_INPUT",
        "ENGINE_INVALID_OVERFLOW",
        "ENGINE_MAX_PAGES",
        "ENGINE_MIN_FILL_RATIO",
        "ENGINE_NESTED_CYCLE",
        "ENGINE_NESTED_HISTORY",
        "ENGINE_NO_MESSAGES",
        "ENGINE_RATIO_RANGE",
        "ENGINE_RATIO_SUM",
        "ENGINE_RETRIEVER_LIMIT",
        "ENGINE_TEMPLATE_SYNTAX",
        "ENGINE_UNKNOWN_COMPACTOR",
        "ENGINE_UNKNOWN_PACK",
        "ENGINE_UNKNOWN_VARIABLE",
    ];
    assert_eq!(codes, every_engine_code);
    let sums = issues.iter().filter(|i| i.code == "ENGINE_RATIO_SUM").map(|i| i.path.to_string()).collect::<Vec<_>>();
    assert_eq!(sums, ["contexts[3].messages", "contexts[4].messages[1].name"]);
    for issue in &issues {
        assert!(lowered.spans.get(&issue.path).is_some(), "{} at `{}` has no token of its own", issue.code, issue.path);
    }
}

#[test]
fn a_sum_over_one_caused_by_an_out_of_range_ratio_is_reported_once() {
    let retrievers = quote! { retrievers { a { query: "", limit: 1 }, b { query: "", limit: 1 } } };
    let (_, errors) = engine(quote! {
        #retrievers
        contexts { c { messages: [context: a { ratio: 1.5 }, context: b { ratio: 0.2 }] } }
    });
    assert_eq!(firsts(&errors), ["the ratio of pack `a` is 1.5, it must be in (0, 1] [ENGINE_RATIO_RANGE]"]);
    let (_, errors) = engine(quote! {
        #retrievers
        contexts { c { policy { pack_budget { default_ratio: 2.0 } }, messages: [context: a, context: b] } }
    });
    assert_eq!(firsts(&errors), ["pack_budget.default_ratio is 2, it must be in (0, 1] [ENGINE_RATIO_RANGE]"]);
    // A sum over 1 of ratios that are each in range is its own finding.
    let (_, errors) = engine(quote! {
        #retrievers
        contexts { c { messages: [context: a { ratio: 0.7 }, context: b { ratio: 0.7 }] } }
    });
    assert_eq!(firsts(&errors), ["the pack ratios of context `c` sum to 1.4, more than 1 [ENGINE_RATIO_SUM]"]);
}

#[test]
fn syntax_errors_name_the_key_and_the_fix() {
    let (_, errors) = engine(quote! {
        contexts {
            support {
                input: [question],
                policy { input_budget { max_tokens: "4000" }, expansion { max_pages: 2 } },
                messages: [sytem: "Hi", context: kb { placement: inline, ratio: "half" }, history: true, user],
            }
            broken: 3,
        }
        retrivers {}
    });
    // The decoder YAML's `contexts:` goes through too reads them: its messages, in the order read.
    // The misspelt `retrivers` leaves `kb` undeclared, which is not reported on top.
    assert_eq!(
        errors,
        [
            "unknown key `retrivers` in context engine `engine`; expected one of `contexts`, `retrievers`, \
             `compactors`, did you mean `retrievers`?\nhelp: rename it to `retrievers`",
            "unknown key `input` in context `support`; expected one of `inputs`, `policy`, `messages`, did you \
             mean `inputs`?\nhelp: rename it to `inputs`",
            "context `broken` must be a block `{ … }`, found an integer\nhelp: write a block `{ … }`",
            "`max_tokens` in `input_budget` must be an integer, found a string\nhelp: write `max_tokens: 4000`",
            "`expansion` has no `min_fill_ratio`\nhelp: add `min_fill_ratio: <number>`",
            "unknown message `sytem`; expected one of `system`, `user`, `assistant`, `context`, `history`\n\
             help: did you mean `system`?",
            "`ratio` in pack `kb` must be a number, found a string\nhelp: write `ratio: <number>`",
            "unknown placement `inline`; expected one of `message`, `variable`\n\
             help: `message` sends the pack as its own system message; `variable` only where a template says \
             `{context.<name>}`",
            "`history` takes no value\nhelp: write `history` alone where the caller's history goes",
            "`user` needs a value\nhelp: write `user: \"…\"`",
        ]
    );
}

#[test]
fn a_missing_contexts_section_is_reported_once() {
    let (spec, errors) = engine(quote!(compactors: [summarize]));
    assert!(spec.contexts.is_empty());
    assert_eq!(
        errors,
        ["context engine `engine` has no `contexts`\n\
          help: add `contexts: { support { messages: [user: \"{input.question}\"] } }`"]
    );
}

#[test]
fn turn_settings_lower_and_resolve() {
    let (spec, errors) = turn(quote! {
        budget_tokens: 100_000,
        context_window: model("gpt-4o"),
        fallback_fraction: 0.9,
        on_partial: truncate,
        min_partial_tokens: 0,
        document_template: "[{id}] {text}",
        document_separator: "\n---\n",
    });
    assert_eq!(errors, Vec::<String>::new());
    let config = spec.resolve(&ctx_spec::validation::FieldPath::root()).unwrap();
    let window = ctx_spec::tokens::ModelInfo::lookup("gpt-4o").unwrap().context_window;
    assert_eq!(
        config,
        TurnBudgetConfig {
            budget_tokens: 100_000,
            context_window: window,
            fallback_fraction: 0.9,
            on_partial: PartialPolicy::Truncate,
            min_partial_tokens: 0,
            format: DocumentFormat {
                template: "[{id}] {text}".into(),
                separator: "\n---\n".into(),
                ..DocumentFormat::default()
            },
        }
    );
}

#[test]
fn turn_errors_come_from_the_runtime_rules_and_the_syntax() {
    let (_, errors) = turn(quote! {
        budget_tokens: 300_000,
        context_window: 128_000,
        fallback_fraction: 1.5,
        on_partial: truncat,
        document_template: "<doc>{id}</doc>",
        min_partial: 3,
    });
    assert_eq!(
        firsts(&errors),
        [
            "unknown key `min_partial` in turn budget `turn`; expected one of `budget_tokens`, `context_window`, \
             `fallback_fraction`, `on_partial`, `min_partial_tokens`, `document_template`, `document_separator`",
            "`budget_tokens` is 300000, more than the context window of 128000 [TURN_BUDGET_EXCEEDS_WINDOW]",
            "`fallback_fraction` is 1.5; it must be in (0, 1] [TURN_FALLBACK_FRACTION_INVALID]",
            "`on_partial` is `truncat`, which is not a policy [TURN_PARTIAL_POLICY_UNKNOWN]",
            "`document_template` holds `{text}` 0 times; it must hold it exactly once [TURN_DOCUMENT_TEMPLATE_INVALID]",
        ]
    );
    assert!(
        errors[3].ends_with("help: did you mean `truncate`? expected one of: skip, truncate, compact"),
        "{}",
        errors[3]
    );

    // Missing settings are a rule's finding; a value of the wrong type is not reported twice.
    let (_, errors) = turn(quote!(budget_tokens: "big", context_window: model("no-such-model")));
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(errors[0], "`budget_tokens` takes an integer, found a string\nhelp: write `budget_tokens: 100_000`");
    assert!(errors[1].starts_with("unknown model `no-such-model`: "), "{}", errors[1]);
    let (_, errors) = turn(quote!());
    assert_eq!(
        firsts(&errors),
        ["`budget_tokens` is required [TURN_SETTING_MISSING]", "`context_window` is required [TURN_SETTING_MISSING]"]
    );
}

#[test]
fn every_turn_issue_of_a_written_value_is_recorded_exactly() {
    let TurnInput(header) = syn::parse2(quote! {
        fn turn {
            budget_tokens: 0,
            context_window: -1,
            fallback_fraction: 0.0,
            on_partial: never,
            min_partial_tokens: -1,
            document_template: "{text}{text}",
        }
    })
    .expect("header parses");
    let cx = Ctxt::new();
    let (spec, spans) = super::turn::lower(&cx, &header);
    assert!(cx.check().is_ok());
    let issues = ctx_spec::turn::validate_turn_budget(&spec, &ctx_spec::validation::FieldPath::root());
    assert_eq!(issues.len(), 6, "{issues:#?}");
    for issue in &issues {
        assert!(spans.get(&issue.path).is_some(), "{} at `{}` has no token of its own", issue.code, issue.path);
    }
}

/// The expansion of `tokens`, pretty-printed.
fn expand(out: TokenStream) -> String {
    match syn2::parse2::<syn2::File>(out.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(e) => panic!("the expansion is not valid Rust ({e}):\n{out}"),
    }
}

fn check(out: TokenStream, expected: ExpectFile) {
    expected.assert_eq(&expand(out));
}

#[test]
fn engine_expansion() {
    check(
        super::context_engine(quote! {
            /// The help centre.
            pub fn help_centre {
                retrievers { kb_search { query: "{input.question}", limit: 2 } }
                contexts {
                    support {
                        inputs: [question],
                        policy {
                            input_budget { max_tokens: 200 },
                            pack_budget { default_ratio: 0.5 },
                            expansion { max_pages: 3, min_fill_ratio: 1.0 },
                        },
                        messages: [
                            system: "Answer from the articles.",
                            context: kb_search,
                            history,
                            user: "Question: {input.question}",
                        ],
                    }
                }
            }
        }),
        expect_file!["snapshots/engine.rs"],
    );
}

#[test]
fn turn_expansion() {
    check(
        super::turn_budget(quote! {
            /// One agent turn.
            pub(crate) fn agent_turn { budget_tokens: 262_000, context_window: 272_000, on_partial: truncate }
        }),
        expect_file!["snapshots/turn.rs"],
    );
}

#[test]
fn expansions_with_errors_keep_the_function() {
    check(
        super::turn_budget(quote! { fn bad { budget_tokens: 0, context_window: 1_000 } }),
        expect_file!["snapshots/turn_error.rs"],
    );
}
