//! The model clients of `ctx run`: one per model of the pipeline, the default `model` and each
//! of its named `models` (declared in the file or in its `config.json`), each counted with its
//! own counter and connected by environment variables of its own.
//!
//! For a named model `NAME` (its variable suffix is the name in capitals, every character other
//! than a letter or a digit written `_`: `small` → `SMALL`, `gpt-mini` → `GPT_MINI`):
//!
//! | variable | meaning | when unset |
//! |---|---|---|
//! | `CTX_MODEL_<NAME>_BASE_URL` | its OpenAI-compatible server | `CTX_BASE_URL`, else offline |
//! | `CTX_MODEL_<NAME>_MODEL` | the model name sent | the `model` it declares, else an error |
//! | `CTX_MODEL_<NAME>_API_KEY` | the bearer token | `OPENAI_API_KEY`, else none |
//! | `CTX_MODEL_<NAME>_API` | the API it speaks: `chat` (chat completions) or `responses` (OpenAI's Responses API) | `CTX_API`, else `chat` |
//!
//! The default model reads `CTX_BASE_URL`, `CTX_MODEL` (else the `model` it declares, else
//! `default`), `OPENAI_API_KEY` and `CTX_API`. `--offline` answers every model offline. A model with no
//! server is the offline extractive model counting with that model's own counter.

use ctx::llm::ChatModelDyn;
use ctx::llm::offline::OfflineModel;
use ctx::llm::openai::{OpenAiClient, OpenAiConfig, ResponsesClient};
use ctx::pipeline::LoadedPipeline;

/// One model's client.
pub(crate) enum Client {
    Offline(OfflineModel),
    /// A server, with what to print about it: the model name sent and where.
    Server(Box<OpenAiClient>, String),
    /// A server of OpenAI's Responses API, with what to print about it.
    Responses(Box<ResponsesClient>, String),
}

impl Client {
    pub(crate) fn as_dyn(&self) -> &dyn ChatModelDyn {
        match self {
            Client::Offline(m) => m,
            Client::Server(c, _) => c.as_ref(),
            Client::Responses(c, _) => c.as_ref(),
        }
    }

    /// `offline`, or `gpt-4o-mini at http://…/v1`.
    pub(crate) fn describe(&self) -> &str {
        match self {
            Client::Offline(_) => "offline",
            Client::Server(_, what) | Client::Responses(_, what) => what,
        }
    }
}

/// The clients of a pipeline's models: the default model's, and each named model's by name.
pub(crate) struct Clients {
    pub(crate) default: Client,
    pub(crate) named: Vec<(String, Client)>,
}

/// The variable suffix of the named model `name`.
fn suffix(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

/// The clients of `pipeline`'s models, each configured from `lookup` (the environment, in the
/// binary): every one offline when `offline`. An error names the model and the variable to set.
pub(crate) fn clients(
    pipeline: &LoadedPipeline,
    offline: bool,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Clients, String> {
    // Empty values count as unset, as `OpenAiConfig::from_lookup` reads them.
    let get = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let shared = if offline { None } else { get("CTX_BASE_URL") };
    let shared_api = get("CTX_API");
    let default = match &shared {
        None => Client::Offline(OfflineModel::new(pipeline.counter().clone())),
        Some(url) => {
            let model = get("CTX_MODEL").or_else(|| pipeline.model().model.clone()).unwrap_or_else(|| "default".into());
            let api = Api::read("CTX_API", shared_api.as_deref())?;
            server(url, &model, get("OPENAI_API_KEY"), api)?
        }
    };
    let mut named = Vec::new();
    let mut suffixes: Vec<(String, &str)> = Vec::new();
    for m in pipeline.named_models() {
        let s = suffix(&m.name);
        // Two names one variable would configure both: refuse rather than guess.
        if let Some((_, other)) = suffixes.iter().find(|(t, _)| *t == s) {
            return Err(format!(
                "models `{other}` and `{}` would both read the variables `CTX_MODEL_{s}_…`; rename one",
                m.name
            ));
        }
        suffixes.push((s.clone(), &m.name));
        let var = |what: &str| format!("CTX_MODEL_{s}_{what}");
        let url = if offline { None } else { get(&var("BASE_URL")).or_else(|| shared.clone()) };
        let client = match url {
            None => Client::Offline(OfflineModel::new(m.counter.clone())),
            Some(url) => {
                let model = get(&var("MODEL")).or_else(|| m.config.model.clone()).ok_or_else(|| {
                    format!(
                        "model `{}` has no model name to send to {url}: set `{}`, or declare its `model`",
                        m.name,
                        var("MODEL")
                    )
                })?;
                let (api_var, api) = match get(&var("API")) {
                    Some(api) => (var("API"), Some(api)),
                    None => ("CTX_API".to_owned(), shared_api.clone()),
                };
                let api = Api::read(&api_var, api.as_deref())?;
                server(&url, &model, get(&var("API_KEY")).or_else(|| get("OPENAI_API_KEY")), api)?
            }
        };
        named.push((m.name.clone(), client));
    }
    Ok(Clients { default, named })
}

/// The API a model's server speaks (`CTX_API`, `CTX_MODEL_<NAME>_API`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    /// `chat`: chat completions (`/chat/completions`), the default.
    Chat,
    /// `responses`: OpenAI's Responses API (`/responses`).
    Responses,
}

impl Api {
    /// The API the variable `name` holding `value` names; unset is `chat`.
    fn read(name: &str, value: Option<&str>) -> Result<Api, String> {
        match value {
            None | Some("chat") => Ok(Api::Chat),
            Some("responses") => Ok(Api::Responses),
            Some(other) => Err(format!("`{name}` is `{other}`: expected `chat` or `responses`")),
        }
    }
}

/// A client of the OpenAI-compatible server at `url`, sending `model` through `api`.
fn server(url: &str, model: &str, key: Option<String>, api: Api) -> Result<Client, String> {
    let mut config = OpenAiConfig::new(url, model);
    if let Some(key) = key {
        config = config.with_api_key(key);
    }
    // A URL with `user:password@` holds a credential: not printed.
    let at = if url.contains('@') { "its server" } else { url };
    Ok(match api {
        Api::Chat => {
            let client = OpenAiClient::new(config).map_err(|e| e.to_string())?;
            Client::Server(Box::new(client), format!("{model} at {at}"))
        }
        Api::Responses => {
            let client = ResponsesClient::new(config).map_err(|e| e.to_string())?;
            Client::Responses(Box::new(client), format!("{model} at {at} (Responses API)"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{Api, suffix};

    #[test]
    fn a_name_becomes_its_variables_suffix() {
        assert_eq!(suffix("small"), "SMALL");
        assert_eq!(suffix("gpt-4o.mini"), "GPT_4O_MINI");
    }

    #[test]
    fn the_api_is_chat_unless_responses_is_named() {
        assert_eq!(Api::read("CTX_API", None), Ok(Api::Chat));
        assert_eq!(Api::read("CTX_API", Some("chat")), Ok(Api::Chat));
        assert_eq!(Api::read("CTX_MODEL_SMALL_API", Some("responses")), Ok(Api::Responses));
        let err = Api::read("CTX_MODEL_SMALL_API", Some("completions")).unwrap_err();
        assert!(err.contains("`CTX_MODEL_SMALL_API`") && err.contains("`responses`"), "{err}");
    }
}
