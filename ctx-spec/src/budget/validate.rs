//! The rules that make a `manage_context_budget` step valid, written once: the `pipeline!` macro
//! calls these at compile time and the loader at load time.

use crate::codes::Code;
use crate::pipeline::definition::{CompactRuleSpec, ManageBudgetSpec};
use crate::state::{NodeText, render_context_blocks};
use crate::tokens::{TokenCounter, TokenError};
use crate::validation::{ConfigIssue, FieldPath};

use super::config::{CompactPolicy, CompactRule, ManageBudgetConfig, PolicyKind, RuleLanguage};
use super::frame::NodeFrame;

/// Validates a `manage_context_budget` step written at `at` (e.g. `steps[2]`), returning its
/// typed configuration or every problem found.
///
/// Issues point at the offending value: `at.compact_code[j].language`, `.policy`, `.threshold`,
/// `.inbox_key`, `at.divide_new_content`; a key that is missing is reported on the rule itself
/// (`at.compact_code[j]`). Rules are tried in order for each node (see the `budget` module
/// documentation), so a rule that can never fire because an earlier rule of the same language
/// always fires first is an error too.
///
/// ```
/// use ctx::budget::validate_manage_budget;
/// use ctx::definition::{CompactRuleSpec, ManageBudgetSpec};
/// use ctx::FieldPath;
///
/// let rule = |language: &str, policy: &str, threshold| CompactRuleSpec::new(language, policy).threshold(threshold);
/// let spec = ManageBudgetSpec::new("answer", "summarize").compact_code(vec![rule("sql", "threshold", Some(1.5)), rule("python", "always", None)]);
/// let issues = validate_manage_budget(&spec, &FieldPath::parse("steps[2]")).unwrap_err();
/// let paths: Vec<String> = issues.iter().map(|i| i.path.to_string()).collect();
/// assert_eq!(paths, ["steps[2].compact_code[0].threshold", "steps[2].compact_code[1].language"]);
/// ```
pub fn validate_manage_budget(spec: &ManageBudgetSpec, at: &FieldPath) -> Result<ManageBudgetConfig, Vec<ConfigIssue>> {
    validate_manage_budget_with(spec, at, &[])
}

/// [`validate_manage_budget`] where a rule may also name one of `declared`: the user compactor
/// languages of the pipeline's `settings { compactors: [...] }`. Whether each is registered is
/// checked when the pipeline is loaded, since only then are compactors given.
///
/// ```
/// use ctx::budget::{RuleLanguage, validate_manage_budget_with};
/// use ctx::definition::{CompactRuleSpec, ManageBudgetSpec};
/// use ctx::FieldPath;
///
/// let rule = |language: &str| CompactRuleSpec::new(language, "always");
/// let spec = ManageBudgetSpec::new("answer", "summarize").compact_code(vec![rule("markdown"), rule("yaml")]);
/// let cfg = validate_manage_budget_with(&spec, &FieldPath::parse("steps[2]"), &["yaml".to_owned()]).unwrap();
/// assert_eq!(cfg.rules()[1].language, RuleLanguage::Custom("yaml".into()));
/// let issues = validate_manage_budget_with(&spec, &FieldPath::parse("steps[2]"), &[]).unwrap_err();
/// assert!(issues[0].to_string().contains("unknown compaction language `yaml`"));
/// ```
pub fn validate_manage_budget_with(
    spec: &ManageBudgetSpec,
    at: &FieldPath,
    declared: &[String],
) -> Result<ManageBudgetConfig, Vec<ConfigIssue>> {
    let mut issues = Vec::new();
    let mut rules = Vec::with_capacity(spec.compact_code.len());
    // Rules that parsed, with their index, for the reachability check.
    let mut parsed: Vec<(usize, CompactRule)> = Vec::new();
    for (j, rule) in spec.compact_code.iter().enumerate() {
        let rule_at = at.key("compact_code").index(j);
        if let Some(rule) = validate_rule(rule, &rule_at, declared, &mut issues) {
            if let Some(issue) = unreachable(&parsed, j, &rule, &rule_at) {
                issues.push(issue);
            }
            parsed.push((j, rule.clone()));
            rules.push(rule);
        }
    }
    if let Some(divider) = &spec.divide_new_content
        && divider.trim().is_empty()
    {
        issues.push(
            ConfigIssue::new(
                Code::DivideNewContentEmpty,
                at.key("divide_new_content"),
                format!("`divide_new_content` is {divider:?}: the divider would be an invisible context block"),
            )
            .with_help("give it visible text, e.g. \"<<<New content\", or remove `divide_new_content`"),
        );
    }
    if issues.is_empty() {
        Ok(ManageBudgetConfig {
            rules,
            divide_new_content: spec.divide_new_content.clone(),
            on_ok: spec.on_ok.clone(),
            on_over: spec.on_over.clone(),
        })
    } else {
        Err(issues)
    }
}

