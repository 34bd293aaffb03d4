//! The typed environment of a pipeline: what a run needs, decided by its steps.
//!
//! For `CodeQa` it emits `struct CodeQaEnv` with one field per backend its steps use (`search`
//! for `search_nodes`, `store` for `fetch_node_texts` and `expand_dependency_tree`, `model` for
//! `call_model`, `custom` for `custom` steps), so a forgotten backend is a "missing field" error
//! where the environment is built. Each `custom` step becomes a method of `trait CodeQaCustom`
//! returning its own outcome enum (`NextBatchOutcome { More, Done }`): a step without an
//! implementation, or an outcome the step does not declare, does not compile either.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use ctx_spec::pipeline::{StepKind, variant_name};

use crate::ast::PipelineInput;
use crate::ctxt::Ctxt;
use crate::fields::with_help;
use crate::lower::Lowered;

/// One `custom` step as the generated code sees it.
pub struct CustomStep {
    /// The step enum's variant (`NextBatch`).
    variant: Ident,
    /// The step id, which is also the trait method's name (`next_batch`).
    method: Ident,
    /// `NextBatchOutcome`.
    outcome_enum: Ident,
    /// (outcome name, its variant, its target step id), in declaration order.
    outcomes: Vec<(String, Ident, String)>,
}

/// One tool of the pipeline's `agent` steps: a method of the tools trait.
pub struct Tool {
    /// The tool's name, which is also the method's (`search_docs`).
    method: Ident,
    /// Its descriptions, one per distinct text, and the steps that offer it.
    descriptions: Vec<String>,
    steps: Vec<String>,
}

/// The backends a pipeline's steps use, its custom steps and its tools.
pub struct Needs {
    search: bool,
    store: bool,
    model: bool,
    customs: Vec<CustomStep>,
    tools: Vec<Tool>,
}

impl Needs {
    /// Reads what `lowered`'s steps need. `variants` maps step ids to the step enum's variants.
    pub fn new(cx: &Ctxt, lowered: &Lowered, variants: &[(usize, String, Ident)]) -> Self {
        let kinds = || lowered.def.steps.iter().map(|s| &s.kind);
        let mut customs = Vec::new();
        for (index, id, variant) in variants {
            let StepKind::Custom(spec) = &lowered.def.steps[*index].kind else { continue };
            let span = lowered.step_ids[*index].span();
            let mut outcomes: Vec<(String, Ident, String)> = Vec::new();
            for (outcome, target) in &spec.outcomes {
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
                if !camel.starts_with(|c: char| c.is_alphabetic()) {
                    cx.error_at(
                        span,
                        with_help(
                            format!("outcome `{outcome}` of step `{id}` cannot name an enum variant"),
                            "start the outcome with a letter, e.g. `done`",
                        ),
                    );
                    continue;
                }
                outcomes.push((outcome.clone(), Ident::new(&camel, span), target.clone()));
            }
            customs.push(CustomStep {
                variant: variant.clone(),
                method: Ident::new(id, span),
                outcome_enum: format_ident!("{}Outcome", variant, span = span),
                outcomes,
            });
        }
        Needs {
            search: kinds().any(|k| matches!(k, StepKind::SearchNodes(_))),
            store: kinds().any(|k| matches!(k, StepKind::FetchNodeTexts(_) | StepKind::ExpandDependencyTree(_))),
            model: kinds().any(|k| matches!(k, StepKind::CallModel(_) | StepKind::Agent(_))),
            customs,
            tools: tools(lowered),
        }
    }
}

