//! MSBuild project files (`.csproj`, `.props`, `.targets`, …) and other .NET XML: XML comments
//! only, and only where no reader can see them.
//!
//! `<!-- … -->` is not a comment inside attribute values, CDATA sections or processing
//! instructions. Where a comment stands decides whether it may go:
//!
//! - In an MSBuild project (root `<Project>`), MSBuild skips comments between the elements it
//!   reads as structure: in `Project`, `PropertyGroup`, `ItemGroup`, `ItemDefinitionGroup`, an
//!   item, `ImportGroup`, `Choose`, `When`, `Otherwise`, `Target`, a task, `UsingTask` and
//!   `ParameterGroup`. Those go, with their line when they stand alone on it.
//! - A property, a piece of item metadata or an inline task body is a value. MSBuild reads a
//!   value that holds markup (an element, CDATA, a processing instruction) as its inner XML,
//!   comments included, so nothing in it is touched. A value of text and comments is read as its
//!   text: there a comment goes, and only the comment (the whitespace around it is part of the
//!   value). A value of whitespace and comments alone keeps them: recent MSBuild versions read a
//!   lone whitespace node as empty, so removing the comment would change it.
//! - Elements MSBuild does not know (`ProjectExtensions`, `Import`, `Output`, …) keep their
//!   comments.
//! - In other XML (`.config`, `.resx`, `.nuspec`), a comment goes only from an element whose
//!   content is elements alone (and no ancestor of which holds text or CDATA): in text, the
//!   reader may read the markup.
//!
//! A text that is not well-formed enough to tell (an unclosed or mismatched element, a DOCTYPE
//! that could declare entities) is left as it is.

use std::borrow::Cow;

/// What an element is to MSBuild, which decides what its comments are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Project,
    PropertyGroup,
    /// `ItemGroup` and `ItemDefinitionGroup`: their children are items.
    ItemGroup,
    /// An item: its children are metadata.
    Item,
    ImportGroup,
    Choose,
    /// `When` and `Otherwise`.
    Branch,
    Target,
    /// An element in a target other than a property or item group: its children are `Output`s.
    Task,
    UsingTask,
    ParameterGroup,
    /// A property, a piece of metadata, an inline task body.
    Value,
    /// Inside a value, or an element MSBuild does not read as structure: comments stay.
    Kept,
    /// An element of a document that is not an MSBuild project.
    Other,
}

impl Role {
    /// The role of an element named `name` whose parent has this role.
    fn child(self, name: &str) -> Role {
        match (self, name) {
            (Role::Project | Role::Branch | Role::Target, "PropertyGroup") => Role::PropertyGroup,
            (Role::Project | Role::Branch | Role::Target, "ItemGroup") => Role::ItemGroup,
            (Role::Project | Role::Branch, "Choose") => Role::Choose,
            (Role::Project, "ItemDefinitionGroup") => Role::ItemGroup,
            (Role::Project, "ImportGroup") => Role::ImportGroup,
            (Role::Project, "Target") => Role::Target,
            (Role::Project, "UsingTask") => Role::UsingTask,
            (Role::Choose, "When" | "Otherwise") => Role::Branch,
            (Role::Target, "OnError") => Role::Kept,
            (Role::Target, _) => Role::Task,
            (Role::UsingTask, "ParameterGroup") => Role::ParameterGroup,
            (Role::UsingTask, "Task") => Role::Value,
            (Role::PropertyGroup, _) => Role::Value,
            (Role::ItemGroup, _) => Role::Item,
            (Role::Item, _) => Role::Value,
            (Role::Other, _) => Role::Other,
            _ => Role::Kept,
        }
    }

    /// Whether MSBuild reads this element's children as elements, skipping comments.
    fn structural(self) -> bool {
        !matches!(self, Role::Value | Role::Kept | Role::Other)
    }
}

/// One element, once read to its end tag.
#[derive(Debug)]
struct Element {
    role: Role,
    parent: Option<usize>,
    /// Child elements.
    elements: bool,
    /// Text other than XML whitespace.
    text: bool,
    cdata: bool,
    instructions: bool,
}

/// The project text without its comments (see the module documentation).
pub(crate) fn strip(src: &str) -> Cow<'_, str> {
    if !src.contains("<!--") {
        return Cow::Borrowed(src);
    }
    let Some(removals) = removals(src) else { return Cow::Borrowed(src) };
    let mut out = String::with_capacity(src.len());
    let mut copied = 0;
    for (start, end) in removals {
        if start < copied {
            continue;
        }
        out.push_str(&src[copied..start]);
        copied = end;
    }
    out.push_str(&src[copied..]);
    if out == src { Cow::Borrowed(src) } else { Cow::Owned(out) }
}

