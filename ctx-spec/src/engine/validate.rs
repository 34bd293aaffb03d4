//! Validation of context declarations: plain functions, no I/O, every problem at once.
//!
//! The `pipeline!` macro calls [`validate_spec_at`] at compile time and maps each issue's field
//! path to the token it parsed; [`ContextAssembler`](super::ContextAssembler) calls the same
//! function when it is built, so a rule lives once. Paths are relative to the [`EngineSpec`]
//! (`contexts[0].messages[2].ratio`) under the caller's base path.

use std::collections::{BTreeMap, BTreeSet};

use super::declaration::BUILTIN_COMPACTORS;
use super::declaration::{ContextDeclaration, ContextPolicySpec, EngineSpec, MessageSpec};
use super::policy::{Overflow, pack_ratios};
use super::template::{Template, valid_segment};
use crate::codes::Code;
use crate::validation::{ConfigIssue, FieldPath, did_you_mean as suggest};

/// Slack for float sums of ratios written in decimal (0.1 + 0.2 + 0.7).
const RATIO_EPSILON: f64 = 1e-9;

/// Every problem of `spec`, with paths from its root.
pub fn validate_spec(spec: &EngineSpec) -> Vec<ConfigIssue> {
    validate_spec_at(spec, &FieldPath::root())
}

/// Every problem of `spec`, with paths under `base` (where the spec sits in a larger config).
pub fn validate_spec_at(spec: &EngineSpec, base: &FieldPath) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    let contexts: BTreeMap<&str, usize> = spec.contexts.iter().enumerate().map(|(i, c)| (c.name.as_str(), i)).collect();
    let retrievers: BTreeMap<&str, usize> =
        spec.retrievers.iter().enumerate().map(|(i, r)| (r.name.as_str(), i)).collect();

    let mut seen = BTreeSet::new();
    for (i, c) in spec.contexts.iter().enumerate() {
        let path = base.key("contexts").index(i).key("name");
        check_name(&mut issues, &path, "context", &c.name, &mut seen);
    }
    let mut seen_retrievers = BTreeSet::new();
    for (k, r) in spec.retrievers.iter().enumerate() {
        let path = base.key("retrievers").index(k);
        check_name(&mut issues, &path.key("name"), "retriever", &r.name, &mut seen_retrievers);
        if contexts.contains_key(r.name.as_str()) {
            issues.push(
                ConfigIssue::new(
                    Code::EngineDuplicateName,
                    path.key("name"),
                    format!(
                        "retriever `{}` has the name of a context, so `context` directives naming it are ambiguous",
                        r.name
                    ),
                )
                .with_help("rename the retriever or the context"),
            );
        }
        if r.limit < 1 {
            issues.push(
                ConfigIssue::new(
                    Code::EngineRetrieverLimit,
                    path.key("limit"),
                    format!("limit {} is below 1", r.limit),
                )
                .with_help("set limit to the number of blocks one page may return, at least 1"),
            );
        }
        let scope = Scope { inputs: None, packs: &[] };
        check_template(&mut issues, &path.key("query"), &r.query, &scope);
    }

    let mut known_compactors: Vec<&str> = BUILTIN_COMPACTORS.to_vec();
    for (k, name) in spec.compactors.iter().enumerate() {
        if name.is_empty() {
            issues.push(ConfigIssue::new(
                Code::EngineEmptyName,
                base.key("compactors").index(k),
                "empty compactor name",
            ));
        }
        known_compactors.push(name);
    }

    for (i, decl) in spec.contexts.iter().enumerate() {
        let path = base.key("contexts").index(i);
        if let Some(policy) = &decl.policy {
            issues.extend(validate_policy(policy, &known_compactors, &path.key("policy")));
        }
        validate_declaration(&mut issues, spec, decl, &path, &contexts, &retrievers);
    }
    check_nesting(&mut issues, spec, base, &contexts);
    issues
}

fn check_name(issues: &mut Vec<ConfigIssue>, path: &FieldPath, what: &str, name: &str, seen: &mut BTreeSet<String>) {
    if name.is_empty() {
        issues.push(ConfigIssue::new(Code::EngineEmptyName, path.clone(), format!("a {what} has an empty name")));
    } else if !seen.insert(name.to_owned()) {
        issues.push(
            ConfigIssue::new(Code::EngineDuplicateName, path.clone(), format!("{what} `{name}` is declared twice"))
                .with_help(format!("give each {what} its own name")),
        );
    }
}

