//! Lowering of each step kind's `{ … }` block into the runtime's `*Spec` struct.
//!
//! A new step kind is a new `Symbol` in `symbol.rs`, a row in [`keys_of`] and an arm in
//! [`lower_kind`]; the runtime validates its values.

use ctx_spec::pipeline::{
    AgentSpec, CallModelSpec, CompactRuleSpec, CustomSpec, END, ExpandSpec, FetchSpec, LoopGuardSpec, ManageBudgetSpec,
    SearchNodesSpec, SetRuleSpec, SetValueSpec, SetVariablesSpec, StepKind, UserPartSpec,
};
use ctx_spec::validation::FieldPath;
use proc_macro2::Ident;

use crate::ast::{Item, Items, Value};
use crate::ctxt::Deprecation;
use crate::fields::{Fields, Reader, did_you_mean, unraw, with_help};
use crate::spans::SpanRange;
use crate::symbol::*;

/// The keys of a step that sends a model request (`call_model`, and `agent`, which adds its own
/// before `next`), written once so the two kinds cannot drift apart.
macro_rules! model_request_keys {
    ($($extra:expr),* $(,)?) => {
        &[
            PROMPT_KEY,
            MAX_OUTPUT_TOKENS,
            MAX_TOKENS,
            USER_PARTS,
            USE_HISTORY,
            TEMPERATURE,
            TOP_P,
            PRESENCE_PENALTY,
            FREQUENCY_PENALTY,
            STOP,
            SEED,
            RESPONSE_FORMAT,
            $($extra,)*
            NEXT,
        ]
    };
}

/// The keys each step kind takes, in the order messages list them.
pub(crate) fn keys_of(kind: Symbol) -> &'static [Symbol] {
    match kind {
        SEARCH_NODES => &[TOP_K, NEXT],
        EXPAND_DEPENDENCY_TREE => &[MAX_DEPTH, NEXT],
        FETCH_NODE_TEXTS => &[EVIDENCE_TOKENS, NEXT],
        MANAGE_CONTEXT_BUDGET => &[COMPACT_CODE, DIVIDE_NEW_CONTENT, ON_OK, ON_OVER],
        CALL_MODEL => model_request_keys!(),
        AGENT => model_request_keys!(TOOLS, MAX_TOOL_CALLS, TURN_BUDGET_TOKENS),
        LOOP_GUARD => &[MAX_TURN_LOOPS_FROM_SETTINGS, ON_ALLOW, ON_DENY],
        SET_VARIABLES => &[RULES, NEXT],
        CUSTOM => &[OUTCOMES],
        _ => &[],
    }
}

