//! The `steps:` list: each step a mapping with `id:`, `action:` (the step kind's keyword) and
//! the kind's keys as [`STEP_SCHEMAS`] describes them, in the specification's YAML forms.

use super::fields::{Fields, Sink};
use super::node::Node;
use crate::codes::Code;
use crate::params::{ModelParams, ResponseFormat};
use crate::pipeline::definition::*;
use crate::pipeline::schema::{STEP_SCHEMAS, StepSchema};
use crate::validation::{FieldPath, did_you_mean};

/// Keys a `fetch_node_texts` step accepts besides its schema's: the specification's name of
/// the evidence budget.
const FETCH_ALIASES: [&str; 1] = ["max_tokens"];

/// Decodes the `steps:` node; `None` entries are steps too broken to decode (reported).
pub(crate) fn decode_steps(sink: &mut Sink, node: &Node) -> Option<Vec<StepDef>> {
    let path = FieldPath::root().key("steps");
    sink.locate(&path, node);
    let Some(items) = node.as_seq() else {
        sink.wrong_type(node, "`steps`", "a list of steps");
        return None;
    };
    let mut steps = Some(Vec::new());
    for (i, item) in items.iter().enumerate() {
        match decode_step(sink, item, &path.index(i), i) {
            Some(step) => steps.as_mut().map(|s| s.push(step)),
            None => steps.take().map(|_| ()),
        };
    }
    steps
}

fn decode_step(sink: &mut Sink, node: &Node, path: &FieldPath, index: usize) -> Option<StepDef> {
    sink.locate(path, node);
    let Some(map) = node.as_map() else {
        sink.wrong_type(node, &format!("`steps[{index}]`"), "a mapping with `id:` and `action:`");
        return None;
    };
    let id_node = map.iter().find(|(k, _)| k.as_text() == Some("id")).map(|(_, v)| v);
    let id = match id_node {
        Some(n) => sink.text(n, &path.key("id"), "a step's `id`"),
        None => {
            sink.issues.push(
                super::error::YamlIssue::new(&node.at, Code::YamlMissingKey, "a step has no `id`")
                    .with_help("add `id: <step id>`"),
            );
            None
        }
    };
    let what = match &id {
        Some(id) => format!("step `{id}`"),
        None => "a step".to_owned(),
    };
    let action_node = map.iter().find(|(k, _)| k.as_text() == Some("action")).map(|(_, v)| v);
    let Some(action_node) = action_node else {
        sink.issues.push(
            super::error::YamlIssue::new(&node.at, Code::YamlMissingKey, format!("{what} has no `action`"))
                .with_help(format!("add `action: <kind>`, one of {}", kinds())),
        );
        return None;
    };
    let action = sink.text(action_node, &path.key("action"), &format!("`action` of {what}"))?;
    let Some(schema) = StepSchema::of(&action) else {
        let mut message = format!("unknown action `{action}` in {what}; expected one of {}", kinds());
        let near = did_you_mean(&action, STEP_SCHEMAS.iter().map(|s| s.kind));
        if let Some(near) = near {
            message.push_str(&format!(", did you mean `{near}`?"));
        }
        sink.issues.push(
            super::error::YamlIssue::new(&action_node.at, Code::YamlUnknownAction, message)
                .with_help_opt(near.map(|n| format!("write `action: {n}`"))),
        );
        return None;
    };
    let mut allowed: Vec<&str> = vec!["id", "action"];
    allowed.extend(schema.keys.iter().map(|k| k.name));
    if schema.kind == "fetch_node_texts" {
        allowed.extend(FETCH_ALIASES);
    }
    let f = Fields::read(sink, node, what, &allowed)?;
    let kind = decode_kind(sink, &f, schema.kind, path);
    Some(StepDef { id: id?, kind: kind? })
}

fn kinds() -> String {
    STEP_SCHEMAS.iter().map(|s| format!("`{}`", s.kind)).collect::<Vec<_>>().join(", ")
}

