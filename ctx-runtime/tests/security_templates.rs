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
