//! The typed environment of a pipeline: what a run needs, decided by its steps.
//!
//! For `CodeQa` it emits `struct CodeQaEnv` with one field per backend its steps use (`search`
//! for `search_nodes`, `store` for `fetch_node_texts` and `expand_dependency_tree`, `model` for
//! `call_model`, `custom` for `custom` steps), so a forgotten backend is a "missing field" error
//! where the environment is built. Each `custom` step becomes a method of `trait CodeQaCustom`
//! returning its own outcome enum (`CodeQaNextBatchOutcome { More, Done }`): a step without an
//! implementation, or an outcome the step does not declare, does not compile either.
//!
//! Every generated name starts with the pipeline's (`CodeQa`, `CodeQaStep`, `CodeQaEnv`,
//! `CodeQaCustom`, `CodeQaTools`, `CodeQa{Step}Outcome`), so any number of pipelines share a
//! module; only two pipelines whose names make the same generated name (`Qa` with its `QaStep`
//! enum and a pipeline named `QaStep`) still clash.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use ctx_spec::pipeline::{StepKind, variant_name};

use crate::ast::PipelineInput;
use crate::ctxt::Ctxt;
use crate::ctxt::with_help;
use crate::lower::Lowered;

/// The Rust identifier a name of the pipeline becomes (a step id, an outcome's or a tool's name):
/// as written, or raw when it is a keyword of some edition (`match` → `r#match`, so a tool may be
/// called `match` and its method is `fn r#match`). `Err` says why it cannot be one: the five
/// keywords that have no raw form (`self`, `Self`, `super`, `crate`, `_`) and text that is no
/// identifier at all (`fetch-docs`, `1st`, as a YAML file may spell them).
pub(crate) fn rust_ident(name: &str, span: Span) -> Result<Ident, String> {
    if matches!(name, "self" | "Self" | "super" | "crate" | "_") {
        return Err(format!("`{name}` is a Rust keyword, one of the five that cannot be raw identifiers (`r#{name}`)"));
    }
    let not_an_identifier =
        || format!("`{name}` is not a Rust identifier (letters, digits and `_`, not starting with a digit)");
    if name.starts_with("r#") {
        return Err(not_an_identifier());
    }
    // `gen` is reserved since edition 2024, which syn (written for every edition) accepts.
    if name != "gen" && syn::parse_str::<Ident>(name).is_ok() {
        return Ok(Ident::new(name, span));
    }
    match syn::parse_str::<Ident>(&format!("r#{name}")) {
        Ok(_) => Ok(Ident::new_raw(name, span)),
        Err(_) => Err(not_an_identifier()),
    }
}

/// One `custom` step as the generated code sees it.
pub(crate) struct CustomStep {
    /// The step enum's variant (`NextBatch`).
    variant: Ident,
    /// The step id, which is also the trait method's name (`next_batch`, `r#match`).
    method: Ident,
    /// The step id as written (`match`).
    id: String,
    /// `CodeQaNextBatchOutcome`.
    outcome_enum: Ident,
    /// (outcome name, its variant, its target step id), in declaration order.
    outcomes: Vec<(String, Ident, String)>,
}

/// One tool of the pipeline's `agent` steps: a method of the tools trait.
pub(crate) struct Tool {
    /// The tool's name as the model calls it (`search_docs`, `match`).
    name: String,
    /// The method's name: the tool's, raw when it is a keyword (`r#match`).
    method: Ident,
    /// Its descriptions, one per distinct text, and the steps that offer it.
    descriptions: Vec<String>,
    steps: Vec<String>,
}

/// The backends a pipeline's steps use, its custom steps and its tools.
pub(crate) struct Needs {
    search: bool,
    store: bool,
    model: bool,
    /// The pipeline's `contexts` declare retrievers, which its model steps' contexts draw on.
    retriever: bool,
    /// The pipeline's named models (`models { small { … } }`): one field `model_<name>` each.
    named_models: Vec<String>,
    customs: Vec<CustomStep>,
    tools: Vec<Tool>,
    /// An `agent` step names MCP servers: the environment holds the connections to them.
    mcp: bool,
}

