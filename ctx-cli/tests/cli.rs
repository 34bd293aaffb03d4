//! The `ctx` command line (the package `ctx-llm-cli`), run as a user runs it: `check` passes the
//! shipped pipelines and reports a broken file at its line and column (text and JSON, exit 1),
//! `explain` prints the contract table (or, given an error code, what it means), `graph` the
//! diagram, `export` writes a file back, and `run` answers with the offline model; a `pipeline!`
//! pipeline written out as YAML loads back equal.
//!
//! The example pipelines are the workspace's (`examples/pipelines`, beside the facade): the binary
//! runs there, and the paths this test reads itself start there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root, where `examples/` is: canonical, as the binary sees its working directory,
/// so that paths the binary resolves and paths this test resolves compare equal.
fn root() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).canonicalize().expect("the workspace root")
}

/// `path` (relative to the workspace root) as this test process can open it.
fn at_root(path: &str) -> PathBuf {
    root().join(path)
}

fn ctx(args: &[&str]) -> Output {
    ctx_with(args, None)
}

/// [`ctx`] with `PIPELINE_LIMITS_POLICY` set to `policy` (unset when `None`).
fn ctx_with(args: &[&str], policy: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctx"));
    command.args(args).current_dir(root()).env("NO_COLOR", "1").env_remove("CTX_BASE_URL");
    match policy {
        Some(p) => command.env("PIPELINE_LIMITS_POLICY", p),
        None => command.env_remove("PIPELINE_LIMITS_POLICY"),
    };
    command.output().expect("the ctx binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn check_passes_the_shipped_pipelines() {
    let out = ctx(&["check", "examples/pipelines"]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stdout).contains("3 pipeline files checked: no problem"), "{}", text(&out.stdout));
}

/// A copy of the minimal pipeline with one typo and one value out of range.
fn broken(dir: &Path) -> std::path::PathBuf {
    let source = std::fs::read_to_string(at_root("examples/pipelines/minimal.yaml")).expect("the example");
    let broken = source.replacen("  top_k: 3\n", "  top_k: 3\n  nxt: fetch\n", 1).replacen(
        "evidence_tokens: 3000",
        "evidence_tokens: -5",
        1,
    );
    assert_ne!(broken, source);
    for entry in ["config.json", "prompts"] {
        let from = at_root("examples/pipelines").join(entry);
        let to = dir.join(entry);
        if from.is_dir() {
            std::fs::create_dir_all(&to).expect("prompts dir");
            for f in std::fs::read_dir(&from).expect("prompts") {
                let f = f.expect("entry").path();
                std::fs::copy(&f, to.join(f.file_name().expect("name"))).expect("copy");
            }
        } else {
            std::fs::copy(&from, &to).expect("copy");
        }
    }
    let path = dir.join("broken.yaml");
    std::fs::write(&path, broken).expect("write");
    path
}

