use serde_json::json;

use super::*;

#[test]
fn target_kinds_follow_the_field_list() {
    assert_eq!(target_kind("context_blocks"), TargetKind::TextList);
    assert_eq!(target_kind("user_question_en"), TargetKind::Text);
    assert_eq!(target_kind("last_model_response"), TargetKind::OptionalText);
    assert_eq!(target_kind("node_texts"), TargetKind::ClearOnly);
    assert_eq!(target_kind("history_dialog"), TargetKind::ClearOnly);
    assert_eq!(target_kind("inbox"), TargetKind::ReadOnly);
    assert_eq!(target_kind("loop_counts"), TargetKind::ReadOnly);
    assert_eq!(target_kind("summary"), TargetKind::Variable);
    let readable: Vec<_> = readable_fields().collect();
    assert_eq!(readable, ["context_blocks", "user_question", "user_question_en", "last_model_response"]);
    // Every readable field is one `render_source` can render.
    let s = PipelineState::new("q");
    assert!(readable.iter().all(|f| s.render_source(f).is_some()));
}

#[test]
fn variable_names() {
    assert!(is_variable_name("summary_2"));
    assert!(is_variable_name("_x"));
    assert!(!is_variable_name("2x"));
    assert!(!is_variable_name(""));
    assert!(!is_variable_name("a-b"));
}

#[test]
fn to_context_blocks_keeps_a_response_as_one_block() {
    let t = Transform::ToContextBlocks;
    let summary = "First paragraph.\n\nSecond paragraph.".to_owned();
    assert_eq!(t.apply(Val::Opt(Some(summary.clone()))), Ok(Val::List(vec![summary])));
    assert_eq!(t.apply(Val::Opt(None)), Ok(Val::List(vec![])));
    assert_eq!(t.apply(Val::Text("  \n ".into())), Ok(Val::List(vec![])));
    assert_eq!(
        t.apply(Val::List(vec!["a".into(), " ".into(), "b".into()])),
        Ok(Val::List(vec!["a".into(), "b".into()]))
    );
    assert_eq!(t.apply(Val::Json(json!(["a", "b"]))), Ok(Val::List(vec!["a".into(), "b".into()])));
    assert!(t.apply(Val::Json(json!(["a", 1]))).unwrap_err().contains("element 1"));
    assert!(t.apply(Val::Json(json!({"a": 1}))).is_err());
    assert_eq!(t.output_type(ValueType::OptionalText), Ok(ValueType::TextList));
}

#[test]
fn text_transforms() {
    assert_eq!(Transform::Trim.apply(Val::Text(" a \n".into())), Ok(Val::Text("a".into())));
    assert_eq!(Transform::Trim.apply(Val::Opt(None)), Ok(Val::Opt(None)));
    assert_eq!(Transform::Trim.apply(Val::List(vec![" a ".into(), "  ".into()])), Ok(Val::List(vec!["a".into()])));
    assert_eq!(Transform::Trim.apply(Val::Json(json!(" x "))), Ok(Val::Opt(Some("x".into()))));
    assert!(Transform::Trim.apply(Val::Json(json!(3))).is_err());
    assert_eq!(Transform::ToUppercase.apply(Val::Text("sql".into())), Ok(Val::Text("SQL".into())));
    assert_eq!(Transform::ToLowercase.apply(Val::Text("SQL".into())), Ok(Val::Text("sql".into())));
    assert_eq!(Transform::Trim.output_type(ValueType::Json), Ok(ValueType::OptionalText));
}

#[test]
fn to_string_renders_blocks_like_the_prompt() {
    let blocks = vec!["a".to_owned(), "b".to_owned()];
    assert_eq!(Transform::ToString.apply(Val::List(blocks.clone())), Ok(Val::Text(render_context_blocks(&blocks))));
    assert_eq!(Transform::ToString.apply(Val::Opt(None)), Ok(Val::Text(String::new())));
    assert_eq!(Transform::ToString.apply(Val::Json(json!({"k": 1}))), Ok(Val::Text("{\"k\":1}".into())));
}

#[test]
fn parse_json() {
    assert_eq!(Transform::ParseJson.apply(Val::Text("{\"k\": [1]}".into())), Ok(Val::Json(json!({"k": [1]}))));
    assert!(Transform::ParseJson.apply(Val::Text("{".into())).unwrap_err().contains("not JSON"));
    assert!(Transform::ParseJson.output_type(ValueType::TextList).is_err());
    assert_eq!(Transform::parse("parse_json"), Some(Transform::ParseJson));
    assert_eq!(Transform::parse("nope"), None);
}

#[test]
fn static_assignment_rules() {
    use TargetKind as K;
    use ValueType as T;
    assert!(check_assign("context_blocks", K::TextList, T::OptionalText).unwrap_err().contains("to_context_blocks"));
    assert!(check_assign("user_question_en", K::Text, T::TextList).unwrap_err().contains("to_string"));
    assert!(check_assign("node_texts", K::ClearOnly, T::Json).is_err());
    assert!(check_assign("inbox", K::ReadOnly, T::Text).unwrap_err().contains("read-only"));
    assert!(check_assign("context_blocks", K::TextList, T::Json).is_ok());
    assert!(check_assign("x", K::Variable, T::TextList).is_ok());
}

#[test]
fn conversions_and_stores() {
    let mut s = PipelineState::new("q");
    s.node_texts.push(crate::state::NodeText::new("n", "t"));
    for (name, value, expect_ok) in [
        ("context_blocks", Val::Json(json!(["x"])), true),
        ("context_blocks", Val::Json(json!("x")), false),
        ("user_question_en", Val::Opt(None), true),
        ("last_model_response", Val::Text("r".into()), true),
        ("node_texts", Val::Json(json!(null)), true),
        ("node_texts", Val::Json(json!([])), false),
        ("inbox", Val::Json(json!(null)), false),
        ("summary", Val::List(vec!["a".into()]), true),
    ] {
        match convert(name, value) {
            Ok(stored) => {
                assert!(expect_ok, "{name} converted");
                store(&mut s, name, stored);
            }
            Err(e) => assert!(!expect_ok, "{name}: {e}"),
        }
    }
    assert_eq!(s.context_blocks, vec!["x".to_owned()]);
    assert_eq!(s.user_question_en, "");
    assert_eq!(s.last_model_response.as_deref(), Some("r"));
    assert!(s.node_texts.is_empty());
    assert_eq!(s.variables.get("summary"), Some(&json!(["a"])));
    store(&mut s, "summary", convert("summary", Val::Json(json!(null))).unwrap());
    assert!(!s.variables.contains_key("summary"));
}

#[test]
fn read_gives_each_field_its_type() {
    let mut s = PipelineState::new("q");
    s.variables.insert("v".into(), json!(1));
    assert_eq!(read(&s, "context_blocks"), Some(Val::List(vec![])));
    assert_eq!(read(&s, "user_question"), Some(Val::Text("q".into())));
    assert_eq!(read(&s, "last_model_response"), Some(Val::Opt(None)));
    assert_eq!(read(&s, "v"), Some(Val::Json(json!(1))));
    assert_eq!(read(&s, "unset"), None);
    assert_eq!(source_type("node_texts"), None);
    assert_eq!(source_type("v"), Some(ValueType::Json));
}