/// One rule; pushes its problems and returns it when it is valid.
fn validate_rule(
    spec: &CompactRuleSpec,
    at: &FieldPath,
    declared: &[String],
    issues: &mut Vec<ConfigIssue>,
) -> Option<CompactRule> {
    let before = issues.len();
    let language = RuleLanguage::parse(&spec.language)
        .or_else(|| declared.contains(&spec.language).then(|| RuleLanguage::Custom(spec.language.clone())));
    if language.is_none() {
        let builtins = RuleLanguage::NAMES.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        issues.push(
            ConfigIssue::new(
                Code::CompactRuleUnknownLanguage,
                at.key("language"),
                format!("unknown compaction language `{}`", spec.language),
            )
            .with_help(with_suggestion(
                &format!(
                    "use a built-in compactor ({builtins}), or declare your own in `settings {{ compactors: [{}] }}` \
                     and register it with `LoadOptions::compactor`",
                    spec.language
                ),
                suggest_language(&spec.language, declared),
            )),
        );
    }
    let kind = PolicyKind::parse(&spec.policy);
    let Some(kind) = kind else {
        issues.push(
            ConfigIssue::new(
                Code::CompactRuleUnknownPolicy,
                at.key("policy"),
                format!("unknown compaction policy `{}`", spec.policy),
            )
            .with_help(with_suggestion(
                "use `always`, `threshold` (with `threshold: 0.4`) or `demand` (with `inbox_key: \"…\"`)",
                closest(&spec.policy, &PolicyKind::NAMES),
            )),
        );
        return None;
    };
    let policy = match kind {
        PolicyKind::Always => Some(CompactPolicy::Always),
        PolicyKind::Threshold => threshold_policy(spec.threshold, at, issues),
        PolicyKind::Demand => demand_policy(spec.inbox_key.as_deref(), at, issues),
    };
    if kind != PolicyKind::Threshold
        && let Some(t) = spec.threshold
    {
        issues.push(
            ConfigIssue::new(
                Code::CompactRuleKeyNotForPolicy,
                at.key("threshold"),
                format!("`threshold: {t}` has no effect with policy `{}`", kind.name()),
            )
            .with_help("remove `threshold`, or use `policy: threshold`"),
        );
    }
    if kind != PolicyKind::Demand
        && let Some(key) = &spec.inbox_key
    {
        issues.push(
            ConfigIssue::new(
                Code::CompactRuleKeyNotForPolicy,
                at.key("inbox_key"),
                format!("`inbox_key: {key:?}` has no effect with policy `{}`", kind.name()),
            )
            .with_help("remove `inbox_key`, or use `policy: demand`"),
        );
    }
    match (language, policy) {
        (Some(language), Some(policy)) if issues.len() == before => Some(CompactRule { language, policy }),
        _ => None,
    }
}

