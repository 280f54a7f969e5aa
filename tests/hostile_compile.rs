//! Hostile specs against the compiler: files outside the spec's tree (absolute paths,
//! `file://`, `..`, symbolic links, devices, FIFOs, directories) through entities, imports
//! and figures; entity bombs; code nested ten thousand quotes deep; floods of errors. Each
//! ends fast with a located diagnostic, reads nothing it must not, and never crashes.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::Rng;
use voml_compiler::{compile, diag, Code, Options, RealFs};

const SECRET: &str = "voml-hostile-compile-secret-8d2e";

/// A fresh directory `work/spec` with a secret file in `work/` (outside the spec's tree).
fn scratch(name: &str) -> (support::Scratch, PathBuf) {
    let work = support::Scratch::new("hostile", name);
    let spec_dir = work.join("spec");
    std::fs::create_dir_all(&spec_dir).unwrap();
    std::fs::write(work.join("secret.voml"), format!("<!-- {SECRET} -->\n")).unwrap();
    (work, spec_dir)
}

fn spec_with_entity(system: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<!DOCTYPE voml [ <!ENTITY stolen SYSTEM "{system}"> ]>
<voml>
  <body>
    <visual-object name="thief">
      <description>&stolen;</description>
    </visual-object>
  </body>
</voml>
"#
    )
}

struct Compiled {
    codes: Vec<Code>,
    rendered: String,
    took: Duration,
}

fn compile_file(path: &Path, options: &Options) -> Compiled {
    let started = Instant::now();
    let out = compile(path, &RealFs, options);
    let took = started.elapsed();
    Compiled {
        codes: out.diagnostics.iter().map(|d| d.code).collect(),
        rendered: diag::render(&out.db, &out.diagnostics, false),
        took,
    }
}

fn expect_refused(what: &str, c: &Compiled, problems: &mut Vec<String>) {
    if !c.codes.contains(&Code::ReferenceRefused) {
        problems.push(format!(
            "{what}: not refused ({:?}):\n{}",
            c.codes, c.rendered
        ));
    }
    if c.rendered.contains(SECRET) || c.rendered.contains("root:") {
        problems.push(format!("{what}: leaked the file:\n{}", c.rendered));
    }
    if !c.rendered.contains("thief.voml:") {
        problems.push(format!("{what}: not located:\n{}", c.rendered));
    }
}

