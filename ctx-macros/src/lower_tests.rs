//! Lowering on whole invocations: the values produced, the spans recorded, the syntax errors.

use ctx_spec::pipeline::*;
use ctx_spec::validation::FieldPath;
use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::PipelineInput;
use crate::ctxt::Ctxt;
use crate::lower::{Lowered, lower};

fn lower_tokens(tokens: TokenStream) -> (Lowered, Vec<String>) {
    let input: PipelineInput = syn::parse2(tokens).expect("header parses");
    let cx = Ctxt::new();
    let lowered = lower(&cx, &input, None);
    let errors = match cx.check() {
        Ok(()) => Vec::new(),
        Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
    };
    (lowered, errors)
}

fn sketch() -> TokenStream {
    quote! {
        /// Answers questions about a SQL/.NET code base.
        pub pipeline CodeQa {
            model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
            settings {
                max_context_tokens: 9_000,
                max_history_tokens: 2_000,
                budget_safety_margin_tokens: 128,
                max_turn_loops: 3,
            }
            prompts {
                answer: at_load,
                summarizer: "Summarise the context; keep identifiers and SQL verbatim.",
            }
            steps {
                search: search_nodes { top_k: 20, next: fetch },
                fetch: fetch_node_texts { evidence_tokens: 3_000, next: manage_budget },
                manage_budget: manage_context_budget {
                    compact_code: [
                        { language: sql, policy: demand, inbox_key: "compact_sql" },
                        { language: sql, policy: threshold, threshold: 0.4 },
                        { language: dotnet, policy: always },
                    ],
                    divide_new_content: "<<<New content",
                    on_ok: answer,
                    on_over: budget_loop_guard,
                },
                budget_loop_guard: loop_guard { max_turn_loops_from_settings: max_turn_loops, on_allow: summarize, on_deny: answer },
                summarize: call_model {
                    prompt_key: summarizer, max_output_tokens: 2_000,
                    user_parts: [ context_blocks => "### Context:\n{}\n\n", user_question_en => "### User:\n{}\n\n" ],
                    next: set_context_from_summary,
                },
                set_context_from_summary: set_variables {
                    rules: [ context_blocks <- last_model_response | to_context_blocks, last_model_response = null ],
                    next: manage_budget,
                },
                answer: call_model { prompt_key: answer, use_history: true, next: end },
            }
        }
    }
}

#[test]
fn the_readme_sketch_lowers_to_the_runtime_definition() {
    let (lowered, errors) = lower_tokens(sketch());
    assert!(errors.is_empty(), "{errors:?}");
    assert!(lowered.graph_complete);
    let def = &lowered.def;
    assert_eq!(def.name, "CodeQa");
    assert_eq!(
        def.model,
        ModelSource::Inline(
            ModelSpec::default()
                .context_window(Some(16_384))
                .max_tokens(Some(1_024))
                .encoding(Some("cl100k_base".into()))
        )
    );
    assert_eq!(def.settings.max_context_tokens, Some(9_000));
    assert_eq!(def.settings.budget_safety_margin_tokens, Some(128));
    assert_eq!(def.settings.extra.get("max_turn_loops"), Some(&3));
    assert_eq!(def.prompts[0], PromptSpec::default().key("answer".into()));
    let ids: Vec<&str> = def.steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["search", "fetch", "manage_budget", "budget_loop_guard", "summarize", "set_context_from_summary", "answer"]
    );
    assert_eq!(def.steps[0].kind, StepKind::SearchNodes(SearchNodesSpec::new(20, "fetch")));
    let StepKind::ManageContextBudget(manage) = &def.steps[2].kind else { panic!("kind") };
    assert_eq!(manage.compact_code.len(), 3);
    assert_eq!(manage.compact_code[0].inbox_key.as_deref(), Some("compact_sql"));
    assert_eq!(manage.compact_code[1].threshold, Some(0.4));
    assert_eq!(manage.divide_new_content.as_deref(), Some("<<<New content"));
    assert_eq!((manage.on_ok.as_str(), manage.on_over.as_str()), ("answer", "budget_loop_guard"));
    let StepKind::CallModel(summarize) = &def.steps[4].kind else { panic!("kind") };
    assert_eq!(summarize.max_output_tokens, Some(2_000));
    assert_eq!(summarize.user_parts[1].source, "user_question_en");
    assert_eq!(summarize.user_parts[0].template, "### Context:\n{}\n\n");
    let StepKind::SetVariables(set) = &def.steps[5].kind else { panic!("kind") };
    assert_eq!(
        set.rules,
        vec![
            SetRuleSpec::new(
                "context_blocks",
                SetValueSpec::From { from: "last_model_response".into(), transform: Some("to_context_blocks".into()) }
            ),
            SetRuleSpec::new("last_model_response", SetValueSpec::Value(serde_json::Value::Null)),
        ]
    );
    let StepKind::CallModel(answer) = &def.steps[6].kind else { panic!("kind") };
    assert!(answer.use_history);
    assert_eq!(answer.next, END);
}

