//! The XML Schema (`schemas/voml.xsd`) accepts every example and test spec that compiles, and
//! rejects specs that break the language's structure, as `xmllint --schema` sees them; and it
//! declares exactly the language table's elements and attributes (required-ness, defaults,
//! enumerated words, limits), read from the schema itself.
//!
//! The `xmllint` tests need `xmllint` (Debian: libxml2-utils; `scripts/test` installs it).
//! Without it they are skipped with a note, unless `VOML_REQUIRE_TOOLS` is set (CI), where
//! they fail. Reading the schema needs nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use std::collections::{BTreeMap, BTreeSet};

use support::{files_with_ext, finish, root};
use voml_ir::vocabulary::limits;
use voml_ir::vocabulary::schema::{Kind, ELEMENTS};

fn xmllint_available() -> bool {
    let found = Command::new("xmllint").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "xmllint is missing; install libxml2-utils (scripts/test does)"
        );
        eprintln!("note: xmllint not found; schema test skipped (install libxml2-utils)");
    }
    found
}

fn validate(file: &Path) -> Result<(), String> {
    let out = Command::new("xmllint")
        .args([
            "--noout",
            "--noent",
            "--nonet",
            "--schema",
            "schemas/voml.xsd",
        ])
        .arg(file)
        .current_dir(root())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn specs(dirs: &[&str]) -> Vec<PathBuf> {
    dirs.iter()
        .map(|d| root().join(d))
        .filter(|d| d.is_dir())
        .flat_map(|d| files_with_ext(&d, "voml"))
        .collect()
}

#[test]
fn the_schema_accepts_every_example() {
    if !xmllint_available() {
        return;
    }
    let files = specs(&[
        "examples/paper",
        "examples/mpicl",
        "examples/auralization",
        "examples/interactive",
        "examples/library",
        "examples/formats",
        "stdlib-components",
        "tests/compile",
    ]);
    assert!(files.len() >= 4, "examples missing: {files:?}");
    let problems: Vec<String> = files
        .iter()
        .filter_map(|f| validate(f).err().map(|e| format!("{}:\n{e}", f.display())))
        .collect();
    finish(problems);
}

#[test]
fn the_schema_rejects_structural_mistakes() {
    if !xmllint_available() {
        return;
    }
    // Specs the compiler rejects for structural reasons must fail the schema too.
    let broken = [
        "unknown-element",
        "misplaced-element",
        "unknown-attribute",
        "missing-attribute",
        "duplicate-element",
        "bad-value",
        "bad-number",
    ];
    let problems: Vec<String> = broken
        .iter()
        .map(|name| root().join(format!("tests/check/{name}.voml")))
        .filter(|f| validate(f).is_ok())
        .map(|f| {
            format!(
                "{} passes the schema but the compiler rejects it",
                f.display()
            )
        })
        .collect();
    finish(problems);
}

// ---------------------------------------------------------------------------------------
// The schema against the language table.

/// An element of the schema document.
#[derive(Debug, Default)]
struct Node {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<Node>,
}

impl Node {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }

    fn elements<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// Every node below (and including) this one, depth first.
    fn walk<'a>(&'a self, out: &mut Vec<&'a Node>) {
        out.push(self);
        for c in &self.children {
            c.walk(out);
        }
    }
}

fn read_xsd() -> Node {
    use quick_xml::events::Event;
    let text = std::fs::read_to_string(root().join("schemas/voml.xsd")).unwrap();
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut stack = vec![Node::default()];
    let node = |e: &quick_xml::events::BytesStart| Node {
        name: e.name().0.to_string(),
        attrs: e
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                let value = a
                    .value
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
                    .replace("&amp;", "&");
                (a.key.0.to_string(), value)
            })
            .collect(),
        children: Vec::new(),
    };
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) => stack.push(node(&e)),
            Event::Empty(e) => {
                let n = node(&e);
                stack.last_mut().unwrap().children.push(n);
            }
            Event::End(_) => {
                let n = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(n);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    stack.pop().unwrap().children.remove(0)
}