fn threshold_policy(threshold: Option<f64>, at: &FieldPath, issues: &mut Vec<ConfigIssue>) -> Option<CompactPolicy> {
    let Some(t) = threshold else {
        issues.push(
            ConfigIssue::new(
                Code::CompactRuleMissingThreshold,
                at.clone(),
                "policy `threshold` needs a `threshold`: the fraction of settings.max_context_tokens that triggers compaction",
            )
            .with_help("add e.g. `threshold: 0.4` (compact once the context would exceed 40% of the budget)"),
        );
        return None;
    };
    if t.is_finite() && t > 0.0 && t <= 1.0 {
        return Some(CompactPolicy::Threshold { fraction: t });
    }
    let mut help = String::from(
        "a threshold is a fraction of settings.max_context_tokens in (0, 1]: 0.4 compacts once the context would \
         exceed 40% of the budget",
    );
    // Only a whole number reads as a percentage (`40` for 40%); `1.0001` is a slip, not 0.010001.
    if t.fract() == 0.0 && (2.0..=100.0).contains(&t) {
        help.push_str(&format!(" (did you mean {}?)", t / 100.0));
    }
    issues.push(
        ConfigIssue::new(
            Code::CompactRuleThresholdOutOfRange,
            at.key("threshold"),
            format!("`threshold: {t}` is outside (0, 1]"),
        )
        .with_help(help),
    );
    None
}

fn demand_policy(inbox_key: Option<&str>, at: &FieldPath, issues: &mut Vec<ConfigIssue>) -> Option<CompactPolicy> {
    match inbox_key {
        None => {
            issues.push(
                ConfigIssue::new(
                    Code::CompactRuleMissingInboxKey,
                    at.clone(),
                    "policy `demand` needs an `inbox_key`: the inbox topic that requests compaction",
                )
                .with_help(
                    "add e.g. `inbox_key: \"compact_sql\"` and send messages addressed to this step with that topic",
                ),
            );
            None
        }
        Some(key) if key.trim().is_empty() => {
            issues.push(
                ConfigIssue::new(
                    Code::CompactRuleEmptyInboxKey,
                    at.key("inbox_key"),
                    format!("`inbox_key: {key:?}` is empty; no sender could name this topic on purpose"),
                )
                .with_help("name the topic, e.g. `inbox_key: \"compact_sql\"`"),
            );
            None
        }
        Some(key) => Some(CompactPolicy::Demand { inbox_key: key.to_owned() }),
    }
}

/// Whether an earlier rule of the same language fires whenever `rule` would, so that `rule` is
/// never reached: an `always` rule; a `demand` rule on the same topic; a `threshold` rule with a
/// lower or equal trigger (both compare the same count with their trigger).
fn unreachable(earlier: &[(usize, CompactRule)], j: usize, rule: &CompactRule, at: &FieldPath) -> Option<ConfigIssue> {
    let (i, shadow) = earlier.iter().find(|(_, e)| {
        e.language == rule.language
            && match (&e.policy, &rule.policy) {
                (CompactPolicy::Always, _) => true,
                (CompactPolicy::Demand { inbox_key: a }, CompactPolicy::Demand { inbox_key: b }) => a == b,
                (CompactPolicy::Threshold { fraction: a }, CompactPolicy::Threshold { fraction: b }) => a <= b,
                _ => false,
            }
    })?;
    let why = match &shadow.policy {
        CompactPolicy::Always => format!("compacts every {} node first", shadow.language.name()),
        CompactPolicy::Demand { inbox_key } => format!("already compacts on demand `{inbox_key}`"),
        CompactPolicy::Threshold { fraction } => format!("already compacts from threshold {fraction}, a lower trigger"),
    };
    Some(
        ConfigIssue::new(
            Code::CompactRuleUnreachable,
            at.clone(),
            format!(
                "rule compact_code[{j}] ({} {}) can never fire: compact_code[{i}] ({} {}) {why}",
                rule.language.name(),
                describe(&rule.policy),
                shadow.language.name(),
                describe(&shadow.policy),
            ),
        )
        .with_help(format!("remove compact_code[{j}], or move it before compact_code[{i}]")),
    )
}