impl Needs {
    /// Reads what `lowered`'s steps need. `variants` maps step ids to the step enum's variants;
    /// `pipeline` is the pipeline's name, which prefixes every generated name.
    pub(crate) fn new(cx: &Ctxt, pipeline: &Ident, lowered: &Lowered, variants: &[(usize, String, Ident)]) -> Self {
        let kinds = || lowered.def.steps.iter().map(|s| &s.kind);
        let mut customs = Vec::new();
        for (index, id, variant) in variants {
            let StepKind::Custom(spec) = &lowered.def.steps[*index].kind else { continue };
            let span = lowered.step_ids[*index].span();
            let mut outcomes: Vec<(String, Ident, String)> = Vec::new();
            for (outcome, target) in &spec.outcomes {
                let at = crate::spans::step_path(*index).key("outcomes").key(outcome).key("name");
                let span = lowered.spans.get(&at).map_or(span, |range| range.start);
                let camel = variant_name(outcome);
                if let Some((other, _, _)) = outcomes.iter().find(|(_, v, _)| *v == camel) {
                    cx.error_at(
                        span,
                        with_help(
                            format!(
                                "outcomes `{other}` and `{outcome}` of step `{id}` both name the variant `{camel}`"
                            ),
                            "rename one of them",
                        ),
                    );
                    continue;
                }
                let variant = match rust_ident(&camel, span) {
                    Ok(variant) => variant,
                    Err(why) => {
                        let why = if camel.is_empty() { format!("`{outcome}` has no letter") } else { why };
                        cx.error_at(
                            span,
                            with_help(
                                format!(
                                    "outcome `{outcome}` of step `{id}` cannot name a variant of its outcome enum: {why}"
                                ),
                                "rename the outcome: letters, digits and `_`, starting with a letter, e.g. `done`",
                            ),
                        );
                        continue;
                    }
                };
                outcomes.push((outcome.clone(), variant, target.clone()));
            }
            let method = match rust_ident(id, span) {
                Ok(method) => method,
                Err(why) => {
                    cx.error_at(
                        span,
                        with_help(
                            format!("custom step `{id}` cannot name a method of `{pipeline}Custom`: {why}"),
                            "rename the step, e.g. `self_check` for `self`",
                        ),
                    );
                    continue;
                }
            };
            customs.push(CustomStep {
                variant: variant.clone(),
                method,
                id: id.clone(),
                // Prefixed by the pipeline, so two pipelines of one module may both have a step `route`.
                outcome_enum: format_ident!("{}{}Outcome", pipeline, variant, span = span),
                outcomes,
            });
        }
        Needs {
            search: kinds().any(|k| matches!(k, StepKind::SearchNodes(_))),
            store: kinds().any(|k| matches!(k, StepKind::FetchNodeTexts(_) | StepKind::ExpandDependencyTree(_))),
            // The default model's field, when a model step uses it (names no model).
            model: kinds().any(|k| k.model_request().is_some_and(|c| c.model.is_none())),
            // Those declared, and with a `config.json` (read at load) the names the steps use.
            named_models: dedup(
                lowered.def.models.iter().map(|(name, _)| name.clone()).chain(
                    kinds()
                        .filter(|_| matches!(lowered.def.model, ctx_spec::pipeline::ModelSource::ConfigFile(_)))
                        .filter_map(|k| k.model_request().and_then(|c| c.model.clone())),
                ),
            ),
            retriever: !lowered.def.contexts.retrievers.is_empty(),
            customs,
            tools: tools(cx, pipeline, lowered),
            mcp: kinds().any(|k| matches!(k, StepKind::Agent(a) if !a.mcp_servers.is_empty())),
        }
    }
}