#[test]
fn references_cannot_leave_the_spec_tree_or_the_search_path() {
    let (work, spec_dir) = scratch("reach");
    let secret = work.join("secret.voml");
    std::os::unix::fs::symlink(&secret, spec_dir.join("link.voml")).unwrap();
    std::os::unix::fs::symlink(&work, spec_dir.join("up")).unwrap();
    std::fs::create_dir(spec_dir.join("a-directory")).unwrap();
    let fifo = spec_dir.join("pipe.voml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let mut problems = Vec::new();
    let mut cases: Vec<(String, String)> = vec![
        ("absolute".into(), secret.display().to_string()),
        ("file URL".into(), format!("file://{}", secret.display())),
        ("dot-dot".into(), "../secret.voml".into()),
        (
            "deep dot-dot".into(),
            "../../../../../../../../etc/passwd".into(),
        ),
        ("/etc/passwd".into(), "/etc/passwd".into()),
        ("file:///etc/passwd".into(), "file:///etc/passwd".into()),
        ("a link to a file outside".into(), "link.voml".into()),
        (
            "a link to a directory outside".into(),
            "up/secret.voml".into(),
        ),
        ("a directory".into(), "a-directory".into()),
        ("a device".into(), "/dev/zero".into()),
        (
            "plain http".into(),
            format!("http://example.org/x.voml#sha256={}", "0".repeat(64)),
        ),
    ];
    if made.is_ok_and(|s| s.success()) {
        cases.push(("a FIFO".into(), "pipe.voml".into()));
    }
    for (what, system) in &cases {
        let path = spec_dir.join("thief.voml");
        std::fs::write(&path, spec_with_entity(system)).unwrap();
        let c = compile_file(&path, &Options::default());
        expect_refused(what, &c, &mut problems);
        if c.took > Duration::from_secs(5) {
            problems.push(format!("{what}: took {:?}", c.took));
        }
    }
    // A figure and an import alike.
    let path = spec_dir.join("thief.voml");
    std::fs::write(
        &path,
        r#"<?xml version="1.0"?>
<voml>
  <head><import href="/etc/passwd"/></head>
  <body>
    <visual-object name="thief">
      <view-initializations><view name="v" window="10 10" world="0 1 0 1"/></view-initializations>
      <info-rendition>
        <ir-component name="show" views="v">
          <figure view="^0" filename="/etc/passwd" coords="0 0" size="1 1"/>
        </ir-component>
      </info-rendition>
    </visual-object>
  </body>
</voml>
"#,
    )
    .unwrap();
    let c = compile_file(&path, &Options::default());
    expect_refused("figure and import", &c, &mut problems);
    let refused = c
        .codes
        .iter()
        .filter(|c| **c == Code::ReferenceRefused)
        .count();
    if refused < 2 {
        problems.push(format!(
            "figure and import: {refused} refusals:\n{}",
            c.rendered
        ));
    }
    // A directory on the search path is a root: the same file is read through `-I`.
    std::fs::write(&path, spec_with_entity("secret.voml")).unwrap();
    let with_include = Options {
        search_path: vec![work.clone()],
        ..Options::default()
    };
    let c = compile_file(&path, &with_include);
    if c.codes.contains(&Code::ReferenceRefused) || c.codes.contains(&Code::FileNotFound) {
        problems.push(format!("-I {}: refused:\n{}", work.display(), c.rendered));
    }
    // The standard library is a table of names, not a directory.
    std::fs::write(&path, spec_with_entity("voml:../secret.voml")).unwrap();
    let c = compile_file(&path, &Options::default());
    if !c.codes.contains(&Code::FileNotFound) || c.rendered.contains(SECRET) {
        problems.push(format!(
            "voml:../secret.voml: {:?}\n{}",
            c.codes, c.rendered
        ));
    }
    // Inside the tree, `..` that stays inside is fine.
    std::fs::create_dir(spec_dir.join("sub")).unwrap();
    std::fs::write(spec_dir.join("part.voml"), "<!-- part -->").unwrap();
    std::fs::write(&path, spec_with_entity("sub/../part.voml")).unwrap();
    let c = compile_file(&path, &Options::default());
    if c.codes.contains(&Code::ReferenceRefused) {
        problems.push(format!("sub/../part.voml: refused:\n{}", c.rendered));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

fn bomb(entities: &str, body: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE voml [\n{entities}\n]>\n<voml><body><visual-object name=\"thief\"><description>{body}</description></visual-object></body></voml>\n"
    )
}

#[test]
fn entity_bombs_stop_at_the_limits() {
    let (_work, spec_dir) = scratch("bombs");
    let mut laughs = String::from("<!ENTITY lol0 \"lol\">\n");
    for i in 1..10 {
        let refs = format!("&lol{};", i - 1).repeat(10);
        laughs.push_str(&format!("<!ENTITY lol{i} \"{refs}\">\n"));
    }
    let big = "x".repeat(100_000);
    let cases = [
        ("billion laughs", bomb(&laughs, "&lol9;")),
        (
            "quadratic blow-up",
            bomb(&format!("<!ENTITY big \"{big}\">"), &"&big;".repeat(5_000)),
        ),
        (
            "quadratic blow-up in an attribute",
            format!(
                "<?xml version=\"1.0\"?>\n<!DOCTYPE voml [ <!ENTITY big \"{big}\"> ]>\n<voml><body><visual-object name=\"{}\"/></body></voml>\n",
                "&big;".repeat(5_000)
            ),
        ),
    ];
    let mut problems = Vec::new();
    for (what, text) in cases {
        let path = spec_dir.join("thief.voml");
        std::fs::write(&path, text).unwrap();
        let c = compile_file(&path, &Options::default());
        if !c.codes.contains(&Code::EntityExpansion) {
            problems.push(format!("{what}: {:?}", c.codes));
        }
        if c.took > Duration::from_secs(5) {
            problems.push(format!("{what}: took {:?}", c.took));
        }
        if c.rendered.len() > 200_000 {
            problems.push(format!("{what}: {} bytes of diagnostics", c.rendered.len()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn compile_text(text: &str) -> Compiled {
    let started = Instant::now();
    let out = voml_compiler::compile_str("thief.voml", text, &RealFs, &Options::default());
    let took = started.elapsed();
    Compiled {
        codes: out.diagnostics.iter().map(|d| d.code).collect(),
        rendered: diag::render(&out.db, &out.diagnostics, false),
        took,
    }
}

#[test]
fn floods_of_errors_and_long_lines_print_a_bounded_report() {
    // 5,000 unknown attributes on one line of about a megabyte.
    let attrs: String = (0..5_000)
        .map(|i| format!(" bogus{i}=\"{}\"", "v".repeat(200)))
        .collect();
    let text = format!(
        "<?xml version=\"1.0\"?><voml><body><visual-object name=\"thief\"{attrs}/></body></voml>"
    );
    assert!(text.len() > 1_000_000);
    let c = compile_text(&text);
    assert!(c.codes.len() >= 5_000, "{} diagnostics", c.codes.len());
    assert!(
        c.rendered.len() < 200_000,
        "{} bytes rendered",
        c.rendered.len()
    );
    assert!(
        c.rendered.contains("more diagnostics not shown"),
        "{}",
        &c.rendered[c.rendered.len().saturating_sub(400)..]
    );
    assert!(c.rendered.contains("thief.voml:1:"), "not located");
    // One error on a megabyte-long line: an excerpt, not the line.
    let text = format!(
        "<?xml version=\"1.0\"?><voml><body><visual-object name=\"thief\"><description>{}</description><nonsense/></visual-object></body></voml>",
        "d".repeat(1_000_000)
    );
    let c = compile_text(&text);
    assert!(c.codes.contains(&Code::UnknownElement), "{:?}", c.codes);
    assert!(
        c.rendered.len() < 4_000,
        "{} bytes rendered",
        c.rendered.len()
    );
    assert!(c.rendered.contains("<nonsense/>"), "{}", c.rendered);
}

#[test]
fn code_nested_ten_thousand_quotes_deep_is_refused_not_overflowed() {
    for prefix in ["'", "`", ",", "#;", "'(", "#(", "["] {
        let code = format!(
            "{}x{}",
            prefix.repeat(10_000),
            match prefix {
                "'(" => ")".repeat(10_000),
                "#(" => ")".repeat(10_000),
                "[" => "]".repeat(10_000),
                _ => String::new(),
            }
        );
        let text = format!(
            "<?xml version=\"1.0\"?><voml><body><visual-object name=\"thief\"><utility-code><![CDATA[(define deep {code})]]></utility-code></visual-object></body></voml>"
        );
        // On a thread with a small stack, as the window's worker or a test runner has.
        let c = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || compile_text(&text))
            .unwrap()
            .join()
            .unwrap_or_else(|_| panic!("`{prefix}` x 10000 crashed the compiler"));
        assert!(
            c.codes.contains(&Code::SchemeSyntax) || c.codes.contains(&Code::XmlSyntax),
            "{prefix}: {:?}\n{}",
            c.codes,
            c.rendered
        );
        assert!(
            c.rendered.contains("thief.voml:1:"),
            "{prefix}: {}",
            c.rendered
        );
    }
}

/// The Scheme reader path — the compiler's tokenizer, nesting check and steel's reader, and
/// the runtime's screen — on thousands of mutated programs: never a panic or an overflow,
/// every error inside the text.
#[test]
fn the_scheme_reader_never_panics_on_mutated_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut corpus: Vec<String> = std::fs::read_dir(root.join("tests/compile/out"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "scm"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|text| text.split("\n\n").map(str::to_string).collect::<Vec<_>>())
        .filter(|chunk| chunk.len() < 4_000)
        .collect();
    corpus.push("(define (f x) `(a ,x ,@(list 1 2) #(1 2) #\\( \"s\\\"\" #;(skip) 'q))".into());
    assert!(corpus.len() > 20, "{} chunks", corpus.len());
    const PIECES: &[&str] = &[
        "(", ")", "[", "]", "'", "`", ",", ",@", "#", "#(", "#;", "#|", "|#", "\"", "\\", ";",
        "#\\", "#t", "1e309", "#%prim.x", "require", "\n", "$0", "^0/1", "λ", "\u{0}",
    ];
    let screen = voml_runtime::vo_sandbox().expect("the VO engine").screen;
    let mut rng = Rng(0x5eed_0f5c_4e3e);
    let started = Instant::now();
    let mut cases = 0;
    let mut problems = Vec::new();
    while cases < 20_000 && started.elapsed() < Duration::from_secs(10) {
        let mut text = corpus[rng.below(corpus.len())].clone().into_bytes();
        for _ in 0..=rng.below(6) {
            let at = rng.below(text.len() + 1);
            match rng.below(4) {
                0 => {
                    let piece = PIECES[rng.below(PIECES.len())];
                    let times = if rng.below(20) == 0 { 2_000 } else { 1 };
                    text.splice(at..at, piece.repeat(times).bytes());
                }
                1 if !text.is_empty() => {
                    let end = (at + rng.below(10)).min(text.len());
                    text.drain(at.min(end)..end);
                }
                2 => text.truncate(at),
                _ => {
                    let n = rng.below(4);
                    text.splice(at..at, (0..n).map(|_| rng.next() as u8));
                }
            }
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        let _ = voml_compiler::scheme::tokens(&text);
        if let Some((message, range)) = voml_compiler::scheme::read_error(&text) {
            if range.start > text.len() || range.end > text.len() || message.is_empty() {
                problems.push(format!("{range:?} of {} bytes: {message}", text.len()));
            }
        }
        if let Err(r) = screen.check(&text) {
            if r.start > text.len() || r.end > text.len() {
                problems.push(format!(
                    "screen {}..{} of {} bytes",
                    r.start,
                    r.end,
                    text.len()
                ));
            }
        }
        cases += 1;
    }
    assert!(cases >= 2_000, "only {cases} cases in the time allowed");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
