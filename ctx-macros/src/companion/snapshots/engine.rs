/// The help centre.
///
/// The context engine's declarations (checked when compiled by `context_engine!`): contexts `support`; retrievers `kb_search`.
#[allow(dead_code, unused_qualifications, clippy::all, clippy::pedantic, missing_docs)]
#[must_use]
pub fn help_centre() -> ::ctx::__private::engine::EngineSpec {
    use ::ctx::__private::engine as __engine;
    __engine::EngineSpec {
        contexts: ::std::vec![
            __engine::ContextDeclaration { name : ::std::string::String::from("support"),
            inputs : ::std::vec![::std::string::String::from("question")], policy :
            ::core::option::Option::Some(__engine::ContextPolicySpec { input_budget :
            ::core::option::Option::Some(__engine::InputBudgetSpec { max_tokens : 200i64
            }), pack_budget : ::core::option::Option::Some(__engine::PackBudgetSpec {
            default_ratio : ::core::option::Option::Some(0.5f64) }), overflow :
            ::core::option::Option::None, compactor : ::core::option::Option::None,
            expansion : ::core::option::Option::Some(__engine::ExpansionSpec { max_pages
            : 3i64, min_fill_ratio : 1f64 }), }), messages :
            ::std::vec![__engine::MessageSpec::System { content :
            ::std::string::String::from("Answer from the articles.") },
            __engine::MessageSpec::Context(__engine::ContextInsert { name :
            ::std::string::String::from("kb_search"), ratio :
            ::core::option::Option::None, placement : __engine::PackPlacement::Message
            }), __engine::MessageSpec::History, __engine::MessageSpec::User { content :
            ::std::string::String::from("Question: {input.question}") }], }
        ],
        retrievers: ::std::vec![
            __engine::RetrieverDecl { name : ::std::string::String::from("kb_search"),
            query : ::std::string::String::from("{input.question}"), limit : 2i64 }
        ],
        compactors: ::std::vec![],
    }
}
