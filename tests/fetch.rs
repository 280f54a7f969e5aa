//! Tests of `voml fetch` and of the component cache, driving the `voml` binary against a
//! small HTTP server on 127.0.0.1 that each test starts and stops itself: downloads counted,
//! the cache named by digest, offline `check` and `run` afterwards, and every refusal (a
//! wrong pin, a server error, a file too large, too many redirects, plain http to another
//! machine) reported at the reference in the spec, with nothing cached.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use voml_compiler::sha256_hex;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A component library with an EP component counting events per processor and an IR
/// component drawing a bar per processor.
fn library() -> String {
    std::fs::read_to_string(root().join("tests/fetch/bars.voml")).unwrap()
}

/// The content of an EP component, for an external entity (counts events per processor).
fn entity() -> String {
    std::fs::read_to_string(root().join("examples/paper/components/count-ep.voml")).unwrap()
}

const TRACE: &str = "examples/paper/lineplot.trf";

/// The component file limit of `voml fetch`.
const LIMIT: usize = 16 << 20;

fn voml(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_voml"))
        .args(args)
        .arg("--cache")
        .arg(cache)
        .current_dir(root())
        .env_remove("VOML_PATH")
        .env_remove("VOML_CACHE")
        .env("NO_COLOR", "1")
        .output()
        .expect("the voml binary runs")
}

fn utf8(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn describe(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        utf8(&out.stdout),
        utf8(&out.stderr)
    )
}

/// A fresh, empty directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("voml-fetch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names of the files in `dir` (none when it does not exist).
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------
// A component server.