fn describe(policy: &CompactPolicy) -> String {
    match policy {
        CompactPolicy::Always => "always".to_owned(),
        CompactPolicy::Threshold { fraction } => format!("threshold {fraction}"),
        CompactPolicy::Demand { inbox_key } => format!("demand `{inbox_key}`"),
    }
}

fn with_suggestion(help: &str, suggestion: Option<&str>) -> String {
    match suggestion {
        Some(s) => format!("{help} (did you mean `{s}`?)"),
        None => help.to_owned(),
    }
}

/// What someone who wrote `name` probably meant.
fn suggest_language<'a>(name: &str, declared: &'a [String]) -> Option<&'a str> {
    let lower = name.trim().to_ascii_lowercase();
    let sql = ["sql", "tsql", "t-sql", "mssql", "sqlserver", "sql_server", "postgres", "postgresql", "plpgsql", "psql"];
    let dotnet = ["dotnet", ".net", "net", "csharp", "c#", "cs", "razor", "cshtml", "vb", "fsharp", "f#", "aspnet"];
    if sql.contains(&lower.as_str()) {
        Some("sql")
    } else if dotnet.contains(&lower.as_str()) {
        Some("dotnet")
    } else if ["md", "mdx"].contains(&lower.as_str()) {
        Some("markdown")
    } else if ["txt", "plain", "plaintext", "prose"].contains(&lower.as_str()) {
        Some("text")
    } else {
        let declared: Vec<&str> = declared.iter().map(String::as_str).collect();
        closest(&lower, &RuleLanguage::NAMES).or_else(|| closest(&lower, &declared))
    }
}

fn closest<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
    crate::validation::did_you_mean_by(name, candidates.iter().copied(), crate::validation::Likeness::Typo)
}

/// What the frames of a full retrieval buffer cost, beside the texts: [`frame_tokens`] for the
/// most nodes one `fetch_node_texts` step can hand on (the `top_k` of the search that feeds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FrameCost {
    /// How many nodes: `top_k`, at most one per evidence token.
    pub nodes: usize,
    /// The fewest tokens their frames take ([`frame_tokens`]).
    pub tokens: usize,
}

impl FrameCost {
    /// `nodes` frames taking `tokens` tokens.
    pub fn new(nodes: usize, tokens: usize) -> Self {
        FrameCost { nodes, tokens }
    }
}

/// The most node frames [`frame_tokens`] renders and counts. A retrieval batch of more nodes than
/// this is far beyond any real `top_k`; its frames are counted as this many, a lower bound, so
/// the evidence-budget check still refuses what it must (and the run-time guard of
/// `manage_context_budget` refuses a batch that does not fit).
pub const MAX_FRAMED_NODES: usize = 1_024;

/// The fewest tokens `nodes` node frames take in a context, whatever the nodes: `frame` rendered
/// exactly as `manage_context_budget` renders it, with an empty id, no path and an empty text,
/// of each language a node can be labelled with (`languages`) and each `compact` value, `nodes`
/// times, joined as the context joins its blocks, counted with `counter`; the least of these
/// counts. A node has an id, a path and a text of its own, so a real batch of `nodes` nodes
/// renders to more than this plus its texts; the frame's own text is what this counts. At most
/// [`MAX_FRAMED_NODES`] frames are counted: a larger `nodes` counts that many.
///
/// ```
/// use ctx::budget::{NodeFrame, frame_tokens};
/// use ctx::tokens::{Encoding, TokenCounter};
///
/// let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
/// let one = frame_tokens(&NodeFrame::spec(), 1, &["sql", "unknown"], &counter)?;
/// let ten = frame_tokens(&NodeFrame::spec(), 10, &["sql", "unknown"], &counter)?;
/// assert!(one > 0 && ten > 9 * one);
/// # Ok::<(), ctx::tokens::TokenError>(())
/// ```
pub fn frame_tokens(
    frame: &NodeFrame,
    nodes: usize,
    languages: &[&str],
    counter: &TokenCounter,
) -> Result<usize, TokenError> {
    if nodes == 0 {
        return Ok(0);
    }
    // The frames are rendered and counted, not multiplied out (tokens merge across the joins),
    // so the work grows with `nodes`: a written `top_k` of 10^18 must not become a 10^18-element
    // allocation.
    let nodes = nodes.min(MAX_FRAMED_NODES);
    let empty = NodeText::new("", "");
    let mut fewest: Option<usize> = None;
    for language in languages {
        for compact in [false, true] {
            let one = frame.render(&empty, language, compact, "");
            let blocks = vec![one; nodes];
            let tokens = counter.count(&render_context_blocks(&blocks))?;
            fewest = Some(fewest.map_or(tokens, |f| f.min(tokens)));
        }
    }
    Ok(fewest.unwrap_or(0))
}