/// The tools of every `agent` step, by name in order of first declaration: a tool several steps
/// offer is one method.
fn tools(cx: &Ctxt, pipeline: &Ident, lowered: &Lowered) -> Vec<Tool> {
    let mut tools: Vec<Tool> = Vec::new();
    for (index, step) in lowered.def.steps.iter().enumerate() {
        let StepKind::Agent(spec) = &step.kind else { continue };
        let step_span = lowered.step_ids[index].span();
        for (j, spec_tool) in spec.tools.iter().enumerate() {
            // The method is spanned at the tool's name, so "missing `read_page`" points there.
            let at = crate::spans::step_path(index).key("tools").index(j).key("name");
            let span = lowered.spans.get(&at).map_or(step_span, |range| range.start);
            let i = match tools.iter().position(|t| t.name == spec_tool.name) {
                Some(i) => i,
                None => {
                    let method = match rust_ident(&spec_tool.name, span) {
                        Ok(method) => method,
                        Err(why) => {
                            cx.error_at(
                                span,
                                with_help(
                                    format!(
                                        "tool `{}` of step `{}` cannot name a method of `{pipeline}Tools`: {why}",
                                        spec_tool.name, step.id
                                    ),
                                    "rename the tool: letters, digits and `_`, not starting with a digit",
                                ),
                            );
                            continue;
                        }
                    };
                    let name = spec_tool.name.clone();
                    tools.push(Tool { name, method, descriptions: Vec::new(), steps: Vec::new() });
                    tools.len() - 1
                }
            };
            let tool = &mut tools[i];
            if !tool.descriptions.contains(&spec_tool.description) {
                tool.descriptions.push(spec_tool.description.clone());
            }
            if !tool.steps.contains(&step.id) {
                tool.steps.push(step.id.clone());
            }
        }
    }
    tools
}

