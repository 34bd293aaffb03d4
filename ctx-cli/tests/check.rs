//! `ctx check`'s manners: colour only where a person reads it, and a warning (text and JSON) at
//! each step `ctx run` has no backend for.

mod support;

use support::{ctx, scratch, text};

const BROKEN: &str = "name: Broken
model: { model: gpt-4o, context_window: 8192, max_tokens: 256 }
settings: { max_context_tokens: 1000 }
prompts: { answer: \"Answer.\" }
steps:
- { id: answer, action: call_model, prompt_key: answer, nxt: end }
";

/// Issue 37 item 16: no escape codes into a pipe unless asked.
#[test]
fn check_colours_only_a_terminal_unless_told() {
    let dir = scratch("colour");
    let path = dir.join("broken.yaml");
    std::fs::write(&path, BROKEN).expect("write");
    let file = path.to_str().expect("a UTF-8 path");
    const ESC: &str = "\u{1b}[";

    // Standard error is a pipe here, and NO_COLOR is unset.
    let out = ctx(&["check", file], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error[YAML_UNKNOWN_KEY]") && !stderr.contains(ESC), "{stderr:?}");

    let always = text(&ctx(&["check", "--color", "always", file], &[]).stderr);
    assert!(always.contains(ESC), "{always:?}");
    // The flag wins over the environment, both ways.
    let forced = text(&ctx(&["--color", "always", "check", file], &[("NO_COLOR", "1")]).stderr);
    assert!(forced.contains(ESC), "{forced:?}");
    let never = text(&ctx(&["check", "--color=never", file], &[]).stderr);
    assert!(!never.contains(ESC) && never.contains("error[YAML_UNKNOWN_KEY]"), "{never:?}");
}

/// Issue 35 item 4: an agent step (no tool source) and a custom step (no code) cannot run from
/// the command line; the check says so at the step, as a warning: the pipeline stays valid.
#[test]
fn check_warns_at_each_step_the_command_line_cannot_run() {
    let dir = scratch("agent-check");
    let yaml = "name: Agentic
model: { model: gpt-4o, context_window: 8192, max_tokens: 256 }
settings: { max_context_tokens: 1000 }
prompts:
  answer: \"Answer with the tools.\"
steps:
- id: route
  action: custom
  outcomes: { done: answer }
- id: answer
  action: agent
  prompt_key: answer
  tools:
  - { name: lookup, description: \"Looks a word up.\", parameters: { type: object, properties: { q: { type: string } } } }
  max_tool_calls: 2
  next: end
";
    let path = dir.join("agentic.yaml");
    std::fs::write(&path, yaml).expect("write");
    let file = path.to_str().expect("a UTF-8 path");

    let out = ctx(&["check", file], &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "a warning does not fail the check: {stdout}{stderr}");
    assert_eq!(stderr.matches("warning[PIPELINE_NEEDS_RUST_BACKEND]").count(), 2, "{stderr}");
    assert!(stderr.contains("step `answer` is an `agent` step") && stderr.contains(&format!("{file}:14:")), "{stderr}");
    assert!(stderr.contains("step `route` is a `custom` step") && stderr.contains(&format!("{file}:8:")), "{stderr}");
    assert!(stdout.contains("no problem, 2 warning(s)"), "{stdout}");

    let out = ctx(&["check", "--format", "json", file], &[]);
    assert!(out.status.success());
    let entries: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let agent = entries
        .as_array()
        .expect("an array")
        .iter()
        .find(|e| {
            e["code"] == "PIPELINE_NEEDS_RUST_BACKEND" && e["message"].as_str().is_some_and(|m| m.contains("`answer`"))
        })
        .expect("the agent's warning");
    assert_eq!((agent["level"].as_str(), agent["line"].as_u64()), (Some("warning"), Some(14)));
    assert!(agent["help"].as_str().is_some_and(|h| h.contains(".tools(")), "{agent}");
}