/// The languages a node's frame can name in a pipeline that declares the user compactors
/// `declared`: the built-in ones, `unknown` and the declared ones.
pub fn frame_languages(declared: &[String]) -> Vec<&str> {
    crate::lang::BUILTIN_LANGUAGES
        .iter()
        .copied()
        .chain(["unknown"])
        .chain(declared.iter().map(String::as_str))
        .collect()
}

/// The load/compile-time form of the spec's `PIPELINE_BUDGET_MISCONFIG`: the evidence budget of
/// a `fetch_node_texts` step at `fetch_at` (e.g. `steps[1]`) must leave room in the global
/// budget for the frames its nodes are wrapped in. Every fetched node is wrapped in its frame
/// (the `--- NODE ---` header by default) before it joins the context, so
///
/// * an evidence budget equal to or above `max_context_tokens` makes a full retrieval buffer
///   unable to fit even into an empty context;
/// * with `frames` known (the frame's text, the `top_k` of the search feeding the step and the
///   model's tokenizer: see [`frame_tokens`]), `evidence_tokens + frames.tokens` above
///   `max_context_tokens` means that a search returning `top_k` hits that fill the evidence
///   budget fails the run with `PIPELINE_BUDGET_MISCONFIG`, whatever the nodes' ids and paths.
///
/// Non-positive values are left to the validation of their own fields.
pub fn check_evidence_budget(
    evidence_tokens: i64,
    frames: Option<FrameCost>,
    fetch_at: &FieldPath,
    max_context_tokens: i64,
) -> Vec<ConfigIssue> {
    if evidence_tokens <= 0 || max_context_tokens <= 0 {
        return Vec::new();
    }
    if evidence_tokens >= max_context_tokens {
        return vec![
            ConfigIssue::new(
                Code::PipelineBudgetMisconfig,
                fetch_at.key("evidence_tokens"),
                format!(
                    "fetch_node_texts `evidence_tokens: {evidence_tokens}` is not below settings.max_context_tokens \
                     ({max_context_tokens}): a full retrieval buffer, once each node gets its `--- NODE ---` header, \
                     cannot fit the global context budget even with no other context"
                ),
            )
            .with_help(format!(
                "lower `evidence_tokens` (e.g. to {}) so that retrieved evidence and existing context both fit, or \
                 raise settings.max_context_tokens",
                max_context_tokens / 2
            )),
        ];
    }
    let Some(frames) = frames else { return Vec::new() };
    let needed = evidence_tokens.saturating_add(i64::try_from(frames.tokens).unwrap_or(i64::MAX));
    if needed <= max_context_tokens {
        return Vec::new();
    }
    let room = max_context_tokens - evidence_tokens;
    let lower_to = max_context_tokens.saturating_sub(i64::try_from(frames.tokens).unwrap_or(i64::MAX));
    let lower = if lower_to > 0 { format!("lower `evidence_tokens` to at most {lower_to}, ") } else { String::new() };
    vec![
        ConfigIssue::new(
            Code::PipelineBudgetMisconfig,
            fetch_at.key("evidence_tokens"),
            format!(
                "fetch_node_texts `evidence_tokens: {evidence_tokens}` leaves {room} token(s) of \
                 settings.max_context_tokens ({max_context_tokens}) for the frames of its nodes, but the frames of \
                 {n} node(s) (top_k of the search that feeds it) take at least {f} tokens, with empty ids and paths: \
                 a search that returns {n} hits filling the evidence budget needs at least {needed} tokens and fails \
                 the run even with no other context",
                n = frames.nodes,
                f = frames.tokens,
            ),
        )
        .with_help(format!(
            "{lower}lower the search's `top_k`, or raise settings.max_context_tokens to at least {needed}"
        )),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(language: &str, policy: &str, threshold: Option<f64>, inbox_key: Option<&str>) -> CompactRuleSpec {
        CompactRuleSpec {
            language: language.into(),
            policy: policy.into(),
            threshold,
            inbox_key: inbox_key.map(Into::into),
        }
    }

    fn spec(rules: Vec<CompactRuleSpec>) -> ManageBudgetSpec {
        ManageBudgetSpec { compact_code: rules, divide_new_content: None, on_ok: "ok".into(), on_over: "over".into() }
    }

    fn at() -> FieldPath {
        FieldPath::parse("steps[3]")
    }

    fn issues(s: &ManageBudgetSpec) -> Vec<(Code, String)> {
        validate_manage_budget(s, &at()).unwrap_err().into_iter().map(|i| (i.code, i.path.to_string())).collect()
    }

    #[test]
    fn the_spec_example_is_valid() {
        let cfg = validate_manage_budget(
            &spec(vec![
                rule("sql", "demand", None, Some("compact_sql")),
                rule("sql", "threshold", Some(0.4), None),
                rule("dotnet", "always", None, None),
            ]),
            &at(),
        )
        .unwrap();
        assert_eq!(cfg.rules().len(), 3);
        assert_eq!(cfg.demand_keys().collect::<Vec<_>>(), ["compact_sql"]);
        assert_eq!(cfg.rules_for(&RuleLanguage::Sql).map(|(i, _)| i).collect::<Vec<_>>(), [0, 1]);
        assert_eq!((cfg.on_ok(), cfg.on_over()), ("ok", "over"));
    }

    #[test]
    fn every_problem_is_reported_at_its_value() {
        let s = spec(vec![
            rule("python", "sometimes", None, None),
            rule("sql", "threshold", None, None),
            rule("sql", "threshold", Some(0.0), None),
            rule("dotnet", "demand", None, None),
            rule("dotnet", "always", Some(0.5), Some("k")),
            rule("sql", "threshold", Some(f64::NAN), None),
        ]);
        assert_eq!(
            issues(&s),
            [
                (Code::CompactRuleUnknownLanguage, "steps[3].compact_code[0].language".to_owned()),
                (Code::CompactRuleUnknownPolicy, "steps[3].compact_code[0].policy".to_owned()),
                (Code::CompactRuleMissingThreshold, "steps[3].compact_code[1]".to_owned()),
                (Code::CompactRuleThresholdOutOfRange, "steps[3].compact_code[2].threshold".to_owned()),
                (Code::CompactRuleMissingInboxKey, "steps[3].compact_code[3]".to_owned()),
                (Code::CompactRuleKeyNotForPolicy, "steps[3].compact_code[4].threshold".to_owned()),
                (Code::CompactRuleKeyNotForPolicy, "steps[3].compact_code[4].inbox_key".to_owned()),
                (Code::CompactRuleThresholdOutOfRange, "steps[3].compact_code[5].threshold".to_owned()),
            ]
        );
    }

    #[test]
    fn messages_name_the_value_and_help_fixes_it() {
        let s = spec(vec![rule("csharp", "threshold", Some(40.0), None), rule("sql", "alway", None, None)]);
        let all = validate_manage_budget(&s, &at()).unwrap_err();
        assert!(all[0].message.contains("`csharp`"), "{}", all[0]);
        assert!(all[0].help.as_deref().unwrap().contains("did you mean `dotnet`?"), "{}", all[0]);
        assert!(all[1].message.contains("`threshold: 40`"), "{}", all[1]);
        assert!(all[1].help.as_deref().unwrap().contains("did you mean 0.4?"), "{}", all[1]);
        assert!(all[2].help.as_deref().unwrap().contains("did you mean `always`?"), "{}", all[2]);
    }

    #[test]
    fn only_a_whole_number_is_read_as_a_percentage() {
        for (value, hint) in [(1.0001, None), (1.5, None), (2.0, Some("0.02")), (40.0, Some("0.4")), (250.0, None)] {
            let s = spec(vec![rule("sql", "threshold", Some(value), None)]);
            let help = validate_manage_budget(&s, &at()).unwrap_err()[0].help.clone().unwrap_or_default();
            match hint {
                Some(h) => assert!(help.contains(&format!("did you mean {h}?")), "{value}: {help}"),
                None => assert!(!help.contains("did you mean"), "{value}: {help}"),
            }
        }
    }

    #[test]
    fn keys_that_belong_to_another_policy() {
        let s =
            spec(vec![rule("sql", "threshold", Some(0.5), Some("k")), rule("dotnet", "demand", Some(0.2), Some("k"))]);
        assert_eq!(
            issues(&s),
            [
                (Code::CompactRuleKeyNotForPolicy, "steps[3].compact_code[0].inbox_key".to_owned()),
                (Code::CompactRuleKeyNotForPolicy, "steps[3].compact_code[1].threshold".to_owned()),
            ]
        );
    }

    #[test]
    fn shadowed_rules_are_unreachable() {
        let s = spec(vec![
            rule("sql", "always", None, None),
            rule("sql", "threshold", Some(0.4), None),
            rule("dotnet", "threshold", Some(0.3), None),
            rule("dotnet", "threshold", Some(0.5), None),
            rule("dotnet", "demand", None, Some("k")),
            rule("dotnet", "demand", None, Some("k")),
            rule("dotnet", "threshold", Some(0.2), None),
        ]);
        let all = validate_manage_budget(&s, &at()).unwrap_err();
        let paths: Vec<String> = all.iter().map(|i| i.path.to_string()).collect();
        assert_eq!(paths, ["steps[3].compact_code[1]", "steps[3].compact_code[3]", "steps[3].compact_code[5]"]);
        assert!(all.iter().all(|i| i.code == Code::CompactRuleUnreachable));
        assert!(all[0].message.contains("compact_code[0] (sql always) compacts every sql node first"), "{}", all[0]);
        assert_eq!(all[0].help.as_deref(), Some("remove compact_code[1], or move it before compact_code[0]"));
    }

    #[test]
    fn empty_divider_and_empty_inbox_key() {
        let mut s = spec(vec![rule("sql", "demand", None, Some("  "))]);
        s.divide_new_content = Some(String::new());
        assert_eq!(
            issues(&s),
            [
                (Code::CompactRuleEmptyInboxKey, "steps[3].compact_code[0].inbox_key".to_owned()),
                (Code::DivideNewContentEmpty, "steps[3].divide_new_content".to_owned()),
            ]
        );
        s.compact_code.clear();
        s.divide_new_content = Some("<<<New content".into());
        assert_eq!(validate_manage_budget(&s, &at()).unwrap().divide_new_content(), Some("<<<New content"));
    }

    #[test]
    fn evidence_budget_must_leave_room() {
        let fetch = FieldPath::parse("steps[1]");
        assert!(check_evidence_budget(3_000, None, &fetch, 9_000).is_empty());
        let over = check_evidence_budget(9_000, None, &fetch, 9_000);
        assert_eq!(over.len(), 1);
        assert_eq!(over[0].code, "PIPELINE_BUDGET_MISCONFIG");
        assert_eq!(over[0].path.to_string(), "steps[1].evidence_tokens");
        assert!(
            over[0].message.contains("`evidence_tokens: 9000`") && over[0].message.contains("(9000)"),
            "{}",
            over[0]
        );
        assert!(check_evidence_budget(12_000, None, &fetch, 0).is_empty());
        assert!(check_evidence_budget(0, None, &fetch, 10).is_empty());
    }

    /// Issue 26 item 5: 10 nodes of 65 tokens fill a 650-token evidence budget and cannot fit a
    /// 700-token context once framed; the static rule counts the frames with the real tokenizer.
    #[test]
    fn the_frames_of_top_k_nodes_must_fit_beside_the_evidence() {
        use crate::tokens::Encoding;
        let counter = TokenCounter::for_encoding(Encoding::Cl100kBase);
        let fetch = FieldPath::parse("steps[1]");
        let languages = frame_languages(&[]);
        let frames = frame_tokens(&NodeFrame::spec(), 10, &languages, &counter).unwrap();
        // `--- NODE ---\nlanguage: sql\ncompact: false\ntext:\n`, ten times: about 14 tokens each.
        assert!((100..300).contains(&frames), "{frames}");
        let cost = Some(FrameCost::new(10, frames));
        let over = check_evidence_budget(650, cost, &fetch, 700);
        assert_eq!(over.len(), 1, "{over:?}");
        assert_eq!(
            (over[0].code, over[0].path.to_string()),
            (Code::PipelineBudgetMisconfig, "steps[1].evidence_tokens".into())
        );
        assert!(
            over[0].message.contains("leaves 50 token(s)")
                && over[0].message.contains(&format!("at least {frames} tokens")),
            "{}",
            over[0]
        );
        let help = over[0].help.as_deref().unwrap();
        assert!(
            help.contains(&format!("at most {}", 700 - frames as i64))
                && help.contains(&format!("at least {}", 650 + frames)),
            "{help}"
        );
        // Exactly at the limit passes; one token more fails.
        let fits = 700 - frames as i64;
        assert!(check_evidence_budget(fits, cost, &fetch, 700).is_empty());
        assert_eq!(check_evidence_budget(fits + 1, cost, &fetch, 700).len(), 1);

        // What the rule claims: a real batch of 10 nodes filling the budget renders to more than
        // evidence + frames, as `manage_context_budget` renders it, with ids and paths or without.
        let text = "alpha beta gamma delta ".repeat(16);
        let per_node = counter.count(&text).unwrap();
        for with_ids in [false, true] {
            let blocks: Vec<String> = (0..10)
                .map(|i| {
                    let node = if with_ids {
                        NodeText::new(format!("n{i}"), text.clone()).with_path(format!("docs/{i}.md"))
                    } else {
                        NodeText::new("", text.clone())
                    };
                    NodeFrame::spec().render(&node, "markdown", false, &text)
                })
                .collect();
            let rendered = counter.count(&render_context_blocks(&blocks)).unwrap();
            assert!(rendered >= 10 * per_node + frames, "{rendered} < {} + {frames}", 10 * per_node);
        }

        // A custom frame counts as written: a bare `{text}` frame costs only the separators.
        let bare = frame_tokens(&NodeFrame::parse("{text}").unwrap(), 10, &languages, &counter).unwrap();
        let xml = frame_tokens(
            &NodeFrame::parse("<doc id=\"{id}\" lang=\"{language}\">\n{text}\n</doc>").unwrap(),
            10,
            &languages,
            &counter,
        )
        .unwrap();
        assert!(bare < 10 && xml > 10 * 5, "{bare} {xml}");
        assert_eq!(frame_tokens(&NodeFrame::spec(), 0, &languages, &counter).unwrap(), 0);
        // A `top_k` of any size is counted without allocating a frame per written node.
        let most = frame_tokens(&NodeFrame::spec(), MAX_FRAMED_NODES, &languages, &counter).unwrap();
        assert_eq!(frame_tokens(&NodeFrame::spec(), usize::MAX, &languages, &counter).unwrap(), most);
    }
}