fn decode_kind(sink: &mut Sink, f: &Fields<'_>, kind: &str, path: &FieldPath) -> Option<StepKind> {
    Some(match kind {
        "search_nodes" => {
            let top_k = f.req_int(sink, "top_k", path);
            StepKind::SearchNodes(SearchNodesSpec { top_k: top_k?, next: f.req_text(sink, "next", path)? })
        }
        "expand_dependency_tree" => {
            let max_depth = f.req_int(sink, "max_depth", path);
            StepKind::ExpandDependencyTree(ExpandSpec { max_depth: max_depth?, next: f.req_text(sink, "next", path)? })
        }
        "fetch_node_texts" => {
            let budget = match (f.get("evidence_tokens"), f.key_node("max_tokens")) {
                (Some(_), Some(alias)) => {
                    sink.issues.push(
                        super::error::YamlIssue::new(
                            &alias.at,
                            Code::YamlConflictingKeys,
                            format!("{} writes both `evidence_tokens` and `max_tokens`", f.what),
                        )
                        .with_help("`max_tokens` is the specification's name of `evidence_tokens`: keep one"),
                    );
                    None
                }
                (None, Some(_)) => {
                    let n = f.get("max_tokens")?;
                    sink.int(n, &path.key("evidence_tokens"), &format!("`max_tokens` in {}", f.what))
                }
                _ => f.req_int(sink, "evidence_tokens", path),
            };
            let next = f.req_text(sink, "next", path);
            StepKind::FetchNodeTexts(FetchSpec { evidence_tokens: budget?, next: next? })
        }
        "manage_context_budget" => {
            let compact_code = match f.get("compact_code") {
                Some(n) => compact_rules(sink, n, &path.key("compact_code"), &f.what),
                None => Some(Vec::new()),
            };
            let divide_new_content = f.text(sink, "divide_new_content", path);
            let on_ok = f.req_text(sink, "on_ok", path);
            let on_over = f.req_text(sink, "on_over", path);
            StepKind::ManageContextBudget(ManageBudgetSpec {
                compact_code: compact_code?,
                divide_new_content,
                on_ok: on_ok?,
                on_over: on_over?,
            })
        }
        "call_model" => StepKind::CallModel(call_model(sink, f, path)?),
        "agent" => {
            let call = call_model(sink, f, path);
            let tools = match f.get("tools") {
                Some(n) => tools(sink, n, &path.key("tools"), &f.what),
                None => Some(Vec::new()),
            };
            let max_tool_calls = f.req_int(sink, "max_tool_calls", path);
            let turn_budget_tokens = f.int(sink, "turn_budget_tokens", path);
            StepKind::Agent(AgentSpec {
                call: call?,
                tools: tools?,
                max_tool_calls: max_tool_calls?,
                turn_budget_tokens,
            })
        }
        "loop_guard" => {
            let setting = f.req_text(sink, "max_turn_loops_from_settings", path);
            let on_allow = f.req_text(sink, "on_allow", path);
            let on_deny = f.req_text(sink, "on_deny", path);
            StepKind::LoopGuard(LoopGuardSpec {
                max_turn_loops_from_settings: setting?,
                on_allow: on_allow?,
                on_deny: on_deny?,
            })
        }
        "set_variables" => {
            let rules = f.require(sink, "rules").and_then(|n| set_rules(sink, n, &path.key("rules"), &f.what));
            let next = f.req_text(sink, "next", path);
            StepKind::SetVariables(SetVariablesSpec { rules: rules?, next: next? })
        }
        _ => {
            let node = f.require(sink, "outcomes")?;
            let at = path.key("outcomes");
            sink.locate(&at, node);
            if node.as_map().is_none() {
                sink.wrong_type(node, &format!("`outcomes` of {}", f.what), "a mapping of `outcome: step`");
                return None;
            }
            let mut outcomes = Some(Vec::new());
            for (k, v) in node.as_map().unwrap_or_default() {
                let name = k.as_text().map(str::to_owned);
                let target = name.as_ref().and_then(|n| sink.text(v, &at.key(n), &format!("outcome `{n}`")));
                match (name, target) {
                    (Some(n), Some(t)) => outcomes.as_mut().map(|o| o.push((n, t))),
                    _ => outcomes.take().map(|_| ()),
                };
            }
            StepKind::Custom(CustomSpec { outcomes: outcomes? })
        }
    })
}