#[test]
fn check_reports_every_problem_at_its_line_and_column() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = broken(&dir);
    let path_text = path.to_string_lossy().into_owned();

    let out = ctx(&["check", &path_text]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    // rustc-like: the message with its code, the file:line:column, the source line and a caret.
    assert!(stderr.contains("unknown key `nxt`"), "{stderr}");
    assert!(stderr.contains(&format!("{path_text}:15:3")), "{stderr}");
    assert!(stderr.contains("nxt: fetch") && stderr.contains('^'), "{stderr}");

    let out = ctx(&["check", "--format", "json", &path_text]);
    assert_eq!(out.status.code(), Some(1));
    let issues: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let issues = issues.as_array().expect("an array");
    assert!(!issues.is_empty());
    let unknown = issues.iter().find(|i| i["message"].as_str().is_some_and(|m| m.contains("`nxt`"))).expect("nxt");
    assert_eq!((unknown["line"].as_u64(), unknown["column"].as_u64()), (Some(15), Some(3)));
    assert!(unknown["code"].is_string() && unknown["file"].as_str() == Some(path_text.as_str()));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 26 item 10: a clamp is a warning with the values before and after and why, shown by
/// `check` and `explain`; and both honour `PIPELINE_LIMITS_POLICY` as the service does.
#[test]
fn check_and_explain_show_every_clamp_and_honour_the_environment_policy() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-clamp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // 9600-token window, 800 output: a 9500-token context budget must be lowered.
    std::fs::write(
        dir.join("config.json"),
        r#"{ "model": "gpt-4o", "model_context_window": 9600, "model_max_tokens": 800, "allow_auto_clamp": true }"#,
    )
    .expect("config");
    // A clamp fills the window, so the question it clamps around has a declared budget.
    let yaml = "name: Clamped\nconfig: config.json\nsettings:\n  max_context_tokens: 9500\n  max_question_tokens: 200\nprompts:\n  answer: \"Answer.\"\n\
                steps:\n- { id: answer, action: call_model, prompt_key: answer, next: end }\n";
    let clamped = dir.join("clamped.yaml");
    std::fs::write(&clamped, yaml).expect("write");
    let clamped = clamped.to_string_lossy().into_owned();

    let out = ctx(&["check", &clamped]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("1 pipeline file checked: no problem, 1 warning(s)"), "{stdout}");
    assert!(stderr.contains("warning[BUDGET_AUTO_CLAMPED]"), "{stderr}");
    assert!(stderr.contains("auto_clamp lowers settings.max_context_tokens from 9500 to "), "{stderr}");
    assert!(stderr.contains(&format!("{clamped}:4:")), "located at the setting: {stderr}");
    let out = ctx(&["check", "--format", "json", &clamped]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(json[0]["level"], "warning", "{json}");
    assert_eq!(json[0]["code"], "BUDGET_AUTO_CLAMPED", "{json}");
    let out = ctx(&["explain", &clamped]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("from 9500 to "), "{}", text(&out.stderr));

    // Without `allow_auto_clamp` the file fails, unless the service's environment says auto_clamp;
    // and an environment that says fail_fast wins over the file.
    std::fs::write(
        dir.join("config.json"),
        r#"{ "model": "gpt-4o", "model_context_window": 9600, "model_max_tokens": 800 }"#,
    )
    .expect("config");
    assert_eq!(ctx(&["check", &clamped]).status.code(), Some(1));
    let out = ctx_with(&["check", &clamped], Some("auto_clamp"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("from 9500 to "), "{}", text(&out.stderr));
    let out = ctx_with(&["explain", &clamped], Some("auto_clamp"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(ctx_with(&["check", "examples/pipelines"], Some("fail_fast")).status.code(), Some(0));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 26 item 6: a variable read before any step sets it is a located warning of `check` (the
/// caller may provide it, so the file still passes).
#[test]
fn check_warns_of_a_variable_read_before_any_step_sets_it() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-unset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let yaml = "name: Carry\nmodel: { model: gpt-4o, context_window: 16000, max_tokens: 800 }\n\
                settings: { max_context_tokens: 4000 }\nprompts:\n  answer: \"Answer.\"\nsteps:\n\
                - id: restore\n  action: set_variables\n  rules:\n    - { set: context_blocks, from: carried_context, transform: to_context_blocks }\n  next: answer\n\
                - { id: answer, action: call_model, prompt_key: answer, next: save }\n\
                - id: save\n  action: set_variables\n  rules:\n    - { set: carried_context, from: context_blocks }\n  next: end\n";
    let path = dir.join("carry.yaml");
    std::fs::write(&path, yaml).expect("write");
    let path = path.to_string_lossy().into_owned();
    let out = ctx(&["check", &path]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("no problem, 1 warning(s)"), "{stdout}");
    assert!(stderr.contains("warning[VARIABLE_MAYBE_UNSET]") && stderr.contains("`carried_context`"), "{stderr}");
    assert!(stderr.contains(&format!("{path}:10:")), "located at the read: {stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn explain_graph_and_run() {
    let out = ctx(&["explain", "examples/pipelines/compaction_loop.yaml"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("| step | fixed prompt |") && stdout.contains("| call_model_answer |"), "{stdout}");
    assert!(stdout.contains("prompt counts: exact"), "{stdout}");
    // The proof with its assumptions: the question's budget (here the default) and the windows.
    assert!(stdout.contains("| inputs | tool results |"), "{stdout}");
    assert!(stdout.contains("input question (`user_question_en`): at most "), "{stdout}");
    assert!(
        stdout.contains("for any question up to ") && stdout.contains(": every request fits its window"),
        "{stdout}"
    );
    assert!(stdout.contains("\nassumed: prompt counts exact"), "{stdout}");
    // Issue 26 item 8: 4 + 3 × 4 + 1 steps from any state; from an empty context `on_over` is
    // never taken (issue 37 item 5), so the answer is the one request.
    assert!(
        stdout.contains("at most 17 steps per run, from any state, and 1 model request per run from the first step"),
        "{stdout}"
    );

    let out = ctx(&["graph", "examples/pipelines/compaction_loop.yaml"]);
    assert!(text(&out.stdout).starts_with("flowchart TD"), "{}", text(&out.stdout));
    let out = ctx(&["graph", "--dot", "examples/pipelines/compaction_loop.yaml"]);
    assert!(text(&out.stdout).contains("digraph"), "{}", text(&out.stdout));

    let out = ctx(&[
        "run",
        "examples/pipelines/minimal.yaml",
        "--docs",
        "examples/docs_support/docs",
        "--",
        "How do I rotate an API key?",
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("Offline extractive answer"), "{stdout}");
    assert!(stderr.contains("call_model call_model_answer"), "{stderr}");
}

/// `ctx run --var name=value` starts the run with that variable: a pipeline whose answer reads
/// `tone` before the step that sets it fails without it (PIPELINE_MISSING_SOURCE, naming the
/// variable) and answers with it.
/// `ctx check` warns, at its line, about an `on_over` no conversation can take.
#[test]
fn run_sets_variables_and_check_warns_about_an_on_over_never_taken() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-var-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = broken(&dir);
    let source = std::fs::read_to_string(at_root("examples/pipelines/minimal.yaml")).expect("the example");
    // The answer reads `tone`, which only a later step sets (as a conversation would carry it):
    // the first run needs it from outside.
    let with_tone = source.replacen(
        "  use_history: true\n  next: end",
        "  use_history: true\n  next: remember\n\n- id: remember\n  action: set_variables\n  rules:\n    \
         - { set: tone, from: user_question }\n  next: end",
        1,
    );
    let with_tone = with_tone.replacen(
        "  prompt_key: answer\n",
        "  prompt_key: answer\n  user_parts:\n    \
         context: { source: context_blocks, template: \"### Context:\\n{}\\n\\n\" }\n    \
         tone: { source: tone, template: \"Tone: {}\\n\" }\n    \
         question: { source: user_question, template: \"### User:\\n{}\" }\n",
        1,
    );
    assert_ne!(with_tone, source);
    std::fs::write(&path, with_tone).expect("write");
    let file = path.to_str().expect("a UTF-8 path");
    let args = |vars: &[&str]| {
        let mut args = vec!["run", file, "--docs", "examples/docs_support/docs"];
        args.extend_from_slice(vars);
        args.extend(["--", "How do I rotate an API key?"]);
        ctx(&args)
    };
    let without = args(&[]);
    assert!(!without.status.success());
    let stderr = text(&without.stderr);
    assert!(stderr.contains("PIPELINE_MISSING_SOURCE") && stderr.contains("`tone`"), "{stderr}");
    let with = args(&["--var", "tone=formal", "--var", "level=3"]);
    assert!(with.status.success(), "{}{}", text(&with.stdout), text(&with.stderr));
    assert!(text(&with.stdout).contains("Offline extractive answer"), "{}", text(&with.stdout));
    let bad = ctx(&["run", file, "--var", "tone", "--", "q"]);
    assert!(text(&bad.stderr).contains("`tone` is not `name=value`"), "{}", text(&bad.stderr));

    let check = ctx(&["check", file]);
    let (stdout, stderr) = (text(&check.stdout), text(&check.stderr));
    assert!(check.status.success(), "{stdout}{stderr}");
    assert!(stderr.contains("warning[BUDGET_ON_OVER_NEVER_TAKEN]"), "{stderr}");
    assert!(stderr.contains(&format!("{file}:25:")), "at the on_over line: {stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

ctx::pipeline! {
    /// A pipeline with an agent and sampling parameters, to write out as YAML.
    pub pipeline Exported {
        model { context_window: 8_192, max_tokens: 1_024, encoding: cl100k_base }
        settings { max_context_tokens: 2_000, max_history_tokens: 500, node_frame: "<doc id=\"{id}\">\n{text}\n</doc>" }
        prompts { answer: "Answer from the context: \"quote\" it, # not a comment." }
        steps {
            search: search_nodes { top_k: 4, next: fetch },
            fetch: fetch_node_texts { evidence_tokens: 1_000, next: answer },
            answer: agent {
                prompt_key: answer,
                tools: [ lookup { description: "Look: up", parameters: r#"{"type":"object","properties":{"q":{"type":"string"}}}"# } ],
                max_tool_calls: 2,
                temperature: 0.25,
                stop: ["\n\n###"],
                use_history: true,
                next: end,
            },
        }
    }
}

#[test]
fn explain_prints_the_worst_case_tokens_and_cost_of_a_run() {
    // The compaction loop on gpt-4o (config.json), priced by ctx's table. Asked with an empty
    // context, its `on_over` is never taken (BUDGET_ON_OVER_NEVER_TAKEN): the summariser behind it
    // costs nothing and the table says why; a run whose caller fills the context first can take
    // it three times, which the line under the table gives.
    let out = ctx(&["explain", "examples/pipelines/compaction_loop.yaml"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "worst-case cost per run, input tokens at the input price $2.50/M and output tokens at $10.00/M:"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("priced at billed_token_ratio 1 (the most"), "{stdout}");
    assert!(stdout.contains("max(1, the highest billed-to-counted ratio"), "{stdout}");
    assert!(stdout.contains("| cost | why it costs nothing |\n"), "{stdout}");
    assert!(
        stdout.contains("| call_summarize_context | 0 | 1 |")
            && stdout.contains(
                "| only behind `on_over` of `manage_budget`, which a run \
             from an empty context never takes (BUDGET_ON_OVER_NEVER_TAKEN) |\n"
            ),
        "{stdout}"
    );
    assert!(stdout.contains("| call_model_answer | 1 | 1 |"), "{stdout}");

    let out = ctx(&["explain", "--format", "json", "examples/pipelines/compaction_loop.yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(json["model_request_bound"], 1);
    let cost = &json["cost"];
    let steps = cost["steps"].as_array().expect("steps");
    let runs: Vec<(&str, u64)> =
        steps.iter().map(|s| (s["step_id"].as_str().unwrap_or(""), s["runs"].as_u64().unwrap_or(0))).collect();
    assert_eq!(runs, [("call_summarize_context", 0), ("call_model_answer", 1)]);
    assert_eq!(steps[0]["unpaid"]["why"], "behind_never_taken_on_over");
    assert_eq!(cost["never_taken_on_over"], serde_json::json!(["manage_budget"]));
    // The total is the steps' sum, and each step its runs times its worst request:
    // input × $2.50/M + output × $10.00/M, in billionths of a dollar. With the context filled by
    // the caller, the summariser's three runs are paid too (`max_turn_loops: 3`).
    let (mut total, mut seeded) = (0, 0);
    for s in steps {
        let (input, output) = (s["input_tokens"].as_u64().unwrap(), s["output_tokens"].as_u64().unwrap());
        let request = input * 2_500 + output * 10_000;
        assert_eq!(s["request_nano_usd"].as_u64(), Some(request));
        assert_eq!(s["nano_usd"].as_u64(), Some(s["runs"].as_u64().unwrap() * request));
        total += s["nano_usd"].as_u64().unwrap();
        seeded += if s["step_id"] == "call_summarize_context" { 3 * request } else { request };
    }
    assert_eq!(cost["nano_usd"].as_u64(), Some(total));
    assert_eq!(cost["seeded_nano_usd"].as_u64(), Some(seeded));
    let summary = format!("at most {} per run: 1 model request,", dollars(total));
    assert!(stdout.contains(&summary), "{summary:?} missing from {stdout}");
    assert!(
        stdout.contains(&format!("can take `on_over` of `manage_budget` and cost up to {}", dollars(seeded))),
        "{stdout}"
    );

    // `--html`: the same table at the end of the contract's page.
    let dir = std::env::temp_dir().join(format!("ctx-cli-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let page = dir.join("contract.html");
    let out = ctx(&["explain", "examples/pipelines/compaction_loop.yaml", "--html", page.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(html.contains("<h2>Worst-case cost of a run</h2>"), "{html}");
    assert!(html.contains(&format!("at most {} per run, 1 model request.", dollars(total))), "{html}");
    assert!(html.contains("<code>call_summarize_context</code></td><td class=\"n\">0</td>"), "{html}");
    assert!(html.contains("<td>only behind `on_over` of `manage_budget`"), "{html}");
    assert!(html.contains(&format!("cost up to {}", dollars(seeded))), "{html}");
    // The policy as the settings write it.
    assert!(html.contains("limits policy fail_fast"), "{html}");
    assert!(html.trim_end().ends_with("</html>"), "{html}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Billionths of a dollar as `ctx` prints them.
#[test]
fn explain_shows_each_steps_model_and_prices_it_at_that_model() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let path = dir.join("tiered.yaml");
    std::fs::write(
        &path,
        "model: { model: gpt-4o, max_tokens: 800, price: { input: 2.50, cache_write: 3.125, output: 10.00 } }
models:
  small: { model: gpt-4o-mini, context_window: 8192, max_tokens: 200, encoding: cl100k_base }
settings: { max_context_tokens: 4000, billed_token_ratio: 1.2 }
prompts: { summarise: \"Rewrite the question.\", answer: \"Answer from the context.\" }
steps:
- { id: summarise, action: call_model, prompt_key: summarise, model: small, next: answer }
- { id: answer, action: call_model, prompt_key: answer, next: end }
",
    )
    .expect("write");
    let out = ctx(&["explain", path.to_str().expect("a UTF-8 path")]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("model `small` (gpt-4o-mini): context window 8192, cl100k_base"), "{stdout}");
    assert!(stdout.contains("| summarise | small |"), "{stdout}");
    assert!(stdout.contains("| answer | default |"), "{stdout}");
    assert!(stdout.contains("8192 |\n"), "the summarise step's window is its model's: {stdout}");
    assert!(stdout.contains("128000 |\n"), "the answer step's window is the default model's: {stdout}");
    // Each step at its own model's price from ctx's table.
    assert!(stdout.contains("worst-case cost per run, each step at its model's price:"), "{stdout}");
    assert!(stdout.contains("| summarise | small | the input price $0.15/M | $0.60 | 1 | 1 |"), "{stdout}");
    // A cache-write rate above the input price is the rate the worst case uses: both are named.
    assert!(
        stdout.contains("| answer | default | the cache-write rate $3.125/M (input price $2.50/M) | $10.00 | 1 | 1 |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("priced at billed_token_ratio 1.2 (the most") && stdout.contains("max(1.2, the highest"),
        "{stdout}"
    );
    // The page: each model's window in the header, each model's prices on the cost line (not the
    // first step's alone), each bar and cost row naming its model.
    let page = dir.join("tiered.html");
    let out = ctx(&["explain", path.to_str().expect("a UTF-8 path"), "--html", page.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(
        html.contains("context windows: model <code>small</code> 8192 tokens, the default model 128000 tokens"),
        "{html}"
    );
    assert!(
        html.contains(
            "model <code>small</code>: input tokens at the input price $0.15/M, output tokens at $0.60/M; the default \
             model: input tokens at the cache-write rate $3.125/M (input price $2.50/M), output tokens at $10.00/M: \
             at most"
        ),
        "{html}"
    );
    assert!(html.contains("<h3><code>summarise</code> on model <code>small</code>: "), "{html}");
    assert!(html.contains("<td><code>summarise</code> <small>on model <code>small</code></small></td>"), "{html}");
    assert!(!html.contains("<th>text</th>"), "{html}");
    std::fs::remove_dir_all(&dir).ok();
}

fn dollars(nano: u64) -> String {
    let frac = format!("{:09}", nano % 1_000_000_000);
    let frac = frac.trim_end_matches('0');
    format!("${}.{:0<2}", nano / 1_000_000_000, frac)
}

#[test]
fn explain_a_code_as_rustc_explains_one() {
    let out = ctx(&["explain", "UNKNOWN_STEP_TARGET"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("UNKNOWN_STEP_TARGET (graph area)\n\n"), "{stdout}");
    assert!(stdout.contains("names a step the pipeline does not have") && stdout.contains("Fix:"), "{stdout}");

    // A typo gets a suggestion; a file name is still a file.
    let out = ctx(&["explain", "UNKNOWN_STEP_TARGTE"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("unknown error code `UNKNOWN_STEP_TARGTE`; did you mean `UNKNOWN_STEP_TARGET`?"),
        "{stderr}"
    );
    let out = ctx(&["explain", "examples/pipelines/minimal.yaml"]);
    assert!(out.status.success() && text(&out.stdout).contains("| step |"), "{}", text(&out.stderr));
}

#[test]
fn a_macro_pipeline_written_as_yaml_loads_back_equal() {
    use ctx::pipeline::yaml::{PipelineFile, to_yaml};
    let def = Exported::definition();
    let yaml = to_yaml(&def);
    let back = PipelineFile::parse(&yaml, "exported.yaml").unwrap_or_else(|e| panic!("{e}\n{yaml}"));
    assert_eq!(back.definition(), &def);

    // `ctx export` of a file gives a file that checks and loads to the same definition.
    let out = ctx(&["export", "examples/pipelines/compaction_loop.yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let exported = text(&out.stdout);
    let original = PipelineFile::load(at_root("examples/pipelines/compaction_loop.yaml")).expect("the example loads");
    let again =
        PipelineFile::decode(&exported, at_root("examples/pipelines/exported.yaml")).expect("the export decodes");
    assert_eq!(&again, original.definition());
}

/// Issue 25 item 7: a pipeline whose model step assembles a declared context is checked and
/// explained like any other; a step naming an undeclared context is an error at its line.
#[test]
fn check_and_explain_a_pipeline_whose_step_assembles_a_context() {
    let dir = std::env::temp_dir().join(format!("ctx-cli-context-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let yaml = |context: &str| {
        format!(
            "name: Desk\nmodel: {{ model: gpt-4o, context_window: 16000, max_tokens: 800 }}\n\
             settings: {{ max_context_tokens: 4000 }}\nprompts:\n  answer: \"You are a support agent.\"\nsteps:\n\
             - {{ id: answer, action: call_model, prompt_key: answer, context: {context}, max_output_tokens: 500, next: end }}\n\
             contexts:\n  contexts:\n    - name: support\n      inputs: [user_question]\n\
             \x20     policy: {{ input_budget: {{ max_tokens: 3000 }} }}\n\
             \x20     messages:\n        - {{ type: system, content: \"Answer from the documents.\" }}\n\
             \x20       - {{ type: user, content: \"{{input.user_question}}\" }}\n"
        )
    };
    let path = dir.join("desk.yaml");
    std::fs::write(&path, yaml("support")).expect("write");
    let path_text = path.to_string_lossy().into_owned();
    let out = ctx(&["check", &path_text]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let out = ctx(&["explain", &path_text]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    // The step's input term is the context's budget: 3000 + 500 + 128 of the 16000 window.
    assert!(stdout.contains("| answer |") && stdout.contains("3000"), "{stdout}");

    std::fs::write(&path, yaml("suport")).expect("write");
    let out = ctx(&["check", &path_text]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("CONTRACT_UNKNOWN_CONTEXT") && stderr.contains("did you mean `support`?"), "{stderr}");
    assert!(stderr.contains(&format!("{path_text}:7:")), "located at the step's line: {stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A reader that goes away before the output is written (`ctx graph f.yaml | head`) ends each
/// printing command quietly and with success: no panic, no backtrace, no error (a pipeline's
/// warnings still go to stderr).
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let file = at_root("examples/pipelines/minimal.yaml");
    let file = file.to_str().expect("a UTF-8 path");
    for args in [
        &["graph", file][..],
        &["export", file],
        &["explain", file],
        &["explain", "DATAFLOW_EVIDENCE_UNUSED"],
        &["schema"],
        &["check", file],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ctx"))
            .args(args)
            .current_dir(root())
            .env("NO_COLOR", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the ctx binary starts");
        // The read end closed before the command writes anything: its first write fails.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("the ctx binary ends");
        assert!(out.status.success(), "{args:?}: {:?}\n{}", out.status, text(&out.stderr));
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked") && !stderr.contains("error"), "{args:?}: {stderr}");
    }
}
