//! The constructor code of a `PipelineDef`: the generated `definition()` rebuilds, at run time,
//! exactly the values the macro validated at compile time.
//!
//! It goes through the same schema rows the decoder read the values with: each step, the model
//! and the settings are written as their non-default `(key, value)` pairs, which the rows' slots
//! set back at run time (`StepSchema::build`, `from_fields`). So a new key, of a type the
//! definition already has, needs no line here: only a new kind of value ([`FieldValue`]) does.

use ctx_spec::params::ResponseFormat;
use ctx_spec::pipeline::schema::{KeySchema, MODEL_KEYS, SETTINGS_KEYS, STEP_SCHEMAS, to_fields};
use ctx_spec::pipeline::slot::FieldValue;
use ctx_spec::pipeline::{
    CompactRuleSpec, ModelSource, PipelineDef, SetValueSpec, SettingsSpec, StepDef, UserPartSpec,
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

/// The expression building `def`; prompts come from `prompts` so `include_str!` stays one.
/// `rt` is the path of the hidden module the generated code names (`::ctx::__private`).
pub(crate) fn definition(def: &PipelineDef, prompts: &[PromptCode], rt: &TokenStream) -> TokenStream {
    let p = &quote!(#rt::pipeline);
    let name = &def.name;
    let model = model(rt, &def.model);
    // Named models only when declared, so a one-model pipeline's code is as it was.
    let models = (!def.models.is_empty()).then(|| {
        let models = def.models.iter().map(|(name, spec)| {
            let fields = fields(rt, MODEL_KEYS, spec);
            quote!((::std::string::String::from(#name), #rt::spec::from_fields(#rt::spec::MODEL_KEYS, #fields)))
        });
        quote!(.models(::std::vec![#(#models),*]))
    });
    let settings = settings(rt, &def.settings);
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
    // The context engine's declarations, as `context_engine!` writes them.
    let contexts = (!def.contexts.is_empty()).then(|| {
        let spec = crate::companion::spec_tokens(&def.contexts, rt);
        quote!(.contexts({ #spec }))
    });
    quote! {
        #p::PipelineDef::new(::std::string::String::from(#name))
            .model(#model)
            #models
            .settings(#settings)
            .prompts(::std::vec![#(#prompts),*])
            .steps(::std::vec![#(#steps),*])
            #contexts
    }
}

/// `vec![(key, value), …]`: the fields of `spec` its rows `keys` read, as `FieldValue`s.
fn fields<T>(rt: &TokenStream, keys: &[KeySchema<T>], spec: &T) -> TokenStream {
    let fields = to_fields(keys, spec).into_iter().map(|(name, value)| {
        let value = field_value(rt, &value);
        quote!((#name, #value))
    });
    quote!(::std::vec![#(#fields),*])
}

fn model(rt: &TokenStream, model: &ModelSource) -> TokenStream {
    let p = &quote!(#rt::pipeline);
    match model {
        ModelSource::Inline(spec) => {
            let fields = fields(rt, MODEL_KEYS, spec);
            quote!(#p::ModelSource::Inline(#rt::spec::from_fields(#rt::spec::MODEL_KEYS, #fields)))
        }
        ModelSource::ConfigFile(file) => {
            let file = string(file);
            quote!(#p::ModelSource::ConfigFile(#file))
        }
    }
}

fn settings(rt: &TokenStream, s: &SettingsSpec) -> TokenStream {
    let fields = fields(rt, SETTINGS_KEYS, s);
    let extra = s.extra.iter().map(|(k, v)| quote!((::std::string::String::from(#k), #v)));
    quote! {
        #rt::spec::from_fields(#rt::spec::SETTINGS_KEYS, #fields)
            .extra(::std::collections::BTreeMap::from([#(#extra),*]))
    }
}

fn step(rt: &TokenStream, step: &StepDef) -> TokenStream {
    let p = &quote!(#rt::pipeline);
    let id = &step.id;
    let schema = step.kind.schema();
    // The row's index: the generated code and the macro share one ctx-spec (pinned versions).
    let index = STEP_SCHEMAS.iter().position(|s| s.kind == schema.kind).unwrap_or_default();
    let fields = fields(rt, schema.keys, &step.kind);
    quote!(#p::StepDef::new(::std::string::String::from(#id), #rt::spec::STEP_SCHEMAS[#index].build(#fields)))
}

/// One value as the expression of its `FieldValue`.
fn field_value(rt: &TokenStream, value: &FieldValue) -> TokenStream {
    let p = &quote!(#rt::pipeline);
    let v = quote!(#rt::spec::FieldValue);
    match value {
        FieldValue::Int(n) => quote!(#v::Int(#n)),
        FieldValue::Number(n) => quote!(#v::Number(#n)),
        FieldValue::Text(t) => {
            let t = string(t);
            quote!(#v::Text(#t))
        }
        FieldValue::Bool(b) => quote!(#v::Bool(#b)),
        FieldValue::TextList(items) => {
            let items = items.iter().map(|s| string(s));
            quote!(#v::TextList(::std::vec![#(#items),*]))
        }
        FieldValue::CompactRules(rules) => {
            let rules = rules.iter().map(|r| compact_rule(p, r));
            quote!(#v::CompactRules(::std::vec![#(#rules),*]))
        }
        FieldValue::UserParts(parts) => {
            let parts = parts.iter().map(|u| user_part(p, u));
            quote!(#v::UserParts(::std::vec![#(#parts),*]))
        }
        FieldValue::SetRules(rules) => {
            let rules = rules.iter().map(|rule| {
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
            quote!(#v::SetRules(::std::vec![#(#rules),*]))
        }
        FieldValue::Outcomes(outcomes) => {
            let outcomes = outcomes.iter().map(|(o, t)| {
                let (o, t) = (string(o), string(t));
                quote!((#o, #t))
            });
            quote!(#v::Outcomes(::std::vec![#(#outcomes),*]))
        }
        FieldValue::ResponseFormat(format) => {
            let format = match format {
                ResponseFormat::JsonObject => quote!(#p::ResponseFormat::JsonObject),
                ResponseFormat::JsonSchema { name, schema, strict } => {
                    let (name, schema) = (string(name), string(schema));
                    quote!(#p::ResponseFormat::JsonSchema { name: #name, schema: #schema, strict: #strict })
                }
            };
            quote!(#v::ResponseFormat(#format))
        }
        FieldValue::Tools(tools) => {
            let tools = tools.iter().map(|t| {
                let (name, description, parameters) = (string(&t.name), string(&t.description), string(&t.parameters));
                quote!(#p::ToolSpec::new(#name, #description, #parameters))
            });
            quote!(#v::Tools(::std::vec![#(#tools),*]))
        }
        FieldValue::McpServers(servers) => {
            let servers = servers.iter().map(|s| {
                let name = string(&s.name);
                let (command, url) = (opt_string(&s.command), opt_string(&s.url));
                let bearer_token_env = opt_string(&s.bearer_token_env);
                let args = s.args.iter().map(|a| string(a));
                let tools = s.tools.iter().map(|t| string(t));
                quote! {
                    #p::McpServerSpec::new(#name)
                        .command(#command)
                        .args(::std::vec![#(#args),*])
                        .url(#url)
                        .bearer_token_env(#bearer_token_env)
                        .tools(::std::vec![#(#tools),*])
                }
            });
            quote!(#v::McpServers(::std::vec![#(#servers),*]))
        }
        FieldValue::Price(price) => {
            let rate = |r: &Option<f64>| opt(r, |r| quote!(#r));
            let (input, cached, write, output) =
                (rate(&price.input), rate(&price.cached_input), rate(&price.cache_write), rate(&price.output));
            quote! {
                #v::Price(
                    #p::PriceSpec::default().input(#input).cached_input(#cached).cache_write(#write).output(#output)
                )
            }
        }
        // A kind of value ctx-spec added that this macro cannot write yet: never produced by the
        // decoder this macro was built with, and loud if it ever is.
        _ => quote!(::core::compile_error!("ctx-macros cannot emit this value; update ctx-macros")),
    }
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

fn user_part(p: &TokenStream, part: &UserPartSpec) -> TokenStream {
    let source = string(&part.source);
    let template = string(&part.template);
    quote!(#p::UserPartSpec::new(#source, #template))
}