/// Lowers `kind { body }` of step `id`; `None` when the kind is unknown (already reported).
pub(crate) fn lower_kind(
    r: &mut Reader<'_>,
    kind: &Ident,
    id: &str,
    body: &Items,
    path: FieldPath,
) -> Option<StepKind> {
    let Some(&symbol) = STEP_KINDS.iter().find(|k| kind == **k) else {
        let name = unraw(kind);
        let help = match did_you_mean(&name, STEP_KINDS.iter().map(|s| s.as_str())) {
            Some(best) => format!("did you mean `{best}`?"),
            None => "a user-written step is `custom { outcomes { done => end } }`".to_owned(),
        };
        r.cx.error_at(
            kind.span(),
            with_help(format!("unknown step kind `{name}`; expected one of {}", one_of(STEP_KINDS)), help),
        );
        for error in &body.errors {
            r.cx.syn_error(error.clone());
        }
        return None;
    };
    let mut f = Fields::new(r.cx, format!("`{symbol}` step `{id}`"), SpanRange::single(kind.span()), body, path);
    let mut s = StepReader { r, f: &mut f };
    let lowered = match symbol {
        SEARCH_NODES => StepKind::SearchNodes(SearchNodesSpec::new(s.required_int(TOP_K, "top_k: 20"), s.target(NEXT))),
        EXPAND_DEPENDENCY_TREE => {
            StepKind::ExpandDependencyTree(ExpandSpec::new(s.required_int(MAX_DEPTH, "max_depth: 2"), s.target(NEXT)))
        }
        FETCH_NODE_TEXTS => StepKind::FetchNodeTexts(FetchSpec::new(s.evidence_tokens(), s.target(NEXT))),
        MANAGE_CONTEXT_BUDGET => StepKind::ManageContextBudget(
            ManageBudgetSpec::new(s.target(ON_OK), s.target(ON_OVER))
                .compact_code(s.compact_code())
                .divide_new_content(
                    s.optional(DIVIDE_NEW_CONTENT, |r, p, k, v| r.string(p, k, v, "\"<<<New content\"")),
                ),
        ),
        CALL_MODEL => StepKind::CallModel(s.call_model()),
        AGENT => {
            let tools = s.tools();
            let max_tool_calls = s.required_int(MAX_TOOL_CALLS, "max_tool_calls: 4");
            let turn_budget_tokens = s.optional(TURN_BUDGET_TOKENS, |r, p, k, v| r.int(p, k, v, "6_000"));
            StepKind::Agent(
                AgentSpec::new(s.call_model(), tools, max_tool_calls).turn_budget_tokens(turn_budget_tokens),
            )
        }
        LOOP_GUARD => StepKind::LoopGuard(LoopGuardSpec::new(
            s.required_name(MAX_TURN_LOOPS_FROM_SETTINGS, "max_turn_loops_from_settings: max_turn_loops"),
            s.target(ON_ALLOW),
            s.target(ON_DENY),
        )),
        SET_VARIABLES => StepKind::SetVariables(SetVariablesSpec::new(s.rules(), s.target(NEXT))),
        CUSTOM => StepKind::Custom(CustomSpec::new(s.outcomes())),
        _ => unreachable_kind(symbol),
    };
    f.finish(r.cx, keys_of(symbol), keys_of);
    Some(lowered)
}

/// Every symbol in `STEP_KINDS` has an arm above; this keeps the match total without a panic.
fn unreachable_kind(symbol: Symbol) -> StepKind {
    debug_assert!(false, "step kind `{symbol}` has no lowering");
    StepKind::Custom(CustomSpec::default())
}

/// Reads the keys of one step.
pub(crate) struct StepReader<'s, 'c, 'a> {
    pub(crate) r: &'s mut Reader<'c>,
    pub(crate) f: &'s mut Fields<'a>,
}

