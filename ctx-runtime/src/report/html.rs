//! The report as one self-contained HTML page: inline CSS and SVG, no script, no font or image
//! from anywhere, so it opens offline, in a mail attachment or a CI artifact, with JavaScript off.
//!
//! Every text that comes from a run or a definition (step ids, labels, previews of the prompt,
//! the model's name) goes through [`escape`]; nothing else is interpolated. The numbers are also
//! written as `data-` attributes (`data-exact`, `data-window`, `data-tokens`), so a test can read
//! them back from the rendered page.

use std::fmt::Write as _;

use crate::contract::{ContractReport, StepBudget};

use super::anatomy::{PartKind, RequestAnatomy, RequestPart};
use super::cost::{RequestCost, usd};
use super::run::{RequestEntry, RunReport};

/// The width of a bar, in SVG user units: the whole window.
const BAR_WIDTH: f64 = 960.0;

/// Escapes `text` for HTML text and attribute values (double- or single-quoted).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1040px; color: #1e272e; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #d2dae2; }
h3 { font-size: 1em; margin: .8em 0 .3em; }
.meta { color: #57606f; }
table { border-collapse: collapse; margin: .4em 0 1em; font-variant-numeric: tabular-nums; }
td, th { padding: 2px 10px 2px 4px; text-align: left; vertical-align: top; border-bottom: 1px solid #eef1f4; }
td.n, th.n { text-align: right; }
.preview { color: #57606f; font-family: ui-monospace, monospace; font-size: 12px; max-width: 520px; overflow-wrap: anywhere; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 2px; vertical-align: -2px; margin-right: 4px; }
.grid { display: flex; flex-wrap: wrap; gap: 0 2em; }
.ok { color: #218c74; } .warn { color: #b33939; }
ol.timeline { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 4px; }
ol.timeline li { border: 1px solid #d2dae2; border-radius: 4px; padding: 2px 6px; background: #f7f9fb; }
ol.timeline .kind { color: #57606f; font-size: 12px; } ol.timeline .to { color: #57606f; font-size: 12px; }
ol.timeline li.model { background: #e8f6f3; border-color: #9bd3c6; }
svg.bar { width: 100%; height: auto; display: block; }
section.request { margin-bottom: 2.5em; }
.legend span { margin-right: 1em; white-space: nowrap; }
"#;

/// The colour of a part of the window.
fn colour(kind: PartKind) -> &'static str {
    match kind {
        PartKind::System => "#6c5ce7",
        PartKind::Tools => "#a29bfe",
        PartKind::History => "#0984e3",
        PartKind::Context => "#00b894",
        PartKind::Question => "#f9ca24",
        PartKind::ToolTurn => "#e17055",
        PartKind::ChatFormat => "#636e72",
        PartKind::Unsplit => "#95a5a6",
        PartKind::Output => "#d63031",
        PartKind::Margin => "#fab1a0",
        _ => "#dfe6e9",
    }
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        escape(title)
    )
}

/// A stacked bar of the window: one rectangle per part, its exact count in its `<title>` (shown
/// on hover). Parts of no tokens take no room.
pub(crate) fn bar(parts: &[RequestPart], window: usize) -> String {
    let total: usize = parts.iter().map(|p| p.tokens).sum::<usize>().max(window).max(1);
    let mut svg = format!(
        "<svg class=\"bar\" viewBox=\"0 0 {BAR_WIDTH} 40\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"window of {window} tokens\">\n"
    );
    // Positions in hundredths of a unit, from the cumulative counts: the widths add up to the
    // bar exactly, whatever the rounding.
    let width_units = (BAR_WIDTH * 100.0) as u128;
    let at = |tokens: usize| (tokens as u128 * width_units / total as u128) as u64;
    let hundredths = |n: u64| format!("{}.{:02}", n / 100, n % 100);
    let mut cumulative = 0usize;
    for p in parts {
        let start = at(cumulative);
        cumulative += p.tokens;
        if p.tokens == 0 {
            continue;
        }
        let end = at(cumulative);
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"0\" width=\"{}\" height=\"40\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.6\" data-kind=\"{}\" data-tokens=\"{}\"><title>{}: {} tokens</title></rect>",
            hundredths(start),
            hundredths(end - start),
            colour(p.kind),
            p.kind.name(),
            p.tokens,
            escape(&p.label),
            p.tokens
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The parts as a table, one row each, in the window's order; with `cost`, each prompt part's
/// cached tokens and price. The reserved output is a share of the window, not a bill: with
/// `cost`, the output generated follows it on a row of its own, with its tokens and its price.
fn parts_table(parts: &[RequestPart], prompt_kinds: bool, cost: Option<&RequestCost>) -> String {
    let mut t = String::from("<table class=\"parts\">\n<tr><th>part</th><th class=\"n\">tokens</th>");
    if cost.is_some() {
        t.push_str("<th class=\"n\">cached</th><th class=\"n\">price</th>");
    }
    // The text of each part, when there is any: the contract's parts are budgets, with none.
    let texts = parts.iter().any(|p| !p.preview.is_empty());
    t.push_str(if texts { "<th>text</th></tr>\n" } else { "</tr>\n" });
    for (i, p) in parts.iter().enumerate() {
        let class = match p.kind {
            PartKind::Output | PartKind::Margin | PartKind::Free => "window",
            _ if prompt_kinds => "prompt",
            _ => "window",
        };
        let priced = match cost {
            Some(c) => match (c.parts.get(i), p.kind) {
                (Some(part), _) => format!(
                    "<td class=\"n\">{}</td><td class=\"n\" data-nano-usd=\"{}\" title=\"{} cached, {} written to the cache, {} input\">{}</td>",
                    part.cached_tokens,
                    part.nano_usd,
                    part.cached_tokens,
                    part.cache_write_tokens,
                    part.uncached_tokens,
                    usd(part.nano_usd)
                ),
                (None, PartKind::Output) => {
                    "<td></td><td class=\"n\" title=\"reserved, not billed: the output generated is priced on the next row\">—</td>".to_owned()
                }
                _ => "<td></td><td></td>".to_owned(),
            },
            None => String::new(),
        };
        let _ = writeln!(
            t,
            "<tr class=\"part {class}\" data-kind=\"{}\" data-tokens=\"{}\"><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td class=\"n\">{}</td>{priced}{}</tr>",
            p.kind.name(),
            p.tokens,
            colour(p.kind),
            escape(&p.label),
            p.tokens,
            if texts { format!("<td class=\"preview\">{}</td>", escape(&p.preview)) } else { String::new() }
        );
        if let (Some(c), PartKind::Output) = (cost, p.kind) {
            let _ = writeln!(
                t,
                "<tr class=\"generated\" data-generated=\"{}\"><td>generated output (of the {} reserved)</td><td class=\"n\">{}</td><td></td><td class=\"n\" data-nano-usd=\"{}\" title=\"{} tokens generated\">{}</td>{}</tr>",
                c.output_tokens,
                p.tokens,
                c.output_tokens,
                c.output_nano_usd,
                c.output_tokens,
                usd(c.output_nano_usd),
                if texts { "<td></td>" } else { "" }
            );
        }
    }
    t.push_str("</table>\n");
    t
}

fn legend() -> String {
    let kinds = [
        (PartKind::System, "system prompt"),
        (PartKind::Tools, "tool schemas"),
        (PartKind::History, "history"),
        (PartKind::Context, "context"),
        (PartKind::Question, "question"),
        (PartKind::ToolTurn, "tool calls of the turn"),
        (PartKind::ChatFormat, "chat format"),
        (PartKind::Output, "reserved output"),
        (PartKind::Margin, "safety margin"),
        (PartKind::Free, "free"),
    ];
    let mut out = String::from("<p class=\"legend\">");
    for (kind, name) in kinds {
        let _ = write!(out, "<span><span class=\"swatch\" style=\"background:{}\"></span>{name}</span>", colour(kind));
    }
    out.push_str("</p>\n");
    out
}

impl RunReport {
    /// The report as one self-contained HTML page (see the module documentation of
    /// `report::html`): the timeline of the steps, then each model request's window as a
    /// stacked bar and a table, what changed since the request before it, ctx's count next to
    /// the server's, and the contract's worst case next to the request.
    pub fn to_html(&self) -> String {
        let mut b = String::new();
        let _ = writeln!(b, "<h1>Run of <code>{}</code></h1>", escape(&self.pipeline));
        // With named models, each model the requests used, with its window.
        let model_of = |r: &RequestEntry| self.steps.get(r.step_index).and_then(|s| s.model.as_deref());
        let windows = windows_line(self.requests.iter().map(|r| (model_of(r), r.anatomy.context_window)));
        let _ = writeln!(
            b,
            "<p class=\"meta\">model {} · {} · prompt counts {} · {} step(s), {} model request(s)</p>",
            escape(self.model.as_deref().unwrap_or("(unnamed)")),
            windows.unwrap_or_else(|| format!("context window {} tokens", self.context_window)),
            escape(&self.counting),
            self.steps.len(),
            self.requests.len()
        );
        b.push_str("<h2>Steps</h2>\n<ol class=\"timeline\">\n");
        for (i, s) in self.steps.iter().enumerate() {
            let model = if self.requests.iter().any(|r| r.step_index == i) { " class=\"model\"" } else { "" };
            let _ = writeln!(
                b,
                "<li{model} title=\"{}\">{}. <b>{}</b> <span class=\"kind\">{}</span> <span class=\"to\">—{}→ {}</span></li>",
                escape(&s.summary),
                i + 1,
                escape(&s.step_id),
                escape(&s.kind),
                escape(&s.transition_key),
                escape(&s.target)
            );
        }
        b.push_str("</ol>\n<table class=\"steps\">\n<tr><th>#</th><th>step</th><th>kind</th><th>transition</th><th>what it did</th></tr>\n");
        for (i, s) in self.steps.iter().enumerate() {
            let _ = writeln!(
                b,
                "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{} → {}</td><td>{}</td></tr>",
                i + 1,
                escape(&s.step_id),
                escape(&s.kind),
                escape(&s.transition_key),
                escape(&s.target),
                escape(&s.summary)
            );
        }
        b.push_str("</table>\n<h2>Model requests</h2>\n");
        b.push_str(&legend());
        for (n, r) in self.requests.iter().enumerate() {
            b.push_str(&request_section(n + 1, r, model_of(r)));
        }
        page(&format!("ctx run of {}", self.pipeline), &b)
    }
}

/// One request's section; `model` is its step's named model.
fn request_section(number: usize, r: &RequestEntry, model: Option<&str>) -> String {
    let a = &r.anatomy;
    let mut s = format!(
        "<section class=\"request\" id=\"request-{number}\" data-step=\"{}\" data-exact=\"{}\" data-window=\"{}\"{}>\n",
        escape(&r.step_id),
        a.prompt_tokens,
        a.context_window,
        model_attribute(model)
    );
    let _ = writeln!(
        s,
        "<h3>Request {number}: <code>{}</code>{}{} — {} prompt + {} output reserved of {} tokens{}</h3>",
        escape(&r.step_id),
        on_model(model),
        if r.number_in_step > 1 { format!(" (call {})", r.number_in_step) } else { String::new() },
        a.prompt_tokens,
        a.max_output_tokens,
        a.context_window,
        r.completion_tokens.map(|c| format!("; {c} generated")).unwrap_or_default()
    );
    let parts = a.window_parts();
    s.push_str(&bar(&parts, a.context_window));
    s.push_str("<div class=\"grid\">\n<div>\n");
    s.push_str(&parts_table(&parts, true, r.cost.as_ref()));
    s.push_str("</div>\n<div>\n<h3>Counts</h3>\n<table class=\"counts\">\n");
    let _ = writeln!(s, "<tr><td>ctx's exact count</td><td class=\"n\">{}</td></tr>", a.prompt_tokens);
    match r.server_prompt_tokens {
        Some(server) => {
            let diff = server as i64 - a.prompt_tokens as i64;
            let class = if diff == 0 { "ok" } else { "warn" };
            let _ = writeln!(
                s,
                "<tr><td>the server's count</td><td class=\"n\">{server}</td></tr>\n<tr><td>difference</td><td class=\"n {class}\">{diff:+}</td></tr>"
            );
            // What the spend caps learn from this request: billed over counted, never priced
            // below 1 (`pipeline::spend`).
            if a.prompt_tokens > 0 {
                let ratio = server as f64 / a.prompt_tokens as f64;
                let _ = writeln!(
                    s,
                    "<tr><td>billed per counted token (the spend caps price later prompts at it when above 1)</td><td class=\"n {class}\">{ratio:.3}</td></tr>"
                );
            }
        }
        None => s.push_str("<tr><td>the server's count</td><td class=\"n\">not reported</td></tr>\n"),
    }
    if let Some(c) = r.completion_tokens {
        let _ = writeln!(
            s,
            "<tr><td>generated (of the {} reserved)</td><td class=\"n\">{c}</td></tr>",
            a.max_output_tokens
        );
    }
    s.push_str("</table>\n");
    if let Some(c) = &r.cost {
        s.push_str(&cost_table(c));
    }
    if let Some(w) = &r.worst_case {
        s.push_str(&worst_case_table(w, a));
    }
    s.push_str("<h3>Changed since the previous request</h3>\n");
    if r.changes.is_empty() {
        s.push_str("<p class=\"meta\">nothing dropped, compacted, summarised or trimmed</p>\n");
    } else {
        s.push_str("<table class=\"changes\">\n<tr><th>change</th><th>what</th><th>by</th></tr>\n");
        for c in &r.changes {
            let _ = writeln!(
                s,
                "<tr data-change=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>",
                c.kind.name(),
                c.kind.name(),
                escape(&c.what),
                escape(&c.by)
            );
        }
        s.push_str("</table>\n");
    }
    s.push_str("</div>\n</div>\n</section>\n");
    s
}

/// The contract's worst case of the step beside the request, term by term, each row comparing
/// like with like (its `data-worst` and `data-sent`).
///
/// The contract's fixed prompt counts the system prompt, the `user_parts` templates with `{}`
/// empty and the chat format. In the request the templates' text is counted with the value it
/// frames (the context, the question), so the fixed prompt's row compares the parts that are
/// the fixed prompt's alone: the system prompt and the reply priming. The question and the other
/// `user_parts` values outside the context are compared with the sum of their budgets
/// (`contract::inputs`); an agent's tool calls and results of the turn with what its turn budget
/// adds to the worst request, and the total with that worst request.
fn worst_case_table(w: &StepBudget, a: &RequestAnatomy) -> String {
    let mut s = String::from(
        "<h3>Worst case (contract) and this request</h3>\n<table class=\"worst\">\n<tr><th>term</th><th class=\"n\">worst case</th><th class=\"n\">sent</th></tr>\n",
    );
    let question = a.tokens_of(PartKind::Question) + a.tokens_of(PartKind::Unsplit);
    let inputs = inputs_label(w);
    let rows = [
        (
            "fixed prompt: the system prompt and the chat format (the templates' text is sent with the context and the question)",
            w.fixed_prompt_tokens,
            a.tokens_of(PartKind::System) + a.tokens_of(PartKind::ChatFormat),
        ),
        ("tool schemas", w.tool_schema_tokens, a.tokens_of(PartKind::Tools)),
        ("history", w.history_tokens, a.tokens_of(PartKind::History)),
        ("context (with its template's text)", w.context_tokens, a.tokens_of(PartKind::Context)),
        (inputs.as_str(), w.input_tokens, question),
        (
            "tool calls and results of the turn (within the turn budget)",
            w.worst_request_tokens.saturating_sub(w.total_tokens()),
            a.tokens_of(PartKind::ToolTurn),
        ),
        ("output", w.output_tokens, a.max_output_tokens),
        ("safety margin (kept free)", w.safety_margin_tokens, a.margin_in_window()),
        ("total", w.worst_request_tokens, a.prompt_tokens + a.max_output_tokens + a.margin_in_window()),
    ];
    for (name, worst, sent) in rows {
        let _ = writeln!(
            s,
            "<tr class=\"term\" data-worst=\"{worst}\" data-sent=\"{sent}\"><td>{name}</td><td class=\"n\">{worst}</td><td class=\"n\">{sent}</td></tr>"
        );
    }
    let _ = writeln!(
        s,
        "<tr><td>window</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n</table>",
        w.context_window, a.context_window
    );
    s
}

/// The label of a step's input term: `question and other values (question ≤ 2000 (max_question_tokens))`.
fn inputs_label(w: &StepBudget) -> String {
    if w.inputs.is_empty() {
        return "question and other values: none rendered".to_owned();
    }
    let each: Vec<String> =
        w.inputs.iter().map(|b| format!("{} ≤ {} ({})", b.label(), b.tokens, b.origin.describe())).collect();
    format!("question and other values, each within its budget: {}", each.join(", "))
}

/// A request's price: the cached prefix, the prompt's and the output's prices, and the bill.
fn cost_table(c: &RequestCost) -> String {
    let prompt: u64 = c.parts.iter().map(|p| p.nano_usd).sum();
    let mut s = format!(
        "<h3>Cost</h3>\n<table class=\"cost\" data-nano-usd=\"{}\" data-cached=\"{}\">\n<tr><td>cached prefix (read from the prompt cache)</td><td class=\"n\">{} tokens</td></tr>\n",
        c.nano_usd, c.cached_prefix_tokens, c.cached_prefix_tokens
    );
    if c.cache_write_tokens > 0 {
        let _ = writeln!(
            s,
            "<tr><td>written to the prompt cache</td><td class=\"n\">{} tokens</td></tr>",
            c.cache_write_tokens
        );
    }
    let _ = writeln!(
        s,
        "<tr><td>prompt</td><td class=\"n\">{}</td></tr>\n<tr><td>output generated ({} tokens)</td><td class=\"n\">{}</td></tr>\n<tr><td>request</td><td class=\"n\">{}</td></tr>",
        usd(prompt),
        c.output_tokens,
        usd(c.output_nano_usd),
        usd(c.nano_usd)
    );
    if c.billed_nano_usd != c.nano_usd {
        let _ = writeln!(
            s,
            "<tr><td>billed (the provider counted the prompt differently)</td><td class=\"n warn\">{}</td></tr>",
            usd(c.billed_nano_usd)
        );
    }
    let _ = writeln!(
        s,
        "<tr><td>tokens priced</td><td class=\"n\">{}</td></tr>\n</table>",
        if c.reported { "the provider's usage" } else { "ctx's exact counts" }
    );
    s
}

/// The windows of the models a page's requests use, for its header: `None` when every request
/// is on the default model (the caller writes its one window), else each model with its window,
/// in order of first use (`context windows: the default model 8192 tokens, model <code>big</code>
/// 128000 tokens`).
fn windows_line<'a>(requests: impl Iterator<Item = (Option<&'a str>, usize)>) -> Option<String> {
    let mut seen: Vec<(Option<&str>, usize)> = Vec::new();
    for r in requests {
        if !seen.contains(&r) {
            seen.push(r);
        }
    }
    if seen.iter().all(|(m, _)| m.is_none()) {
        return None;
    }
    let each: Vec<String> = seen
        .iter()
        .map(|(m, w)| match m {
            Some(m) => format!("model <code>{}</code> {w} tokens", escape(m)),
            None => format!("the default model {w} tokens"),
        })
        .collect();
    Some(format!("context windows: {}", each.join(", ")))
}

/// ` on model <code>big</code>` after a step's name, for a step on a named model.
fn on_model(model: Option<&str>) -> String {
    model.map(|m| format!(" on model <code>{}</code>", escape(m))).unwrap_or_default()
}

/// The `data-model` attribute of a step on a named model.
fn model_attribute(model: Option<&str>) -> String {
    model.map(|m| format!(" data-model=\"{}\"", escape(m))).unwrap_or_default()
}

/// The contract of a pipeline as a page: each model step's worst-case request drawn as a stacked
/// bar of the window (fixed prompt, tool schemas, history and context budgets, output, margin,
/// what is left), from the definition alone. `pipeline` names the page.
pub fn contract_to_html(pipeline: &str, contract: &ContractReport) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "<h1>Budget contract of <code>{}</code></h1>", escape(pipeline));
    let windows = windows_line(contract.steps.iter().map(|w| (w.model.as_deref(), w.context_window)));
    let _ = writeln!(
        b,
        "<p class=\"meta\">{} · max_context_tokens {} · limits policy {} · prompt counts {}. Each bar is the largest request a step can send, as the contract proved it for every run.</p>",
        windows.unwrap_or_else(|| format!("context window {} tokens", contract.context_window)),
        contract.max_context_tokens,
        // As the settings write it (`fail_fast`), not as Rust names the variant.
        contract.policy.name(),
        escape(&contract.counting.to_string())
    );
    // What is proven, for which inputs, and what it assumes (the cost is added by the caller
    // that knows the price).
    for line in crate::contract::proof_statement(contract, None) {
        let _ = writeln!(b, "<p class=\"proof\">{}</p>", escape(&line));
    }
    b.push_str(&legend());
    for w in &contract.steps {
        let parts = vec![
            RequestPart::new(
                PartKind::System,
                "fixed prompt (system prompt, user_parts templates, chat format)",
                w.fixed_prompt_tokens,
            ),
            RequestPart::new(PartKind::Tools, "tool schemas", w.tool_schema_tokens),
            RequestPart::new(PartKind::History, "max_history_tokens", w.history_tokens),
            RequestPart::new(PartKind::Context, "max_context_tokens", w.context_tokens),
            RequestPart::new(PartKind::Question, inputs_label(w), w.input_tokens),
            RequestPart::new(
                PartKind::ToolTurn,
                "tool calls and results of the turn (turn budget)",
                w.worst_request_tokens.saturating_sub(w.total_tokens()),
            ),
            RequestPart::new(PartKind::Output, format!("output ({})", w.output_source.describe()), w.output_tokens),
            RequestPart::new(PartKind::Margin, "budget_safety_margin_tokens", w.safety_margin_tokens),
            RequestPart::new(PartKind::Free, "headroom", w.context_window.saturating_sub(w.worst_request_tokens)),
        ];
        let _ = writeln!(
            b,
            "<section class=\"request worst-case\" data-step=\"{}\" data-exact=\"{}\" data-window=\"{}\"{}>\n<h3><code>{}</code>{}: {} of {} tokens at most{}</h3>",
            escape(&w.step_id),
            w.worst_request_tokens,
            w.context_window,
            model_attribute(w.model.as_deref()),
            escape(&w.step_id),
            on_model(w.model.as_deref()),
            w.worst_request_tokens,
            w.context_window,
            if w.max_model_requests > 1 {
                format!(", up to {} requests per visit", w.max_model_requests)
            } else {
                String::new()
            }
        );
        b.push_str(&bar(&parts, w.context_window));
        b.push_str(&parts_table(&parts, false, None));
        if let Some(turn) = w.turn_budget_tokens {
            let _ = writeln!(b, "<p class=\"meta\">turn budget: {turn} tokens for the messages of the turn</p>");
        }
        for c in contract.clamps.iter().filter(|c| c.step_id == w.step_id) {
            let _ = writeln!(b, "<p class=\"warn\">clamped: {} → {} ({})</p>", c.before, c.after, escape(&c.reason));
        }
        b.push_str("</section>\n");
    }
    page(&format!("ctx contract of {pipeline}"), &b)
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