/// What the server answers for a path.
#[derive(Clone)]
enum Reply {
    /// 200 with this body and its length.
    Body(Vec<u8>),
    /// 200 with this body, no length: the end of the body is the end of the connection.
    Unsized(Vec<u8>),
    /// A status without a body, such as 404.
    Status(u16, &'static str),
    /// 302 to this location.
    Redirect(String),
}

/// An HTTP server on 127.0.0.1 serving fixed replies, one request per connection, counting
/// requests per path. Stopped when dropped.
struct Server {
    addr: SocketAddr,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// A listener on a free port, and the base URL of what it will serve.
fn listen() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    (listener, base)
}

impl Server {
    fn start(listener: TcpListener, routes: Vec<(&str, Reply)>) -> Server {
        let addr = listener.local_addr().unwrap();
        let routes: HashMap<String, Reply> = routes
            .into_iter()
            .map(|(p, r)| (p.to_string(), r))
            .collect();
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let hits = Arc::clone(&hits);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        serve(stream, &routes, &hits);
                    }
                }
            })
        };
        Server {
            addr,
            hits,
            stop,
            thread: Some(thread),
        }
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }

    fn total_hits(&self) -> usize {
        self.hits.lock().unwrap().values().sum()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread so that it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(
    mut stream: TcpStream,
    routes: &HashMap<String, Reply>,
    hits: &Mutex<HashMap<String, usize>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let request = utf8(&request);
    let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
    *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let head = |status: &str, extra: &str| {
        format!("HTTP/1.1 {status}\r\nConnection: close\r\n{extra}\r\n").into_bytes()
    };
    let (head, body) = match routes.get(&path) {
        Some(Reply::Body(body)) => (
            head("200 OK", &format!("Content-Length: {}\r\n", body.len())),
            body.clone(),
        ),
        Some(Reply::Unsized(body)) => (head("200 OK", ""), body.clone()),
        Some(Reply::Status(code, reason)) => (
            head(&format!("{code} {reason}"), "Content-Length: 0\r\n"),
            Vec::new(),
        ),
        Some(Reply::Redirect(to)) => (
            head(
                "302 Found",
                &format!("Location: {to}\r\nContent-Length: 0\r\n"),
            ),
            Vec::new(),
        ),
        None => (head("404 Not Found", "Content-Length: 0\r\n"), Vec::new()),
    };
    // The client may hang up early (a refused size): that is not the server's problem.
    let _ = stream
        .write_all(&head)
        .and_then(|()| stream.write_all(&body));
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

// ---------------------------------------------------------------------------------------
// Specs.

/// A spec counting samples per processor twice, with an EP component from the entity
/// `&CountEp;` (`entity_system` is its system identifier) and with one of an imported
/// library (`import` is the `<import>` element), whose IR component draws the counts.
fn spec(entity_system: &str, import: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE voml [
  <!ENTITY CountEp SYSTEM "{entity_system}">
]>
<voml version="1.0">
  <head>
    <title>Remote components</title>
    {import}
  </head>
  <body>
    <visual-object name="remote">
      <event-declarations>
        <data-event name="sample" rtype="entry" etype="3000">
          <data-field name="ts" type="real"/>
          <data-field name="proc" type="int"/>
          <data-field name="value" type="real"/>
        </data-event>
      </event-declarations>
      <info-structures>
        <variable name="counts" type="list"/>
        <variable name="maxcount" type="int"/>
        <variable name="tally" type="list"/>
        <variable name="most" type="int"/>
        <variable name="nprocs" type="int"/>
      </info-structures>
      <view-initializations>
        <view name="bars" window="300 200" world="0 1 0 1.1" margins="10 10 10 20"/>
      </view-initializations>
      <event-processing>
        <ep-component name="count-ep" inputs="sample.ts.proc" infos="counts maxcount">
          &CountEp;
        </ep-component>
        <ep-component name="tally-ep" use="count-per-processor" inputs="sample.ts.proc"
                      infos="tally most nprocs"/>
      </event-processing>
      <info-rendition>
        <ir-component name="bars-ir" use="processor-bars" views="bars"
                      infos="tally most nprocs"/>
      </info-rendition>
    </visual-object>
  </body>
</voml>
"#
    )
}

/// `path:line:col` of the first `needle` in the spec `text` written at `path`, as
/// diagnostics show it.
fn place(path: &Path, text: &str, needle: &str) -> String {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` is not in the spec"));
    let line = text[..at].matches('\n').count() + 1;
    let col = text[..at].rsplit('\n').next().unwrap().chars().count() + 1;
    format!("{}:{line}:{col}", path.display())
}

/// Runs `spec` over the line-plot trace headless, returning the dumped state and the
/// number of pixels of the plot that differ from its background.
fn run_offline(spec: &Path, cache: &Path, dir: &Path) -> (serde_json::Value, usize) {
    let out_dir = dir.join("out");
    let state = dir.join("state.json");
    let out = voml(
        &[
            "run",
            spec.to_str().unwrap(),
            "--trace",
            TRACE,
            "--headless",
            "--out",
            out_dir.to_str().unwrap(),
            "--dump-state",
            state.to_str().unwrap(),
        ],
        cache,
    );
    assert!(out.status.success(), "voml run: {}", describe(&out));
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let picture = tiny_skia::Pixmap::load_png(out_dir.join("bars.png")).expect("bars.png");
    let pixels = picture.pixels();
    let background = pixels[0];
    let ink = pixels.iter().filter(|p| **p != background).count();
    (state, ink)
}

/// Samples per processor in the line-plot trace.
fn trace_counts() -> HashMap<i64, u64> {
    let trace = std::fs::read_to_string(root().join(TRACE)).unwrap();
    let mut counts = HashMap::new();
    for line in trace.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() >= 4 && fields[0] == "-3" && fields[1] == "3000" {
            *counts.entry(fields[3].parse::<i64>().unwrap()).or_default() += 1;
        }
    }
    counts
}

/// An association list of the dumped state.
fn dumped(state: &serde_json::Value, name: &str) -> HashMap<i64, u64> {
    state["infos"][name]
        .as_array()
        .unwrap_or_else(|| panic!("{name} is an association list"))
        .iter()
        .map(|pair| (pair[0].as_i64().unwrap(), pair[1].as_u64().unwrap()))
        .collect()
}

// ---------------------------------------------------------------------------------------

#[test]
fn fetch_fills_the_cache_and_check_and_run_then_work_offline() {
    let dir = scratch("offline");
    let cache = dir.join("cache");
    let (listener, base) = listen();
    let (lib, ent) = (library(), entity());
    let (lib_sha, ent_sha) = (sha256_hex(lib.as_bytes()), sha256_hex(ent.as_bytes()));
    let lib_url = format!("{base}/voml/bars.voml");
    let ent_url = format!("{base}/voml/count-ep.voml");
    let server = Server::start(
        listener,
        vec![
            ("/voml/bars.voml", Reply::Body(lib.clone().into_bytes())),
            ("/voml/count-ep.voml", Reply::Body(ent.clone().into_bytes())),
        ],
    );
    let text = spec(
        &format!("{ent_url}#sha256={ent_sha}"),
        &format!(r#"<import href="{lib_url}" sha256="{lib_sha}"/>"#),
    );
    let spec_path = dir.join("remote.voml");
    std::fs::write(&spec_path, &text).unwrap();
    let spec_arg = spec_path.to_str().unwrap();

    // Before fetching: check fails, names both components where the spec names them, says
    // what to run, and downloads nothing.
    let out = voml(&["check", spec_arg], &cache);
    let stderr = utf8(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    for (url, needle) in [(&ent_url, ent_url.as_str()), (&lib_url, lib_url.as_str())] {
        assert!(
            stderr.contains(&format!(
                "remote component `{url}` is not in the component cache"
            )),
            "{stderr}"
        );
        assert!(
            stderr.contains(&place(&spec_path, &text, needle)),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains(&format!("run `voml fetch {spec_arg}`")),
        "{stderr}"
    );
    assert_eq!(server.total_hits(), 0, "check must not download");

    // Fetch downloads each once and stores it under its digest.
    let out = voml(&["fetch", spec_arg], &cache);
    let stdout = utf8(&out.stdout);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout.contains(&format!("fetched  {lib_url}")), "{stdout}");
    assert!(stdout.contains(&format!("fetched  {ent_url}")), "{stdout}");
    assert!(
        stdout.contains("2 components fetched, 0 already cached, 0 problems"),
        "{stdout}"
    );
    assert_eq!(server.hits("/voml/bars.voml"), 1);
    assert_eq!(server.hits("/voml/count-ep.voml"), 1);
    let mut expected = vec![lib_sha.clone(), ent_sha.clone()];
    expected.sort();
    assert_eq!(
        listing(&cache),
        expected,
        "only the two components, named by digest"
    );
    assert_eq!(std::fs::read_to_string(cache.join(&lib_sha)).unwrap(), lib);
    assert_eq!(std::fs::read_to_string(cache.join(&ent_sha)).unwrap(), ent);

    // A second fetch finds both in the cache and downloads nothing.
    let out = voml(&["fetch", spec_arg], &cache);
    let stdout = utf8(&out.stdout);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout.contains(&format!("cached   {lib_url}")), "{stdout}");
    assert!(stdout.contains(&format!("cached   {ent_url}")), "{stdout}");
    assert!(
        stdout.contains("0 components fetched, 2 already cached, 0 problems"),
        "{stdout}"
    );
    assert_eq!(server.total_hits(), 2);

    // Offline: with the server gone, check and run work from the cache.
    drop(server);
    let out = voml(&["check", spec_arg], &cache);
    assert!(out.status.success(), "{}", describe(&out));
    let (state, ink) = run_offline(&spec_path, &cache, &dir);
    assert_eq!(
        dumped(&state, "counts"),
        trace_counts(),
        "the entity's EP counted"
    );
    assert_eq!(
        dumped(&state, "tally"),
        trace_counts(),
        "the library's EP counted"
    );
    assert!(ink > 500, "the library's IR drew the bars ({ink} pixels)");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_download_that_does_not_match_its_pin_is_refused_and_not_cached() {
    let dir = scratch("mismatch");
    let cache = dir.join("cache");
    let (listener, base) = listen();
    let (lib, ent) = (library(), entity());
    let lib_sha = sha256_hex(lib.as_bytes());
    let served = ent.replace("(+ count 1)", "(+ count 2)");
    assert_ne!(served, ent);
    let (pinned, actual) = (sha256_hex(ent.as_bytes()), sha256_hex(served.as_bytes()));
    let ent_url = format!("{base}/count-ep.voml");
    let server = Server::start(
        listener,
        vec![
            ("/bars.voml", Reply::Body(lib.into_bytes())),
            ("/count-ep.voml", Reply::Body(served.into_bytes())),
        ],
    );
    let text = spec(
        &format!("{ent_url}#sha256={pinned}"),
        &format!(r#"<import href="{base}/bars.voml" sha256="{lib_sha}"/>"#),
    );
    let spec_path = dir.join("remote.voml");
    std::fs::write(&spec_path, &text).unwrap();
    let out = voml(&["fetch", spec_path.to_str().unwrap()], &cache);
    let stderr = utf8(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr.contains(&format!(
            "`{ent_url}` does not match its pin: expected sha256 {pinned}, got {actual}"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&place(&spec_path, &text, &ent_url)),
        "{stderr}"
    );
    assert!(
        stderr.contains("nothing was written to the cache"),
        "{stderr}"
    );
    // The good component is still fetched; the bad one is not stored under any name.
    assert_eq!(listing(&cache), vec![lib_sha], "{}", describe(&out));
    assert!(
        utf8(&out.stdout).contains("1 component fetched, 0 already cached, 1 problem"),
        "{}",
        describe(&out)
    );
    assert_eq!(server.hits("/count-ep.voml"), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn server_errors_large_files_and_redirect_loops_are_reported_where_the_spec_names_them() {
    let dir = scratch("failures");
    let cache = dir.join("cache");
    let (listener, base) = listen();
    let big = vec![b' '; LIMIT + 1];
    let any = "0".repeat(64);
    let lib = library();
    let lib_sha = sha256_hex(lib.as_bytes());
    let _server = Server::start(
        listener,
        vec![
            ("/gone.voml", Reply::Status(404, "Not Found")),
            ("/big.voml", Reply::Body(big.clone())),
            ("/big-unsized.voml", Reply::Unsized(big)),
            ("/loop.voml", Reply::Redirect("/loop.voml".into())),
            ("/moved.voml", Reply::Redirect("/voml/bars.voml".into())),
            ("/voml/bars.voml", Reply::Body(lib.into_bytes())),
        ],
    );
    // Four failing references (an entity and three imports) and one good import behind a
    // redirect.
    let imports = format!(
        r#"<import href="{base}/moved.voml" sha256="{lib_sha}"/>
    <import href="{base}/big.voml" sha256="{any}"/>
    <import href="{base}/big-unsized.voml" sha256="{any}"/>
    <import href="{base}/loop.voml" sha256="{any}"/>"#
    );
    let text = spec(&format!("{base}/gone.voml#sha256={any}"), &imports);
    let spec_path = dir.join("remote.voml");
    std::fs::write(&spec_path, &text).unwrap();
    let out = voml(&["fetch", spec_path.to_str().unwrap()], &cache);
    let stderr = utf8(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    for (path, why) in [
        ("/gone.voml", "the server answered 404 Not Found"),
        ("/big.voml", "the file is larger than the 16 MiB limit"),
        (
            "/big-unsized.voml",
            "the file is larger than the 16 MiB limit",
        ),
        ("/loop.voml", "more than 5 redirects"),
    ] {
        let url = format!("{base}{path}");
        assert!(
            stderr.contains(&format!("cannot fetch `{url}`: {why}")),
            "{url}: {stderr}"
        );
        assert!(
            stderr.contains(&place(&spec_path, &text, &url)),
            "{url}: {stderr}"
        );
    }
    assert!(
        utf8(&out.stdout).contains(&format!("fetched  {base}/moved.voml")),
        "{}",
        describe(&out)
    );
    assert!(
        utf8(&out.stdout).contains("1 component fetched, 0 already cached, 4 problems"),
        "{}",
        describe(&out)
    );
    assert_eq!(
        listing(&cache),
        vec![lib_sha],
        "only the good component is cached"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plain_http_to_another_machine_and_unpinned_components_are_refused() {
    let dir = scratch("refused");
    let cache = dir.join("cache");
    // `.invalid` names no host anywhere: a client that tried would fail to resolve it, not
    // refuse it.
    let http = format!(
        "http://voml-fetch-test.invalid/count-ep.voml#sha256={}",
        "0".repeat(64)
    );
    let unpinned = "https://voml-fetch-test.invalid/bars.voml";
    let text = spec(&http, &format!(r#"<import href="{unpinned}"/>"#));
    let spec_path = dir.join("remote.voml");
    std::fs::write(&spec_path, &text).unwrap();
    for command in ["fetch", "check"] {
        let out = voml(&[command, spec_path.to_str().unwrap()], &cache);
        let stderr = utf8(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        assert!(
            stderr.contains("error[E0016]: remote component `http://voml-fetch-test.invalid/count-ep.voml` is named over plain http"),
            "{command}: {stderr}"
        );
        assert!(stderr.contains("an `https://` URL"), "{command}: {stderr}");
        assert!(
            stderr.contains(&place(&spec_path, &text, "http://voml-fetch-test")),
            "{command}: {stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "error[E0013]: remote component `{unpinned}` is not pinned"
            )),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("cannot fetch"), "{command}: {stderr}");
    }
    assert!(listing(&cache).is_empty(), "nothing cached");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fetched_library_brings_the_remote_components_it_names() {
    let dir = scratch("nested");
    let cache = dir.join("cache");
    let (listener, base) = listen();
    // The library's IR code moves into a remote entity that the library itself pins.
    let lib = library();
    let ir = lib
        .find(r#"<ir-component name="processor-bars""#)
        .expect("the IR component");
    let start = ir + lib[ir..].find("</description>").unwrap() + "</description>".len();
    let end = start + lib[start..].find("</ir-component>").unwrap();
    let draw = lib[start..end].to_string();
    let draw_sha = sha256_hex(draw.as_bytes());
    let draw_url = format!("{base}/parts/draw.voml");
    let decl_end = lib.find("?>").unwrap() + 2;
    let nested = format!(
        "{}\n<!DOCTYPE voml-library [\n  <!ENTITY Draw SYSTEM \"{draw_url}#sha256={draw_sha}\">\n]>{}&Draw;{}",
        &lib[..decl_end],
        &lib[decl_end..start],
        &lib[end..]
    );
    let lib_sha = sha256_hex(nested.as_bytes());
    let ent = entity();
    let ent_sha = sha256_hex(ent.as_bytes());
    let lib_url = format!("{base}/bars.voml");
    let server = Server::start(
        listener,
        vec![
            ("/bars.voml", Reply::Body(nested.into_bytes())),
            ("/parts/draw.voml", Reply::Body(draw.into_bytes())),
            ("/count-ep.voml", Reply::Body(ent.into_bytes())),
        ],
    );
    let text = spec(
        &format!("{base}/count-ep.voml#sha256={ent_sha}"),
        &format!(r#"<import href="{lib_url}#sha256={lib_sha}"/>"#),
    );
    let spec_path = dir.join("remote.voml");
    std::fs::write(&spec_path, &text).unwrap();
    let out = voml(&["fetch", spec_path.to_str().unwrap()], &cache);
    let stdout = utf8(&out.stdout);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(stdout.contains(&format!("fetched  {lib_url}")), "{stdout}");
    assert!(stdout.contains(&format!("fetched  {draw_url}")), "{stdout}");
    assert!(
        stdout.contains("3 components fetched, 0 already cached, 0 problems"),
        "{stdout}"
    );
    assert_eq!(server.hits("/bars.voml"), 1);
    assert_eq!(server.hits("/parts/draw.voml"), 1);
    let mut expected = vec![lib_sha, draw_sha, ent_sha];
    expected.sort();
    assert_eq!(listing(&cache), expected);

    drop(server);
    let (state, ink) = run_offline(&spec_path, &cache, &dir);
    assert_eq!(dumped(&state, "tally"), trace_counts());
    assert!(
        ink > 500,
        "the library's remote IR code drew the bars ({ink} pixels)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cached_copy_that_does_not_match_its_pin_is_fetched_again() {
    let dir = scratch("corrupt");
    let cache = dir.join("cache");
    let (listener, base) = listen();
    let (lib, ent) = (library(), entity());
    let (lib_sha, ent_sha) = (sha256_hex(lib.as_bytes()), sha256_hex(ent.as_bytes()));
    let server = Server::start(
        listener,
        vec![
            ("/bars.voml", Reply::Body(lib.clone().into_bytes())),
            ("/count-ep.voml", Reply::Body(ent.into_bytes())),
        ],
    );
    let text = spec(
        &format!("{base}/count-ep.voml#sha256={ent_sha}"),
        &format!(r#"<import href="{base}/bars.voml" sha256="{lib_sha}"/>"#),
    );
    let spec_path = dir.join("remote.voml");
    std::fs::write(&spec_path, &text).unwrap();
    let spec_arg = spec_path.to_str().unwrap();
    let out = voml(&["fetch", spec_arg], &cache);
    assert!(out.status.success(), "{}", describe(&out));
    // The cached library is edited behind the pin's back.
    std::fs::write(cache.join(&lib_sha), lib.replace("#4682b4", "#ff0000")).unwrap();
    let out = voml(&["check", spec_arg], &cache);
    let stderr = utf8(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr.contains(&format!(
            "the cached copy of `{base}/bars.voml` does not match its pin"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("run `voml fetch {spec_arg}`")),
        "{stderr}"
    );
    let out = voml(&["fetch", spec_arg], &cache);
    let stdout = utf8(&out.stdout);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        stdout.contains("1 component fetched, 1 already cached, 0 problems"),
        "{stdout}"
    );
    assert_eq!(server.hits("/bars.voml"), 2);
    assert_eq!(std::fs::read_to_string(cache.join(&lib_sha)).unwrap(), lib);
    let out = voml(&["check", spec_arg], &cache);
    assert!(out.status.success(), "{}", describe(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_spec_that_cannot_be_read_is_a_failure_and_the_others_are_still_fetched() {
    let dir = scratch("unreadable");
    let cache = dir.join("cache");
    let (listener, base) = listen();
    let ent = entity();
    let ent_sha = sha256_hex(ent.as_bytes());
    let server = Server::start(
        listener,
        vec![("/count-ep.voml", Reply::Body(ent.into_bytes()))],
    );
    let text = spec(&format!("{base}/count-ep.voml#sha256={ent_sha}"), "");
    let spec_path = dir.join("remote.voml");
    std::fs::write(&spec_path, &text).unwrap();
    let missing = dir.join("missing.voml");
    let out = voml(
        &[
            "fetch",
            missing.to_str().unwrap(),
            spec_path.to_str().unwrap(),
        ],
        &cache,
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        utf8(&out.stderr).contains(&format!("error: cannot read `{}`", missing.display())),
        "{}",
        describe(&out)
    );
    assert!(
        utf8(&out.stdout).contains("1 component fetched, 0 already cached, 1 problem"),
        "{}",
        describe(&out)
    );
    assert_eq!(server.hits("/count-ep.voml"), 1);
    assert_eq!(listing(&cache), vec![ent_sha]);
    let _ = std::fs::remove_dir_all(&dir);
}