impl StepReader<'_, '_, '_> {
    pub(crate) fn path(&self, key: Symbol) -> FieldPath {
        self.f.path.key(key.as_str())
    }

    pub(crate) fn optional<T>(
        &mut self,
        key: Symbol,
        read: impl FnOnce(&mut Reader<'_>, &FieldPath, &Ident, &Value) -> Option<T>,
    ) -> Option<T> {
        let path = self.path(key);
        let (k, v) = self.f.take(key)?;
        read(self.r, &path, k, v)
    }

    fn required<T>(
        &mut self,
        key: Symbol,
        example: &str,
        placeholder: T,
        read: impl FnOnce(&mut Reader<'_>, &FieldPath, &Ident, &Value) -> Option<T>,
    ) -> T {
        let path = self.path(key);
        let value = match self.f.require(key, example) {
            Some((k, v)) => read(self.r, &path, k, v),
            None => None,
        };
        value.unwrap_or_else(|| {
            // The placeholder is never judged: its path is poisoned.
            self.r.spans.poison(&path);
            placeholder
        })
    }

    fn required_int(&mut self, key: Symbol, example: &str) -> i64 {
        let value_example = example.split(": ").nth(1).unwrap_or("1").to_owned();
        self.required(key, example, 1, |r, p, k, v| r.int(p, k, v, &value_example))
    }

    fn required_name(&mut self, key: Symbol, example: &str) -> String {
        let value_example = example.split(": ").nth(1).unwrap_or("name").to_owned();
        self.required(key, example, String::new(), |r, p, k, v| r.name(p, k, v, &value_example))
    }

    /// The keys of a model request: those of `call_model`, which `agent` steps share.
    fn call_model(&mut self) -> CallModelSpec {
        CallModelSpec::new(self.required_name(PROMPT_KEY, "prompt_key: answer"), self.target(NEXT))
            .max_output_tokens(self.optional(MAX_OUTPUT_TOKENS, |r, p, k, v| r.int(p, k, v, "2_000")))
            .max_tokens(self.optional(MAX_TOKENS, |r, p, k, v| r.int(p, k, v, "2_000")))
            .user_parts(self.user_parts())
            .use_history(self.optional(USE_HISTORY, |r, p, k, v| r.boolean(p, k, v)).unwrap_or(false))
            .params(self.model_params())
    }

    /// `evidence_tokens` of `fetch_node_texts`, or its deprecated spelling `max_tokens` (which
    /// reads the same, with a deprecation warning at the key); both at once is an error at the
    /// second one written, since a reader could not tell which wins.
    fn evidence_tokens(&mut self) -> i64 {
        let Some((old_key, old_value)) = self.f.take(MAX_TOKENS) else {
            // The old spelling written but malformed is reported where it is; the budget it
            // spells is not also missing.
            if self.f.is_malformed(MAX_TOKENS) && !self.f.has(EVIDENCE_TOKENS) {
                self.r.spans.poison(&self.path(EVIDENCE_TOKENS));
                return 1;
            }
            return self.required_int(EVIDENCE_TOKENS, "evidence_tokens: 3_000");
        };
        let path = self.path(EVIDENCE_TOKENS);
        if let Some((new_key, _)) = self.f.take(EVIDENCE_TOKENS) {
            let later = if new_key.span().start() > old_key.span().start() { new_key } else { old_key };
            self.r.spans.poison(&path);
            self.r.cx.error_at(
                later.span(),
                with_help(
                    "`max_tokens` and `evidence_tokens` both set the evidence budget of `fetch_node_texts`",
                    "keep `evidence_tokens` and remove `max_tokens` (its old spelling)",
                ),
            );
            return 1;
        }
        self.r.cx.deprecated(old_key.span(), Deprecation::FetchMaxTokens);
        self.r.int(&path, old_key, old_value, "3_000").unwrap_or_else(|| {
            self.r.spans.poison(&path);
            1
        })
    }

    /// A transition: a step id or `end`.
    fn target(&mut self, key: Symbol) -> String {
        let example = format!("{key}: <step id or end>");
        self.required(key, &example, END.to_owned(), |r, p, k, v| r.name(p, k, v, "next_step"))
    }

    /// `compact_code: [ { language: sql, policy: demand, inbox_key: "compact_sql" }, … ]`.
    fn compact_code(&mut self) -> Vec<CompactRuleSpec> {
        let path = self.path(COMPACT_CODE);
        let Some((k, v)) = self.f.take(COMPACT_CODE) else {
            return Vec::new();
        };
        let Some(items) = self.r.list(&path, k, v, "[ { language: sql, policy: always } ]") else {
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (j, item) in items.items.iter().enumerate() {
            let rule_path = path.index(j);
            self.r.spans.record(&rule_path, item.range());
            let Item::Value(Value::Map { brace, body }) = item else {
                self.r.spans.poison(&rule_path);
                self.r.cx.error_range(
                    item.range(),
                    with_help(
                        "expected a compaction rule `{ language: …, policy: … }`",
                        "write e.g. `{ language: sql, policy: always }`",
                    ),
                );
                rules.push(CompactRuleSpec::new(String::new(), String::new()));
                continue;
            };
            let brace_range = SpanRange { start: brace.span.open(), end: brace.span.close() };
            let mut rule =
                Fields::new(self.r.cx, "this `compact_code` rule".into(), brace_range, body, rule_path.clone());
            let name = |r: &mut Reader<'_>, rule: &mut Fields<'_>, key: Symbol, example: &str| {
                let p = rule_path.key(key.as_str());
                let value = match rule.require(key, &format!("{key}: {example}")) {
                    Some((k, v)) => r.name(&p, k, v, example),
                    None => None,
                };
                value.unwrap_or_else(|| {
                    r.spans.poison(&p);
                    String::new()
                })
            };
            let language = name(self.r, &mut rule, LANGUAGE, "sql");
            let policy = name(self.r, &mut rule, POLICY, "always");
            let p = rule_path.key(THRESHOLD.as_str());
            let threshold = rule.take(THRESHOLD).and_then(|(k, v)| self.r.float(&p, k, v, "0.4"));
            let p = rule_path.key(INBOX_KEY.as_str());
            let inbox_key = rule.take(INBOX_KEY).and_then(|(k, v)| self.r.name_or_string(&p, k, v, "\"compact_sql\""));
            rule.finish(self.r.cx, COMPACT_RULE_KEYS, |_| &[]);
            rules.push(CompactRuleSpec::new(language, policy).threshold(threshold).inbox_key(inbox_key));
        }
        rules
    }

    /// `user_parts: [ source => "template {}", … ]`.
    fn user_parts(&mut self) -> Vec<UserPartSpec> {
        let path = self.path(USER_PARTS);
        let Some((k, v)) = self.f.take(USER_PARTS) else {
            return Vec::new();
        };
        let Some(items) = self.r.list(&path, k, v, "[ context_blocks => \"### Context:\\n{}\\n\\n\" ]") else {
            return Vec::new();
        };
        if items.items.is_empty() && items.errors.is_empty() {
            self.r.spans.poison(&path);
            self.r.cx.error_range(
                v.range(),
                with_help(
                    "`user_parts` is empty: the step would send an empty user message",
                    "remove `user_parts` to send the default (the context under `### Context:`, then the question \
                     under `### User:`), or list the parts, e.g. `[ user_question => \"{}\" ]`",
                ),
            );
        }
        let mut parts = Vec::new();
        for (j, item) in items.items.iter().enumerate() {
            let part = path.index(j);
            self.r.spans.record(&part, item.range());
            match item {
                Item::Arrow { from, to: Value::Str(template), .. } => {
                    self.r.spans.record(&part.key("source"), SpanRange::single(from.span()));
                    self.r.spans.record(&part.key("template"), SpanRange::single(template.span()));
                    parts.push(UserPartSpec::new(unraw(from), template.value()));
                }
                other => {
                    self.r.spans.poison(&part);
                    self.r.cx.error_range(
                        other.range(),
                        with_help(
                            "expected a user part `source => \"template\"`",
                            "write e.g. `user_question_en => \"### User:\\n{}\\n\\n\"`: the template holds one `{}` for the source's text",
                        ),
                    );
                }
            }
        }
        parts
    }

    /// `rules: [ target <- source | transform, target = value, … ]`.
    fn rules(&mut self) -> Vec<SetRuleSpec> {
        let path = self.path(RULES);
        let Some((k, v)) =
            self.f.require(RULES, "rules: [ context_blocks <- last_model_response | to_context_blocks ]")
        else {
            self.r.spans.poison(&path);
            return Vec::new();
        };
        let Some(items) = self.r.list(&path, k, v, "[ last_model_response = null ]") else {
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (j, item) in items.items.iter().enumerate() {
            let rule = path.index(j);
            self.r.spans.record(&rule, item.range());
            let spans = &mut *self.r.spans;
            match item {
                Item::Copy { target, source, transform, .. } => {
                    spans.record(&rule.key("set"), SpanRange::single(target.span()));
                    spans.record(&rule.key("from"), SpanRange::single(source.span()));
                    if let Some((_, t)) = transform {
                        spans.record(&rule.key("transform"), SpanRange::single(t.span()));
                    }
                    rules.push(SetRuleSpec::new(
                        unraw(target),
                        SetValueSpec::From {
                            from: unraw(source),
                            transform: transform.as_ref().map(|(_, t)| unraw(t)),
                        },
                    ));
                }
                Item::Assign { target, value, .. } => {
                    spans.record(&rule.key("set"), SpanRange::single(target.span()));
                    spans.record(&rule.key("value"), value.range());
                    match literal_json(value) {
                        Some(json) => rules.push(SetRuleSpec::new(unraw(target), SetValueSpec::Value(json))),
                        None => {
                            spans.poison(&rule);
                            self.r.cx.error_range(
                                value.range(),
                                with_help(
                                    format!("`{target} = …` takes a literal (`null`, a string, a number or a boolean), found {}", value.describe()),
                                    format!("to copy a field, write `{target} <- field`"),
                                ),
                            );
                        }
                    }
                }
                other => {
                    spans.poison(&rule);
                    self.r.cx.error_range(
                        other.range(),
                        with_help(
                            "expected a rule `target <- source`, `target <- source | transform` or `target = value`",
                            "write e.g. `context_blocks <- last_model_response | to_context_blocks` or `last_model_response = null`",
                        ),
                    );
                }
            }
        }
        rules
    }

    /// `outcomes { name => target, … }` of a custom step.
    fn outcomes(&mut self) -> Vec<(String, String)> {
        let path = self.path(OUTCOMES);
        let Some((k, v)) = self.f.require(OUTCOMES, "outcomes { done => end }") else {
            self.r.spans.poison(&path);
            return Vec::new();
        };
        self.r.record(&path, v);
        let body = match v {
            Value::Map { body, .. } | Value::List { body, .. } => body,
            other => {
                self.r.spans.poison(&path);
                self.r.cx.error_range(
                    other.range(),
                    with_help(
                        format!("`{k}` takes a block of `outcome => step`, found {}", other.describe()),
                        "write `outcomes { done => end }`",
                    ),
                );
                return Vec::new();
            }
        };
        for error in &body.errors {
            self.r.cx.syn_error(error.clone());
        }
        let mut outcomes: Vec<(String, String)> = Vec::new();
        for item in &body.items {
            match item {
                Item::Arrow { from, to: Value::Name(target), .. } => {
                    let name = unraw(from);
                    if outcomes.iter().any(|(o, _)| *o == name) {
                        self.r.cx.error_at(
                            from.span(),
                            with_help(
                                format!("duplicate outcome `{name}`"),
                                "each outcome names one next step; remove one of the two",
                            ),
                        );
                        continue;
                    }
                    self.r.spans.record(&path.key(name.as_str()), SpanRange::single(target.span()));
                    // The outcome's own name, for errors about the enum variant it becomes.
                    self.r.spans.record(&path.key(name.as_str()).key("name"), SpanRange::single(from.span()));
                    outcomes.push((name, unraw(target)));
                }
                other => self.r.cx.error_range(
                    other.range(),
                    with_help("expected an outcome `name => step`", "write e.g. `done => end` or `retry => search`"),
                ),
            }
        }
        outcomes
    }
}

/// A literal as JSON, for `target = value` rules.
fn literal_json(value: &Value) -> Option<serde_json::Value> {
    Some(match value {
        Value::Name(n) if *n == NULL => serde_json::Value::Null,
        Value::Str(s) => serde_json::Value::String(s.value()),
        Value::Bool(b) => serde_json::Value::Bool(b.value),
        Value::Int { neg, lit } => {
            let n = lit.base10_parse::<i64>().ok()?;
            serde_json::Value::from(if neg.is_some() { -n } else { n })
        }
        Value::Float { neg, lit } => {
            let f = lit.base10_parse::<f64>().ok()?;
            serde_json::Number::from_f64(if neg.is_some() { -f } else { f }).map(serde_json::Value::Number)?
        }
        _ => return None,
    })
}

#[cfg(test)]
mod schema_tests {
    use super::*;
    use ctx_spec::pipeline::schema::STEP_SCHEMAS;

    /// The macro's keyword table is the runtime's schema: same kinds, same keys, same order.
    #[test]
    fn the_keyword_table_matches_the_runtime_schema() {
        let kinds: Vec<&str> = STEP_KINDS.iter().map(|k| k.as_str()).collect();
        let described: Vec<&str> = STEP_SCHEMAS.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, described);
        for schema in STEP_SCHEMAS {
            let kind = STEP_KINDS.iter().copied().find(|k| k.as_str() == schema.kind).expect("listed");
            let keys: Vec<&str> = keys_of(kind).iter().map(|k| k.as_str()).collect();
            let expected: Vec<&str> = schema.keys.iter().map(|k| k.name).collect();
            assert_eq!(keys, expected, "keys of `{}`", schema.kind);
        }
    }
}
