//! `pipeline::yaml::to_yaml` and the loader are inverses: random definitions of every step kind,
//! with strings that YAML could misread (quotes, newlines, `#`, `:`, braces, unicode, control
//! characters, empty), any integers and finite numbers, are written and decoded back equal; the
//! shipped example files load, export, and load back to the same definition.

use std::collections::BTreeSet;
use std::path::Path;

use ctx_runtime::llm::{ModelParams, ResponseFormat};
use ctx_runtime::pipeline::yaml::{PipelineFile, to_yaml};
use ctx_runtime::pipeline::*;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    let tricky = prop::sample::select(vec![
        '"', '\'', '\\', '\n', '\r', '\t', '#', ':', '{', '}', '[', ']', ',', '&', '*', '!', '|', '>', '%', '@', '`',
        '-', '?', ' ', 'é', '😀', '\u{0}', '\u{7f}', '\u{85}', '\u{a0}', '\u{2028}', '\u{feff}',
    ]);
    let words = prop::sample::select(vec!["null", "true", "~", "1", "-0.5", "1e3", "end", "yes", "NaN", "--- "]);
    prop_oneof![
        prop::collection::vec(prop_oneof![any::<char>(), tricky], 0..12).prop_map(|c| c.into_iter().collect()),
        words.prop_map(str::to_owned),
        Just(String::new()),
    ]
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![any::<f64>().prop_filter("finite", |f| f.is_finite()), Just(0.1), Just(1.0), Just(-0.0)]
}

fn opt<T: std::fmt::Debug>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    prop::option::of(s)
}

fn json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value as J;
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        number().prop_map(|f| J::Number(serde_json::Number::from_f64(f).unwrap())),
        text().prop_map(J::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(J::Array),
            prop::collection::btree_map(text(), inner, 0..4).prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
}

fn model() -> impl Strategy<Value = ModelSource> {
    let segment = "[a-zA-Z0-9_ é#:{}-]{1,8}";
    prop_oneof![
        (opt(text()), opt(any::<i64>()), opt(any::<i64>()), opt(text())).prop_map(
            |(model, context_window, max_tokens, encoding)| {
                ModelSource::Inline(
                    ModelSpec::default()
                        .model(model)
                        .context_window(context_window)
                        .max_tokens(max_tokens)
                        .encoding(encoding),
                )
            }
        ),
        // The loader resolves the path against the file: an absolute, normalized one reads back as is.
        prop::collection::vec(segment, 1..4).prop_map(|s| ModelSource::ConfigFile(format!("/{}", s.join("/")))),
    ]
}

fn settings() -> impl Strategy<Value = SettingsSpec> {
    let extra = prop::collection::btree_map(
        text().prop_filter("a typed setting", |k| !ctx_runtime::config::SETTING_NAMES.contains(&k.as_str())),
        any::<i64>(),
        0..4,
    );
    (
        (opt(any::<i64>()), opt(any::<i64>()), opt(any::<i64>()), opt(text())),
        (prop::collection::vec(text(), 0..3), opt(text()), extra),
    )
        .prop_map(|((a, b, c, limits_policy), (compactors, node_frame, extra))| {
            SettingsSpec::default()
                .max_context_tokens(a)
                .max_history_tokens(b)
                .budget_safety_margin_tokens(c)
                .limits_policy(limits_policy)
                .compactors(compactors)
                .node_frame(node_frame)
                .extra(extra)
        })
}

/// Distinct keys, in the generated order.
fn unique<T>(items: Vec<(String, T)>) -> Vec<(String, T)> {
    let mut seen = BTreeSet::new();
    items.into_iter().filter(|(k, _)| seen.insert(k.clone())).collect()
}

fn prompts() -> impl Strategy<Value = Vec<PromptSpec>> {
    prop::collection::vec((text(), opt(text())), 0..4)
        .prop_map(|p| unique(p).into_iter().map(|(key, text)| PromptSpec::new(key, text)).collect())
}

fn params() -> impl Strategy<Value = ModelParams> {
    let format = prop_oneof![
        Just(None),
        Just(Some(ResponseFormat::JsonObject)),
        (text(), text(), any::<bool>()).prop_map(|(name, schema, strict)| Some(ResponseFormat::JsonSchema {
            name,
            schema,
            strict
        })),
    ];
    (opt(number()), opt(number()), prop::collection::vec(text(), 0..3), opt(any::<i64>()), format).prop_map(
        |(temperature, top_p, stop, seed, response_format)| {
            ModelParams::default()
                .temperature(temperature)
                .top_p(top_p)
                .stop(stop)
                .seed(seed)
                .response_format(response_format)
        },
    )
}