/// An attribute as the schema declares it.
#[derive(Debug)]
struct XsdAttr {
    required: bool,
    default: Option<String>,
    /// The enumerated words its type allows, when it is an enumeration or a list of one.
    words: Option<BTreeSet<String>>,
}

struct Xsd<'a> {
    named: BTreeMap<(&'a str, &'a str), &'a Node>,
}

impl<'a> Xsd<'a> {
    fn new(schema: &'a Node) -> Xsd<'a> {
        let named = schema
            .children
            .iter()
            .filter_map(|c| Some(((c.name.as_str(), c.attr("name")?), c)))
            .collect();
        Xsd { named }
    }

    fn get(&self, kind: &str, name: &str) -> Option<&'a Node> {
        self.named.get(&(kind, name)).copied()
    }

    /// The attributes a complex type declares: its own, its attribute groups', and its
    /// base's when it extends one (not those of elements declared inside it).
    fn attributes(&self, ty: &'a Node, out: &mut BTreeMap<String, XsdAttr>) {
        for c in &ty.children {
            match c.name.as_str() {
                "xs:attribute" => {
                    let name = c.attr("name").unwrap().to_string();
                    let words = match c.attr("type") {
                        Some(t) => self.words_of_type(t),
                        None => c
                            .elements("xs:simpleType")
                            .next()
                            .and_then(|s| self.words(s)),
                    };
                    out.insert(
                        name,
                        XsdAttr {
                            required: c.attr("use") == Some("required"),
                            default: c.attr("default").map(str::to_string),
                            words,
                        },
                    );
                }
                "xs:attributeGroup" => {
                    let group = self
                        .get("xs:attributeGroup", c.attr("ref").unwrap())
                        .unwrap();
                    self.attributes(group, out);
                }
                "xs:extension" => {
                    if let Some(base) = self.get("xs:complexType", c.attr("base").unwrap()) {
                        self.attributes(base, out);
                    }
                    self.attributes(c, out);
                }
                "xs:complexContent" | "xs:simpleContent" => self.attributes(c, out),
                _ => {}
            }
        }
    }

    fn words_of_type(&self, name: &str) -> Option<BTreeSet<String>> {
        self.get("xs:simpleType", name).and_then(|s| self.words(s))
    }

    /// The enumeration of a simple type (through restrictions and lists).
    fn words(&self, simple: &Node) -> Option<BTreeSet<String>> {
        if let Some(list) = simple.elements("xs:list").next() {
            return self.words_of_type(list.attr("itemType")?);
        }
        let restriction = simple.elements("xs:restriction").next()?;
        let words: BTreeSet<String> = restriction
            .elements("xs:enumeration")
            .map(|e| e.attr("value").unwrap().to_string())
            .collect();
        if !words.is_empty() {
            return Some(words);
        }
        restriction.attr("base").and_then(|b| self.words_of_type(b))
    }

    /// Every declaration of an element named `name`, with its attributes.
    fn declarations(&self, schema: &'a Node, name: &str) -> Vec<BTreeMap<String, XsdAttr>> {
        let mut nodes = Vec::new();
        schema.walk(&mut nodes);
        nodes
            .into_iter()
            .filter(|n| n.name == "xs:element" && n.attr("name") == Some(name))
            .map(|el| {
                let mut attrs = BTreeMap::new();
                let ty = match el.attr("type") {
                    Some(t) => self.get("xs:complexType", t),
                    None => el.elements("xs:complexType").next(),
                };
                if let Some(ty) = ty {
                    self.attributes(ty, &mut attrs);
                }
                attrs
            })
            .collect()
    }