/// Every problem of one policy: budget, ratios, overflow keyword, compactor name, expansion.
pub fn validate_policy(policy: &ContextPolicySpec, known_compactors: &[&str], path: &FieldPath) -> Vec<ConfigIssue> {
    let mut issues = Vec::new();
    if let Some(budget) = &policy.input_budget
        && budget.max_tokens < 1
    {
        issues.push(
            ConfigIssue::new(
                Code::EngineInvalidBudget,
                path.key("input_budget").key("max_tokens"),
                format!("input_budget.max_tokens is {}, it must be at least 1", budget.max_tokens),
            )
            .with_help("set it to the tokens the assembled input may use"),
        );
    }
    if let Some(ratio) = policy.pack_budget.as_ref().and_then(|b| b.default_ratio) {
        check_ratio(&mut issues, &path.key("pack_budget").key("default_ratio"), "pack_budget.default_ratio", ratio);
    }
    if let Some(overflow) = &policy.overflow
        && Overflow::parse(overflow).is_none()
    {
        issues.push(
            ConfigIssue::new(
                Code::EngineInvalidOverflow,
                path.key("overflow"),
                format!("unknown overflow `{overflow}`"),
            )
            .with_help(format!("use one of: {}", Overflow::KEYWORDS.join(", "))),
        );
    }
    if let Some(compactor) = &policy.compactor
        && !known_compactors.contains(&compactor.name.as_str())
    {
        let mut issue = ConfigIssue::new(
            Code::EngineUnknownCompactor,
            path.key("compactor"),
            format!("unknown compactor `{}`", compactor.name),
        );
        issue = issue.with_help(match suggest(&compactor.name, known_compactors.iter().copied()) {
            Some(s) => format!("did you mean `{s}`? known: {}", known_compactors.join(", ")),
            None => format!("known: {}; declare others in `compactors` and register them", known_compactors.join(", ")),
        });
        issues.push(issue);
    }
    if let Some(expansion) = &policy.expansion {
        if expansion.max_pages < 1 {
            issues.push(
                ConfigIssue::new(
                    Code::EngineMaxPages,
                    path.key("expansion").key("max_pages"),
                    format!("expansion.max_pages is {}, it must be at least 1", expansion.max_pages),
                )
                .with_help("1 disables paging; more lets a pack fetch further pages"),
            );
        }
        let ratio = expansion.min_fill_ratio;
        if ratio.is_nan() || ratio <= 0.0 || ratio > 1.0 {
            issues.push(
                ConfigIssue::new(
                    Code::EngineMinFillRatio,
                    path.key("expansion").key("min_fill_ratio"),
                    format!("expansion.min_fill_ratio is {ratio}, it must be in (0, 1]"),
                )
                .with_help("1.0 pages until the pack is full; 0.5 stops at half"),
            );
        }
    }
    issues
}

fn check_ratio(issues: &mut Vec<ConfigIssue>, path: &FieldPath, what: &str, ratio: f64) {
    if ratio.is_nan() || ratio <= 0.0 || ratio > 1.0 {
        issues.push(
            ConfigIssue::new(Code::EngineRatioRange, path.clone(), format!("{what} is {ratio}, it must be in (0, 1]"))
                .with_help("a ratio is a share of the room the fixed messages leave"),
        );
    }
}

/// What a template may refer to. A declaration's templates (`inputs: Some`) may use its
/// declared inputs and its packs; a retriever query (`inputs: None`) may use any `input.*`
/// variable — each context using the retriever checks them against its own inputs.
struct Scope<'a> {
    inputs: Option<&'a [String]>,
    packs: &'a [&'a str],
}

