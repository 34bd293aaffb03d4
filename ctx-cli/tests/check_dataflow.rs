//! `ctx check` on pipelines whose data is declared or produced and never consumed: each finding
//! of the dataflow rules (`DATAFLOW_*`) at its file, line and column, as text and as JSON, with
//! its level (evidence and hits no step uses are errors and fail the check; the rest are
//! warnings and pass it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).canonicalize().expect("the workspace root")
}

fn ctx(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctx"));
    command.args(args).current_dir(root()).env("NO_COLOR", "1").env_remove("CTX_BASE_URL");
    command.env_remove("PIPELINE_LIMITS_POLICY");
    command.output().expect("the ctx binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The model, settings and one `answer` prompt every case shares, then `rest` (prompts, steps).
fn pipeline(settings: &str, prompts: &str, steps: &str) -> String {
    format!(
        "name: Case\nmodel: {{ context_window: 16384, max_tokens: 1024, encoding: cl100k_base }}\n\
         settings: {{ max_context_tokens: 6000{settings} }}\nprompts:\n  answer: \"Answer.\"\n{prompts}steps:\n{steps}"
    )
}

/// One case: the file, the code and level expected, and the line the finding is at.
struct Case {
    name: &'static str,
    yaml: String,
    code: &'static str,
    level: &'static str,
    line: u64,
}

fn cases() -> Vec<Case> {
    let answer = "- { id: answer, action: call_model, prompt_key: answer, next: end }\n";
    vec![
        Case {
            name: "evidence",
            yaml: pipeline(
                "",
                "",
                "- { id: search, action: search_nodes, top_k: 5, next: fetch }\n\
                 - { id: fetch, action: fetch_node_texts, evidence_tokens: 2000, next: answer }\n\
                 - id: answer\n  action: call_model\n  prompt_key: answer\n  user_parts:\n    - { source: user_question, template: \"{}\" }\n  next: end\n",
            ),
            code: "DATAFLOW_EVIDENCE_UNUSED",
            level: "error",
            line: 8,
        },
        Case {
            name: "hits",
            yaml: pipeline(
                "",
                "",
                &format!("- {{ id: search, action: search_nodes, top_k: 5, next: answer }}\n{answer}"),
            ),
            code: "DATAFLOW_HITS_UNUSED",
            level: "error",
            line: 7,
        },
        Case {
            name: "response",
            yaml: pipeline(
                "",
                "  summarizer: \"Summarise.\"\n",
                &format!("- {{ id: summarize, action: call_model, prompt_key: summarizer, next: answer }}\n{answer}"),
            ),
            code: "DATAFLOW_RESPONSE_OVERWRITTEN",
            level: "warning",
            line: 8,
        },
        Case {
            name: "variable",
            yaml: pipeline(
                "",
                "",
                &format!(
                    "- id: note\n  action: set_variables\n  rules:\n    - {{ set: topic, value: invoices }}\n  next: answer\n{answer}"
                ),
            ),
            code: "DATAFLOW_VARIABLE_UNREAD",
            level: "warning",
            line: 10,
        },
        Case {
            name: "prompt",
            yaml: pipeline("", "  summarizer: \"Summarise.\"\n", answer),
            code: "DATAFLOW_PROMPT_UNUSED",
            level: "warning",
            line: 6,
        },
        Case {
            name: "model",
            yaml: pipeline("", "", answer).replacen(
                "settings:",
                "models:\n  small: { context_window: 8192, max_tokens: 512, encoding: cl100k_base }\nsettings:",
                1,
            ),
            code: "DATAFLOW_MODEL_UNUSED",
            level: "warning",
            line: 4,
        },
        Case {
            name: "context",
            yaml: format!(
                "{}contexts:\n  contexts:\n    - name: support\n      inputs: [user_question]\n      policy: {{ input_budget: {{ max_tokens: 2000 }} }}\n      messages:\n        - {{ type: user, content: \"{{input.user_question}}\" }}\n",
                pipeline("", "", answer)
            ),
            code: "DATAFLOW_CONTEXT_UNUSED",
            level: "warning",
            line: 10,
        },
        Case {
            name: "setting",
            yaml: pipeline(", max_history_tokens: 1000", "", answer),
            code: "DATAFLOW_SETTING_UNUSED",
            level: "warning",
            line: 3,
        },
    ]
}

/// Each dataflow finding, by `ctx check` as text (rustc-like, at its line) and as JSON (its code,
/// level and line); an error fails the check, a warning passes it.
#[test]
fn check_reports_data_declared_or_produced_and_never_consumed() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-dataflow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for case in cases() {
        let path = dir.join(format!("{}.yaml", case.name));
        std::fs::write(&path, &case.yaml).expect("write");
        let path = path.to_string_lossy().into_owned();
        let out = ctx(&["check", &path]);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let expected_status = if case.level == "error" { Some(1) } else { Some(0) };
        assert_eq!(out.status.code(), expected_status, "{}:\n{}\n{stdout}{stderr}", case.name, case.yaml);
        assert!(stderr.contains(&format!("{}[{}]", case.level, case.code)), "{}: {stderr}", case.name);
        assert!(stderr.contains(&format!("{path}:{}:", case.line)), "{}: at line {}: {stderr}", case.name, case.line);
        // Nothing else: the case has exactly this one finding.
        assert_eq!(stderr.matches("DATAFLOW_").count(), 1, "{}: {stderr}", case.name);

        let out = ctx(&["check", "--format", "json", &path]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
        let found = json.as_array().expect("an array");
        assert_eq!(found.len(), 1, "{}: {json}", case.name);
        assert_eq!((found[0]["code"].as_str(), found[0]["level"].as_str()), (Some(case.code), Some(case.level)));
        assert_eq!(found[0]["line"].as_u64(), Some(case.line), "{}: {json}", case.name);
        assert!(found[0]["help"].is_string(), "{}: {json}", case.name);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The README's first pipeline, `search → fetch → answer` with the default user parts, means
/// "answer from what was fetched": it passes with no finding.
#[test]
fn search_fetch_answer_passes() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-dataflow-ok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let yaml = pipeline(
        "",
        "",
        "- { id: search, action: search_nodes, top_k: 5, next: fetch }\n\
         - { id: fetch, action: fetch_node_texts, evidence_tokens: 2000, next: answer }\n\
         - { id: answer, action: call_model, prompt_key: answer, next: end }\n",
    );
    let path = dir.join("qa.yaml");
    std::fs::write(&path, yaml).expect("write");
    let out = ctx(&["check", &path.to_string_lossy()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success() && stdout.contains("no problem") && !stdout.contains("warning"), "{stdout}");
    std::fs::remove_dir_all(&dir).ok();
}