fn is_xml_space(text: &str) -> bool {
    text.bytes().all(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
}

/// The byte ranges to remove, in order; `None` when the text must be left alone.
fn removals(src: &str) -> Option<Vec<(usize, usize)>> {
    let b = src.as_bytes();
    let mut elements: Vec<Element> = Vec::new();
    // Open elements: index into `elements`, and the name.
    let mut open: Vec<(usize, &str)> = Vec::new();
    // Comments: range and the element they are in.
    let mut comments: Vec<(usize, usize, Option<usize>)> = Vec::new();
    let find = |from: usize, close: &str| src[from..].find(close).map(|k| from + k + close.len());
    let mut text_from = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'<' {
            i += 1;
            continue;
        }
        let parent = open.last().map(|&(e, _)| e);
        // A byte order mark may open the text.
        let text = &src[text_from..i];
        if !is_xml_space(if text_from == 0 { text.trim_start_matches('\u{feff}') } else { text }) {
            elements.get_mut(parent?)?.text = true;
        }
        let rest = &src[i..];
        i = if rest.starts_with("<!--") {
            let end = find(i + 4, "-->")?;
            comments.push((i, end, parent));
            end
        } else if rest.starts_with("<![CDATA[") {
            elements.get_mut(parent?)?.cdata = true;
            find(i + 9, "]]>")?
        } else if rest.starts_with("<?") {
            if let Some(p) = parent {
                elements[p].instructions = true;
            }
            find(i + 2, "?>")?
        } else if rest.starts_with("<!") {
            // A DOCTYPE may declare entities that expand to anything.
            return None;
        } else if let Some(tag) = rest.strip_prefix("</") {
            let end = tag_end(b, i)?;
            let (_, name) = open.pop()?;
            if tag_name(tag) != name {
                return None;
            }
            end
        } else {
            let end = tag_end(b, i)?;
            let name = tag_name(&rest[1..]);
            if name.is_empty() {
                return None;
            }
            let role = match parent {
                None if name == "Project" => Role::Project,
                None => Role::Other,
                Some(p) => {
                    elements[p].elements = true;
                    elements[p].role.child(name)
                }
            };
            if b[end - 2] != b'/' {
                open.push((elements.len(), name));
            }
            elements.push(Element { role, parent, elements: false, text: false, cdata: false, instructions: false });
            end
        };
        text_from = i;
    }
    if !open.is_empty() || !is_xml_space(&src[text_from..]) {
        return None;
    }
    let mixed = |e: &Element| e.text || e.cdata;
    let mut removals = Vec::new();
    for (start, end, parent) in comments {
        let Some(p) = parent else {
            removals.push(with_line(src, start, end));
            continue;
        };
        let e = &elements[p];
        if e.role.structural() {
            removals.push(with_line(src, start, end));
        } else if e.role == Role::Value {
            if e.text && !e.elements && !e.cdata && !e.instructions {
                removals.push((start, end));
            }
        } else if e.role == Role::Other && e.elements && !mixed(e) {
            let mut ancestor = e.parent;
            let mut clean = true;
            while let Some(a) = ancestor {
                clean &= !mixed(&elements[a]);
                ancestor = elements[a].parent;
            }
            if clean {
                removals.push(with_line(src, start, end));
            }
        }
    }
    Some(removals)
}

/// The comment `start..end` with its line when nothing else is on it (between elements, where
/// whitespace means nothing), else the comment alone.
fn with_line(src: &str, start: usize, end: usize) -> (usize, usize) {
    let line_start = src[..start].rfind('\n').map_or(0, |k| k + 1);
    let Some(line_end) = src[end..].find('\n').map(|k| end + k) else { return (start, end) };
    if is_xml_space(&src[line_start..start]) && is_xml_space(&src[end..line_end]) {
        (line_start, line_end + 1)
    } else {
        (start, end)
    }
}

/// The name a tag starts with (after `<` or `</`).
fn tag_name(tag: &str) -> &str {
    let end = tag.find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>').unwrap_or(tag.len());
    &tag[..end]
}