/// The environment struct, its `Backends` implementation, the custom trait and the outcome enums.
pub(crate) fn items(input: &PipelineInput, needs: &Needs, enum_name: &Ident, rt: &TokenStream) -> TokenStream {
    let vis = &input.vis;
    let name = &input.name;
    let p = quote!(#rt::pipeline);
    let env_name = format_ident!("{}Env", name);
    let trait_name = format_ident!("{}Custom", name);
    let tools_trait = format_ident!("{}Tools", name);
    let has_custom = !needs.customs.is_empty();
    let has_tools = !needs.tools.is_empty();

    let mut fields = Vec::new();
    let mut setters = Vec::new();
    if needs.search {
        fields.push(quote! {
            /// Finds nodes for `search_nodes`.
            pub search: &'a dyn #p::NodeSearchDyn,
        });
        setters.push(quote!(.search(self.search)));
    }
    if needs.store {
        fields.push(quote! {
            /// Holds node texts and dependencies for `fetch_node_texts` and `expand_dependency_tree`.
            pub store: &'a dyn #p::NodeStoreDyn,
        });
        setters.push(quote!(.store(self.store)));
    }
    if needs.model {
        fields.push(quote! {
            /// Answers `call_model` and `agent` steps.
            pub model: &'a dyn #rt::ChatModelDyn,
        });
        setters.push(quote!(.model(self.model)));
    }
    if needs.retriever {
        fields.push(quote! {
            /// Answers the retrievers the pipeline's `contexts` declare (each request names its
            /// retriever), for the model steps that assemble a context.
            pub retriever: &'a dyn #rt::engine::RetrieverDyn,
        });
        setters.push(quote!(.retriever(self.retriever)));
    }
    // One field per named model, `model_<name>`: no other generated field starts with `model_`.
    let mut named_arms = Vec::new();
    for name in &needs.named_models {
        let Ok(field) = rust_ident(&format!("model_{name}"), proc_macro2::Span::call_site()) else { continue };
        let doc = format!("Answers the `call_model` and `agent` steps that use model `{name}` (`model: {name}`).");
        fields.push(quote! {
            #[doc = #doc]
            pub #field: &'a dyn #rt::ChatModelDyn,
        });
        named_arms.push(quote!(#name => ::core::option::Option::Some(self.#field),));
    }
    let named_impl = (!named_arms.is_empty()).then(|| {
        setters.push(quote!(.named_models(self)));
        quote! {
            impl<'a> #p::NamedModels for #env_name<'a> {
                fn named_model(&self, name: &str) -> ::core::option::Option<&dyn #rt::ChatModelDyn> {
                    match name {
                        #(#named_arms)*
                        _ => ::core::option::Option::None,
                    }
                }
            }
        }
    });
    // The user's implementations are held as `&dyn {Name}CustomDyn` (the object-safe form of the
    // trait, implemented for every implementation of it), not as a type parameter bounded by
    // the trait: the one obligation `Steps: CodeQaCustom` is then checked once, by the coercion
    // in the struct literal `CodeQaEnv { custom: &Steps, … }`, and a type that does not
    // implement the trait is one error there. As a bounded parameter (on the struct, or on the
    // `Backends` impl) it was checked again at every mention of `CodeQaEnv<'_, Steps>`: the
    // binding, the argument, the call and its `.await` (four errors for one mistake). Each
    // custom step and tool call already went through a boxed future, so the `dyn` costs nothing.
    let custom_dyn = format_ident!("{}Dyn", trait_name);
    let tools_dyn = format_ident!("{}Dyn", tools_trait);
    if has_custom {
        let doc = format!("Performs the `custom` steps: an implementation of [`{trait_name}`] (`custom: &Steps`).");
        fields.push(quote! {
            #[doc = #doc]
            pub custom: &'a dyn #custom_dyn,
        });
    }
    if has_tools {
        let doc = format!("Runs the tool calls of the `agent` steps: an implementation of [`{tools_trait}`].");
        fields.push(quote! {
            #[doc = #doc]
            pub tools: &'a dyn #tools_dyn,
        });
    }
    if needs.mcp {
        fields.push(quote! {
            /// Runs the calls of the tools the `agent` steps' MCP servers list: the `McpTools`
            /// (feature `mcp`) whose listing the pipeline was loaded with
            /// (`Pipeline::load(mcp.load_options(…))`).
            pub mcp: &'a dyn #p::ToolHandlersDyn,
        });
    }
    let lifetime = (!fields.is_empty()).then(|| quote!(<'a>));
    let env_doc = format!(
        "What a run of [`{name}`] needs: one field per backend its steps use, so none can be forgotten. \
         Pass it to `run`, `resume` or `step`."
    );
    let run_custom = has_custom.then(|| {
        quote! {
            fn run_custom<'s>(
                &'s self,
                step: #enum_name,
                state: &'s mut #rt::PipelineState,
            ) -> #p::StepFuture<'s, &'static str> {
                #custom_dyn::run_custom(self.custom, step, state)
            }
        }
    });
    let run_tool = has_tools.then(|| {
        quote! {
            fn run_tool<'s>(
                &'s self,
                step: #enum_name,
                request: #p::ToolRequest<'s>,
            ) -> #p::StepFuture<'s, #p::ToolOutput> {
                #tools_dyn::run_tool(self.tools, step, request)
            }
        }
    });
    let mcp_tools = needs.mcp.then(|| {
        quote! {
            fn mcp_tools(&self) -> ::core::option::Option<&dyn #p::ToolHandlersDyn> {
                ::core::option::Option::Some(self.mcp)
            }
        }
    });
    let custom_items = has_custom.then(|| custom_trait(input, needs, enum_name, &trait_name, &custom_dyn, rt));
    let tools_items = has_tools.then(|| tools_trait_items(input, needs, enum_name, &tools_trait, &tools_dyn, rt));
    quote! {
        #[doc = #env_doc]
        #[allow(dead_code)]
        #vis struct #env_name #lifetime {
            #(#fields)*
        }

        impl #lifetime #p::Backends<#enum_name> for #env_name #lifetime {
            fn step_env(&self) -> #p::StepEnv<'_> {
                #p::StepEnv::builder() #(#setters)*
            }

            #run_custom
            #run_tool
            #mcp_tools
        }

        #named_impl
        #custom_items
        #tools_items
    }
}

