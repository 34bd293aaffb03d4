//! Expansion: parse → lower → validate → emit the pipeline's typed pieces.
//!
//! For a pipeline `CodeQa` it emits `type CodeQa = Pipeline<CodeQaStep>` (the runtime's driver,
//! written once), `enum CodeQaStep` implementing `StepMachine` (ids, the transition table as
//! `match` arms, the definition), and the typed environment of [`crate::backends`]. When the
//! invocation has errors it emits the same items, with stub bodies where a valid pipeline is
//! needed, so that user code calling `CodeQa::new()`, `CodeQaStep::FIRST` or `CodeQa::MERMAID`
//! adds no error of its own (and rust-analyzer keeps completing) while the user fixes the
//! pipeline.

use std::path::Path;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use crate::ast::PipelineInput;
use crate::backends;
use crate::ctxt::Ctxt;
use crate::ctxt::with_help;
use crate::defcode;
use crate::file::{self, Invocation};
use crate::krate;
use crate::lower::{self, Lowered};
use crate::valid;

/// Expands one invocation. `base_dir` is the directory of the invoking file.
pub(crate) fn pipeline(input: TokenStream, base_dir: Option<&Path>) -> TokenStream {
    // Counts of earlier compiler runs in, new counts out (`counts.rs`).
    let seen = crate::counts::before_expansion();
    let out = expand(input, base_dir);
    crate::counts::after_expansion(seen);
    out
}