/// End of a tag starting at `i`, skipping quoted attribute values.
fn tag_end(b: &[u8], i: usize) -> Option<usize> {
    let mut quote = None;
    for (k, &c) in b.iter().enumerate().skip(i + 1) {
        match (quote, c) {
            (None, b'"' | b'\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, b'>') => return Some(k + 1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_lines_between_elements_go() {
        let src = "<Project>\n  <PropertyGroup>\n    <!-- why -->\n    <A>1</A>\n  </PropertyGroup>\n</Project>\n";
        assert_eq!(strip(src), "<Project>\n  <PropertyGroup>\n    <A>1</A>\n  </PropertyGroup>\n</Project>\n");
    }

    #[test]
    fn values_attributes_and_cdata_are_untouched() {
        // A value of whitespace and a comment: without the comment, recent MSBuild reads it as empty.
        let leaf = "<Project><PropertyGroup><NoWarn>\n  <!-- c -->\n</NoWarn></PropertyGroup></Project>";
        assert_eq!(strip(leaf), leaf);
        let attr = "<A Condition=\"'$(X)' == '<!-- -->'\" />";
        assert_eq!(strip(attr), attr);
        let cdata = "<A><![CDATA[ <!-- kept --> ]]></A>";
        assert_eq!(strip(cdata), cdata);
        // MSBuild reads a property of text and comments as its text: the comment is no value.
        let list = "<Project><PropertyGroup><NoWarn>CS1591;<!-- CS0618; -->CS1701</NoWarn></PropertyGroup></Project>";
        assert_eq!(strip(list), "<Project><PropertyGroup><NoWarn>CS1591;CS1701</NoWarn></PropertyGroup></Project>");
    }

    /// Issue 26, item 3: a property whose value is XML keeps its comments: MSBuild returns the
    /// inner XML, comments included.
    #[test]
    fn a_comment_inside_an_xml_property_value_is_part_of_the_value() {
        let src = "<Project>\n  <PropertyGroup>\n    <!-- goes -->\n    <Manifest>\n      <Root>\n        <!-- part of the value -->\n        <Item />\n      </Root>\n    </Manifest>\n  </PropertyGroup>\n</Project>\n";
        assert_eq!(
            strip(src),
            "<Project>\n  <PropertyGroup>\n    <Manifest>\n      <Root>\n        <!-- part of the value -->\n        <Item />\n      </Root>\n    </Manifest>\n  </PropertyGroup>\n</Project>\n"
        );
        // The comment directly in the property, beside an element or CDATA (removing it would make
        // the value start with CDATA and be read as text).
        for value in ["<!-- c --><X/>", "<X/><!-- c -->", "<!-- c --><![CDATA[x]]>", "a<?pi x?><!-- c -->"] {
            let src = format!("<Project><PropertyGroup><P>{value}</P></PropertyGroup></Project>");
            assert_eq!(strip(&src), src);
        }
        // The same for item metadata, `ProjectExtensions` and an inline task's body.
        let metadata = "<Project><ItemGroup><!-- goes --><None Include=\"a\"><Xml><!-- c --><a/></Xml><!-- goes --></None></ItemGroup></Project>";
        assert_eq!(
            strip(metadata),
            "<Project><ItemGroup><None Include=\"a\"><Xml><!-- c --><a/></Xml></None></ItemGroup></Project>"
        );
        let extensions =
            "<Project><ProjectExtensions><VisualStudio><!-- c --></VisualStudio></ProjectExtensions></Project>";
        assert_eq!(strip(extensions), extensions);
        let task = "<Project><UsingTask TaskName=\"T\"><!-- goes --><Task><!-- c --><Code>x</Code></Task></UsingTask></Project>";
        assert_eq!(
            strip(task),
            "<Project><UsingTask TaskName=\"T\"><Task><!-- c --><Code>x</Code></Task></UsingTask></Project>"
        );
        // In targets, `Choose`/`When` and import groups comments go.
        let target = "<Project><Target Name=\"B\"><!-- a --><Exec Command=\"x\"><!-- b --><Output TaskParameter=\"E\" PropertyName=\"E\" /></Exec><PropertyGroup><!-- c --><Q>1</Q></PropertyGroup></Target><Choose><!-- d --><When Condition=\"1\"><!-- e --><ItemGroup /></When></Choose></Project>";
        assert_eq!(
            strip(target),
            "<Project><Target Name=\"B\"><Exec Command=\"x\"><Output TaskParameter=\"E\" PropertyName=\"E\" /></Exec><PropertyGroup><Q>1</Q></PropertyGroup></Target><Choose><When Condition=\"1\"><ItemGroup /></When></Choose></Project>"
        );
    }

    /// Other XML (`.config`, `.resx`, `.nuspec`): a comment goes between elements only; inside
    /// text it is kept, since the reader may see the markup.
    #[test]
    fn other_xml_keeps_comments_inside_text() {
        let config = "<configuration>\n  <!-- goes -->\n  <appSettings>\n    <add key=\"a\" value=\"1\" /> <!-- goes -->\n  </appSettings>\n</configuration>";
        assert_eq!(
            strip(config),
            "<configuration>\n  <appSettings>\n    <add key=\"a\" value=\"1\" /> \n  </appSettings>\n</configuration>"
        );
        let mixed = "<root><value>a<!-- c -->b</value></root>";
        assert_eq!(strip(mixed), mixed);
        // Malformed XML is left as it is.
        let broken = "<a><!-- c --></b>";
        assert_eq!(strip(broken), broken);
        assert_eq!(strip("\u{feff}<!-- c -->\n<a/>"), "\u{feff}\n<a/>");
    }
}
