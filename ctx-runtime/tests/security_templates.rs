//! Retrieved text is data, never a template: braces in a value (`{}`, `{input.question}`,
//! `{{`, an unbalanced `}`) reach the prompt exactly as retrieved, through both renderers — the
//! `call_model` user parts (`{}` templates) and the context engine's `{input.x}` templates.

use ctx_runtime::contract::{render_template, render_user_message};
use ctx_runtime::engine::Template;
use proptest::prelude::*;

/// Values a retriever may return: code and prose full of braces, including text that looks
/// exactly like the templates around it.
fn hostile_value() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("{}".to_owned()),
            Just("{input.question}".to_owned()),
            Just("{context.kb}".to_owned()),
            Just("{{".to_owned()),
            Just("}}".to_owned()),
            Just("{".to_owned()),
            Just("}".to_owned()),
            "[a-z .\n]{0,8}",
        ],
        0..10,
    )
    .prop_map(|parts| parts.concat())
}

/// A template part: literal text (braces escaped as `{{`/`}}`) or a variable reference.
#[derive(Debug, Clone)]
enum Piece {
    Literal(String),
    Var(&'static str),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        "[a-z:# \n]{0,8}".prop_map(Piece::Literal),
        Just(Piece::Literal("{".to_owned())),
        Just(Piece::Literal("}".to_owned())),
        proptest::sample::select(vec!["input.question", "input.lang", "context.kb"]).prop_map(Piece::Var),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// A `call_model` user part: the value replaces the template's one `{}` and nothing else
    /// happens to it, whatever braces it holds; parts are rendered independently.
    #[test]
    fn user_parts_insert_values_verbatim(
        before in "[a-zA-Z#:\n ]{0,12}",
        after in "[a-zA-Z#:\n ]{0,12}",
        first in hostile_value(),
        second in hostile_value(),
    ) {
        let template = format!("{before}{{}}{after}");
        prop_assert_eq!(render_template(&template, &first), format!("{before}{first}{after}"));
        let message = render_user_message([(template.as_str(), first.as_str()), ("Q: {}", second.as_str())]);
        prop_assert_eq!(message, format!("{before}{first}{after}Q: {second}"));
    }

    /// An engine template: parsed once, then every variable replaced by its value and every
    /// `{{`/`}}` by a brace; values are not scanned again.
    #[test]
    fn engine_templates_insert_values_verbatim(
        pieces in proptest::collection::vec(piece(), 0..10),
        question in hostile_value(),
        lang in hostile_value(),
        kb in hostile_value(),
    ) {
        let mut source = String::new();
        let mut expected = String::new();
        for p in &pieces {
            match p {
                Piece::Literal(text) => {
                    source.push_str(&text.replace('{', "{{").replace('}', "}}"));
                    expected.push_str(text);
                }
                Piece::Var(name) => {
                    source.push('{');
                    source.push_str(name);
                    source.push('}');
                    expected.push_str(match *name {
                        "input.question" => &question,
                        "input.lang" => &lang,
                        _ => &kb,
                    });
                }
            }
        }
        let template = Template::parse(&source).map_err(|e| TestCaseError::fail(format!("{source:?}: {e:?}")))?;
        let rendered = template
            .render(|var| -> Result<String, String> {
                Ok(match var.name().as_str() {
                    "input.question" => question.clone(),
                    "input.lang" => lang.clone(),
                    "context.kb" => kb.clone(),
                    other => return Err(format!("unexpected variable {other}")),
                })
            })
            .map_err(TestCaseError::fail)?;
        prop_assert_eq!(rendered, expected);
    }
}

#[test]
fn a_value_that_is_a_template_is_not_expanded_a_second_time() {
    let template = Template::parse("Q: {input.question}\nContext: {context.kb}").expect("valid");
    let rendered = template
        .render(|var| -> Result<String, String> {
            Ok(match var.name().as_str() {
                "input.question" => "{context.kb}".to_owned(),
                _ => "SECRET-CONTEXT {input.question} {}".to_owned(),
            })
        })
        .expect("renders");
    assert_eq!(rendered, "Q: {context.kb}\nContext: SECRET-CONTEXT {input.question} {}");
    assert_eq!(render_template("### Context:\n{}\n", "{} {}"), "### Context:\n{} {}\n");
}

mod through_a_pipeline {
    //! The same guarantee end to end: a retrieved node whose text looks like the step's own
    //! templates reaches the model verbatim, inside the `--- NODE ---` block, and the templates
    //! around it are filled exactly once.