fn check_template(issues: &mut Vec<ConfigIssue>, path: &FieldPath, text: &str, scope: &Scope<'_>) {
    let template = match Template::parse(text) {
        Ok(t) => t,
        Err(errors) => {
            for e in errors {
                issues.push(
                    ConfigIssue::new(Code::EngineTemplateSyntax, path.clone(), format!("template {text:?}: {e}"))
                        .with_help(
                            "variables are `{input.name}` or `{context.pack}`; `{{` and `}}` are literal braces",
                        ),
                );
            }
            return;
        }
    };
    for var in template.variables() {
        let name = var.name();
        let problem = match var.path.as_slice() {
            [ns, field, ..] if ns == "input" => match scope.inputs {
                Some(inputs) if !inputs.contains(field) => Some((
                    format!("template {text:?} uses `{{{name}}}`, but `{field}` is not a declared input"),
                    match suggest(field, inputs.iter().map(String::as_str)) {
                        Some(s) => format!("did you mean `input.{s}`? or add `{field}` to the context's `inputs`"),
                        None => format!("add `{field}` to the context's `inputs`"),
                    },
                )),
                _ => None,
            },
            [ns, pack] if ns == "context" && scope.inputs.is_some() => {
                (!scope.packs.contains(&pack.as_str())).then(|| {
                    (
                        format!("template {text:?} uses `{{{name}}}`, but this context has no pack `{pack}`"),
                        match suggest(pack, scope.packs.iter().copied()) {
                            Some(s) => format!("did you mean `context.{s}`?"),
                            None => "add a `context` directive for it, with `placement: variable` to send it only here"
                                .to_owned(),
                        },
                    )
                })
            }
            _ => Some((
                format!("template {text:?} uses `{{{name}}}`, which is not a variable"),
                if scope.inputs.is_some() {
                    "variables are `{input.<name>}` and `{context.<pack>}`".to_owned()
                } else {
                    "a retriever query may only use `{input.<name>}`".to_owned()
                },
            )),
        };
        if let Some((message, help)) = problem {
            issues.push(ConfigIssue::new(Code::EngineUnknownVariable, path.clone(), message).with_help(help));
        }
    }
}

fn validate_declaration(
    issues: &mut Vec<ConfigIssue>,
    spec: &EngineSpec,
    decl: &ContextDeclaration,
    path: &FieldPath,
    contexts: &BTreeMap<&str, usize>,
    retrievers: &BTreeMap<&str, usize>,
) {
    if decl.messages.is_empty() {
        issues.push(
            ConfigIssue::new(
                Code::EngineNoMessages,
                path.key("messages"),
                format!("context `{}` has no messages", decl.name),
            )
            .with_help("add system, user, context or history messages"),
        );
    }
    for (k, input) in decl.inputs.iter().enumerate() {
        // An input is used as `{input.<name>}`: its name must be one segment of a variable name.
        if !valid_segment(input) {
            issues.push(ConfigIssue::new(
                Code::EngineInvalidInput,
                path.key("inputs").index(k),
                format!("input name {input:?} must be letters, digits, `_` or `-`"),
            ));
        }
    }
    let packs: Vec<&str> = decl.packs().map(|(_, c)| c.name.as_str()).collect();
    let mut seen_packs = BTreeSet::new();
    let mut history_seen = false;
    let scope = Scope { inputs: Some(&decl.inputs), packs: &packs };
    for (j, message) in decl.messages.iter().enumerate() {
        let mpath = path.key("messages").index(j);
        match message {
            MessageSpec::System { content } | MessageSpec::User { content } | MessageSpec::Assistant { content } => {
                check_template(issues, &mpath.key("content"), content, &scope);
            }
            MessageSpec::History => {
                if std::mem::replace(&mut history_seen, true) {
                    issues.push(
                        ConfigIssue::new(Code::EngineDuplicateHistory, mpath, "history is inserted twice")
                            .with_help("keep one `history` message"),
                    );
                }
            }
            MessageSpec::Context(insert) => {
                let npath = mpath.key("name");
                if let Some(ratio) = insert.ratio {
                    check_ratio(issues, &mpath.key("ratio"), &format!("the ratio of pack `{}`", insert.name), ratio);
                }
                if !seen_packs.insert(insert.name.as_str()) {
                    issues.push(
                        ConfigIssue::new(
                            Code::EngineDuplicatePack,
                            npath.clone(),
                            format!(
                                "pack `{}` is inserted twice, so `{{context.{}}}` is ambiguous",
                                insert.name, insert.name
                            ),
                        )
                        .with_help("insert each pack once"),
                    );
                }
                if let Some(&k) = retrievers.get(insert.name.as_str()) {
                    check_query_inputs(issues, spec, k, decl, &npath);
                } else if !contexts.contains_key(insert.name.as_str()) {
                    let candidates = contexts.keys().chain(retrievers.keys()).copied();
                    let help = match suggest(&insert.name, candidates) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => "declare a retriever or a context with this name".to_owned(),
                    };
                    issues.push(
                        ConfigIssue::new(
                            Code::EngineUnknownPack,
                            npath,
                            format!("`{}` is neither a declared retriever nor a declared context", insert.name),
                        )
                        .with_help(help),
                    );
                }
            }
        }
    }
    check_ratio_sum(issues, decl, path);
}

