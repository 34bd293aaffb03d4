//! The whitespace-normalising emitter shared by the SQL and C# compactors.
//!
//! A lexer turns the input into [`Piece`]s: verbatim text (code runs and literals, which are
//! never altered) and separators (whitespace runs and dropped comments). The emitter writes the
//! text pieces unchanged and replaces every maximal run of separators between two text pieces
//! by exactly one character: a newline when the run contained a line break, else a space.
//! Separators at the start and end disappear.
//!
//! Why this is safe for SQL and C#: in both languages a comment and a run of whitespace are
//! equivalent token separators, and any non-empty separator is equivalent to any other outside
//! literals, except where a line break is required (the end of a `--` or `//` comment, a C#
//! preprocessor directive, a T-SQL `GO` batch separator, an `sqlcmd` command): line breaks are
//! kept, so those stay on lines of their own. Two text pieces that were adjacent in the input
//! stay adjacent, and two pieces that were separated stay separated, so no new token can form
//! (`-/**/-` becomes `- -`, never `--`).

/// One lexed piece of a text being compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Code or a literal, written out verbatim.
    Text(&'a str),
    /// A separator: whitespace or a dropped comment. `newline` when it contains a line break.
    Gap {
        /// Whether the separator breaks the line.
        newline: bool,
    },
}

/// Collects pieces, merging adjacent text so that lexers can push one token at a time.
#[derive(Debug)]
pub(crate) struct Pieces<'a> {
    source: &'a str,
    pieces: Vec<Piece<'a>>,
    /// The text run being accumulated (byte range of `source`), if any.
    run: Option<(usize, usize)>,
}

impl<'a> Pieces<'a> {
    pub(crate) fn new(source: &'a str) -> Self {
        Pieces { source, pieces: Vec::new(), run: None }
    }

    /// Marks `start..end` of the source as verbatim text. Consecutive calls with contiguous
    /// ranges form one run.
    pub(crate) fn text(&mut self, start: usize, end: usize) {
        match &mut self.run {
            Some((_, run_end)) if *run_end == start => *run_end = end,
            _ => {
                self.close_run();
                self.run = Some((start, end));
            }
        }
    }

    /// Marks a separator.
    pub(crate) fn gap(&mut self, newline: bool) {
        self.close_run();
        self.pieces.push(Piece::Gap { newline });
    }

    fn close_run(&mut self) {
        if let Some((start, end)) = self.run.take()
            && let Some(text) = self.source.get(start..end)
            && !text.is_empty()
        {
            self.pieces.push(Piece::Text(text));
        }
    }

    /// The pieces, in order.
    pub(crate) fn finish(mut self) -> Vec<Piece<'a>> {
        self.close_run();
        self.pieces
    }
}

/// Writes `pieces` as described in the module documentation.
pub(crate) fn emit(pieces: &[Piece<'_>], capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    let mut pending: Option<bool> = None;
    for piece in pieces {
        match *piece {
            Piece::Gap { newline } => pending = Some(pending.unwrap_or(false) || newline),
            Piece::Text(text) => {
                if let Some(newline) = pending.take()
                    && !out.is_empty()
                {
                    out.push(if newline { '\n' } else { ' ' });
                }
                out.push_str(text);
            }
        }
    }
    out
}
