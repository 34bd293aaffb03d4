// The declaration is a function header: `fn name { … }` expands to `fn name() -> EngineSpec`.
ctx::context_engine! {
    pub engine help_centre {
        contexts { support { messages: [user: "Hi"] } }
    }
}

fn main() {}