/// `names` without repeats, in order (a name declared twice is its own error).
fn dedup(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// `#[diagnostic::on_unimplemented]` for a trait the user implements: a type that does not
/// implement it is told which trait, for which pipeline, and which methods to write.
fn on_unimplemented(trait_name: &Ident, what: &str, env_field: String, per: &str, methods: &[&Ident]) -> TokenStream {
    let methods = methods.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ");
    let message = format!("`{{Self}}` does not implement `{trait_name}`, {what}");
    let label = format!("`{env_field}` needs an implementation of `{trait_name}`");
    let note = format!("write `impl {trait_name} for {{Self}}` with one `async fn` per {per}: {methods}");
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
    }
}

/// `trait CodeQaTools`: one method per tool of the `agent` steps, and its object-safe form
/// `CodeQaToolsDyn` that `CodeQaEnv::tools` holds.
fn tools_trait_items(
    input: &PipelineInput,
    needs: &Needs,
    enum_name: &Ident,
    trait_name: &Ident,
    dyn_name: &Ident,
    rt: &TokenStream,
) -> TokenStream {
    let vis = &input.vis;
    let name = &input.name;
    let p = quote!(#rt::pipeline);
    let trait_doc = format!(
        "The tools the `agent` steps of [`{name}`] offer the model, one `async fn` each. A method gets the \
         call's arguments (`request.args::<T>()`) and what its result may use (`request.budget`); the \
         step packs returned documents into the turn's budget and cuts a text that does not fit. Any \
         error converts into its `BoxError` with `?`; the step then fails naming the tool and the call."
    );
    let dyn_doc = format!("[`{trait_name}`] as `{name}Env::tools` holds it; implemented for every implementation.");
    let methods = needs.tools.iter().map(|t| {
        let method = &t.method;
        let steps = t.steps.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
        let doc = format!("{} (offered by {steps})", t.descriptions.join(" / "));
        quote_spanned! {method.span()=>
            #[doc = #doc]
            fn #method(
                &self,
                request: #p::ToolRequest<'_>,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<#p::ToolOutput, #p::BoxError>,
            > + ::core::marker::Send;
        }
    });
    let arms = needs.tools.iter().map(|t| {
        let (method, name) = (&t.method, &t.name);
        quote!(#name => #trait_name::#method(self, request).await,)
    });
    let all: Vec<&Ident> = needs.tools.iter().map(|t| &t.method).collect();
    let diagnostic =
        on_unimplemented(trait_name, &format!("the tools of `{name}`"), format!("{name}Env::tools"), "tool", &all);
    quote! {
        #[doc = #trait_doc]
        #diagnostic
        #[allow(dead_code)]
        #vis trait #trait_name: ::core::marker::Send + ::core::marker::Sync {
            #(#methods)*
        }

        #[doc = #dyn_doc]
        #[doc(hidden)]
        #diagnostic
        #[allow(dead_code)]
        #vis trait #dyn_name: ::core::marker::Send + ::core::marker::Sync {
            /// Runs one tool call of step `step`.
            fn run_tool<'s>(
                &'s self,
                step: #enum_name,
                request: #p::ToolRequest<'s>,
            ) -> #p::StepFuture<'s, #p::ToolOutput>;
        }

        impl<T: #trait_name> #dyn_name for T {
            fn run_tool<'s>(
                &'s self,
                step: #enum_name,
                request: #p::ToolRequest<'s>,
            ) -> #p::StepFuture<'s, #p::ToolOutput> {
                ::std::boxed::Box::pin(async move {
                    match request.name {
                        #(#arms)*
                        other => ::core::result::Result::Err(
                            #p::PipelineError::NotTool {
                                step: ::std::string::String::from(step.id()),
                                tool: ::std::string::String::from(other),
                            }
                            .into(),
                        ),
                    }
                })
            }
        }
    }
}