fn check_query_inputs(
    issues: &mut Vec<ConfigIssue>,
    spec: &EngineSpec,
    k: usize,
    decl: &ContextDeclaration,
    npath: &FieldPath,
) {
    let Some(retriever) = spec.retrievers.get(k) else { return };
    let Ok(query) = Template::parse(&retriever.query) else { return };
    for var in query.variables() {
        if let [ns, field, ..] = var.path.as_slice()
            && ns == "input"
            && !decl.inputs.contains(field)
        {
            issues.push(
                ConfigIssue::new(
                    Code::EngineUnknownVariable,
                    npath.clone(),
                    format!(
                        "retriever `{}` queries `{{{}}}`, but context `{}` does not declare input `{field}`",
                        retriever.name,
                        var.name(),
                        decl.name
                    ),
                )
                .with_help(format!("add `{field}` to the inputs of context `{}`", decl.name)),
            );
        }
    }
}

fn check_ratio_sum(issues: &mut Vec<ConfigIssue>, decl: &ContextDeclaration, path: &FieldPath) {
    let ratios = pack_ratios(decl);
    let sum: f64 = ratios.iter().sum();
    let uses_default = decl.packs().any(|(_, c)| c.ratio.is_none());
    let has_default = decl.policy.as_ref().and_then(|p| p.pack_budget.as_ref()).and_then(|b| b.default_ratio).is_some();
    if sum > 1.0 + RATIO_EPSILON {
        let at = if uses_default && has_default {
            path.key("policy").key("pack_budget").key("default_ratio")
        } else {
            path.key("messages")
        };
        issues.push(
            ConfigIssue::new(
                Code::EngineRatioSum,
                at,
                format!("the pack ratios of context `{}` sum to {sum}, more than 1", decl.name),
            )
            .with_help("lower pack_budget.default_ratio or the per-pack ratios so that they sum to at most 1"),
        );
    }
    for ((j, insert), ratio) in decl.packs().zip(&ratios) {
        if insert.ratio.is_none() && !has_default && *ratio <= 0.0 {
            issues.push(
                ConfigIssue::new(
                    Code::EngineRatioSum,
                    path.key("messages").index(j).key("name"),
                    format!(
                        "pack `{}` gets no share: the explicit ratios already use all of the pack room",
                        insert.name
                    ),
                )
                .with_help("give it a ratio and lower the others"),
            );
        }
    }
}

/// Nested contexts: no history inside, no cycles.
fn check_nesting(issues: &mut Vec<ConfigIssue>, spec: &EngineSpec, base: &FieldPath, contexts: &BTreeMap<&str, usize>) {
    let nested = |i: usize| -> Vec<(usize, usize)> {
        spec.contexts.get(i).map_or_else(Vec::new, |d| {
            d.packs().filter_map(|(j, c)| contexts.get(c.name.as_str()).map(|&k| (j, k))).collect()
        })
    };
    for (i, decl) in spec.contexts.iter().enumerate() {
        for (j, k) in nested(i) {
            let npath = base.key("contexts").index(i).key("messages").index(j).key("name");
            let Some(inner) = spec.contexts.get(k) else { continue };
            if inner.messages.iter().any(|m| matches!(m, MessageSpec::History)) {
                issues.push(
                    ConfigIssue::new(
                        Code::EngineNestedHistory,
                        npath.clone(),
                        format!(
                            "context `{}` nests `{}`, which inserts history; history belongs to the outer context",
                            decl.name, inner.name
                        ),
                    )
                    .with_help(format!("remove the history message from `{}`", inner.name)),
                );
            }
            // Whether `i` is reachable from `k`: then this directive closes a cycle.
            let mut stack = vec![k];
            let mut visited = BTreeSet::new();
            let mut cyclic = false;
            while let Some(at) = stack.pop() {
                if at == i {
                    cyclic = true;
                    break;
                }
                if visited.insert(at) {
                    stack.extend(nested(at).into_iter().map(|(_, next)| next));
                }
            }
            if cyclic {
                issues.push(
                    ConfigIssue::new(
                        Code::EngineNestedCycle,
                        npath,
                        format!(
                            "context `{}` nests `{}`, which (directly or not) nests `{}` again",
                            decl.name, inner.name, decl.name
                        ),
                    )
                    .with_help("nested contexts must form a tree"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