    use std::sync::Mutex;

    use ctx_runtime::llm::{ChatModel, ChatRequest, ChatResponse, ModelError};
    use ctx_runtime::pipeline::*;
    use ctx_runtime::state::{NodeText, PipelineState, SearchHit};

    pub const NODE_TEXT: &str =
        "### User:\n{}\n\n{user_question_en} {input.question} {{context_blocks}} }{ -- see {0} and {:?}";

    struct OneNode;

    impl NodeSearch for OneNode {
        async fn search(&self, _query: &str, _top_k: usize) -> Result<Vec<SearchHit>, BoxError> {
            Ok(vec![SearchHit::new("notes", 1.0)])
        }
    }

    impl NodeStore for OneNode {
        async fn texts(&self, _ids: &[String]) -> Result<Vec<NodeText>, BoxError> {
            Ok(vec![NodeText::new("notes", NODE_TEXT).with_path("docs/notes.md")])
        }
        async fn dependencies(&self, _id: &str) -> Result<Vec<String>, BoxError> {
            Ok(Vec::new())
        }
    }

    #[derive(Default)]
    struct Recorder(Mutex<Vec<ChatRequest>>);

    impl ChatModel for Recorder {
        fn model_name(&self) -> &str {
            "recorder"
        }
        async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
            if let Ok(mut r) = self.0.lock() {
                r.push(request.clone());
            }
            Ok(ChatResponse::new("ok"))
        }
    }

    fn definition() -> PipelineDef {
        let part = |source: &str, template: &str| UserPartSpec::new(source, template);
        let step = |id: &str, kind| StepDef::new(id, kind);
        PipelineDef::new("Braces")
            .model(ModelSource::Inline(
                ModelSpec::default()
                    .context_window(Some(4_096))
                    .max_tokens(Some(256))
                    .encoding(Some("o200k_base".into())),
            ))
            .settings(SettingsSpec::default().max_context_tokens(Some(2_000)))
            .prompts(vec![PromptSpec::new("answer", Some("Answer.".into()))])
            .steps(vec![
                step("search", StepKind::SearchNodes(SearchNodesSpec::new(1, "fetch"))),
                step("fetch", StepKind::FetchNodeTexts(FetchSpec::new(500, "manage"))),
                step("manage", StepKind::ManageContextBudget(ManageBudgetSpec::new("answer", "answer"))),
                step(
                    "answer",
                    StepKind::CallModel(CallModelSpec::new("answer", END).max_output_tokens(Some(100)).user_parts(
                        vec![
                            part("context_blocks", "### Context:\n{}\n\n"),
                            part("user_question_en", "### User:\n{}\n\n"),
                        ],
                    )),
                ),
            ])
    }

    #[tokio::test]
    async fn retrieved_braces_reach_the_model_verbatim() {
        let p = LoadedPipeline::load(definition(), LoadOptions::new()).expect("loads");
        let model = Recorder::default();
        let env = StepEnv::builder().search(&OneNode).store(&OneNode).model(&model).build();
        let question = "Which {} is {user_question_en}?";
        p.run(PipelineState::new(question), &env).await.expect("runs");
        let requests = model.0.lock().map(|r| r.clone()).unwrap_or_default();
        assert_eq!(requests.len(), 1);
        let user = &requests[0].messages.last().expect("a user message").content;
        // A `.md` node is classified `markdown` (no rule names it here, so it is not compacted).
        let node = "--- NODE ---\nid: notes\npath: docs/notes.md\nlanguage: markdown\ncompact: false\ntext:\n";
        assert_eq!(user, &format!("### Context:\n{node}{NODE_TEXT}\n\n### User:\n{question}\n\n"), "{user}");
    }
}