/// The keys of `call_model`, shared with `agent`.
fn call_model(sink: &mut Sink, f: &Fields<'_>, path: &FieldPath) -> Option<CallModelSpec> {
    let prompt_key = f.req_text(sink, "prompt_key", path);
    let max_output_tokens = f.int(sink, "max_output_tokens", path);
    let max_tokens = f.int(sink, "max_tokens", path);
    let user_parts = match f.get("user_parts") {
        Some(n) => user_parts(sink, n, &path.key("user_parts"), &f.what),
        None => Some(Vec::new()),
    };
    let use_history = f.boolean(sink, "use_history", path);
    let temperature = f.number(sink, "temperature", path);
    let top_p = f.number(sink, "top_p", path);
    let seed = f.int(sink, "seed", path);
    let stop = match f.get("stop") {
        Some(n) => sink.text_list(n, &path.key("stop"), &format!("`stop` in {}", f.what)),
        None => Some(Vec::new()),
    };
    let response_format = match f.get("response_format") {
        Some(n) => Some(response_format(sink, n, &path.key("response_format"), &f.what)?),
        None => None,
    };
    let next = f.req_text(sink, "next", path);
    let bad = (f.get("use_history").is_some() && use_history.is_none())
        || (f.get("temperature").is_some() && temperature.is_none())
        || (f.get("top_p").is_some() && top_p.is_none())
        || (f.get("seed").is_some() && seed.is_none())
        || (f.get("max_output_tokens").is_some() && max_output_tokens.is_none())
        || (f.get("max_tokens").is_some() && max_tokens.is_none());
    if bad {
        return None;
    }
    Some(CallModelSpec {
        prompt_key: prompt_key?,
        max_output_tokens,
        max_tokens,
        user_parts: user_parts?,
        use_history: use_history.unwrap_or(false),
        params: ModelParams { temperature, top_p, stop: stop?, seed, response_format },
        next: next?,
    })
}

/// `compact_code: { rules: [...] }` (the specification's form) or `compact_code: [...]`.
fn compact_rules(sink: &mut Sink, node: &Node, path: &FieldPath, what: &str) -> Option<Vec<CompactRuleSpec>> {
    sink.locate(path, node);
    let list = match node.as_map() {
        Some(_) => {
            let f = Fields::read(sink, node, format!("`compact_code` of {what}"), &["rules"])?;
            f.require(sink, "rules")?
        }
        None => node,
    };
    let Some(items) = list.as_seq() else {
        sink.wrong_type(list, &format!("`compact_code.rules` of {what}"), "a list of rules");
        return None;
    };
    let mut rules = Some(Vec::new());
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        sink.locate(&at, item);
        let rule = Fields::read(
            sink,
            item,
            format!("compact_code rule {j} of {what}"),
            &["language", "policy", "threshold", "inbox_key"],
        )
        .and_then(|f| {
            let language = f.req_text(sink, "language", &at);
            let policy = f.req_text(sink, "policy", &at);
            let threshold = f.number(sink, "threshold", &at);
            let inbox_key = f.text(sink, "inbox_key", &at);
            if f.get("threshold").is_some() && threshold.is_none() {
                return None;
            }
            Some(CompactRuleSpec { language: language?, policy: policy?, threshold, inbox_key })
        });
        match rule {
            Some(r) => rules.as_mut().map(|v| v.push(r)),
            None => rules.take().map(|_| ()),
        };
    }
    rules
}

/// `user_parts: { name: { source, template } }` (the specification's form; `source` defaults
/// to the entry's name) or a list of `{ source, template }`.
fn user_parts(sink: &mut Sink, node: &Node, path: &FieldPath, what: &str) -> Option<Vec<UserPartSpec>> {
    sink.locate(path, node);
    let entries: Vec<(Option<&Node>, &Node)> = match (node.as_map(), node.as_seq()) {
        (Some(map), _) => map.iter().map(|(k, v)| (Some(k), v)).collect(),
        (_, Some(items)) => items.iter().map(|v| (None, v)).collect(),
        _ => {
            sink.wrong_type(node, &format!("`user_parts` of {what}"), "a mapping of `name: { source, template }`");
            return None;
        }
    };
    let mut parts = Some(Vec::new());
    for (j, (name, value)) in entries.into_iter().enumerate() {
        let at = path.index(j);
        sink.locate(&at, name.unwrap_or(value));
        let label = name.and_then(Node::as_text).map(|n| format!("user part `{n}` of {what}"));
        let label = label.unwrap_or_else(|| format!("user part {j} of {what}"));
        let part = Fields::read(sink, value, label, &["source", "template"]).and_then(|f| {
            let source = match (f.get("source"), name.and_then(Node::as_text)) {
                (Some(_), _) => f.text(sink, "source", &at),
                (None, Some(n)) => {
                    sink.locate(&at.key("source"), name.unwrap_or(value));
                    Some(n.to_owned())
                }
                (None, None) => f.req_text(sink, "source", &at),
            };
            let template = f.req_text(sink, "template", &at);
            Some(UserPartSpec { source: source?, template: template? })
        });
        match part {
            Some(p) => parts.as_mut().map(|v| v.push(p)),
            None => parts.take().map(|_| ()),
        };
    }
    parts
}

