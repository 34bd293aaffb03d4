//! Every code ctx produces, grouped by [`Area`](super::Area), each written once: its doc lines
//! (what it means, then how to fix it: what `ctx explain CODE` prints), its variant and its
//! string. A table rather than code, so it lives in one file; the machinery is in `mod.rs`.
//!
//! The strings are published and never change. A new code is named `AREA_WHAT` (its area's
//! prefix, then what went wrong: `ENGINE_RATIO_SUM`), and goes at the end of its area.

use super::Area;

registry! {
    Graph {
        /// The pipeline declares no step at all.
        /// Fix: declare at least one step; the first step is where a run starts.
        PipelineNoSteps = "PIPELINE_NO_STEPS",
        /// A step has an empty id.
        /// Fix: give the step a snake_case id, e.g. `fetch`.
        InvalidStepId = "INVALID_STEP_ID",
        /// A step is named `end`, the target that ends a run.
        /// Fix: rename the step, e.g. `finish`.
        ReservedStepId = "RESERVED_STEP_ID",
        /// Two steps have the same id; transitions go to the first one.
        /// Fix: rename one of the two.
        DuplicateStepId = "DUPLICATE_STEP_ID",
        /// Two step ids become the same Rust variant (`fetch_docs` and `fetchdocs` are both
        /// `FetchDocs`), or a step id becomes `End`, which is reserved.
        /// Fix: rename one step so that the ids differ by more than underscores and case.
        StepVariantClash = "STEP_VARIANT_CLASH",
        /// A transition (`next`, `on_over`, an outcome, …) names a step the pipeline does not have.
        /// Fix: name an existing step id or `end`; the help line suggests the closest id.
        UnknownStepTarget = "UNKNOWN_STEP_TARGET",
        /// A custom step declares an outcome twice.
        /// Fix: give each outcome one target.
        DuplicateOutcome = "DUPLICATE_OUTCOME",
        /// A custom step declares no outcome, so it has nowhere to go.
        /// Fix: declare at least one outcome and its target, e.g. `done: end`.
        CustomWithoutOutcomes = "CUSTOM_WITHOUT_OUTCOMES",
        /// No transition leads to this step from the first step, so it can never run.
        /// Fix: make a transition go to it, or remove it.
        UnreachableStep = "UNREACHABLE_STEP",
        /// No path leads from this step to `end`, so a run that gets there never finishes.
        /// Fix: give the loop an exit: a transition (or a loop_guard's `on_deny`) that leads to `end`.
        EndUnreachable = "END_UNREACHABLE",
        /// A cycle of transitions passes through no loop_guard's `on_allow`, so nothing bounds
        /// how often it runs.
        /// Fix: route the cycle through a `loop_guard` step, whose limit ends it.
        UnguardedCycle = "UNGUARDED_CYCLE",
    }
    Step {
        /// A `search_nodes` step has `top_k: 0`: a search that keeps no hit.
        /// Fix: set `top_k` to the number of hits to keep, e.g. `top_k: 20`.
        InvalidTopK = "INVALID_TOP_K",
        /// A `fetch_node_texts` step's `max_depth` is negative or too large.
        /// Fix: set `max_depth` to how many dependency levels to follow, e.g. `max_depth: 2`.
        InvalidMaxDepth = "INVALID_MAX_DEPTH",
        /// A step's `evidence_tokens` is not a positive number of tokens.
        /// Fix: give the evidence budget, e.g. `evidence_tokens: 3_000`.
        InvalidEvidenceTokens = "INVALID_EVIDENCE_TOKENS",
        /// A `loop_guard` reads its limit from a setting whose value is above the largest loop
        /// limit ctx can prove termination with.
        /// Fix: lower the setting.
        InvalidLoopLimit = "INVALID_LOOP_LIMIT",
        /// A `loop_guard` reads its limit from a setting that is 0, so its `on_allow` branch never
        /// runs.
        /// Fix: set the limit to 1 or more, or remove the loop.
        LoopLimitZero = "LOOP_LIMIT_ZERO",
        /// A step reads (in `user_parts` or `set_variables`) a name that is neither a text field of
        /// the state nor a variable that a `set_variables` rule sets.
        /// Fix: read a state field (`question`, `context_blocks`, …) or a variable set earlier.
        UnknownSource = "UNKNOWN_SOURCE",
        /// A step renders as text a field that is not text (a list, a map, the loop counts).
        /// Fix: read one of the text fields the help line lists.
        SourceNotText = "SOURCE_NOT_TEXT",
        /// A user part's `template` does not hold exactly one `{}` for its source.
        /// Fix: write exactly one `{}` where the source's text goes.
        TemplatePlaceholder = "TEMPLATE_PLACEHOLDER",
        /// A `call_model` step has `use_history: true` but `settings.max_history_tokens` is 0,
        /// so no history can ever be sent.
        /// Fix: set `max_history_tokens` (about 10-15% of the window), or remove `use_history`.
        HistoryBudgetZero = "HISTORY_BUDGET_ZERO",
        /// A step's `temperature` is outside 0..=2.
        /// Fix: use 0 for repeatable answers, about 0.2-0.7 for RAG, at most 2.
        TemperatureOutOfRange = "TEMPERATURE_OUT_OF_RANGE",
        /// A step's `top_p` is not in (0, 1].
        /// Fix: `top_p` is the probability mass kept, e.g. `top_p: 0.9`; 1 keeps everything.
        TopPOutOfRange = "TOP_P_OUT_OF_RANGE",
        /// A step's `presence_penalty` or `frequency_penalty` is outside -2..=2.
        /// Fix: use a value between -2 and 2; about 0.1-1 discourages repetition, 0 is the default.
        PenaltyOutOfRange = "PENALTY_OUT_OF_RANGE",
        /// A step's `seed` is negative.
        /// Fix: use 0 or more, or leave `seed` out for random sampling.
        SeedNegative = "SEED_NEGATIVE",
        /// A step declares more stop sequences than the chat-completions API accepts.
        /// Fix: keep at most the number the message names.
        TooManyStopSequences = "TOO_MANY_STOP_SEQUENCES",
        /// A stop sequence is empty and would end every reply at once.
        /// Fix: remove it, or write the text that ends a reply.
        EmptyStopSequence = "EMPTY_STOP_SEQUENCE",
        /// A stop sequence repeats an earlier one.
        /// Fix: remove the repetition.
        DuplicateStopSequence = "DUPLICATE_STOP_SEQUENCE",
        /// The name of a step's response schema is not 1 to 64 letters, digits, `_` or `-`.
        /// Fix: use a plain name, e.g. `answer`.
        InvalidSchemaName = "INVALID_SCHEMA_NAME",
        /// A step's response schema is not JSON, or not an object schema.
        /// Fix: write an object schema as a raw string, e.g. `r#"{"type":"object",…}"#`.
        InvalidJsonSchema = "INVALID_JSON_SCHEMA",
    }
    Variables {
        /// A `set_variables` rule sets a name that is not a valid variable name.
        /// Fix: use letters, digits and `_`, not starting with a digit.
        InvalidVariableName = "INVALID_VARIABLE_NAME",
        /// A `set_variables` rule sets a field of the state that steps may not write.
        /// Fix: set a text field (`context_blocks`, `last_model_response`, …) or a variable.
        ReadOnlyTarget = "READ_ONLY_TARGET",
        /// A `set_variables` rule's `value` cannot be stored in its target.
        /// Fix: give a value of the target's type (the help line says which).
        InvalidValue = "INVALID_VALUE",
        /// A `set_variables` rule names a transform that does not exist.
        /// Fix: use one of the transforms the help line lists.
        UnknownTransform = "UNKNOWN_TRANSFORM",
        /// A `set_variables` rule applies a transform to a value of a type it does not take.
        /// Fix: read a value of the type the transform takes, or drop the transform.
        TransformType = "TRANSFORM_TYPE",
        /// A `set_variables` rule sets a target from a source whose type it cannot hold.
        /// Fix: read a source of the target's type, or set another target.
        IncompatibleValue = "INCOMPATIBLE_VALUE",
        /// A warning, not an error: a step reads a variable that, on some path from the first
        /// step, no step has set. Unless the caller provides it before the run
        /// (`Conversation::set_variable`, `state.variables`), the run fails there with
        /// `PIPELINE_MISSING_SOURCE`; a conversation carries variables into the next question, never
        /// into the first.
        /// Fix: set the variable on every path before the read (a `set_variables` rule), or provide
        /// it before every run.
        VariableMaybeUnset = "VARIABLE_MAYBE_UNSET",
    }
    Prompt {
        /// A step uses a prompt key that `prompts` does not declare, or a text is provided at
        /// load time for a prompt the pipeline does not declare.
        /// Fix: declare the prompt in `prompts`, or correct the key (the help line suggests one).
        UnknownPrompt = "UNKNOWN_PROMPT",
        /// A prompt key is declared twice.
        /// Fix: keep one declaration of each prompt key.
        DuplicatePromptKey = "DUPLICATE_PROMPT_KEY",
        /// A step uses a prompt that has no text.
        /// Fix: declare the prompt's text in `prompts`, or provide it when loading.
        MissingPromptText = "MISSING_PROMPT_TEXT",
        /// A prompt has a text in the definition and another one is provided at load time.
        /// Fix: keep one of the two.
        PromptAlreadyDefined = "PROMPT_ALREADY_DEFINED",
        /// The same prompt is provided twice at load time.
        /// Fix: provide each prompt once.
        PromptProvidedTwice = "PROMPT_PROVIDED_TWICE",
        /// A prompt file named in a pipeline file cannot be read.
        /// Fix: correct the path; it is relative to the YAML file that names it.
        PromptFileUnreadable = "PROMPT_FILE_UNREADABLE",
    }
    Agent {
        /// An `agent` step declares no tools.
        /// Fix: declare the tools the model may call, or make it a `call_model` step.
        AgentWithoutTools = "AGENT_WITHOUT_TOOLS",
        /// A tool's name is not one the model can call (1 to 64 letters, digits, `_` or `-`).
        /// Fix: rename the tool, e.g. `search_docs`.
        InvalidToolName = "INVALID_TOOL_NAME",
        /// An `agent` step declares the same tool twice.
        /// Fix: give each tool of a step its own name.
        DuplicateToolName = "DUPLICATE_TOOL_NAME",
        /// A tool has no description, and the model chooses tools by their description.
        /// Fix: say what the tool does and when to call it.
        EmptyToolDescription = "EMPTY_TOOL_DESCRIPTION",
        /// An `agent` step's `max_tool_calls` is 0 or above the cap.
        /// Fix: set it between 1 and the cap the message names.
        InvalidMaxToolCalls = "INVALID_MAX_TOOL_CALLS",
        /// An `agent` step's `turn_budget_tokens` is not a positive number of tokens.
        /// Fix: give the tokens the tool results of one turn may use, or remove it.
        InvalidTurnBudget = "INVALID_TURN_BUDGET",
        /// A tool's `parameters` are not JSON.
        /// Fix: write the JSON schema of the arguments as a raw string.
        InvalidToolParameters = "INVALID_TOOL_PARAMETERS",
        /// A tool's `parameters` are not an object schema; the chat format takes the arguments as
        /// one JSON object.
        /// Fix: write `{"type":"object","properties":{…}}`.
        ToolParametersNotObject = "TOOL_PARAMETERS_NOT_OBJECT",
        /// At run time, the arguments of a tool call do not parse as the handler's type.
        /// Fix: make the tool's `parameters` schema describe the handler's argument type.
        AgentToolArguments = "AGENT_TOOL_ARGUMENTS",
        /// At run time, a tool handler returned an error; the step changed nothing.
        /// Fix: see the handler's error, which the message carries.
        AgentToolFailed = "AGENT_TOOL_FAILED",
        /// The model answered the last request of an agent step, which offered no tools, with tool
        /// calls, so the step has no answer to keep.
        /// Fix: raise `max_tool_calls`, or tell the model in the prompt to answer once tools are gone.
        AgentToolCallsAfterLimit = "AGENT_TOOL_CALLS_AFTER_LIMIT",
        /// An MCP server of an agent step has a name the step cannot use (empty, more than 64
        /// characters, or other than ASCII letters, digits, `_` and `-`), or the step names two
        /// servers alike.
        /// Fix: give each server of the step its own name, e.g. `files`.
        AgentMcpServerName = "AGENT_MCP_SERVER_NAME",
        /// An MCP server of an agent step has no way to reach it, or two: it needs exactly one of
        /// `command` (spawned, spoken to over its standard input and output) and `url` (an
        /// `http://` Streamable HTTP endpoint); `args` go with a `command`. An `https://` URL is
        /// refused too: ctx's MCP client carries no TLS (reqwest's TLS provider, once installed,
        /// made every other reqwest client of the process panic).
        /// Fix: write `command: "node", args: ["server.js"]`, or `url: "http://127.0.0.1:3001/mcp"`;
        /// reach a remote `https://` server through a TLS-terminating proxy on 127.0.0.1.
        AgentMcpServerTransport = "AGENT_MCP_SERVER_TRANSPORT",
        /// At load time, an MCP server could not be started or did not complete the protocol's
        /// handshake (its command does not exist or exits, its URL does not answer MCP).
        /// Fix: run the server's command (or open its URL) by hand and see its error; check `PATH`.
        McpServerStart = "MCP_SERVER_START",
        /// An MCP server's connection closed while the pipeline ran (the process exited or was
        /// killed, the HTTP session ended), so a tool call got no answer.
        /// Fix: see why the server stopped (its standard error); load the pipeline again to restart it.
        McpServerClosed = "MCP_SERVER_CLOSED",
        /// An MCP server answered a tool call with a protocol error (an unknown tool, arguments
        /// its schema rejects, an internal error), rather than a result.
        /// Fix: see the server's message; a result marked `isError` is instead told to the model.
        McpToolFailed = "MCP_TOOL_FAILED",
        /// An MCP tool's result is larger than the run allows (`McpOptions::max_result_bytes`,
        /// 64 MiB by default), so ctx did not count it into the turn (a result within the limit is
        /// cut to the turn's budget instead).
        /// Fix: ask the server for less (narrower arguments), or raise the limit.
        McpResultTooLarge = "MCP_RESULT_TOO_LARGE",
        /// At load time, a tool an MCP server lists breaks a rule of agent tools (its name, its
        /// description, its schema, a name another tool of the step has), or a step asks for a
        /// tool the server does not list.
        /// Fix: offer only the server's tools that pass, with `tools: [ … ]` in the server's block.
        McpToolRejected = "MCP_TOOL_REJECTED",
        /// At load time, the tool schemas MCP servers list no longer fit an agent step's budget
        /// contract (or its `turn_budget_tokens`): counted with the model's tool rule, they leave
        /// the request less than it needs.
        /// Fix: offer fewer of the server's tools (`tools: [ … ]`), or give the step a larger window.
        McpToolsDoNotFit = "MCP_TOOLS_DO_NOT_FIT",
        /// A step names an MCP server the run's MCP connections do not include, or a tool call
        /// reached a server that was not connected.
        /// Fix: connect the tools of the same definition the pipeline was loaded from.
        McpServerNotConnected = "MCP_SERVER_NOT_CONNECTED",
    }
    Settings {
        /// `max_context_tokens` is missing: the context budget is required.
        /// Fix: set it to about 60-70% of the model's context window.
        MissingMaxContextTokens = "MISSING_MAX_CONTEXT_TOKENS",
        /// `max_context_tokens` is not an integer > 0.
        /// Fix: set it to about 60-70% of the model's context window.
        InvalidMaxContextTokens = "INVALID_MAX_CONTEXT_TOKENS",
        /// `max_history_tokens` is not an integer >= 0.
        /// Fix: set it to about 10-15% of the model's context window.
        InvalidMaxHistoryTokens = "INVALID_MAX_HISTORY_TOKENS",
        /// A `call_model` step has `use_history: true` but `settings.max_history_tokens` is not set.
        /// Fix: set `max_history_tokens` (about 10-15% of the window), or remove `use_history`.
        MissingMaxHistoryTokens = "MISSING_MAX_HISTORY_TOKENS",
        /// `budget_safety_margin_tokens` is not an integer >= 0.
        /// Fix: use 128-256, or remove it for the default.
        InvalidSafetyMargin = "INVALID_SAFETY_MARGIN",
        /// A named setting (a loop limit, …) is negative.
        /// Fix: set it to 0 or more.
        InvalidSetting = "INVALID_SETTING",
        /// A setting is not one ctx knows (a likely typo), or a `loop_guard` reads its limit from a
        /// setting that is not declared.
        /// Fix: correct the name (the help line suggests one) or declare the setting.
        UnknownSetting = "UNKNOWN_SETTING",
        /// The limits policy (`settings.limits_policy` or the `PIPELINE_LIMITS_POLICY` environment
        /// variable) is not a policy ctx knows.
        /// Fix: use `fail_fast` or `auto_clamp`.
        UnknownLimitsPolicy = "UNKNOWN_LIMITS_POLICY",
        /// `settings.history_trim` is not a history trimming policy ctx knows.
        /// Fix: use `oldest_first` (the default) or `fold`.
        UnknownHistoryTrim = "UNKNOWN_HISTORY_TRIM",
        /// `settings.history_low_water_percent` is not a percentage from 1 to 99, or is set without
        /// `history_trim: fold`, the only policy it applies to.
        /// Fix: set it to the share of `max_history_tokens` a fold cuts back to (e.g. 50), with
        /// `history_trim: fold`.
        InvalidHistoryLowWater = "INVALID_HISTORY_LOW_WATER",
        /// `settings.max_cost_per_run` is not a number of US dollars > 0.
        /// Fix: write the most one run may spend, e.g. `max_cost_per_run: 0.05`.
        InvalidMaxCostPerRun = "INVALID_MAX_COST_PER_RUN",
        /// `settings.billed_token_ratio` (or `LoadOptions::billed_token_ratio`) is not a number
        /// >= 1: the spend caps assume a provider bills at most this many tokens per token ctx
        /// counts until its reported usage shows the ratio.
        /// Fix: write 1 (the provider counts as ctx does) or the most it bills per counted token,
        /// e.g. `billed_token_ratio: 1.2`.
        InvalidBilledTokenRatio = "INVALID_BILLED_TOKEN_RATIO",
        /// A configuration file holds a key ctx does not know.
        /// Fix: correct the key (the help line suggests one) or remove it.
        UnknownConfigKey = "UNKNOWN_CONFIG_KEY",
        /// A value of a configuration file has the wrong type.
        /// Fix: write it as the message says, or remove it.
        InvalidConfigValue = "INVALID_CONFIG_VALUE",
        /// A configuration file cannot be read.
        /// Fix: check the path and its permissions.
        ConfigFileUnreadable = "CONFIG_FILE_UNREADABLE",
        /// A configuration file is not valid JSON.
        /// Fix: correct the syntax at the position the message names.
        ConfigFileSyntax = "CONFIG_FILE_SYNTAX",
        /// A configuration file is JSON but not an object.
        /// Fix: write one JSON object, `{ "model": …, … }`.
        ConfigFileNotAnObject = "CONFIG_FILE_NOT_AN_OBJECT",
        /// A configuration file has several problems of different codes (each is listed with its
        /// own code).
        /// Fix: fix each listed problem.
        ConfigFileInvalid = "CONFIG_FILE_INVALID",
        /// A configuration has several problems of different codes (each is listed with its own
        /// code).
        /// Fix: fix each listed problem.
        ConfigInvalid = "CONFIG_INVALID",
        /// `max_question_tokens` or `max_variable_tokens` is not an integer > 0.
        /// Fix: set it to the longest question (or variable) a run may bring, in tokens, or remove
        /// it to give it the room the window leaves.
        InvalidInputBudget = "INVALID_INPUT_BUDGET",
    }
    Model {
        /// The model's context window is not an integer > 0.
        /// Fix: set it to the tokens the model accepts (prompt plus output), e.g. 16384.
        InvalidContextWindow = "INVALID_CONTEXT_WINDOW",
        /// The model's default output limit (`max_tokens`) is not an integer > 0, or leaves no room
        /// for a prompt in the window.
        /// Fix: set it to a positive number well below the window, or remove it.
        InvalidMaxTokens = "INVALID_MAX_TOKENS",
        /// The model's context window is neither given nor known from its name.
        /// Fix: give `context_window` (the server's real window), or a model name ctx knows.
        MissingContextWindow = "MISSING_CONTEXT_WINDOW",
        /// The model's encoding is neither given nor known from its name.
        /// Fix: give `encoding` (e.g. `o200k_base`) or the model's `tokenizer`, or a model ctx knows.
        MissingEncoding = "MISSING_ENCODING",
        /// The model name is not in ctx's model table, so its window or encoding cannot be looked up.
        /// Fix: correct the name (the help line suggests one), or give the window and encoding.
        UnknownModel = "UNKNOWN_MODEL",
        /// A `call_model` or `agent` step names a model (`model: NAME`) the pipeline's `models`
        /// block does not declare.
        /// Fix: name a declared model (the help line suggests the nearest), declare it under
        /// `models { NAME { … } }`, or remove `model:` to use the default `model`.
        UnknownModelName = "UNKNOWN_MODEL_NAME",
        /// A named model of `models { … }` is declared twice, or is called `default`, the name
        /// of the pipeline's `model` block.
        /// Fix: give each named model its own name, other than `default`.
        DuplicateModelName = "DUPLICATE_MODEL_NAME",
        /// A `call_model` or `agent` step names no model, and the pipeline declares named `models`
        /// but no default `model` block.
        /// Fix: add `model: NAME` to the step, or declare a default `model { … }`.
        StepModelRequired = "STEP_MODEL_REQUIRED",
        /// The encoding is not one ctx can count with.
        /// Fix: use one of the encodings the message lists (e.g. `o200k_base`, `cl100k_base`).
        UnknownEncoding = "UNKNOWN_ENCODING",
        /// A model file (tokenizer.json, tokenizer_config.json, a GGUF file) cannot be read or used.
        /// Fix: correct the path, or give a file of the model that is served.
        ModelFile = "MODEL_FILE",
        /// A pipeline counts with model files but ctx was built without the `hf` feature.
        /// Fix: enable it: `features = ["hf"]`.
        ModelFilesNeedFeature = "MODEL_FILES_NEED_FEATURE",
        /// The context window is larger than the one the model's files say it was trained on.
        /// Fix: lower `context_window`, or leave it out to use the trained one.
        ModelWindowAboveTraining = "MODEL_WINDOW_ABOVE_TRAINING",
        /// The model's files do not state a context window and the pipeline gives none.
        /// Fix: write `context_window`: the server's context size (e.g. vLLM's `--max-model-len`).
        ModelWindowMissing = "MODEL_WINDOW_MISSING",
        /// A local model server is configured but not the model file ctx counts with.
        /// Fix: set both, e.g. `eval "$(scripts/llama-server.sh env)"`.
        LocalModelFileMissing = "LOCAL_MODEL_FILE_MISSING",
        /// The pipeline's window is larger than the context the local server holds.
        /// Fix: lower `context_window`, or start the server with a larger context.
        LocalModelWindowTooLarge = "LOCAL_MODEL_WINDOW_TOO_LARGE",
        /// A model client has no model name.
        /// Fix: give the model to call (for the OpenAI client from the environment: `CTX_MODEL`).
        ModelConfigMissingModel = "MODEL_CONFIG_MISSING_MODEL",
        /// A model client's base URL is not an absolute http(s) URL.
        /// Fix: write it like `https://api.openai.com/v1`.
        ModelConfigBaseUrl = "MODEL_CONFIG_BASE_URL",
        /// The Anthropic client's `anthropic-version` header is empty or not printable ASCII.
        /// Fix: use the version the help line names.
        ModelConfigApiVersion = "MODEL_CONFIG_API_VERSION",
        /// A model client's timeout is zero, which fails every request.
        /// Fix: give a positive duration.
        ModelConfigTimeout = "MODEL_CONFIG_TIMEOUT",
        /// A model client's retry policy is inconsistent (`initial_backoff` above `max_backoff`).
        /// Fix: make `initial_backoff` at most `max_backoff`.
        ModelConfigRetry = "MODEL_CONFIG_RETRY",
        /// A model's `price` block lacks `input` or `output`, or states a rate that is not a
        /// finite number >= 0.
        /// Fix: write the provider's list prices in US dollars per million tokens, e.g.
        /// `price: { input: 2.50, cached_input: 1.25, output: 10.00 }`.
        InvalidPrice = "INVALID_PRICE",
        /// A rule needs the model's price (`settings.max_cost_per_run`), and the model has no
        /// `price` block and no entry in ctx's dated price table; ctx never prices a model at zero.
        /// Fix: give the model a `price` block, e.g. `price: { input: 2.50, output: 10.00 }`.
        MissingPrice = "MISSING_PRICE",
    }
    Contract {
        /// A model step's worst case (fixed prompt, history, context, output, margin) exceeds the
        /// model's context window.
        /// Fix: lower the budgets the message itemizes, or use a model with a larger window.
        BudgetContractViolated = "BUDGET_CONTRACT_VIOLATED",
        /// A model step cannot fit the window even with every budget clamped to its minimum.
        /// Fix: shorten the fixed prompt or the margin, or use a model with a larger window.
        BudgetContractUnsatisfiable = "BUDGET_CONTRACT_UNSATISFIABLE",
        /// A step's output limit is at least the model's whole context window.
        /// Fix: lower it well below the window.
        OutputExceedsWindow = "OUTPUT_EXCEEDS_WINDOW",
        /// A model step has no output limit: none on the step and no default for the model.
        /// Fix: set `max_output_tokens` on the step, or `max_tokens` for the model.
        NoOutputLimit = "NO_OUTPUT_LIMIT",
        /// A step's output limit (`max_output_tokens` or `max_tokens`) is not an integer > 0.
        /// Fix: set it to the longest reply the step may produce, e.g. 512.
        InvalidMaxOutputTokens = "INVALID_MAX_OUTPUT_TOKENS",
        /// An agent step's `turn_budget_tokens` is more than the window leaves the turn after the
        /// output, the margin, the tool schemas and reply priming.
        /// Fix: lower `turn_budget_tokens` to at most the room the message names.
        TurnBudgetExceedsRoom = "TURN_BUDGET_EXCEEDS_ROOM",
        /// The prompt of a model step cannot be counted.
        /// Fix: see the counter's error in the message (often a chat template that fails).
        PromptCountFailed = "PROMPT_COUNT_FAILED",
        /// The tool schemas of an agent step cannot be counted in the model's chat format.
        /// Fix: use a chat format that renders tool schemas (the OpenAI format), or remove the tools.
        ToolCountFailed = "TOOL_COUNT_FAILED",
        /// The costliest run the pipeline can make (each model step's runs, from the step graph
        /// and its loop guards, times its worst request from the contract, at the model's price)
        /// costs more than `settings.max_cost_per_run`. The message shows the arithmetic and the
        /// step that dominates.
        /// Fix: lower what the dominant step costs (its output limit, the budgets its request
        /// carries, its `max_tool_calls`, the loop limit that repeats it), or raise the cap.
        MaxCostPerRunExceeded = "MAX_COST_PER_RUN_EXCEEDED",
        /// At run time, the exact request plus its output limit does not fit the window; nothing
        /// was sent.
        /// Fix: lower the step's budgets; the message gives the exact overflow.
        RequestExceedsContextWindow = "REQUEST_EXCEEDS_CONTEXT_WINDOW",
        /// At run time, a request asked for no output at all; nothing was sent.
        /// Fix: give the step an output limit of at least 1.
        RequestWithoutOutput = "REQUEST_WITHOUT_OUTPUT",
        /// At run time, counting a request failed.
        /// Fix: see the counter's error in the message.
        RequestCountFailed = "REQUEST_COUNT_FAILED",
        /// The pipeline definition could not be serialized for its fingerprint.
        /// Fix: a bug in ctx; please report it with the message.
        ContractFingerprintFailed = "CONTRACT_FINGERPRINT_FAILED",
        /// A warning, not an error: under `auto_clamp` a limit (`max_context_tokens` or a step's
        /// output limit) was lowered in memory so that the budget contract holds; the message
        /// gives the value before and after and the step that forced it. `ctx check` and `ctx
        /// explain` show each clamp the service will make when it loads the pipeline.
        /// Fix: lower the limit to the value shown (or give the model a larger window), so that the
        /// pipeline runs as written; `auto_clamp` is meant for dev and test only.
        BudgetAutoClamped = "BUDGET_AUTO_CLAMPED",
        /// A model step assembles its request from a context that is not declared.
        /// Fix: declare the context, or correct the name (the help line suggests one).
        ContractUnknownContext = "CONTRACT_UNKNOWN_CONTEXT",
        /// A model step assembles its request from a context without `input_budget.max_tokens`,
        /// so the request has no bound the contract could check.
        /// Fix: give the context a policy with an input budget.
        ContractUnboundedContext = "CONTRACT_UNBOUNDED_CONTEXT",
        /// A model step that assembles a declared context also writes a key the context replaces:
        /// `user_parts` (the context's `user` message makes the user message) or `use_history`
        /// (the context's `history` message places the pipeline's history).
        /// Fix: remove the key from the step, or remove `context` to lay the request out yourself.
        ContractContextConflict = "CONTRACT_CONTEXT_CONFLICT",
        /// A model step renders a run-time input (the question, or a variable) whose budget is not
        /// declared, and the window leaves it no room: with every other term of the contract at
        /// its worst, no question (or variable) of even one token would fit.
        /// Fix: declare `max_question_tokens` (or `max_variable_tokens`) in `settings` and make
        /// room for it by lowering the budgets the message names.
        InputBudgetNoRoom = "INPUT_BUDGET_NO_ROOM",
    }
    Budget {
        /// A `manage_context_budget` step's budgets do not fit together (the evidence budget does
        /// not fit the global one), or at run time the context cannot be brought under budget.
        /// Fix: lower `evidence_tokens` or raise `max_context_tokens`; the message gives the numbers.
        PipelineBudgetMisconfig = "PIPELINE_BUDGET_MISCONFIG",
        /// A compaction rule's `language` is not a known or declared compactor language.
        /// Fix: use a built-in language (`sql`, `dotnet`, …) or declare yours in `compactors`.
        CompactRuleUnknownLanguage = "COMPACT_RULE_UNKNOWN_LANGUAGE",
        /// A compaction rule's `policy` is not `always`, `threshold` or `demand`.
        /// Fix: use one of the three.
        CompactRuleUnknownPolicy = "COMPACT_RULE_UNKNOWN_POLICY",
        /// A compaction rule has `policy: threshold` but no `threshold`.
        /// Fix: add `threshold`, a fraction in (0, 1], e.g. `0.8`.
        CompactRuleMissingThreshold = "COMPACT_RULE_MISSING_THRESHOLD",
        /// A compaction rule's `threshold` is outside (0, 1].
        /// Fix: use a fraction of the budget, e.g. `0.8`.
        CompactRuleThresholdOutOfRange = "COMPACT_RULE_THRESHOLD_OUT_OF_RANGE",
        /// A compaction rule has `policy: demand` but no `inbox_key`.
        /// Fix: add the inbox key whose messages ask for compaction.
        CompactRuleMissingInboxKey = "COMPACT_RULE_MISSING_INBOX_KEY",
        /// A compaction rule's `inbox_key` is empty or blank.
        /// Fix: write the inbox key, or remove it with its policy.
        CompactRuleEmptyInboxKey = "COMPACT_RULE_EMPTY_INBOX_KEY",
        /// A compaction rule has `threshold` or `inbox_key` on a policy that does not use it.
        /// Fix: remove the key, or change the policy.
        CompactRuleKeyNotForPolicy = "COMPACT_RULE_KEY_NOT_FOR_POLICY",
        /// A compaction rule can never apply: an earlier rule of the same language always
        /// pre-empts it.
        /// Fix: remove it, or order the rules from the most to the least specific.
        CompactRuleUnreachable = "COMPACT_RULE_UNREACHABLE",
        /// A step's `divide_new_content` is empty or blank.
        /// Fix: write the separator text, or remove the key.
        DivideNewContentEmpty = "DIVIDE_NEW_CONTENT_EMPTY",
        /// A name in `settings.compactors`, or a compactor registered by name, is not a name
        /// (letters, digits, `_`, starting with a letter).
        /// Fix: rename it, e.g. `yaml`.
        CompactorBadName = "COMPACTOR_BAD_NAME",
        /// `settings.compactors` names a built-in compactor (it declares user compactors only), or
        /// a compactor is registered under a built-in name.
        /// Fix: remove it from `compactors`: rules can name it as it is; register yours under
        /// another name.
        CompactorBuiltin = "COMPACTOR_BUILTIN",
        /// A compactor language is declared twice in `settings.compactors`, or two compactors
        /// are registered under one name.
        /// Fix: remove one of the two.
        CompactorDuplicate = "COMPACTOR_DUPLICATE",
        /// A compactor language is declared but no compactor for it was registered at load time.
        /// Fix: register one under that name with `LoadOptions::compactor(name, …)`.
        CompactorNotRegistered = "COMPACTOR_NOT_REGISTERED",
        /// A step's `node_frame` template is malformed.
        /// Fix: use the placeholders `{id}`, `{path}`, `{language}`, `{compact}` and `{text}`
        /// (exactly once); write `{{` and `}}` for literal braces.
        NodeFrameInvalid = "NODE_FRAME_INVALID",
        /// A warning: a `manage_context_budget` step's `on_over` can never be taken, because the
        /// context is empty whenever the step runs (no earlier step writes it and the pipeline
        /// does not carry it from question to question), and with an empty context a batch its
        /// rules leave too large (it has no rules, or an `always` rule for each language) is
        /// `PIPELINE_BUDGET_MISCONFIG`: the path behind `on_over` never runs. The cost bound and
        /// the bound on model requests do not pay for it; `ctx explain` says so beside each step
        /// behind it, and gives what a run whose caller fills the context first can cost.
        /// Fix: for a conversation whose context grows question after question, set
        /// `carry_context: true` in `settings`; otherwise point `on_over` where `on_ok` goes.
        BudgetOnOverNeverTaken = "BUDGET_ON_OVER_NEVER_TAKEN",
    }
    Yaml {
        /// A pipeline file is not valid YAML (or uses an alias to an unknown anchor).
        /// Fix: correct the syntax at the line and column shown.
        YamlSyntax = "YAML_SYNTAX",
        /// A pipeline file holds more than one YAML document.
        /// Fix: remove the `---` and everything after it, or split the file.
        YamlMultipleDocuments = "YAML_MULTIPLE_DOCUMENTS",
        /// A pipeline file nests deeper than ctx reads.
        /// Fix: flatten the document.
        YamlTooDeep = "YAML_TOO_DEEP",
        /// A pipeline file expands (through aliases) to more values than ctx reads.
        /// Fix: write fewer aliases of large nodes.
        YamlTooLarge = "YAML_TOO_LARGE",
        /// A key appears twice in the same mapping.
        /// Fix: keep one; the help line gives the first one's line.
        YamlDuplicateKey = "YAML_DUPLICATE_KEY",
        /// A key is not one this mapping takes.
        /// Fix: rename it (the help line suggests a key) or remove it.
        YamlUnknownKey = "YAML_UNKNOWN_KEY",
        /// A required key is missing.
        /// Fix: add it, as the help line shows.
        YamlMissingKey = "YAML_MISSING_KEY",
        /// A value has the wrong type (a list where a number goes, …).
        /// Fix: write a value of the type the message names.
        YamlWrongType = "YAML_WRONG_TYPE",
        /// Two keys that say the same thing are both given (`tokenizer` and `gguf`, an inline model
        /// and a `config.json`).
        /// Fix: keep one of them.
        YamlConflictingKeys = "YAML_CONFLICTING_KEYS",
        /// A step's `action` is not a step kind.
        /// Fix: use a step kind (`search_nodes`, `call_model`, …); the help line suggests one.
        YamlUnknownAction = "YAML_UNKNOWN_ACTION",
        /// A chain of `extends` comes back to a file already in it.
        /// Fix: break the cycle: a file cannot extend itself, directly or not.
        YamlExtendsCycle = "YAML_EXTENDS_CYCLE",
        /// A chain of `extends` is longer than ctx follows.
        /// Fix: merge some of the base files.
        YamlExtendsTooDeep = "YAML_EXTENDS_TOO_DEEP",
        /// A pipeline file (or a file it `extends`) cannot be read.
        /// Fix: check the path; `extends` paths are relative to the file that writes them.
        PipelineFileUnreadable = "PIPELINE_FILE_UNREADABLE",
        /// A pipeline file has several problems of different codes (each is listed with its own
        /// code).
        /// Fix: fix each listed problem.
        PipelineFileInvalid = "PIPELINE_FILE_INVALID",
    }
    Tokens {
        /// A tokenizer backend failed (for example a remote tokenize endpoint), or cannot count
        /// as configured (`CTX_TOKENS_THREADS` holding no number of threads).
        /// Fix: see the backend's reason in the message; check that the endpoint is up; set
        /// `CTX_TOKENS_THREADS` to a positive integer or `auto`, or unset it.
        TokenizerBackend = "TOKENIZER_BACKEND",
        /// Token ids do not decode to valid UTF-8 text under the encoding.
        /// Fix: decode whole token sequences, not slices that split a character.
        TokenDecode = "TOKEN_DECODE",
        /// The model's chat template cannot render part of a request (tool schemas, tool calls,
        /// names), so the server would drop it without the model ever seeing it.
        /// Fix: remove that part of the request, or serve the model with a template that renders it.
        ChatTemplateUnsupported = "CHAT_TEMPLATE_UNSUPPORTED",
        /// The model's chat template failed to render a request (a syntax error, or the template's
        /// own `raise_exception`, such as "roles must alternate user/assistant").
        /// Fix: send the messages in the order the template requires.
        ChatTemplateRender = "CHAT_TEMPLATE_RENDER",
        /// An assistant message carries an OpenAI Responses reasoning item whose reasoning is
        /// encrypted (`encrypted_content`), and no count of its tokens (`reasoning_tokens`), so the
        /// request cannot be counted: ctx refuses it rather than count it short.
        /// Fix: keep the message as ctx's agent step or `ResponsesClient` built it (they set the
        /// count from the reply's usage), or set `ChatMessage::reasoning_tokens` yourself.
        ReasoningUncounted = "REASONING_UNCOUNTED",
    }
    Run {
        /// A loaded pipeline is given a definition whose steps differ from its own.
        /// Fix: load the pipeline's own definition (`Name::definition()`).
        PipelineStepsDiffer = "PIPELINE_STEPS_DIFFER",
        /// Loading found no problem but could not resolve the pipeline.
        /// Fix: a bug in ctx; please report it with the pipeline.
        PipelineUnresolved = "PIPELINE_UNRESOLVED",
        /// `run_step` was asked for a step index the pipeline does not have.
        /// Fix: run the indexes a run step returns, starting at 0.
        PipelineStepIndex = "PIPELINE_STEP_INDEX",
        /// A snapshot resumes at a step the pipeline does not have.
        /// Fix: resume a snapshot with the pipeline (version) that wrote it.
        PipelineUnknownSnapshotStep = "PIPELINE_UNKNOWN_SNAPSHOT_STEP",
        /// The step's kind is newer than this runtime (crates of ctx of different versions).
        /// Fix: use the same version of every ctx crate (depend on the `ctx` facade alone).
        PipelineUnsupportedStep = "PIPELINE_UNSUPPORTED_STEP",
        /// A step needs a backend (`NodeSearch`, `NodeStore`, `ChatModel`, `CustomSteps`) that the
        /// step environment does not hold.
        /// Fix: add it with the builder method the message names.
        PipelineMissingBackend = "PIPELINE_MISSING_BACKEND",
        /// A step uses a named model (`model: NAME`) for which the run was given no `ChatModel`.
        /// Fix: give the client under that name: `StepEnv::builder().models(&[("NAME", &client)])`,
        /// or the generated environment's field for the model.
        PipelineMissingModel = "PIPELINE_MISSING_MODEL",
        /// The caller's search or store backend failed.
        /// Fix: see the backend's error in the message.
        PipelineBackendFailed = "PIPELINE_BACKEND_FAILED",
        /// A custom step returned an outcome it does not declare.
        /// Fix: return one of the declared outcomes, or declare it.
        PipelineUnknownOutcome = "PIPELINE_UNKNOWN_OUTCOME",
        /// A custom step changed `loop_counts`, which would void the termination proof.
        /// Fix: leave `state.loop_counts` to the loop guards.
        PipelineLoopCountsChanged = "PIPELINE_LOOP_COUNTS_CHANGED",
        /// At run time, a step reads a field or variable that nothing has set so far.
        /// Fix: set the variable before the step reads it, or read a state field.
        PipelineMissingSource = "PIPELINE_MISSING_SOURCE",
        /// At run time, a `set_variables` rule met a value it cannot store or transform.
        /// Fix: make the source hold a value of the type the rule expects.
        PipelineSetVariable = "PIPELINE_SET_VARIABLE",
        /// A `call_model` step's prompt has no text at run time.
        /// Fix: provide it with `LoadOptions::prompt(key, text)`.
        PipelinePromptWithoutText = "PIPELINE_PROMPT_WITHOUT_TEXT",
        /// A prompt file given to `LoadOptions::prompt_file` cannot be read.
        /// Fix: correct the path.
        PipelinePromptFile = "PIPELINE_PROMPT_FILE",
        /// A run took more steps than the termination bound proven at load time: the state's loop
        /// counts were changed from outside the pipeline during the run.
        /// Fix: do not reset `state.loop_counts` during a run.
        PipelineStepBoundExceeded = "PIPELINE_STEP_BOUND_EXCEEDED",
        /// A step's configuration was not resolved: the pipeline was not built by
        /// `LoadedPipeline::load`.
        /// Fix: load the pipeline with `LoadedPipeline::load` (or its generated `load`).
        PipelineNotResolved = "PIPELINE_NOT_RESOLVED",
        /// A typed pipeline's environment was asked to run a step that is not one of its custom steps.
        /// Fix: run the pipeline with the environment generated for it.
        PipelineNotCustom = "PIPELINE_NOT_CUSTOM",
        /// A typed pipeline's environment was asked for a tool it does not declare.
        /// Fix: run the pipeline with the environment generated for it.
        PipelineNotTool = "PIPELINE_NOT_TOOL",
        /// A model request could pass a spend cap (the run's `max_cost_per_run`, or the
        /// conversation's cap set in `LoadOptions`): priced at its exact prompt as uncached input
        /// plus its whole output limit, it costs more than what is left. The run stopped before
        /// sending it; the message names what was spent and what is left.
        /// Fix: raise the cap, lower the step's output limit or budgets, or start a new
        /// conversation.
        PipelineSpendCapReached = "PIPELINE_SPEND_CAP_REACHED",
        /// A step needs a backend only a Rust program can give, so `ctx run` cannot run the
        /// pipeline: an `agent` step's tools declared in Rust are answered by the program's tool
        /// handlers (tools from MCP servers, `mcp_servers`, the command line runs), a `custom`
        /// step is the program's code. The pipeline is valid; `ctx check` warns at the
        /// step and `ctx run` refuses the file before any request.
        /// Fix: run the pipeline from Rust, giving the step its backend
        /// (`StepEnv::builder().tools(&handlers)`, `.custom(&steps)`).
        PipelineNeedsRustBackend = "PIPELINE_NEEDS_RUST_BACKEND",
        /// A model step that renders `context_blocks` found fetched evidence waiting in
        /// `node_texts` (no `manage_context_budget` step took it), and the evidence does not fit
        /// beside the context already there (carried from an earlier question, or appended by an
        /// earlier step) within `max_context_tokens`. Nothing was sent and the state is unchanged.
        /// Fix: put a `manage_context_budget` step between the fetch and the model step, whose
        /// `on_over` makes room (a summary, a reset of the context), or lower `evidence_tokens`.
        PipelineEvidenceOverBudget = "PIPELINE_EVIDENCE_OVER_BUDGET",
        /// A run-time input (the question, a variable a step renders, or a value the contract
        /// bounds by another declaration: `last_model_response`, `context_blocks`) counts more
        /// tokens than its budget in the contract. The run was refused before the request that
        /// would carry it (the question: before any request), and the state is unchanged.
        /// Fix: shorten the input, or raise its budget (`max_question_tokens`,
        /// `max_variable_tokens`, …) and make room for it in the contract.
        PipelineInputOverBudget = "PIPELINE_INPUT_OVER_BUDGET",
    }
    Client {
        /// The server said the prompt plus the output does not fit its context.
        /// Fix: declare the server's real context window, so that the contract checks it before sending.
        ModelContextLengthExceeded = "MODEL_CONTEXT_LENGTH_EXCEEDED",
        /// A model call failed in a way no other code describes.
        /// Fix: see the message.
        ModelCallFailed = "MODEL_CALL_FAILED",
        /// No connection to the model server could be established (refused, DNS, TLS, connect
        /// timeout).
        /// Fix: check the base URL and that the server is up.
        ModelConnect = "MODEL_CONNECT",
        /// The connection broke before a complete response arrived.
        /// Fix: retry; check proxies and the server's logs.
        ModelTransport = "MODEL_TRANSPORT",
        /// The server did not answer (or, streaming, stopped sending) within the time allowed.
        /// Fix: raise the client's timeout, or ask for less output.
        ModelTimeout = "MODEL_TIMEOUT",
        /// The server answered 429 Too Many Requests.
        /// Fix: wait (the message gives `Retry-After` when sent), lower the request rate, or retry more.
        ModelRateLimited = "MODEL_RATE_LIMITED",
        /// The server answered with an error status (other than 429 and context-length errors).
        /// Fix: see the status and the server's message.
        ModelHttpStatus = "MODEL_HTTP_STATUS",
        /// The response body is not a chat completion (not JSON, or missing required fields).
        /// Fix: check that the base URL points at an OpenAI- or Anthropic-compatible API.
        ModelMalformedBody = "MODEL_MALFORMED_BODY",
        /// The response body ended early (connection closed mid-body, or a stream without its end).
        /// Fix: retry; check proxies and the server's logs.
        ModelTruncatedBody = "MODEL_TRUNCATED_BODY",
        /// The completion has no choices, so there is no reply to read.
        /// Fix: check the server's logs; retry.
        ModelEmptyChoices = "MODEL_EMPTY_CHOICES",
        /// Every attempt failed with a retryable error; the message carries the last one.
        /// Fix: see the last error; raise the retry limit if the failures are transient.
        ModelRetriesExhausted = "MODEL_RETRIES_EXHAUSTED",
        /// A local model could not count tokens.
        /// Fix: see the counter's error in the message.
        ModelTokenizer = "MODEL_TOKENIZER",
        /// The request asks for something the model's API cannot express (a system message after
        /// the conversation started, JSON mode on an API that has none, …); nothing was sent.
        /// Fix: change the request as the message says.
        ModelUnsupportedRequest = "MODEL_UNSUPPORTED_REQUEST",
    }
    Negotiation {
        /// The negotiation `floor` is 0.
        /// Fix: use the least output worth generating, e.g. 500.
        NegotiationFloorInvalid = "NEGOTIATION_FLOOR_INVALID",
        /// The caller asked for no output at all.
        /// Fix: ask for at least one output token.
        NegotiationZeroOutput = "NEGOTIATION_ZERO_OUTPUT",
        /// Even with the whole history dropped, the request leaves no room for the output floor.
        /// Fix: shorten the system prompt, memories or question, or lower the floor or the margin.
        NegotiationNoRoom = "NEGOTIATION_NO_ROOM",
        /// The history's leading system message, which trimming always keeps, does not fit the
        /// budget by itself.
        /// Fix: shorten the system message, or raise the history budget.
        HistorySystemOverBudget = "HISTORY_SYSTEM_OVER_BUDGET",
    }
    Turn {
        /// A turn budget setting is missing.
        /// Fix: add it, as the help line shows.
        TurnSettingMissing = "TURN_SETTING_MISSING",
        /// A turn budget setting is out of range.
        /// Fix: give a value in the range the message names.
        TurnSettingInvalid = "TURN_SETTING_INVALID",
        /// A turn's `budget_tokens` is more than the context window.
        /// Fix: lower it, leaving room for the answer.
        TurnBudgetExceedsWindow = "TURN_BUDGET_EXCEEDS_WINDOW",
        /// A turn's `fallback_fraction` is outside (0, 1].
        /// Fix: use a fraction of the window such as 0.8.
        TurnFallbackFractionInvalid = "TURN_FALLBACK_FRACTION_INVALID",
        /// A turn's `on_partial` is not a policy.
        /// Fix: use one of the policies the help line lists.
        TurnPartialPolicyUnknown = "TURN_PARTIAL_POLICY_UNKNOWN",
        /// A turn's `document_template` does not hold `{text}` exactly once.
        /// Fix: write `{text}` once where the document goes.
        TurnDocumentTemplateInvalid = "TURN_DOCUMENT_TEMPLATE_INVALID",
        /// Not even an empty result for a tool call fits in what the turn has left.
        /// Fix: raise the turn budget, or make fewer tool calls per turn.
        TurnBudgetExhausted = "TURN_BUDGET_EXHAUSTED",
        /// A tool result does not fit what is left: it was packed before another result was recorded.
        /// Fix: pack the result again before recording it.
        TurnResultOverflow = "TURN_RESULT_OVERFLOW",
        /// A tool result repeats a document the turn already holds: it was packed before another
        /// result carrying it was recorded.
        /// Fix: pack the result again before recording it.
        TurnStaleResult = "TURN_STALE_RESULT",
        /// The partial-document policy is `compact` but no compactor was given.
        /// Fix: give a compactor, or choose another `on_partial` policy.
        TurnMissingCompactor = "TURN_MISSING_COMPACTOR",
        /// The compactor of a turn failed on a document.
        /// Fix: see the compactor's reason in the message.
        TurnCompactorFailed = "TURN_COMPACTOR_FAILED",
    }
    Engine {
        /// Two retrievers, contexts or compactors of a context engine share a name (or a
        /// retriever has a context's name).
        /// Fix: give each its own name.
        EngineDuplicateName = "ENGINE_DUPLICATE_NAME",
        /// A retriever, context or compactor has an empty name.
        /// Fix: name it.
        EngineEmptyName = "ENGINE_EMPTY_NAME",
        /// A retriever's `limit` is below 1.
        /// Fix: set it to the number of blocks one page may return, at least 1.
        EngineRetrieverLimit = "ENGINE_RETRIEVER_LIMIT",
        /// A context's `input_budget.max_tokens` is below 1.
        /// Fix: set it to the tokens the assembled input may use.
        EngineInvalidBudget = "ENGINE_INVALID_BUDGET",
        /// A pack's `overflow` is not one ctx knows.
        /// Fix: use one of the values the help line lists.
        EngineInvalidOverflow = "ENGINE_INVALID_OVERFLOW",
        /// A pack names a compactor that is not declared.
        /// Fix: declare it in `compactors`, or correct the name (the help line suggests one).
        EngineUnknownCompactor = "ENGINE_UNKNOWN_COMPACTOR",
        /// A pack's `expansion.max_pages` is below 1.
        /// Fix: 1 disables paging; more lets a pack fetch further pages.
        EngineMaxPages = "ENGINE_MAX_PAGES",
        /// A pack's `expansion.min_fill_ratio` is outside (0, 1].
        /// Fix: 1.0 pages until the pack is full; 0.5 stops at half.
        EngineMinFillRatio = "ENGINE_MIN_FILL_RATIO",
        /// A ratio (a pack's share, the default ratio) is outside (0, 1].
        /// Fix: a ratio is a share of the room the fixed messages leave: write one in (0, 1].
        EngineRatioRange = "ENGINE_RATIO_RANGE",
        /// The pack ratios of a context sum to more than 1.
        /// Fix: lower `pack_budget.default_ratio` or the per-pack ratios.
        EngineRatioSum = "ENGINE_RATIO_SUM",
        /// A template is malformed.
        /// Fix: variables are `{input.name}` or `{context.pack}`; `{{` and `}}` are literal braces.
        EngineTemplateSyntax = "ENGINE_TEMPLATE_SYNTAX",
        /// A template uses a variable the context does not declare.
        /// Fix: declare the input, or correct the name.
        EngineUnknownVariable = "ENGINE_UNKNOWN_VARIABLE",
        /// A context has no messages.
        /// Fix: add system, user, context or history messages.
        EngineNoMessages = "ENGINE_NO_MESSAGES",
        /// An input name is not letters, digits, `_` or `-`.
        /// Fix: rename it.
        EngineInvalidInput = "ENGINE_INVALID_INPUT",
        /// A context inserts history twice.
        /// Fix: keep one `history` message.
        EngineDuplicateHistory = "ENGINE_DUPLICATE_HISTORY",
        /// A context inserts the same pack twice, so `{context.pack}` is ambiguous.
        /// Fix: insert each pack once.
        EngineDuplicatePack = "ENGINE_DUPLICATE_PACK",
        /// A context inserts a pack that is neither a declared retriever nor a declared context.
        /// Fix: declare it, or correct the name (the help line suggests one).
        EngineUnknownPack = "ENGINE_UNKNOWN_PACK",
        /// A nested context inserts history; history belongs to the outer context.
        /// Fix: move the `history` message to the outer context.
        EngineNestedHistory = "ENGINE_NESTED_HISTORY",
        /// Contexts nest each other in a cycle.
        /// Fix: break the cycle.
        EngineNestedCycle = "ENGINE_NESTED_CYCLE",
        /// A declared retriever has no registered implementation.
        /// Fix: call `.retriever(name, …)` on the builder.
        EngineRetrieverNotRegistered = "ENGINE_RETRIEVER_NOT_REGISTERED",
        /// A retriever is registered but not declared.
        /// Fix: declare it in `retrievers` with its query and limit.
        EngineUndeclaredRetriever = "ENGINE_UNDECLARED_RETRIEVER",
        /// A declared compactor is not registered.
        /// Fix: call `.compactor(name, …)` on the builder.
        EngineCompactorNotRegistered = "ENGINE_COMPACTOR_NOT_REGISTERED",
        /// No context of this name is declared.
        /// Fix: assemble one of the declared contexts (the message lists them).
        EngineUnknownContext = "ENGINE_UNKNOWN_CONTEXT",
        /// A template uses a variable the caller did not provide.
        /// Fix: pass a value for every input the context declares.
        EngineMissingVariable = "ENGINE_MISSING_VARIABLE",
        /// A template variable holds a value that is not text (an object, an array or null).
        /// Fix: pass text (or a number or boolean) for it.
        EngineVariableNotText = "ENGINE_VARIABLE_NOT_TEXT",
        /// The messages that cannot shrink (templates, base prompt, chat overhead) alone exceed the
        /// input budget.
        /// Fix: shorten the fixed messages, or raise `input_budget.max_tokens`.
        EngineFixedOverBudget = "ENGINE_FIXED_OVER_BUDGET",
        /// With `overflow: error`, the assembled messages exceed the input budget.
        /// Fix: raise the budget, or choose an overflow that trims or compacts.
        EngineInputOverBudget = "ENGINE_INPUT_OVER_BUDGET",
        /// With `overflow: error`, a pack's content exceeds its allocation.
        /// Fix: raise its ratio, or choose an overflow that trims or compacts.
        EnginePackOverBudget = "ENGINE_PACK_OVER_BUDGET",
        /// A retriever failed.
        /// Fix: see the retriever's error in the message.
        EngineRetrieverFailed = "ENGINE_RETRIEVER_FAILED",
        /// A compactor failed.
        /// Fix: see the compactor's error in the message.
        EngineCompactorFailed = "ENGINE_COMPACTOR_FAILED",
        /// A compactor returned text longer than it was asked for.
        /// Fix: make the compactor respect the budget it is given.
        EngineCompactorOverBudget = "ENGINE_COMPACTOR_OVER_BUDGET",
        /// A compactor's model window is too small for the text and instructions it must send.
        /// Fix: give the compactor a model with a larger window, or smaller pieces.
        CompactorWindowTooSmall = "COMPACTOR_WINDOW_TOO_SMALL",
        /// A compactor failed (a reason of its own).
        /// Fix: see the compactor's reason in the message.
        CompactorFailed = "COMPACTOR_FAILED",
    }
    Retrieve {
        /// A file or directory to index could not be read.
        /// Fix: check the path and its permissions.
        RetrieveIo = "RETRIEVE_IO",
        /// The root given to `Bm25Index::from_dir` is not a directory.
        /// Fix: give a directory.
        RetrieveNotADirectory = "RETRIEVE_NOT_A_DIRECTORY",
        /// No indexed node has this id.
        /// Fix: use an id the index returned (the message suggests the closest one).
        RetrieveUnknownNode = "RETRIEVE_UNKNOWN_NODE",
        /// A file could not be chunked, or the chunk options are invalid.
        /// Fix: see the reason in the message.
        RetrieveChunk = "RETRIEVE_CHUNK",
    }
    Dataflow {
        /// A `fetch_node_texts` step's texts never reach a model request: every path from it
        /// meets only model steps whose user message leaves out `context_blocks` (a step whose
        /// `user_parts` render the context takes the pending texts into it, as the default parts
        /// do), or another fetch or a `node_texts = null` rule that drops them first, and no path
        /// ends the run without a model step (a retrieval run, whose caller reads
        /// `state.node_texts`, is accepted). A step that assembles a declared context
        /// (`context: NAME`) takes them only when that context has `context_blocks` as an input.
        /// The evidence is fetched and counted, then dropped. An error.
        /// Fix: render the context in the model step (a `user_parts` entry with source
        /// `context_blocks`, or the default parts), or append the texts with a
        /// `manage_context_budget` step before it.
        DataflowEvidenceUnused = "DATAFLOW_EVIDENCE_UNUSED",
        /// The hits of a `search_nodes` (or `expand_dependency_tree`) step are never read: no
        /// `fetch_node_texts`, `expand_dependency_tree` or custom step follows before the run
        /// meets a model step (which never sees hits, only fetched texts) or another search
        /// replaces them, and no path ends the run without a model step (a search-only run,
        /// whose caller reads `state.search_results`, is accepted). An error.
        /// Fix: fetch the hits' texts after the search (`fetch_node_texts`), or remove the step.
        DataflowHitsUnused = "DATAFLOW_HITS_UNUSED",
        /// A warning: a model step's reply (`last_model_response`) is replaced by another model
        /// step, or cleared by a rule, on every path before any step reads it, so no later
        /// request sees it and it is not the run's answer (`summarize → answer` with nothing
        /// between: the summary never reaches the answer). A warning rather than an error
        /// because a streaming sink receives every step's tokens and may show this reply.
        /// Fix: pass the reply on before it is replaced (a `set_variables` rule reading
        /// `last_model_response`, or a `user_parts` entry of the next model step reading it).
        DataflowResponseOverwritten = "DATAFLOW_RESPONSE_OVERWRITTEN",
        /// A warning: a `set_variables` rule gives a variable a value that no step reads (no
        /// rule's `from`, no `user_parts` source, no context input) and the pipeline has no
        /// custom step (which may read any variable). A warning because the caller may read
        /// `state.variables` after the run, and a conversation carries variables to the next
        /// question, where again only the caller sees this one.
        /// Fix: read the variable where it is needed, or remove the rule.
        DataflowVariableUnread = "DATAFLOW_VARIABLE_UNREAD",
        /// A warning: a prompt is declared in `prompts` but no step's `prompt_key` names it. A
        /// warning because a base file shared through `extends` declares prompts for several
        /// pipelines; not reported while a step names an undeclared prompt (that error is likely
        /// the same mistake).
        /// Fix: name the prompt in the model step meant to use it, or remove it.
        DataflowPromptUnused = "DATAFLOW_PROMPT_UNUSED",
        /// A warning: a model is declared in `models` but no step names it (`model: NAME`). A
        /// warning because a base file shared through `extends` may declare models for several
        /// pipelines; not reported while a step names an undeclared model.
        /// Fix: name the model in the step meant to use it, or remove it.
        DataflowModelUnused = "DATAFLOW_MODEL_UNUSED",
        /// A warning: a context is declared in `contexts` but no model step assembles it
        /// (`context: NAME`); not reported while a step names an undeclared context.
        /// Fix: name the context in the model step whose request it makes, or remove it.
        DataflowContextUnused = "DATAFLOW_CONTEXT_UNUSED",
        /// A warning: a setting nothing reads. `max_history_tokens`, `history_trim` or
        /// `history_low_water_percent` when no step sends history (no `use_history: true`, no
        /// context with a `history` message), so the history stays empty; or an integer setting
        /// no `loop_guard` names (the caller's code may still read it with
        /// `LoadedPipeline::setting`). A warning because a base file shared through `extends`
        /// may set it for other pipelines.
        /// Fix: use the setting (`use_history: true`, `max_turn_loops_from_settings: NAME`), or
        /// remove it.
        DataflowSettingUnused = "DATAFLOW_SETTING_UNUSED",
    }
}