/// The tools of every `agent` step, by name in order of first declaration: a tool several steps
/// offer is one method. A name that is not a Rust identifier cannot be written in the DSL.
fn tools(lowered: &Lowered) -> Vec<Tool> {
    let mut tools: Vec<Tool> = Vec::new();
    for (index, step) in lowered.def.steps.iter().enumerate() {
        let StepKind::Agent(spec) = &step.kind else { continue };
        let step_span = lowered.step_ids[index].span();
        for (j, spec_tool) in spec.tools.iter().enumerate() {
            // The method is spanned at the tool's name, so "missing `read_page`" points there.
            let at = crate::spans::step_path(index).key("tools").index(j).key("name");
            let span = lowered.spans.get(&at).map_or(step_span, |range| range.start);
            if syn::parse_str::<Ident>(&spec_tool.name).is_err() {
                continue;
            }
            let i = match tools.iter().position(|t| t.method == spec_tool.name) {
                Some(i) => i,
                None => {
                    let method = Ident::new(&spec_tool.name, span);
                    tools.push(Tool { method, descriptions: Vec::new(), steps: Vec::new() });
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
pub fn items(input: &PipelineInput, needs: &Needs, enum_name: &Ident, rt: &TokenStream) -> TokenStream {
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
            pub search: &'a dyn #p::NodeSearch,
        });
        setters.push(quote!(.search(self.search)));
    }
    if needs.store {
        fields.push(quote! {
            /// Holds node texts and dependencies for `fetch_node_texts` and `expand_dependency_tree`.
            pub store: &'a dyn #p::NodeStore,
        });
        setters.push(quote!(.store(self.store)));
    }
    if needs.model {
        fields.push(quote! {
            /// Answers `call_model` and `agent` steps.
            pub model: &'a dyn #rt::ChatModel,
        });
        setters.push(quote!(.model(self.model)));
    }
    // Generic parameters, so the user's implementations are called without a `dyn`.
    let mut generics = Vec::new();
    let mut generic_args = Vec::new();
    if has_custom {
        let doc = format!("Performs the `custom` steps (see [`{trait_name}`]).");
        fields.push(quote! {
            #[doc = #doc]
            pub custom: &'a C,
        });
        generics.push(quote!(C: #trait_name));
        generic_args.push(quote!(C));
    }
    if has_tools {
        let doc = format!("Runs the tool calls of the `agent` steps (see [`{tools_trait}`]).");
        fields.push(quote! {
            #[doc = #doc]
            pub tools: &'a T,
        });
        generics.push(quote!(T: #tools_trait));
        generic_args.push(quote!(T));
    }
    let (params, impl_params, args) = if fields.is_empty() {
        (quote!(), quote!(), quote!())
    } else {
        (quote!(<'a #(, #generics)*>), quote!(<'a #(, #generics)*>), quote!(<'a #(, #generic_args)*>))
    };
    let env_doc = format!(
        "What a run of [`{name}`] needs: one field per backend its steps use, so none can be forgotten. \
         Pass it to `run`, `resume` or `step`."
    );
    let run_custom = has_custom.then(|| {
        let arms = needs.customs.iter().map(|c| {
            let (variant, method) = (&c.variant, &c.method);
            quote! {
                #enum_name::#variant => ::core::result::Result::Ok(#trait_name::#method(self.custom, state).await?.name()),
            }
        });
        quote! {
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
    });
    let run_tool = has_tools.then(|| {
        let arms = needs.tools.iter().map(|t| {
            let method = &t.method;
            let name = method.to_string();
            quote!(#name => #tools_trait::#method(self.tools, request).await,)
        });
        quote! {
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
    });
    let custom_items = has_custom.then(|| custom_trait(input, needs, &trait_name, rt));
    let tools_items = has_tools.then(|| tools_trait_items(input, needs, &tools_trait, rt));
    quote! {
        #[doc = #env_doc]
        #vis struct #env_name #params {
            #(#fields)*
        }

        impl #impl_params #p::Backends<#enum_name> for #env_name #args {
            fn step_env(&self) -> #p::StepEnv<'_> {
                #p::StepEnv::builder() #(#setters)*
            }

            #run_custom
            #run_tool
        }

        #custom_items
        #tools_items
    }
}

/// `trait CodeQaTools`: one method per tool of the `agent` steps.
fn tools_trait_items(input: &PipelineInput, needs: &Needs, trait_name: &Ident, rt: &TokenStream) -> TokenStream {
    let vis = &input.vis;
    let name = &input.name;
    let p = quote!(#rt::pipeline);
    let trait_doc = format!(
        "The tools the `agent` steps of [`{name}`] offer the model, one method each. A method gets the \
         call's arguments (`request.args::<T>()`) and what its result may use (`request.budget`); the \
         step packs returned documents into the turn's budget and cuts a text that does not fit."
    );
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
                Output = ::core::result::Result<#p::ToolOutput, #rt::CtxError>,
            > + ::core::marker::Send;
        }
    });
    quote! {
        #[doc = #trait_doc]
        #vis trait #trait_name: ::core::marker::Send + ::core::marker::Sync {
            #(#methods)*
        }
    }
}

/// `trait CodeQaCustom` and one outcome enum per custom step.
fn custom_trait(input: &PipelineInput, needs: &Needs, trait_name: &Ident, rt: &TokenStream) -> TokenStream {
    let vis = &input.vis;
    let name = &input.name;
    let trait_doc = format!(
        "The `custom` steps of [`{name}`], one method each. A run keeps the changes a method makes to \
         the state only when it returns an outcome; `state.loop_counts` must not be changed."
    );
    let methods = needs.customs.iter().map(|c| {
        let (method, outcome_enum) = (&c.method, &c.outcome_enum);
        let routes =
            c.outcomes.iter().map(|(o, _, target)| format!("`{o}` → `{target}`")).collect::<Vec<_>>().join(", ");
        let doc = format!("Performs step `{method}` and returns where to go: {routes}.");
        // Spanned at the step id, so "missing `x` in implementation" points at the step.
        quote_spanned! {method.span()=>
            #[doc = #doc]
            fn #method(
                &self,
                state: &mut #rt::PipelineState,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<#outcome_enum, #rt::CtxError>,
            > + ::core::marker::Send;
        }
    });
    let enums = needs.customs.iter().map(|c| {
        let outcome_enum = &c.outcome_enum;
        let doc = format!("The outcomes of the custom step `{}` of [`{name}`].", c.method);
        let vs: Vec<&Ident> = c.outcomes.iter().map(|(_, v, _)| v).collect();
        let names = c.outcomes.iter().map(|(o, _, _)| o);
        let docs = c.outcomes.iter().map(|(o, _, target)| format!("`{o}`: go to `{target}`."));
        // An outcome enum with no outcomes cannot be matched on `self`; the runtime rejects such
        // a step anyway (a custom step must declare at least one outcome).
        let name_body = if vs.is_empty() {
            quote!(match self {})
        } else {
            quote!(match self { #(Self::#vs => #names,)* })
        };
        quote_spanned! {c.method.span()=>
            #[doc = #doc]
            #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
            #vis enum #outcome_enum {
                #( #[doc = #docs] #vs, )*
            }

            impl #outcome_enum {
                /// The outcome's name as declared in the pipeline.
                pub const fn name(self) -> &'static str {
                    #name_body
                }
            }
        }
    });
    quote! {
        #[doc = #trait_doc]
        #vis trait #trait_name: ::core::marker::Send + ::core::marker::Sync {
            #(#methods)*
        }

        #(#enums)*
    }
}
