//! Named models in a pipeline file: `models:` and a step's `model:`, checked and located as in
//! the `pipeline!` macro, and written back by the export.

use super::*;

const MODELS: &str = "models:
  small: { model: gpt-4o-mini, context_window: 4096, max_tokens: 200, encoding: cl100k_base }
  strong: { model: gpt-4o, max_tokens: 800, price: { input: 2.5, output: 10 } }
settings: { max_context_tokens: 2000 }
prompts:
  summarise: \"Rewrite the question in one line.\"
  answer: \"Answer from the context.\"
steps:
- id: summarise
  action: call_model
  prompt_key: summarise
  model: small
  next: answer
- id: answer
  action: call_model
  prompt_key: answer
  model: strong
  next: end
";

fn parse(text: &str) -> Result<LoadedFile, PipelineFileError> {
    PipelineFile::parse(text, "/nonexistent/p.yaml")
}

/// (line, column, code, message, help) of each issue.
fn issues(text: &str) -> Vec<(usize, usize, &'static str, String, String)> {
    let err = parse(text).expect_err("the file is broken");
    err.issues()
        .iter()
        .map(|i| (i.line, i.column, i.code.as_str(), i.message.clone(), i.help.clone().unwrap_or_default()))
        .collect()
}

#[test]
fn named_models_decode_check_and_survive_the_export() {
    let file = parse(MODELS).unwrap();
    let def = file.definition();
    let names: Vec<&str> = def.models.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["small", "strong"]);
    assert_eq!(def.models[0].1.context_window, Some(4096));
    assert!(!def.has_default_model(), "no `model:` block: each step names its model");
    let models: Vec<Option<&str>> =
        def.steps.iter().map(|s| s.kind.model_request().and_then(|c| c.model.as_deref())).collect();
    assert_eq!(models, [Some("small"), Some("strong")]);
    let text = to_yaml(def);
    assert!(text.contains("models:\n  \"small\": { model: \"gpt-4o-mini\""), "{text}");
    assert_eq!(parse(&text).unwrap().definition(), def);
}

#[test]
fn an_unknown_model_name_is_located_with_a_suggestion() {
    let text = MODELS.replace("model: strong", "model: strnog");
    let found = issues(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    let (line, column, code, message, help) = &found[0];
    assert_eq!((*line, *column, *code), (17, 10, "UNKNOWN_MODEL_NAME"));
    assert!(message.contains("call_model step `answer` uses model `strnog`"), "{message}");
    assert!(help.starts_with("did you mean `strong`?"), "{help}");
}

#[test]
fn a_step_over_its_models_window_names_that_model() {
    // 4096 - 200 output - 128 margin leaves 3768 for the prompt and the 4000-token context.
    let text = MODELS.replace("max_context_tokens: 2000", "max_context_tokens: 4000");
    let found = issues(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    let (line, _, code, message, _) = &found[0];
    assert_eq!((*line, *code), (9, "BUDGET_CONTRACT_VIOLATED"));
    assert!(message.contains("call_model step `summarise`"), "{message}");
    assert!(message.contains("model `small`'s context window is 4096"), "{message}");
}

#[test]
fn model_names_are_declared_once_and_steps_without_a_default_name_one() {
    let text = MODELS.replace("  strong:", "  default:").replace("model: strong", "model: default");
    let found = issues(&text);
    let codes: Vec<(usize, &str)> = found.iter().map(|i| (i.0, i.2)).collect();
    assert_eq!(codes, [(3, "DUPLICATE_MODEL_NAME")], "{found:?}");
    let text = MODELS.replace("  model: strong\n", "");
    let found = issues(&text);
    let codes: Vec<(usize, &str)> = found.iter().map(|i| (i.0, i.2)).collect();
    assert_eq!(codes, [(14, "STEP_MODEL_REQUIRED")], "{found:?}");
    assert!(found[0].4.contains("add `model: small`"), "{found:?}");
    // With a default model, a step that names none uses it.
    let text = format!("model: {{ model: gpt-4o, max_tokens: 800 }}\n{}", MODELS.replace("  model: strong\n", ""));
    parse(&text).unwrap();
}

#[test]
fn a_config_json_declares_named_models_and_prices_checked_against_the_steps() {
    let dir = std::env::temp_dir().join(format!("ctx-models-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"model": "gpt-4o", "model_context_window": 16384, "model_max_tokens": 800,
            "price": {"input": 3.0, "output": 12.0},
            "models": {"small": {"model": "gpt-4o-mini", "model_context_window": 4096, "model_max_tokens": 200}}}"#,
    )
    .unwrap();
    let text = "config: config.json
settings: { max_context_tokens: 2000, max_cost_per_run: 1.0 }
prompts: { summarise: \"Rewrite the question.\", answer: \"Answer from the context.\" }
steps:
- { id: summarise, action: call_model, prompt_key: summarise, model: small, next: answer }
- { id: answer, action: call_model, prompt_key: answer, next: end }
";
    let path = dir.join("p.yaml");
    // The name is the file's: it is checked once the file is read, with the same did-you-mean.
    let file = PipelineFile::parse(text, &path).unwrap();
    assert_eq!(file.definition().steps[0].kind.model_request().unwrap().model.as_deref(), Some("small"));
    let err = PipelineFile::parse(&text.replace("model: small", "model: smal"), &path).unwrap_err();
    let found: Vec<(usize, &str, Option<&str>)> =
        err.issues().iter().map(|i| (i.line, i.code.as_str(), i.help.as_deref())).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1), (5, "UNKNOWN_MODEL_NAME"));
    assert!(found[0].2.is_some_and(|h| h.starts_with("did you mean `small`?")), "{found:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn extends_merges_named_models_by_name() {
    let dir = std::env::temp_dir().join(format!("ctx-models-extends-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("base.yaml"), MODELS).unwrap();
    std::fs::write(
        dir.join("child.yaml"),
        "extends: base.yaml\nmodels:\n  small: { model: gpt-4o-mini, context_window: 8192, max_tokens: 300, encoding: cl100k_base }\n",
    )
    .unwrap();
    let file = PipelineFile::load(dir.join("child.yaml")).unwrap();
    let models: Vec<(&str, Option<i64>)> =
        file.definition().models.iter().map(|(n, m)| (n.as_str(), m.context_window)).collect();
    // The base's names in their order; the child's `small` replaces the base's.
    assert_eq!(models, [("small", Some(8192)), ("strong", None)]);
    std::fs::remove_dir_all(&dir).ok();
}