fn call() -> impl Strategy<Value = CallModelSpec> {
    let parts = prop::collection::vec((text(), text()), 0..3)
        .prop_map(|p| p.into_iter().map(|(source, template)| UserPartSpec::new(source, template)).collect());
    (text(), opt(any::<i64>()), opt(any::<i64>()), parts, any::<bool>(), params(), text()).prop_map(
        |(prompt_key, max_output_tokens, max_tokens, user_parts, use_history, params, next)| {
            CallModelSpec::new(prompt_key, next)
                .max_output_tokens(max_output_tokens)
                .max_tokens(max_tokens)
                .user_parts(user_parts)
                .use_history(use_history)
                .params(params)
        },
    )
}

fn kind() -> impl Strategy<Value = StepKind> {
    let rule = (text(), text(), opt(number()), opt(text())).prop_map(|(language, policy, threshold, inbox_key)| {
        CompactRuleSpec::new(language, policy).threshold(threshold).inbox_key(inbox_key)
    });
    let tool = (text(), text(), text())
        .prop_map(|(name, description, parameters)| ToolSpec::new(name, description, parameters));
    let set_value = prop_oneof![
        (text(), opt(text())).prop_map(|(from, transform)| SetValueSpec::From { from, transform }),
        json().prop_map(SetValueSpec::Value),
    ];
    prop_oneof![
        (any::<i64>(), text()).prop_map(|(top_k, next)| StepKind::SearchNodes(SearchNodesSpec::new(top_k, next))),
        (any::<i64>(), text())
            .prop_map(|(max_depth, next)| StepKind::ExpandDependencyTree(ExpandSpec::new(max_depth, next))),
        (any::<i64>(), text())
            .prop_map(|(evidence_tokens, next)| StepKind::FetchNodeTexts(FetchSpec::new(evidence_tokens, next))),
        (prop::collection::vec(rule, 0..3), opt(text()), text(), text()).prop_map(
            |(compact_code, divide_new_content, on_ok, on_over)| {
                StepKind::ManageContextBudget(
                    ManageBudgetSpec::new(on_ok, on_over)
                        .compact_code(compact_code)
                        .divide_new_content(divide_new_content),
                )
            }
        ),
        call().prop_map(StepKind::CallModel),
        (call(), prop::collection::vec(tool, 0..3), any::<i64>(), opt(any::<i64>())).prop_map(
            |(call, tools, max_tool_calls, turn_budget_tokens)| {
                StepKind::Agent(AgentSpec::new(call, tools, max_tool_calls).turn_budget_tokens(turn_budget_tokens))
            }
        ),
        (text(), text(), text()).prop_map(|(max_turn_loops_from_settings, on_allow, on_deny)| {
            StepKind::LoopGuard(LoopGuardSpec::new(max_turn_loops_from_settings, on_allow, on_deny))
        }),
        (prop::collection::vec((text(), set_value), 0..4), text()).prop_map(|(rules, next)| {
            let rules = rules.into_iter().map(|(set, value)| SetRuleSpec::new(set, value)).collect();
            StepKind::SetVariables(SetVariablesSpec::new(rules, next))
        }),
        prop::collection::vec((text(), text()), 0..4).prop_map(|o| StepKind::Custom(CustomSpec::new(unique(o)))),
    ]
}

fn definition() -> impl Strategy<Value = PipelineDef> {
    let steps = prop::collection::vec((text(), kind()).prop_map(|(id, kind)| StepDef::new(id, kind)), 0..5);
    (text(), model(), settings(), prompts(), steps).prop_map(|(name, model, settings, prompts, steps)| {
        PipelineDef::new(name).model(model).settings(settings).prompts(prompts).steps(steps)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_definition_reads_back_equal(def in definition()) {
        let text = to_yaml(&def);
        let back = PipelineFile::decode(&text, "/nowhere/random.yaml");
        prop_assert!(back.is_ok(), "{}\n{text}", back.unwrap_err());
        prop_assert_eq!(back.unwrap(), def, "\n{}", text);
    }
}

#[test]
fn the_example_files_load_export_and_load_back() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/pipelines");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            names.push(path);
        }
    }
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    for path in names {
        let loaded = PipelineFile::load(&path).unwrap_or_else(|e| panic!("{e}")).into_definition();
        let text = to_yaml(&loaded);
        // The exported file is validated like the original: prompts inline, the config path absolute.
        let again = PipelineFile::parse(&text, &path).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again.definition(), &loaded, "{}:\n{text}", path.display());
        assert_eq!(PipelineFile::decode(&text, &path).unwrap(), loaded);
        assert_eq!(to_yaml(again.definition()), text);
    }
}