#[test]
fn every_value_the_runtime_may_name_has_a_span() {
    let (lowered, _) = lower_tokens(sketch());
    for path in [
        "name",
        "model",
        "model.context_window",
        "settings",
        "settings.max_turn_loops",
        "prompts.summarizer",
        "steps[0]",
        "steps[0].id",
        "steps[0].kind",
        "steps[0].top_k",
        "steps[2].compact_code",
        "steps[2].compact_code[1]",
        "steps[2].compact_code[1].threshold",
        "steps[2].on_over",
        "steps[3].max_turn_loops_from_settings",
        "steps[4].user_parts[1].source",
        "steps[4].user_parts[1].template",
        "steps[5].rules[0].transform",
        "steps[5].rules[1].value",
    ] {
        assert!(lowered.spans.get(&FieldPath::parse(path)).is_some(), "no span for `{path}`");
    }
}

#[test]
fn custom_steps_and_config_models_lower() {
    let (lowered, errors) = lower_tokens(quote! {
        pipeline P {
            model: config("config.json")
            steps {
                classify: custom { outcomes { sql => answer, other => end } },
                answer: call_model { prompt_key: a, max_tokens: 10, next: end },
            }
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(lowered.def.model, ModelSource::ConfigFile("config.json".into()));
    assert_eq!(
        lowered.def.steps[0].kind,
        StepKind::Custom(CustomSpec::new(vec![("sql".into(), "answer".into()), ("other".into(), "end".into())]))
    );
    assert!(lowered.spans.get(&FieldPath::parse("steps[0].outcomes.sql")).is_some());
}

#[test]
fn syntax_errors_are_all_reported_with_a_fix() {
    let (lowered, errors) = lower_tokens(quote! {
        pipeline P {
            model { context_window: "16k" }
            steps {
                search: search_nodes { top_k: 20, nxt: fetch },
                fetch: fetch_node_text { max_tokens: 3_000, next: end },
                manage: manage_context_budget { on_ok: end, on_ok: end },
                again: loop_guard { max_turn_loops_from_settings: "loops", on_allow: end, on_deny: end },
            }
        }
    });
    let expected = [
        "`context_window` in `model` must be an integer, found a string\nhelp: write `context_window: <integer>`",
        "unknown key `nxt` in `search_nodes` step `search`; expected one of `top_k`, `next`, did you mean `next`?\n\
         help: rename it to `next`",
        "unknown step kind `fetch_node_text`; expected one of `search_nodes`, `expand_dependency_tree`, \
         `fetch_node_texts`, `manage_context_budget`, `call_model`, `agent`, `loop_guard`, `set_variables`, `custom`\n\
         help: did you mean `fetch_node_texts`?",
        "duplicate key `on_ok` in `manage_context_budget` step `manage`\nhelp: `on_ok` is already set above; remove one of the two",
        "`manage_context_budget` step `manage` has no `on_over`\nhelp: add `on_over: <step id or end>`",
        "`max_turn_loops_from_settings` in `loop_guard` step `again` must be a name, not a string\n\
         help: remove the quotes: `loops`",
    ];
    assert_eq!(errors, expected);
    assert!(!lowered.graph_complete, "a lost transition makes graph findings unreliable");
    assert!(lowered.spans.is_poisoned(&FieldPath::parse("steps[1]")), "an unknown kind poisons its step");
}

#[test]
fn a_key_of_another_kind_says_where_it_belongs() {
    let (_, errors) = lower_tokens(quote! {
        pipeline P { model { model: "gpt-4o" } steps { f: fetch_node_texts { evidence_tokens: 1, next: end, on_over: end } } }
    });
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("(`on_over` is a key of `manage_context_budget`)"), "{}", errors[0]);
}

#[test]
fn missing_sections_and_unknown_sections_are_reported() {
    let (_, errors) = lower_tokens(quote! { pipeline P { setings { a: 1 } } });
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("unknown key `setings`") && errors[0].contains("did you mean `settings`?"),
        "{}",
        errors[0]
    );
    assert!(errors[1].starts_with("pipeline `P` is missing `model` and `steps`\nhelp: add `model {"), "{}", errors[1]);
}

#[test]
fn the_old_evidence_key_still_reads_with_a_deprecation_and_both_are_an_error() {
    let (lowered, errors) = lower_tokens(quote! {
        pipeline P { model { model: "gpt-4o" } steps { f: fetch_node_texts { max_tokens: 1_500, next: end } } }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let StepKind::FetchNodeTexts(spec) = &lowered.def.steps[0].kind else { panic!("{:?}", lowered.def.steps[0]) };
    assert_eq!(spec.evidence_tokens, 1_500);
    let expanded = crate::expand::pipeline(
        quote! { pipeline P { model { model: "gpt-4o" } steps { f: fetch_node_texts { max_tokens: 1_500, next: end } } } },
        None,
    )
    .to_string();
    assert!(expanded.contains("deprecated :: fetch_node_texts_max_tokens"), "{expanded}");
    let current = crate::expand::pipeline(
        quote! { pipeline P { model { model: "gpt-4o" } steps { f: fetch_node_texts { evidence_tokens: 1_500, next: end } } } },
        None,
    )
    .to_string();
    assert!(!current.contains("deprecated"), "{current}");

    let (_, errors) = lower_tokens(quote! {
        pipeline P { model { model: "gpt-4o" } steps { f: fetch_node_texts { evidence_tokens: 1, max_tokens: 2, next: end } } }
    });
    assert_eq!(
        errors,
        ["`fetch_node_texts` step `f` writes both `evidence_tokens` and `max_tokens`\n\
          help: `max_tokens` is another name of `evidence_tokens`: keep `evidence_tokens`"]
    );
}

/// The `compile_error!` messages of an expansion.
fn expansion_errors(tokens: TokenStream) -> String {
    crate::expand::pipeline(tokens, None).to_string()
}

#[test]
fn compactor_languages_are_built_in_or_declared_and_typos_are_caught() {
    let ok = expansion_errors(quote! {
        pipeline P {
            model { model: "gpt-4o" }
            settings { max_context_tokens: 9_000, compactors: [yaml], node_frame: "<doc id=\"{id}\">\n{text}\n</doc>" }
            steps {
                m: manage_context_budget {
                    compact_code: [ { language: markdown, policy: always }, { language: yaml, policy: always } ],
                    on_ok: end, on_over: end,
                }
            }
        }
    });
    assert!(!ok.contains("compile_error"), "{ok}");
    let compactors = "(\"compactors\" , :: ctx :: __private :: spec :: FieldValue :: TextList \
                      (:: std :: vec ! [:: std :: string :: String :: from (\"yaml\")]))";
    assert!(ok.contains(compactors), "{ok}");
    let typo = expansion_errors(quote! {
        pipeline P {
            model { model: "gpt-4o" }
            settings { max_context_tokens: 9_000, node_frame: "{id} {txt}" }
            steps {
                m: manage_context_budget { compact_code: [ { language: markdwn, policy: always } ], on_ok: end, on_over: end }
            }
        }
    });
    assert!(
        typo.contains("unknown compaction language `markdwn`") && typo.contains("did you mean `markdown`?"),
        "{typo}"
    );
    assert!(typo.contains("unknown placeholder `{txt}` in the node frame; did you mean `{text}`?"), "{typo}");
    let (_, errors) = lower_tokens(quote! {
        pipeline P { model { model: "gpt-4o" } settings { node_fram: "{text}" } steps { a: custom { outcomes { done => end } } } }
    });
    assert_eq!(errors, ["unknown setting `node_fram`\nhelp: did you mean `node_frame`?"]);
}

/// A malformed deprecated spelling (`max_tokens = 2_000`) is reported once, where it is written;
/// the key it spells is not also reported missing (issue 26, item 13).
#[test]
fn a_malformed_old_spelling_does_not_make_its_key_missing() {
    let out = expansion_errors(quote! {
        pipeline P {
            model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
            settings { max_context_tokens: 9_000 }
            prompts { answer: "Answer." }
            steps {
                fetch: fetch_node_texts { max_tokens = 2_000, next: answer },
                answer: call_model { prompt_key: answer, next: end },
            }
        }
    });
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert!(!out.contains("missing `evidence_tokens`") && !out.contains("is missing"), "{out}");
}

/// `presence_penalty` and `frequency_penalty` are read from the DSL, and checked by the one rule.
#[test]
fn the_penalties_are_lowered_and_checked() {
    let (lowered, errors) = lower_tokens(quote! {
        pipeline Penalties {
            model { context_window: 16_384, max_tokens: 1_024, encoding: cl100k_base }
            settings { max_context_tokens: 4_000 }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, presence_penalty: 0.5, frequency_penalty: -3, next: end } }
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let StepKind::CallModel(call) = &lowered.def.steps[0].kind else { panic!() };
    assert_eq!((call.params.presence_penalty, call.params.frequency_penalty), (Some(0.5), Some(-3.0)));
    let issues = validate_definition(&lowered.def, &ValidateOptions::default().check_tokens(false));
    let found: Vec<(&str, String)> = issues.iter().map(|i| (i.code.as_str(), i.path.to_string())).collect();
    assert_eq!(found, [("PENALTY_OUT_OF_RANGE", "steps[0].frequency_penalty".to_owned())]);
    assert!(lowered.spans.get(&FieldPath::parse("steps[0].frequency_penalty")).is_some());
}

/// `history_trim`, `history_low_water_percent`, `max_cost_per_run` and the model's `price` are
/// read by the schema rows the YAML reader shares, and checked by their rules.
#[test]
fn history_trim_the_cost_cap_and_the_price_are_read_and_checked() {
    let (lowered, errors) = lower_tokens(quote! {
        pipeline P {
            model { model: "gpt-4o", price { input: 2.5, cached_input: 1.25, output: 10 } }
            settings {
                max_context_tokens: 4_000, max_history_tokens: 500,
                history_trim: fold, history_low_water_percent: 60, max_cost_per_run: 0.05,
            }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, use_history: true, next: end } }
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    let ModelSource::Inline(model) = &lowered.def.model else { panic!() };
    let price = model.price.as_ref().expect("read");
    assert_eq!((price.input, price.cached_input, price.output), (Some(2.5), Some(1.25), Some(10.0)));
    let s = &lowered.def.settings;
    assert_eq!(
        (s.history_trim.as_deref(), s.history_low_water_percent, s.max_cost_per_run),
        (Some("fold"), Some(60), Some(0.05))
    );
    for path in ["model.price.input", "settings.history_trim", "settings.max_cost_per_run"] {
        assert!(lowered.spans.get(&FieldPath::parse(path)).is_some(), "no span for `{path}`");
    }

    let out = expansion_errors(quote! {
        pipeline P {
            model { model: "gpt-4o", price: { input: cheap, output: 10 } }
            settings {
                max_context_tokens: 4_000, max_history_tokens: 500,
                history_trim: newest_first, max_cost_per_run: "lots",
            }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, use_history: true, next: end } }
        }
    });
    assert_eq!(out.matches("compile_error").count(), 3, "{out}");
    assert!(out.contains("`price.input` must be a number, found `cheap`"), "{out}");
    assert!(out.contains("unknown history trimming policy `newest_first`"), "{out}");
    assert!(out.contains("`max_cost_per_run` in `settings` must be a number, found a string"), "{out}");
    let out = expansion_errors(quote! {
        pipeline P {
            model { model: "gpt-4o", price { input: -1, output: 10 } }
            settings { max_context_tokens: 4_000, max_history_tokens: 500, history_trim: fold, history_low_water_percent: 150 }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, use_history: true, next: end } }
        }
    });
    assert_eq!(out.matches("compile_error").count(), 2, "{out}");
    assert!(out.contains("price.input") && out.contains("history_low_water_percent"), "{out}");
}

/// `billed_token_ratio` is read by its schema row and checked by the price rules: a ratio below 1
/// is `INVALID_BILLED_TOKEN_RATIO` at its token.
#[test]
fn the_billed_token_ratio_is_read_and_checked() {
    let (lowered, errors) = lower_tokens(quote! {
        pipeline P {
            model { model: "gpt-4o" }
            settings { max_context_tokens: 4_000, max_cost_per_run: 0.05, billed_token_ratio: 1.25 }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, next: end } }
        }
    });
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(lowered.def.settings.billed_token_ratio, Some(1.25));
    assert!(lowered.spans.get(&FieldPath::parse("settings.billed_token_ratio")).is_some());
    let out = expansion_errors(quote! {
        pipeline P {
            model { model: "gpt-4o" }
            settings { max_context_tokens: 4_000, billed_token_ratio: 0.5 }
            prompts { answer: "Answer." }
            steps { answer: call_model { prompt_key: answer, max_output_tokens: 256, next: end } }
        }
    });
    assert_eq!(out.matches("compile_error").count(), 1, "{out}");
    assert!(out.contains("`billed_token_ratio` is 0.5; it must be a number >= 1"), "{out}");
}