/// `rules: [ { set, from, transform? } | { set, value } ]`.
fn set_rules(sink: &mut Sink, node: &Node, path: &FieldPath, what: &str) -> Option<Vec<SetRuleSpec>> {
    sink.locate(path, node);
    let Some(items) = node.as_seq() else {
        sink.wrong_type(node, &format!("`rules` of {what}"), "a list of `{ set, from }` or `{ set, value }`");
        return None;
    };
    let mut rules = Some(Vec::new());
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        sink.locate(&at, item);
        let rule = Fields::read(sink, item, format!("rule {j} of {what}"), &["set", "from", "transform", "value"])
            .and_then(|f| {
                let set = f.req_text(sink, "set", &at);
                let value = match (f.get("from"), f.get("value")) {
                    (Some(_), Some(_)) | (None, Some(_)) if f.get("transform").is_some() => {
                        conflict(sink, &f, "`value` takes no `transform`: use `from` to transform a field");
                        None
                    }
                    (Some(_), Some(_)) => {
                        conflict(sink, &f, "a rule sets its target `from` a field or to a `value`, not both");
                        None
                    }
                    (Some(_), None) => {
                        let from = f.text(sink, "from", &at);
                        let transform = f.text(sink, "transform", &at);
                        if f.get("transform").is_some() && transform.is_none() {
                            return None;
                        }
                        Some(SetValueSpec::From { from: from?, transform })
                    }
                    (None, Some(v)) => {
                        sink.locate(&at.key("value"), v);
                        Some(SetValueSpec::Value(v.to_json()))
                    }
                    (None, None) => {
                        f.require(sink, "from");
                        None
                    }
                };
                Some(SetRuleSpec { set: set?, value: value? })
            });
        match rule {
            Some(r) => rules.as_mut().map(|v| v.push(r)),
            None => rules.take().map(|_| ()),
        };
    }
    rules
}

fn conflict(sink: &mut Sink, f: &Fields<'_>, help: &str) {
    sink.issues.push(
        super::error::YamlIssue::new(
            &f.node.at,
            Code::YamlConflictingKeys,
            format!("{} mixes `from` and `value`", f.what),
        )
        .with_help(help),
    );
}

/// `response_format: json` or `{ json_schema: { name, schema, strict? } }`.
fn response_format(sink: &mut Sink, node: &Node, path: &FieldPath, what: &str) -> Option<ResponseFormat> {
    sink.locate(path, node);
    let label = format!("`response_format` of {what}");
    if let Some(text) = node.as_text() {
        if matches!(text, "json" | "json_object") {
            return Some(ResponseFormat::JsonObject);
        }
        sink.wrong_type(node, &label, "`json` or `{ json_schema: { name, schema, strict } }`");
        return None;
    }
    let f = Fields::read(sink, node, label.clone(), &["json_schema"])?;
    let inner = f.require(sink, "json_schema")?;
    let g = Fields::read(sink, inner, format!("`json_schema` of {label}"), &["name", "schema", "strict"])?;
    let name = g.req_text(sink, "name", path);
    let schema = g.require(sink, "schema").and_then(|n| sink.json_text(n, &path.key("schema"), "`schema`"));
    let strict = g.boolean(sink, "strict", path);
    if g.get("strict").is_some() && strict.is_none() {
        return None;
    }
    Some(ResponseFormat::JsonSchema { name: name?, schema: schema?, strict: strict.unwrap_or(false) })
}

/// `tools: [ { name, description, parameters } ]`; `parameters` as a mapping or JSON text.
fn tools(sink: &mut Sink, node: &Node, path: &FieldPath, what: &str) -> Option<Vec<ToolSpec>> {
    sink.locate(path, node);
    let Some(items) = node.as_seq() else {
        sink.wrong_type(node, &format!("`tools` of {what}"), "a list of `{ name, description, parameters }`");
        return None;
    };
    let mut tools = Some(Vec::new());
    for (j, item) in items.iter().enumerate() {
        let at = path.index(j);
        sink.locate(&at, item);
        let tool = Fields::read(sink, item, format!("tool {j} of {what}"), &["name", "description", "parameters"])
            .and_then(|f| {
                let name = f.req_text(sink, "name", &at);
                let description = f.req_text(sink, "description", &at);
                let parameters = f
                    .require(sink, "parameters")
                    .and_then(|n| sink.json_text(n, &at.key("parameters"), "`parameters`"));
                Some(ToolSpec { name: name?, description: description?, parameters: parameters? })
            });
        match tool {
            Some(t) => tools.as_mut().map(|v| v.push(t)),
            None => tools.take().map(|_| ()),
        };
    }
    tools
}