/// `trait CodeQaCustom`, its object-safe form `CodeQaCustomDyn` that `CodeQaEnv::custom` holds,
/// and one outcome enum per custom step.
fn custom_trait(
    input: &PipelineInput,
    needs: &Needs,
    enum_name: &Ident,
    trait_name: &Ident,
    dyn_name: &Ident,
    rt: &TokenStream,
) -> TokenStream {
    let vis = &input.vis;
    let name = &input.name;
    let p = quote!(#rt::pipeline);
    let trait_doc = format!(
        "The `custom` steps of [`{name}`], one `async fn` each. A run keeps the changes a method makes to \
         the state only when it returns an outcome; `state.loop_counts` must not be changed. Any error \
         converts into its `BoxError` with `?`; the run then fails naming the step once."
    );
    let dyn_doc = format!("[`{trait_name}`] as `{name}Env::custom` holds it; implemented for every implementation.");
    let methods = needs.customs.iter().map(|c| {
        let (method, outcome_enum) = (&c.method, &c.outcome_enum);
        let routes =
            c.outcomes.iter().map(|(o, _, target)| format!("`{o}` → `{target}`")).collect::<Vec<_>>().join(", ");
        let doc = format!("Performs step `{}` and returns where to go: {routes}.", c.id);
        // Spanned at the step id, so "missing `x` in implementation" points at the step.
        quote_spanned! {method.span()=>
            #[doc = #doc]
            fn #method(
                &self,
                state: &mut #rt::PipelineState,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<#outcome_enum, #p::BoxError>,
            > + ::core::marker::Send;
        }
    });
    let arms = needs.customs.iter().map(|c| {
        let (variant, method) = (&c.variant, &c.method);
        quote! {
            #enum_name::#variant => ::core::result::Result::Ok(#trait_name::#method(self, state).await?.name()),
        }
    });
    let enums = needs.customs.iter().map(|c| {
        let outcome_enum = &c.outcome_enum;
        let doc = format!("The outcomes of the custom step `{}` of [`{name}`].", c.id);
        let vs: Vec<&Ident> = c.outcomes.iter().map(|(_, v, _)| v).collect();
        let names = c.outcomes.iter().map(|(o, _, _)| o);
        let docs = c.outcomes.iter().map(|(o, _, target)| format!("`{o}`: go to `{target}`."));
        // An outcome enum with no outcomes cannot be matched on `self`; the validation rejects
        // such a step anyway (a custom step must declare at least one outcome).
        let name_body = if vs.is_empty() {
            quote!(match self {})
        } else {
            quote!(match self { #(Self::#vs => #names,)* })
        };
        quote_spanned! {c.method.span()=>
            #[doc = #doc]
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
            #[allow(dead_code)]
            #vis enum #outcome_enum {
                #( #[doc = #docs] #vs, )*
            }

            #[allow(dead_code)]
            impl #outcome_enum {
                /// The outcome's name as declared in the pipeline.
                pub const fn name(self) -> &'static str {
                    #name_body
                }
            }
        }
    });
    let all: Vec<&Ident> = needs.customs.iter().map(|c| &c.method).collect();
    let diagnostic = on_unimplemented(
        trait_name,
        &format!("the custom steps of `{name}`"),
        format!("{name}Env::custom"),
        "custom step",
        &all,
    );
    quote! {
        #[doc = #trait_doc]
        #diagnostic
        #[allow(dead_code)]
        #vis trait #trait_name: ::core::marker::Send + ::core::marker::Sync {
            #(#methods)*
        }

        #[doc = #dyn_doc]
        #[doc(hidden)]
        #diagnostic
        #[allow(dead_code)]
        #vis trait #dyn_name: ::core::marker::Send + ::core::marker::Sync {
            /// Runs the custom step `step` and returns the name of its outcome.
            fn run_custom<'s>(
                &'s self,
                step: #enum_name,
                state: &'s mut #rt::PipelineState,
            ) -> #p::StepFuture<'s, &'static str>;
        }

        impl<C: #trait_name> #dyn_name for C {
            fn run_custom<'s>(
                &'s self,
                step: #enum_name,
                state: &'s mut #rt::PipelineState,
            ) -> #p::StepFuture<'s, &'static str> {
                ::std::boxed::Box::pin(async move {
                    match step {
                        #(#arms)*
                        other => ::core::result::Result::Err(
                            #p::PipelineError::NotCustom {
                                step: ::std::string::String::from(other.id()),
                            }
                            .into(),
                        ),
                    }
                })
            }
        }

        #(#enums)*
    }
}
