//! The constructor code of a `PipelineDef`: the generated `definition()` rebuilds, at run time,
//! exactly the values the macro validated at compile time.

use ctx_spec::params::{ModelParams, ResponseFormat};
use ctx_spec::pipeline::{
    CallModelSpec, CompactRuleSpec, ModelSource, PipelineDef, SetValueSpec, SettingsSpec, StepDef, StepKind,
    UserPartSpec,
};
use proc_macro2::TokenStream;
use quote::quote;

use crate::lower::PromptCode;

fn string(s: &str) -> TokenStream {
    quote!(::std::string::String::from(#s))
}

fn opt<T>(value: &Option<T>, f: impl Fn(&T) -> TokenStream) -> TokenStream {
    match value {
        Some(v) => {
            let inner = f(v);
            quote!(::core::option::Option::Some(#inner))
        }
        None => quote!(::core::option::Option::None),
    }
}

fn opt_string(value: &Option<String>) -> TokenStream {
    opt(value, |s| string(s))
}

fn opt_i64(value: &Option<i64>) -> TokenStream {
    opt(value, |n| quote!(#n))
}

/// The expression building `def`; prompts come from `prompts` so `include_str!` stays one.
/// `rt` is the path of the hidden module the generated code names (`::ctx::__private`).
pub(crate) fn definition(def: &PipelineDef, prompts: &[PromptCode], rt: &TokenStream) -> TokenStream {
    let p = &quote!(#rt::pipeline);
    let name = &def.name;
    let model = model(p, &def.model);
    let settings = settings(p, &def.settings);
    let prompts = def.prompts.iter().zip(prompts).map(|(spec, code)| {
        let key = &spec.key;
        let text = match code {
            PromptCode::Literal(text) => {
                let text = string(text);
                quote!(::core::option::Option::Some(#text))
            }
            PromptCode::Include(tokens) => {
                quote!(::core::option::Option::Some(::std::string::String::from(#tokens)))
            }
            PromptCode::AtLoad => quote!(::core::option::Option::None),
        };
        quote!(#p::PromptSpec::new(::std::string::String::from(#key), #text))
    });
    let steps = def.steps.iter().map(|s| step(rt, s));
    quote! {
        #p::PipelineDef::new(::std::string::String::from(#name))
            .model(#model)
            .settings(#settings)
            .prompts(::std::vec![#(#prompts),*])
            .steps(::std::vec![#(#steps),*])
    }
}

fn model(p: &TokenStream, model: &ModelSource) -> TokenStream {
    match model {
        ModelSource::Inline(spec) => {
            let model = opt_string(&spec.model);
            let window = opt_i64(&spec.context_window);
            let max_tokens = opt_i64(&spec.max_tokens);
            let encoding = opt_string(&spec.encoding);
            let tokenizer = opt_string(&spec.tokenizer);
            quote! {
                #p::ModelSource::Inline(
                    #p::ModelSpec::default()
                        .model(#model)
                        .context_window(#window)
                        .max_tokens(#max_tokens)
                        .encoding(#encoding)
                        .tokenizer(#tokenizer)
                )
            }
        }
        ModelSource::ConfigFile(file) => {
            let file = string(file);
            quote!(#p::ModelSource::ConfigFile(#file))
        }
    }
}

fn settings(p: &TokenStream, s: &SettingsSpec) -> TokenStream {
    let max_context = opt_i64(&s.max_context_tokens);
    let max_history = opt_i64(&s.max_history_tokens);
    let margin = opt_i64(&s.budget_safety_margin_tokens);
    let policy = opt_string(&s.limits_policy);
    let extra = s.extra.iter().map(|(k, v)| quote!((::std::string::String::from(#k), #v)));
    let compactors = s.compactors.iter().map(|c| quote!(::std::string::String::from(#c)));
    let frame = opt_string(&s.node_frame);
    // Only when written, so the expansion of every other pipeline is unchanged.
    let carry = s.carry_context.map(|b| quote!(.carry_context(::core::option::Option::Some(#b))));
    quote! {
        #p::SettingsSpec::default()
            .max_context_tokens(#max_context)
            .max_history_tokens(#max_history)
            .budget_safety_margin_tokens(#margin)
            .limits_policy(#policy)
            .compactors(::std::vec![#(#compactors),*])
            .node_frame(#frame)
            #carry
            .extra(::std::collections::BTreeMap::from([#(#extra),*]))
    }
}

fn step(rt: &TokenStream, step: &StepDef) -> TokenStream {
    let p = &quote!(#rt::pipeline);
    let id = &step.id;
    let kind = match &step.kind {
        StepKind::SearchNodes(s) => {
            let (top_k, next) = (s.top_k, string(&s.next));
            quote!(#p::StepKind::SearchNodes(#p::SearchNodesSpec::new(#top_k, #next)))
        }
        StepKind::ExpandDependencyTree(s) => {
            let (max_depth, next) = (s.max_depth, string(&s.next));
            quote!(#p::StepKind::ExpandDependencyTree(#p::ExpandSpec::new(#max_depth, #next)))
        }
        StepKind::FetchNodeTexts(s) => {
            let (evidence_tokens, next) = (s.evidence_tokens, string(&s.next));
            quote!(#p::StepKind::FetchNodeTexts(#p::FetchSpec::new(#evidence_tokens, #next)))
        }
        StepKind::ManageContextBudget(s) => {
            let rules = s.compact_code.iter().map(|r| compact_rule(p, r));
            let divider = opt_string(&s.divide_new_content);
            let (on_ok, on_over) = (string(&s.on_ok), string(&s.on_over));
            quote! {
                #p::StepKind::ManageContextBudget(
                    #p::ManageBudgetSpec::new(#on_ok, #on_over)
                        .compact_code(::std::vec![#(#rules),*])
                        .divide_new_content(#divider)
                )
            }
        }
        StepKind::CallModel(s) => {
            let call = call_model(p, s);
            quote!(#p::StepKind::CallModel(#call))
        }
        StepKind::Agent(s) => {
            let call = call_model(p, &s.call);
            let tools = s.tools.iter().map(|t| {
                let (name, description, parameters) = (string(&t.name), string(&t.description), string(&t.parameters));
                quote!(#p::ToolSpec::new(#name, #description, #parameters))
            });
            let max_tool_calls = s.max_tool_calls;
            let turn_budget = opt_i64(&s.turn_budget_tokens);
            quote! {
                #p::StepKind::Agent(
                    #p::AgentSpec::new(#call, ::std::vec![#(#tools),*], #max_tool_calls)
                        .turn_budget_tokens(#turn_budget)
                )
            }
        }
        StepKind::LoopGuard(s) => {
            let setting = string(&s.max_turn_loops_from_settings);
            let (on_allow, on_deny) = (string(&s.on_allow), string(&s.on_deny));
            quote! {
                #p::StepKind::LoopGuard(#p::LoopGuardSpec::new(#setting, #on_allow, #on_deny))
            }
        }
        StepKind::SetVariables(s) => {
            let rules = s.rules.iter().map(|rule| {
                let set = string(&rule.set);
                let value = match &rule.value {
                    SetValueSpec::From { from, transform } => {
                        let from = string(from);
                        let transform = opt_string(transform);
                        quote!(#p::SetValueSpec::From { from: #from, transform: #transform })
                    }
                    SetValueSpec::Value(json) => {
                        let json = json_value(rt, json);
                        quote!(#p::SetValueSpec::Value(#json))
                    }
                };
                quote!(#p::SetRuleSpec::new(#set, #value))
            });
            let next = string(&s.next);
            quote!(#p::StepKind::SetVariables(#p::SetVariablesSpec::new(::std::vec![#(#rules),*], #next)))
        }
        StepKind::Custom(s) => {
            let outcomes = s.outcomes.iter().map(|(o, t)| {
                let (o, t) = (string(o), string(t));
                quote!((#o, #t))
            });
            quote!(#p::StepKind::Custom(#p::CustomSpec::new(::std::vec![#(#outcomes),*])))
        }
        // A kind the runtime added but this macro cannot write yet: the lowering never produces
        // one, so this is unreachable in practice; emitting a compile error keeps it loud.
        _ => quote!(::core::compile_error!("ctx-macros cannot emit this step kind; update ctx-macros")),
    };
    quote!(#p::StepDef::new(::std::string::String::from(#id), #kind))
}

/// A literal of a `target = value` rule (null, string, number or boolean: what the lowering
/// accepts).
fn json_value(rt: &TokenStream, json: &serde_json::Value) -> TokenStream {
    let v = quote!(#rt::serde_json::Value);
    match json {
        serde_json::Value::Null => quote!(#v::Null),
        serde_json::Value::Bool(b) => quote!(#v::Bool(#b)),
        serde_json::Value::String(s) => quote!(#v::String(::std::string::String::from(#s))),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => quote!(#v::from(#i)),
            (None, Some(f)) => quote!(#v::from(#f)),
            (None, None) => quote!(#v::Null),
        },
        // Lists and objects are not literals of the DSL.
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => quote!(#v::Null),
    }
}

fn compact_rule(p: &TokenStream, rule: &CompactRuleSpec) -> TokenStream {
    let language = string(&rule.language);
    let policy = string(&rule.policy);
    let threshold = opt(&rule.threshold, |t| quote!(#t));
    let inbox_key = opt_string(&rule.inbox_key);
    quote!(#p::CompactRuleSpec::new(#language, #policy).threshold(#threshold).inbox_key(#inbox_key))
}

/// A `call_model` step's keys, which an `agent` step shares.
fn call_model(p: &TokenStream, s: &CallModelSpec) -> TokenStream {
    let prompt_key = string(&s.prompt_key);
    let max_output = opt_i64(&s.max_output_tokens);
    let max_tokens = opt_i64(&s.max_tokens);
    let parts = s.user_parts.iter().map(|u| user_part(p, u));
    let use_history = s.use_history;
    let params = params(p, &s.params);
    let next = string(&s.next);
    quote! {
        #p::CallModelSpec::new(#prompt_key, #next)
            .max_output_tokens(#max_output)
            .max_tokens(#max_tokens)
            .user_parts(::std::vec![#(#parts),*])
            .use_history(#use_history)
            .params(#params)
    }
}

/// The sampling parameters; the common case, none, stays one short expression.
fn params(p: &TokenStream, params: &ModelParams) -> TokenStream {
    if params.is_empty() {
        return quote!(::core::default::Default::default());
    }
    let temperature = opt(&params.temperature, |t| quote!(#t));
    let top_p = opt(&params.top_p, |t| quote!(#t));
    let presence_penalty = opt(&params.presence_penalty, |t| quote!(#t));
    let frequency_penalty = opt(&params.frequency_penalty, |t| quote!(#t));
    let stop = params.stop.iter().map(|s| string(s));
    let seed = opt_i64(&params.seed);
    let format = opt(&params.response_format, |f| match f {
        ResponseFormat::JsonObject => quote!(#p::ResponseFormat::JsonObject),
        ResponseFormat::JsonSchema { name, schema, strict } => {
            let (name, schema) = (string(name), string(schema));
            quote!(#p::ResponseFormat::JsonSchema { name: #name, schema: #schema, strict: #strict })
        }
    });
    quote! {
        #p::ModelParams::default()
            .temperature(#temperature)
            .top_p(#top_p)
            .presence_penalty(#presence_penalty)
            .frequency_penalty(#frequency_penalty)
            .stop(::std::vec![#(#stop),*])
            .seed(#seed)
            .response_format(#format)
    }
}

fn user_part(p: &TokenStream, part: &UserPartSpec) -> TokenStream {
    let source = string(&part.source);
    let template = string(&part.template);
    quote!(#p::UserPartSpec::new(#source, #template))
}