fn expand(input: TokenStream, base_dir: Option<&Path>) -> TokenStream {
    let invocation: Invocation = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let cx = Ctxt::new();
    let (mut input, from_file) = match invocation {
        Invocation::Full(input) => {
            let from_file = file::file_entry(&cx, &input.body).map(|lit| file::read(&cx, lit, Some(&input.name)));
            (input, from_file)
        }
        Invocation::Short(short) => {
            let mut from_file = file::read(&cx, &short.path, None);
            let input = short_form_input(&cx, &short.path, from_file.file_name.as_deref());
            from_file.lowered.def.name = input.name.to_string();
            (input, Some(from_file))
        }
    };
    let rt = krate::take_private_path(&cx, &mut input.attrs);
    let (lowered, tracking) = match from_file {
        // Read and checked by `ctx_spec`'s YAML loader, every problem reported at its location.
        Some(from_file) => (from_file.lowered, from_file.tracking),
        None => {
            let lowered = lower::lower(&cx, &input, base_dir);
            valid::check(&cx, &lowered);
            (lowered, TokenStream::new())
        }
    };
    let variants = Variants::new(&cx, &input.name, &lowered);
    let needs = backends::Needs::new(&cx, &input.name, &lowered, &variants.steps);
    let valid = !cx.has_errors();
    let items = items(&input, &lowered, &variants, &needs, &rt, valid);
    let warnings = deprecation_warnings(&cx, &rt);
    let rule_warnings = rule_warnings(&cx);
    let models = file::model_tracking(&lowered.def);
    let items = quote!(#items #warnings #rule_warnings #tracking #models);
    match cx.check() {
        Ok(()) => items,
        Err(errors) => {
            let errors = errors.into_compile_error();
            quote!(#items #errors)
        }
    }
}

/// The short form's pipeline, named after the file's `name` (else its stem) in CamelCase.
fn short_form_input(cx: &Ctxt, path: &syn::LitStr, file_name: Option<&str>) -> PipelineInput {
    let value = path.value();
    let stem = Path::new(&value).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = file_name.unwrap_or(&stem);
    file::short_input(name, path.span()).unwrap_or_else(|| {
        cx.error_at(
            path.span(),
            with_help(
                format!("the pipeline's name `{name}` does not make a Rust type name"),
                "name it here: `pub pipeline Qa { file: \"pipelines/qa.yaml\" }`",
            ),
        );
        file::short_input("pipeline", path.span()).expect("`Pipeline` is an identifier")
    })
}

/// One use of a `#[deprecated]` hidden item per deprecated spelling, its last segment spanned at
/// the spelling so that rustc's warning points at the user's key.
fn deprecation_warnings(cx: &Ctxt, rt: &TokenStream) -> TokenStream {
    let uses = cx.deprecations().into_iter().map(|(span, what)| {
        let item = Ident::new(what.item(), span);
        quote::quote_spanned!(span=> const _: () = #rt::deprecated::#item;)
    });
    quote!(#(#uses)*)
}

/// The rules' warnings (`definition_warnings`): stable proc macros cannot emit a warning, so each
/// becomes a hidden `#[deprecated]` constant named after its code, whose note is the message,
/// used at the token the warning is about; rustc prints the note there. Each in its own
/// anonymous const, so two warnings of one code do not collide.
fn rule_warnings(cx: &Ctxt) -> TokenStream {
    let items = cx.warnings().into_iter().map(|w| {
        let item = Ident::new(w.code, w.span);
        let note = &w.message;
        quote::quote_spanned!(w.span=> const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #item: () = ();
            #item
        };)
    });
    quote!(#(#items)*)
}

/// The step enum's variants: one per distinct step id, in declaration order.
struct Variants {
    /// `CodeQaStep`.
    enum_name: Ident,
    /// (index into `def.steps`, step id, variant), for the first step of each id.
    steps: Vec<(usize, String, Ident)>,
    /// `End`.
    end: Ident,
}

impl Variants {
    fn new(cx: &Ctxt, name: &Ident, lowered: &Lowered) -> Self {
        let enum_name = format_ident!("{}Step", name);
        let end = Ident::new("End", Span::call_site());
        let mut steps: Vec<(usize, String, Ident)> = Vec::new();
        for (index, (step, id_token)) in lowered.def.steps.iter().zip(&lowered.step_ids).enumerate() {
            // A duplicated id is a rule's finding (reported on the second id); the enum keeps
            // the first so that the rest of the expansion stays well-formed.
            if steps.iter().any(|(_, id, _)| *id == step.id) || step.id == ctx_spec::pipeline::END {
                continue;
            }
            let camel = ctx_spec::pipeline::variant_name(&step.id);
            // Clashing names are a rule's finding too (STEP_VARIANT_CLASH); skip them here.
            if camel == "End" || steps.iter().any(|(_, _, v)| *v == camel) {
                continue;
            }
            // The variant carries the id's span so that "go to definition" lands on the step.
            let variant = match crate::backends::rust_ident(&camel, id_token.span()) {
                Ok(variant) => variant,
                Err(why) => {
                    let why = if camel.is_empty() { format!("`{}` has no letter", step.id) } else { why };
                    cx.error_at(
                        id_token.span(),
                        with_help(
                            format!("step id `{}` cannot name a variant of `{enum_name}`: {why}", step.id),
                            "rename the step: letters, digits and `_`, starting with a letter, e.g. `step_1`",
                        ),
                    );
                    continue;
                }
            };
            steps.push((index, step.id.clone(), variant));
        }
        Variants { enum_name, steps, end }
    }

    /// The variant a transition target names (`end` → `End`).
    fn target(&self, id: &str) -> Option<&Ident> {
        if id == ctx_spec::pipeline::END {
            return Some(&self.end);
        }
        self.steps.iter().find(|(_, s, _)| s == id).map(|(_, _, v)| v)
    }
}

/// Every generated item. `valid` says whether the pipeline passed every check: only then are the
/// definition, the transition table and the diagram real; otherwise they are stubs that are never
/// run, because the crate does not compile.
fn items(
    input: &PipelineInput,
    lowered: &Lowered,
    variants: &Variants,
    needs: &backends::Needs,
    rt: &TokenStream,
    valid: bool,
) -> TokenStream {
    let attrs = &input.attrs;
    let vis = &input.vis;
    let name = &input.name;
    let enum_name = &variants.enum_name;
    let p = quote!(#rt::pipeline);
    let alias_doc = format!(
        "The `{name}` pipeline: load it with `{name}::new()` and run it with a [`{name}Env`]. \
         Generated by `pipeline!`; its states are [`{enum_name}`]."
    );
    // A blank doc line separates the user's docs from the generated sentence.
    let separator = attrs.iter().any(|a| a.path().is_ident("doc")).then(|| quote!(#[doc = ""]));
    let step_enum = step_enum(input, variants, rt);
    let machine = machine(input, lowered, variants, rt, valid);
    let env = backends::items(input, needs, enum_name, rt);
    // The alias is the pipeline's one item that `dead_code` may report, at the pipeline's name:
    // spanned there (an item spanned at the macro's call site is never reported), while every
    // other generated item allows `dead_code`. An unused private pipeline is then one warning
    // that names it, with or without custom steps (whose outcome enums, spanned at the step ids
    // for the sake of the errors that point there, were reported instead), as for a hand-written
    // unused type.
    let alias = quote_spanned!(name.span()=> #vis type #name = #p::Pipeline<#enum_name>;);
    quote! {
        #(#attrs)*
        #separator
        #[doc = #alias_doc]
        #alias

        #step_enum
        #machine
        #env
    }
}

/// The step enum with the inherent items a caller reaches for without importing a trait.
fn step_enum(input: &PipelineInput, variants: &Variants, rt: &TokenStream) -> TokenStream {
    let vis = &input.vis;
    let name = &input.name;
    let enum_name = &variants.enum_name;
    let end = &variants.end;
    let machine = quote!(<Self as #rt::pipeline::StepMachine>);
    let enum_doc = format!("Where a run of [`{name}`] is: before one of its steps, or at the end.");
    let variant_docs = variants.steps.iter().map(|(_, id, _)| format!("Before step `{id}`."));
    let vs: Vec<&Ident> = variants.steps.iter().map(|(_, _, v)| v).collect();
    quote! {
        #[doc = #enum_doc]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::cmp::PartialEq, ::core::cmp::Eq, ::core::hash::Hash)]
        #[allow(dead_code)]
        #vis enum #enum_name {
            #( #[doc = #variant_docs] #vs, )*
            /// The run is over.
            #end,
        }

        #[allow(dead_code)]
        impl #enum_name {
            /// Where a run starts: the first declared step.
            pub const FIRST: Self = #machine::FIRST;

            /// Every state, in declaration order, `End` last.
            pub const ALL: &'static [Self] = #machine::ALL;

            /// The step id as written in the pipeline (`"end"` for [`Self::End`]).
            pub fn id(self) -> &'static str {
                #machine::id(self)
            }

            /// The state for a step id (or `"end"`), `None` for an unknown id.
            pub fn from_id(id: &str) -> ::core::option::Option<Self> {
                #machine::from_id(id)
            }
        }

        impl ::core::fmt::Display for #enum_name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(self.id())
            }
        }
    }
}

/// `impl StepMachine`: the pipeline's facts, fixed when compiled.
fn machine(
    input: &PipelineInput,
    lowered: &Lowered,
    variants: &Variants,
    rt: &TokenStream,
    valid: bool,
) -> TokenStream {
    let name_text = input.name.to_string();
    let enum_name = &variants.enum_name;
    let end = &variants.end;
    let p = quote!(#rt::pipeline);
    let end_id = ctx_spec::pipeline::END;
    let vs: Vec<&Ident> = variants.steps.iter().map(|(_, _, v)| v).collect();
    let ids = variants.steps.iter().map(|(_, id, _)| id);
    let indices = variants.steps.iter().map(|(i, _, _)| *i);
    let first = vs.first().map_or_else(|| quote!(Self::#end), |v| quote!(Self::#v));

    let (mermaid, definition, next) = if valid {
        let mermaid = valid::mermaid(&lowered.def);
        let definition = defcode::definition(&lowered.def, &lowered.prompts, rt);
        // Every (step, transition) pair, resolved here, once, to its target variant.
        let arms = variants.steps.iter().flat_map(|(index, _, from)| {
            let kind = &lowered.def.steps[*index].kind;
            let keyed: Vec<(TokenStream, Ident)> = kind
                .transitions()
                .iter()
                .enumerate()
                .filter_map(|(position, (_, target))| {
                    let to = variants.target(target)?.clone();
                    Some((transition(&p, kind, position), to))
                })
                .collect();
            keyed.into_iter().map(move |(t, to)| quote!((Self::#from, #t) => ::core::option::Option::Some(Self::#to),))
        });
        let next = quote! {
            match (self, transition) {
                #(#arms)*
                _ => ::core::option::Option::None,
            }
        };
        (quote!(#mermaid), definition, next)
    } else {
        let stub = quote!(::core::unimplemented!("the pipeline has compile errors"));
        (quote!(""), stub.clone(), quote!({ let _ = transition; #stub }))
    };

    quote! {
        impl #p::StepMachine for #enum_name {
            const NAME: &'static str = #name_text;
            const MERMAID: &'static str = #mermaid;
            const FIRST: Self = #first;
            const END: Self = Self::#end;
            const ALL: &'static [Self] = &[#(Self::#vs,)* Self::#end];

            fn definition() -> #p::PipelineDef {
                #definition
            }

            fn id(self) -> &'static str {
                match self {
                    #(Self::#vs => #ids,)*
                    Self::#end => #end_id,
                }
            }

            fn index(self) -> ::core::option::Option<usize> {
                match self {
                    #(Self::#vs => ::core::option::Option::Some(#indices),)*
                    Self::#end => ::core::option::Option::None,
                }
            }

            fn next(self, transition: #p::Transition) -> ::core::option::Option<Self> {
                #next
            }
        }
    }
}

/// The `Transition` value of the transition at `position` of `kind`.
fn transition(p: &TokenStream, kind: &ctx_spec::pipeline::StepKind, position: usize) -> TokenStream {
    use ctx_spec::pipeline::Transition;
    match Transition::of(kind, position) {
        Transition::Next => quote!(#p::Transition::Next),
        Transition::OnOk => quote!(#p::Transition::OnOk),
        Transition::OnOver => quote!(#p::Transition::OnOver),
        Transition::OnAllow => quote!(#p::Transition::OnAllow),
        Transition::OnDeny => quote!(#p::Transition::OnDeny),
        Transition::Outcome(n) => quote!(#p::Transition::Outcome(#n)),
    }
}
