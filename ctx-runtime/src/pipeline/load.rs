//! [`LoadOptions`]: what a caller provides when loading a pipeline — prompt texts that are not
//! in the definition, where relative paths start, and the limits policy chosen by the
//! environment.

use std::path::{Path, PathBuf};

/// Where a prompt's text comes from at load time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PromptSource {
    Text(String),
    File(PathBuf),
}

/// Options of [`LoadedPipeline::load`](super::LoadedPipeline::load).
///
/// ```
/// use ctx::pipeline::LoadOptions;
///
/// let opts = LoadOptions::new()
///     .prompt("answer", "Answer from the context only.")
///     .prompt_file("summarizer", "prompts/summarizer.txt")
///     .base_dir("/srv/qa");
/// assert_eq!(opts.prompt_keys().collect::<Vec<_>>(), ["answer", "summarizer"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    pub(crate) prompts: Vec<(String, PromptSource)>,
    pub(crate) base_dir: Option<PathBuf>,
    pub(crate) env_limits_policy: Option<String>,
    pub(crate) compactors: crate::compact::CompactorRegistry,
    /// Spend caps in US dollars, as `f64` bits (so that the options stay `Eq`).
    pub(crate) max_cost_per_run: Option<u64>,
    pub(crate) max_cost_per_conversation: Option<u64>,
    /// `settings.billed_token_ratio`'s override, as `f64` bits.
    pub(crate) billed_token_ratio: Option<u64>,
    /// The tools MCP servers listed for the agent steps that name them (feature `mcp`: set by
    /// `McpTools`), added to those steps when the pipeline loads.
    pub(crate) listed_tools: Vec<super::mcp_listing::ListedTools>,
}

impl LoadOptions {
    /// No prompts, paths relative to the current directory, the policy chosen by the pipeline's
    /// settings alone (the environment is not read).
    pub fn new() -> Self {
        Self::default()
    }

    /// [`Self::new`] plus the `PIPELINE_LIMITS_POLICY` environment variable, which wins over
    /// the pipeline's `limits_policy` (so an operator can force `fail_fast` in production).
    pub fn from_env() -> Self {
        LoadOptions { env_limits_policy: crate::config::LimitsPolicy::env_value(), ..Self::default() }
    }

    /// The tools MCP servers listed (set by `McpTools` when it loads a pipeline).
    #[cfg(any(test, feature = "mcp"))]
    #[must_use]
    pub(crate) fn listed_tools(mut self, listed: Vec<super::mcp_listing::ListedTools>) -> Self {
        self.listed_tools = listed;
        self
    }

    /// The text of prompt `key`, which the definition declares without a text.
    #[must_use]
    pub fn prompt(mut self, key: impl Into<String>, text: impl Into<String>) -> Self {
        self.prompts.push((key.into(), PromptSource::Text(text.into())));
        self
    }

    /// The most one run may spend, in US dollars: overrides the pipeline's
    /// `settings.max_cost_per_run`. Before every model request the run checks that the request,
    /// at worst, still fits what is left, and otherwise stops with
    /// [`PipelineError::SpendCapReached`](super::PipelineError::SpendCapReached). Needs a price
    /// for the model; a value that is not a number > 0 is a load error. Unlike the setting, it
    /// is not held to the proven cost bound ([`LoadedPipeline::cost_bound`](super::LoadedPipeline::cost_bound)):
    /// a cap below it is allowed, and enforced request by request.
    #[must_use]
    pub fn max_cost_per_run(mut self, usd: f64) -> Self {
        self.max_cost_per_run = Some(usd.to_bits());
        self
    }

    /// The most a conversation may spend, in US dollars, over all its runs (the state's
    /// [`SpendTotals`](crate::state::SpendTotals) carry it from question to question), checked
    /// as [`Self::max_cost_per_run`] is.
    #[must_use]
    pub fn max_cost_per_conversation(mut self, usd: f64) -> Self {
        self.max_cost_per_conversation = Some(usd.to_bits());
        self
    }

    /// The most tokens the provider is assumed to bill per token ctx counts, a number >= 1:
    /// overrides the pipeline's `settings.billed_token_ratio` (default 1). The spend caps price
    /// each request's prompt and output limit at the larger of this ratio and the highest one the
    /// provider's reported usage has shown for the step's model in the conversation
    /// ([`SpendTotals::billed_ratios`](crate::state::SpendTotals::billed_ratios)); before the
    /// first usage is seen this assumption is all that keeps a provider that counts more than
    /// ctx from taking a run past its cap. A value that is not a number >= 1 is a load error
    /// (`INVALID_BILLED_TOKEN_RATIO`).
    #[must_use]
    pub fn billed_token_ratio(mut self, ratio: f64) -> Self {
        self.billed_token_ratio = Some(ratio.to_bits());
        self
    }

    /// The text of prompt `key`, read from `path` (relative to [`Self::base_dir`]) when loading.
    #[must_use]
    pub fn prompt_file(mut self, key: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        self.prompts.push((key.into(), PromptSource::File(path.into())));
        self
    }

    /// Registers a user compactor as `name`, the language the pipeline declares in
    /// `settings { compactors: [...] }`. A name that is built in, registered twice or not a plain
    /// name is an error.
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use ctx::compact::{CompactError, CompactRequest, Compactor};
    /// use ctx::pipeline::LoadOptions;
    /// use ctx::state::NodeText;
    ///
    /// struct Yaml;
    /// impl Compactor for Yaml {
    ///     fn compact<'t>(&self, request: &CompactRequest<'t>) -> Result<Cow<'t, str>, CompactError> {
    ///         Ok(Cow::Owned(request.text.replace("\n\n", "\n")))
    ///     }
    ///     fn applies_to(&self, node: &NodeText) -> bool { node.source().is_some_and(|p| p.ends_with(".yaml")) }
    /// }
    /// let opts = LoadOptions::new().compactor("yaml", Yaml)?;
    /// # Ok::<(), ctx::compact::CompactorError>(())
    /// ```
    pub fn compactor(
        mut self,
        name: impl Into<String>,
        compactor: impl crate::compact::Compactor + 'static,
    ) -> Result<Self, crate::compact::CompactorError> {
        self.compactors.register(name, compactor)?;
        Ok(self)
    }

    /// Uses `registry` as the user compactors (replacing any registered before).
    #[must_use]
    pub fn compactors(mut self, registry: crate::compact::CompactorRegistry) -> Self {
        self.compactors = registry;
        self
    }

    /// The directory relative paths (the model's `config.json`, prompt files) start from.
    #[must_use]
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// The limits policy as the environment would choose it (`fail_fast` or `auto_clamp`).
    #[must_use]
    pub fn limits_policy(mut self, policy: impl Into<String>) -> Self {
        self.env_limits_policy = Some(policy.into());
        self
    }

    /// The keys of the prompts provided, in the order given.
    pub fn prompt_keys(&self) -> impl Iterator<Item = &str> {
        self.prompts.iter().map(|(k, _)| k.as_str())
    }

    /// `path` resolved against the base directory.
    pub(crate) fn resolve(&self, path: &Path) -> PathBuf {
        match &self.base_dir {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path.to_owned(),
        }
    }
}
