//! `ctx explain`: an error code's meaning, or a pipeline file's budget contract and the
//! worst-case tokens and cost of a run (as text tables, JSON, or an HTML page).

use std::path::Path;
use std::process::ExitCode;

use annotate_snippets::Level;
use ctx::codes::Code;
use ctx::pipeline::yaml::LoadedFile;
use ctx::pipeline::{LoadOptions, LoadedPipeline};

use crate::io::{Format, write_html};
use crate::render::{render, render_as};

/// `target` when it is written like an error code (capitals, digits and `_`) and is not a file.
pub(crate) fn error_code(target: &Path) -> Option<&str> {
    let text = target.to_str()?;
    let code_like = text.starts_with(|c: char| c.is_ascii_uppercase())
        && text.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    (code_like && !target.exists()).then_some(text)
}

/// `ctx explain CODE`, as `rustc --explain`: the code's area and explanation.
pub(crate) fn explain_code(text: &str) -> Result<ExitCode, String> {
    let Some(code) = Code::parse(text) else {
        let near = Code::suggest(text).map(Code::as_str);
        return Err(match near {
            Some(near) => format!("unknown error code `{text}`; did you mean `{near}`?"),
            None => format!("unknown error code `{text}`"),
        });
    };
    outln!("{code} ({} area)\n\n{}", code.area(), code.explanation());
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn explain(file: &LoadedFile, html: Option<&Path>, format: Format) -> Result<ExitCode, String> {
    // The tools MCP servers list now join their steps' tool-schema terms, as in a run.
    let (options, mcp_lines) = crate::mcp::listed_for_explain(file, LoadOptions::from_env())?;
    let pipeline = match LoadedPipeline::load_file(file, options) {
        Ok(p) => p,
        Err(e) => {
            render(e.issues());
            return Ok(ExitCode::FAILURE);
        }
    };
    if let Some(path) = html {
        let page = ctx::report::contract_to_html(pipeline.name(), pipeline.contract_report());
        // The cost table goes at the end of the contract's page.
        let page = match pipeline.cost_bound() {
            Some(bound) => page.replacen("</body>", &format!("{}</body>", cost_html(bound)), 1),
            None => page,
        };
        write_html(path, &page)?;
    }
    let report = pipeline.contract_report();
    if format == Format::Json {
        let cap = pipeline.spend_caps().per_run_nano_usd;
        let json = serde_json::json!({
            "pipeline": pipeline.name(),
            "context_window": pipeline.context_window(),
            "counting": report.counting.to_string(),
            "contract": report,
            "step_bound": pipeline.step_bound(),
            "model_request_bound": pipeline.model_request_bound(),
            "cost": pipeline.cost_bound().map(cost_json),
            "max_cost_per_run_nano_usd": cap,
            "proof": ctx::contract::proof_statement(report, pipeline.cost_bound()),
        });
        outln!("{json:#}");
        return Ok(ExitCode::SUCCESS);
    }
    // The clamps the load made, located in the file, before the table that shows their result.
    let mut warnings = file.warnings();
    warnings.extend(report.clamps.iter().map(|c| file.clamp_warning(c)));
    render_as(&warnings, Level::WARNING);
    outln!("{} — context window {}", pipeline.name(), pipeline.context_window());
    // An estimate (a Claude model counted with a declared tokenizer) must never read as a count.
    outln!("prompt counts: {}", report.counting);
    // With named models each step says which one its window and counts are of.
    let named = !pipeline.named_models().is_empty();
    if named {
        for m in pipeline.named_models() {
            let name = m.config.model.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
            outln!(
                "model `{}`{name}: context window {}, {}",
                m.name,
                m.config.context_window,
                m.config.encoding.name()
            );
        }
    }
    let model_column = if named { " model |" } else { "" };
    let model_rule = if named { "---|" } else { "" };
    outln!(
        "| step |{model_column} fixed prompt | tool schemas | history | context | inputs | tool results | output | margin | total | window |\n|---|{model_rule}---|---|---|---|---|---|---|---|---|---|"
    );
    for s in &report.steps {
        let model = if named { format!(" {} |", s.model.as_deref().unwrap_or("default")) } else { String::new() };
        // An agent's later requests also carry the turn's tool calls and results.
        let tool_results = s.worst_request_tokens.saturating_sub(s.total_tokens());
        outln!(
            "| {} |{model} {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.step_id,
            s.fixed_prompt_tokens,
            s.tool_schema_tokens,
            s.history_tokens,
            s.context_tokens,
            s.input_tokens,
            tool_results,
            s.output_tokens,
            s.safety_margin_tokens,
            s.worst_request_tokens,
            s.context_window
        );
    }
    for line in &mcp_lines {
        outln!("{line}");
    }
    // Each input's budget and where it comes from: a default says so.
    for b in &report.inputs {
        outln!("input {}: at most {} tokens ({})", b.label(), b.tokens, b.origin.describe());
    }
    // The step bound holds from any state (a resumed run is held to it); the requests are those
    // of a run from the first step, as the cost bound counts them.
    outln!(
        "at most {} steps per run, from any state, and {} per run from the first step",
        pipeline.step_bound(),
        requests(pipeline.model_request_bound())
    );
    print_cost(&pipeline);
    for line in ctx::contract::proof_statement(report, pipeline.cost_bound()) {
        outln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The worst-case tokens and cost of a run, step by step (`ctx explain`).
fn print_cost(pipeline: &LoadedPipeline) {
    use ctx::contract::usd;
    let Some(bound) = pipeline.cost_bound() else {
        outln!("worst-case cost: a model has no price (give it a `price` block to bound what a run costs)");
        return;
    };
    // A step that costs nothing says why, in a column of its own when one does.
    let why = bound.steps.iter().any(|s| s.unpaid.is_some());
    let (why_head, why_rule) = if why { (" why it costs nothing |", "---|") } else { ("", "") };
    let why_cell = |s: &ctx::contract::StepCost| match (why, &s.unpaid) {
        (false, _) => String::new(),
        (true, Some(u)) => format!(" {} |", u.describe()),
        (true, None) => " |".to_owned(),
    };
    if pipeline.named_models().is_empty() {
        outln!(
            "\nworst-case cost per run, input tokens at {} and output tokens at {}/M:",
            input_rate(&bound.price),
            usd(ctx::contract::nano_usd(bound.price.output))
        );
        outln!(
            "| step | runs | requests per run | input tokens per request | output tokens per request | per request | cost |{why_head}\n|---|---|---|---|---|---|---|{why_rule}"
        );
        for s in &bound.steps {
            outln!("| {} | {} |{}", s.step_id, cost_cells(s).join(" | "), why_cell(s));
        }
    } else {
        // Each step at its own model's price.
        outln!("\nworst-case cost per run, each step at its model's price:");
        outln!(
            "| step | model | input tokens at | output $/M | runs | requests per run | input tokens per request | output tokens per request | per request | cost |{why_head}\n|---|---|---|---|---|---|---|---|---|---|{why_rule}"
        );
        for s in &bound.steps {
            outln!(
                "| {} | {} | {} | {} | {} |{}",
                s.step_id,
                s.model.as_deref().unwrap_or("default"),
                input_rate(&s.price),
                usd(ctx::contract::nano_usd(s.price.output)),
                cost_cells(s).join(" | "),
                why_cell(s)
            );
        }
    }
    let (input, output) = bound.steps.iter().fold((0u64, 0u64), |(i, o), s| {
        let n = s.requests();
        (
            i.saturating_add(n.saturating_mul(s.input_tokens as u64)),
            o.saturating_add(n.saturating_mul(s.output_tokens as u64)),
        )
    });
    let exact = if bound.exact { "" } else { " (an upper bound: the loop limits are too large for the exact one)" };
    outln!(
        "at most {} per run{exact}: {}, {input} input and {output} output tokens",
        usd(bound.nano_usd),
        requests(bound.requests)
    );
    if let Some(seeded) = bound.seeded_nano_usd {
        outln!("{}", seeded_note(bound, seeded));
    }
    if let Some(cap) = pipeline.spend_caps().per_run_nano_usd {
        outln!("max_cost_per_run {}: {} left at worst", usd(cap), usd(cap.saturating_sub(bound.nano_usd)));
    }
    outln!("{}", ratio_note(pipeline));
}

/// The rate a worst case prices input tokens at, named: the input price, or the cache-write rate
/// with the input price beside it when the provider bills cache writes higher.
fn input_rate(price: &ctx::config::Price) -> String {
    use ctx::contract::{nano_usd, usd};
    if price.worst_input() > price.input {
        format!(
            "the cache-write rate {}/M (input price {}/M)",
            usd(nano_usd(price.worst_input())),
            usd(nano_usd(price.input))
        )
    } else {
        format!("the input price {}/M", usd(nano_usd(price.input)))
    }
}

/// What a run whose caller fills the context before it starts can cost, when the bound leaves
/// out an `on_over` only such a run takes.
fn seeded_note(bound: &ctx::contract::CostBound, seeded: u64) -> String {
    let steps: Vec<String> = bound.never_taken_on_over.iter().map(|s| format!("`{s}`")).collect();
    format!(
        "that is for a run that starts with an empty context, as each question of a conversation does; a run whose \
         caller fills the context first can take `on_over` of {} and cost up to {} (the spend caps hold it to \
         max_cost_per_run)",
        steps.join(", "),
        ctx::contract::usd(seeded)
    )
}

/// `1 model request`, `4 model requests`.
fn requests(n: u64) -> String {
    if n == 1 { "1 model request".to_owned() } else { format!("{n} model requests") }
}

/// What the run-time spend caps assume of the provider's count, under the cost table.
fn ratio_note(pipeline: &LoadedPipeline) -> String {
    format!(
        "counted tokens, priced at billed_token_ratio {r} (the most a provider is assumed to bill per counted \
         token); at run time the spend caps price each request at max({r}, the highest billed-to-counted ratio \
         the provider's usage has shown for its model) × its exact count",
        r = pipeline.billed_token_ratio()
    )
}

/// A step's cells of the worst-case cost table after its id: runs, requests per run, input and
/// output tokens per request, cost per request, cost of its runs.
fn cost_cells(s: &ctx::contract::StepCost) -> [String; 6] {
    use ctx::contract::usd;
    [
        s.runs.to_string(),
        s.requests_per_run.to_string(),
        s.input_tokens.to_string(),
        s.output_tokens.to_string(),
        usd(s.request_nano_usd),
        usd(s.nano_usd),
    ]
}

/// The worst-case cost as an HTML section: the same table as the text, every value escaped.
/// With several models the line above it names each model's prices, and each step its model.
fn cost_html(bound: &ctx::contract::CostBound) -> String {
    use ctx::contract::usd;
    let escape = ctx::report::escape;
    let rates = |p: &ctx::config::Price| {
        format!("input tokens at {}, output tokens at {}/M", input_rate(p), usd(ctx::contract::nano_usd(p.output)))
    };
    // Each model the steps use, once, in the order of the steps.
    let mut models: Vec<(Option<&str>, ctx::config::Price)> = Vec::new();
    for s in &bound.steps {
        if !models.iter().any(|(m, _)| *m == s.model.as_deref()) {
            models.push((s.model.as_deref(), s.price));
        }
    }
    let prices = match models.as_slice() {
        [] | [(None, _)] => escape(&rates(&bound.price)),
        several => several
            .iter()
            .map(|(m, p)| match m {
                Some(m) => format!("model <code>{}</code>: {}", escape(m), escape(&rates(p))),
                None => format!("the default model: {}", escape(&rates(p))),
            })
            .collect::<Vec<_>>()
            .join("; "),
    };
    let why = bound.steps.iter().any(|s| s.unpaid.is_some());
    let mut html = format!(
        "<h2>Worst-case cost of a run</h2>\n<p class=\"meta\">{prices}: at most {} per run, {}{}.</p>\n<table>\n<tr><th>step</th><th class=\"n\">runs</th><th class=\"n\">requests per run</th><th class=\"n\">input tokens</th><th class=\"n\">output tokens</th><th class=\"n\">per request</th><th class=\"n\">cost</th>{}</tr>\n",
        usd(bound.nano_usd),
        requests(bound.requests),
        if bound.exact { "" } else { " (an upper bound)" },
        if why { "<th>why it costs nothing</th>" } else { "" },
    );
    for s in &bound.steps {
        let cells: String = cost_cells(s).iter().map(|c| format!("<td class=\"n\">{c}</td>")).collect();
        // A step on a named model says so.
        let model = s.model.as_ref().map(|m| format!(" <small>on model <code>{}</code></small>", escape(m)));
        let unpaid = match (why, &s.unpaid) {
            (false, _) => String::new(),
            (true, u) => format!("<td>{}</td>", escape(&u.as_ref().map(|u| u.describe()).unwrap_or_default())),
        };
        html.push_str(&format!(
            "<tr data-step=\"{}\"><td><code>{}</code>{}</td>{cells}{unpaid}</tr>\n",
            escape(&s.step_id),
            escape(&s.step_id),
            model.unwrap_or_default()
        ));
    }
    html.push_str("</table>\n");
    if let Some(seeded) = bound.seeded_nano_usd {
        html.push_str(&format!("<p class=\"meta\">{}</p>\n", escape(&seeded_note(bound, seeded))));
    }
    html
}

/// The cost bound as JSON, with the dollars written out next to the billionths.
fn cost_json(bound: &ctx::contract::CostBound) -> serde_json::Value {
    let mut json = serde_json::to_value(bound).unwrap_or_default();
    json["usd"] = serde_json::json!(bound.usd());
    json
}