    /// The value of facet `facet` of simple type `name`.
    fn facet(&self, name: &str, facet: &str) -> Option<String> {
        let simple = self.get("xs:simpleType", name)?;
        let mut nodes = Vec::new();
        simple.walk(&mut nodes);
        nodes
            .into_iter()
            .find(|n| n.name == facet)
            .and_then(|n| n.attr("value"))
            .map(str::to_string)
    }
}

/// The schema declares every element of the table with exactly its attributes, each required
/// or not and with the default as the table says, and for enumerated attributes exactly the
/// table's words; it declares no element the table does not have.
#[test]
fn the_schema_declares_the_tables_elements_and_attributes() {
    let schema = read_xsd();
    let xsd = Xsd::new(&schema);
    let mut problems = Vec::new();
    for e in ELEMENTS {
        let declarations = xsd.declarations(&schema, e.name);
        if declarations.is_empty() {
            problems.push(format!("<{}> is not declared", e.name));
        }
        for attrs in declarations {
            let table: BTreeSet<&str> = e.attrs.iter().map(|a| a.name).collect();
            let declared: BTreeSet<&str> = attrs.keys().map(String::as_str).collect();
            if table != declared {
                problems.push(format!(
                    "<{}>: the table has {:?}, the schema {:?}",
                    e.name,
                    table.difference(&declared).collect::<Vec<_>>(),
                    declared.difference(&table).collect::<Vec<_>>()
                ));
            }
            for a in e.attrs {
                let Some(x) = attrs.get(a.name) else { continue };
                if x.required != a.required {
                    problems.push(format!(
                        "<{}> `{}`: required {} in the table, {} in the schema",
                        e.name, a.name, a.required, x.required
                    ));
                }
                if x.default.as_deref() != a.default {
                    problems.push(format!(
                        "<{}> `{}`: default {:?} in the table, {:?} in the schema",
                        e.name, a.name, a.default, x.default
                    ));
                }
                let words: Option<BTreeSet<String>> = match a.kind {
                    Kind::Enum(w) | Kind::EnumSet(w) => {
                        Some(w.iter().map(|s| s.to_string()).collect())
                    }
                    _ => None,
                };
                if words != x.words {
                    problems.push(format!(
                        "<{}> `{}`: words {:?} in the table, {:?} in the schema",
                        e.name, a.name, words, x.words
                    ));
                }
            }
        }
    }
    let mut nodes = Vec::new();
    schema.walk(&mut nodes);
    for n in nodes.into_iter().filter(|n| n.name == "xs:element") {
        if let Some(name) = n.attr("name") {
            if !ELEMENTS.iter().any(|e| e.name == name) {
                problems.push(format!("the schema declares <{name}>, the table does not"));
            }
        }
    }
    finish(problems);
}

/// The schema's numeric bounds are the vocabulary's limits.
#[test]
fn the_schemas_bounds_are_the_limits() {
    let schema = read_xsd();
    let xsd = Xsd::new(&schema);
    let bounds = [
        (
            "WindowSide",
            "xs:maxInclusive",
            limits::MAX_WINDOW.to_string(),
        ),
        (
            "Quality",
            "xs:minInclusive",
            limits::MIN_QUALITY.to_string(),
        ),
        (
            "Quality",
            "xs:maxInclusive",
            limits::MAX_QUALITY.to_string(),
        ),
        (
            "FieldIndex",
            "xs:maxInclusive",
            limits::MAX_FIELD_POSITION.to_string(),
        ),
    ];
    let mut problems = Vec::new();
    for (ty, facet, value) in bounds {
        let found = xsd.facet(ty, facet);
        if found.as_deref() != Some(value.as_str()) {
            problems.push(format!("{ty} {facet} is {found:?}, the limit {value}"));
        }
    }
    let tick: f64 = xsd
        .facet("Tick", "xs:minInclusive")
        .unwrap()
        .parse()
        .unwrap();
    if tick != limits::MIN_TICK {
        problems.push(format!(
            "Tick minInclusive is {tick}, the limit {}",
            limits::MIN_TICK
        ));
    }
    finish(problems);
}
