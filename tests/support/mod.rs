//! Shared helpers for the data-driven tests: golden files with one switch to regenerate
//! them (`VOML_BLESS=1`) and a readable diff when they differ.

#![allow(dead_code)]

pub mod mpi;

use std::path::{Path, PathBuf};

/// A fresh, empty directory for one test (`voml-KIND-PID-NAME` in the temp directory),
/// removed when the test ends well; a failing test leaves it to look at.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(kind: &str, name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("voml-{kind}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// Waits for `child` to end, for `limit` at most: its status, or `None` after killing it
/// (the caller fails with what it was waiting for).
pub fn wait_bounded(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A PICL trace beside the repository (`../shared/traces/picl/NAME`), or `None` with a note
/// when it is not there; with `VOML_REQUIRE_TOOLS` set (as in CI) a missing one fails.
pub fn shared_trace(name: &str) -> Option<PathBuf> {
    let path = root().join("../shared/traces/picl").join(name);
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
        "{} is missing",
        path.display()
    );
    eprintln!("note: {} not found; skipped", path.display());
    None
}

/// The examples' ring trace (8 processors, 0.1 s), then those of the named shared traces
/// that are there.
pub fn ring_and_shared(names: &[&str]) -> Vec<PathBuf> {
    std::iter::once(root().join("examples/mpicl/ring.trf"))
        .chain(names.iter().filter_map(|name| shared_trace(name)))
        .collect()
}

/// The examples' ring trace, then every PICL trace beside the repository, in name order
/// (with a note when there are none; a failure with `VOML_REQUIRE_TOOLS` set).
pub fn every_picl_trace() -> Vec<PathBuf> {
    let dir = root().join("../shared/traces/picl");
    let mut shared: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "trf"))
                .collect()
        })
        .unwrap_or_default();
    if shared.is_empty() {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "no PICL traces in {}",
            dir.display()
        );
        eprintln!("note: no PICL traces in {}; ring.trf only", dir.display());
    }
    shared.sort();
    std::iter::once(root().join("examples/mpicl/ring.trf"))
        .chain(shared)
        .collect()
}

/// The OTF2 trace writer of the adapter's tests
/// (`runtime/voml-trace/tests/data/otf2/make_trace.c`), compiled into `dir` with `cc`
/// against the OTF2 library. `None` with a note when the C compiler, the OTF2 library or
/// `otf2-print` is missing; with `VOML_REQUIRE_TOOLS` set (as in CI) a failure.
pub fn otf2_generator(dir: &Path) -> Option<PathBuf> {
    let skip = |why: String| {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "{why} (required because VOML_REQUIRE_TOOLS is set)"
        );
        eprintln!("note: {why}; skipped");
        None
    };
    if std::process::Command::new("otf2-print")
        .arg("--version")
        .output()
        .is_err()
    {
        return skip("otf2-print (Debian: otf2-tools) is not installed".into());
    }
    let generator = dir.join("make_trace");
    let built = std::process::Command::new("cc")
        .arg("-o")
        .arg(&generator)
        .arg(root().join("runtime/voml-trace/tests/data/otf2/make_trace.c"))
        .arg("-lotf2")
        .output();
    match built {
        Err(e) => skip(format!("no C compiler (cc): {e}")),
        Ok(o) if !o.status.success() => skip(format!(
            "cannot build the OTF2 trace generator (Debian: libotf2-trace-dev): {}",
            String::from_utf8_lossy(&o.stderr)
        )),
        Ok(_) => Some(generator),
    }
}

/// An OTF2 trace written into `dir/archive` by [`otf2_generator`] (`args`: `small`, `ring N
/// ROUNDS` or `from FILE`): its directory. `None` (with a note) as for the generator.
pub fn otf2_archive(dir: &Path, args: &[&str]) -> Option<PathBuf> {
    let generator = otf2_generator(dir)?;
    let archive = dir.join("archive");
    let _ = std::fs::remove_dir_all(&archive);
    let out = std::process::Command::new(&generator)
        .arg(&archive)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make_trace {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(archive)
}

/// An OTF2 trace written by [`otf2_generator`] (`args`: `small`, or `ring N ROUNDS`): its
/// anchor file.
pub fn otf2_trace(dir: &Path, args: &[&str]) -> Option<PathBuf> {
    otf2_archive(dir, args).map(|a| a.join("run.otf2"))
}

/// The repository root (tests run with it as the working directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn blessing() -> bool {
    std::env::var_os("VOML_BLESS").is_some_and(|v| v != "0")
}

/// Compares `actual` with the golden file at `path`; with `VOML_BLESS=1` rewrites it instead.
/// Returns a description of the difference, if any.
pub fn check_golden(path: &Path, actual: &str) -> Option<String> {
    if blessing() {
        std::fs::write(path, actual)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return None;
    }
    let expected = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(_) => {
            return Some(format!(
                "{}: golden file missing; run with VOML_BLESS=1 to create it",
                path.display()
            ))
        }
    };
    if expected == actual {
        return None;
    }
    let diff = similar::TextDiff::from_lines(expected.as_str(), actual);
    let mut out = format!("{} differs (- expected, + actual):\n", path.display());
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        out.push_str(&hunk.to_string());
    }
    Some(out)
}

/// Files in `dir` with extension `ext`, sorted.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// Fails with every collected problem at once.
pub fn finish(problems: Vec<String>) {
    if !problems.is_empty() {
        panic!(
            "{} problem(s):\n\n{}",
            problems.len(),
            problems.join("\n\n")
        );
    }
}

// ---------------------------------------------------------------------------------------
// Running visual objects (runtime tests): loading, replaying, pixels, reference pictures.

/// Points steel at a scratch home directory (it warns without one); once per process. One
/// directory for every test program (steel only makes an empty `cached-modules` in it).
pub fn quiet_steel() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let home = std::env::temp_dir().join("voml-steel-home");
        let _ = std::fs::create_dir_all(&home);
        std::env::set_var("STEEL_HOME", home);
    });
}

/// Compiles a spec file, failing the test with the rendered diagnostics if it has errors.
pub fn compile_spec(path: &Path) -> voml_ir::CompiledVo {
    let out = voml_compiler::compile(
        path,
        &voml_compiler::RealFs,
        &voml_compiler::Options::default(),
    );
    match out.vo {
        Some(vo) => vo,
        None => panic!(
            "{} does not compile:\n{}",
            path.display(),
            voml_compiler::diag::render(&out.db, &out.diagnostics, false)
        ),
    }
}

/// Compiles a spec given as text under the file name `name` (relative names resolve from
/// the repository root when the test runs there).
pub fn compile_text(name: &str, text: &str) -> voml_ir::CompiledVo {
    let out = voml_compiler::compile_str(
        name,
        text,
        &voml_compiler::RealFs,
        &voml_compiler::Options::default(),
    );
    match out.vo {
        Some(vo) => vo,
        None => panic!(
            "{name} does not compile:\n{}",
            voml_compiler::diag::render(&out.db, &out.diagnostics, false)
        ),
    }
}

/// A runtime drawing headless, with the given strictness and budget.
pub fn start_runtime(
    vo: voml_ir::CompiledVo,
    strict: bool,
    budget_ms: u64,
) -> voml_runtime::Runtime {
    quiet_steel();
    let config = voml_runtime::Config {
        strict,
        budget: std::time::Duration::from_millis(budget_ms),
        ..Default::default()
    };
    match voml_runtime::Runtime::headless(vo, config) {
        Ok(rt) => rt,
        Err(e) => panic!("the visual object does not load: {e}"),
    }
}

/// What a run ends with, to compare two runs of a visual object: the structures named, the
/// faults, the beeps, the pixels of every view.
#[derive(Debug, PartialEq)]
pub struct Ended {
    pub values: Vec<Option<String>>,
    pub faults: Vec<String>,
    pub beeps: Vec<f64>,
    pub pixels: Vec<Vec<u8>>,
}

/// Runs `vo` headless over the records `trace`: what it ended with (the structures `names`
/// among it), and its counters.
pub fn run_to_end(
    vo: voml_ir::CompiledVo,
    trace: &[u8],
    names: &[&str],
) -> (Ended, voml_runtime::Stats) {
    let views = vo.views.len();
    let mut rt = start_runtime(vo, false, 1000);
    replay_bytes(&mut rt, trace, "t.trf", false);
    let ended = Ended {
        values: names.iter().map(|n| rt.variable(n)).collect(),
        faults: fault_lines(&rt),
        beeps: rt.beeps(),
        pixels: (0..views).map(|v| view_pixels(&mut rt, v).data).collect(),
    };
    (ended, rt.stats().clone())
}

/// The paper's line plot's trace: `n` samples of three scalars, as the replay bench makes
/// them.
pub fn lineplot_trace(n: usize) -> String {
    let mut x = 1u64;
    let mut values = [40.0f64, 20.0, 78.0];
    let mut out = String::new();
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = i % 3;
        values[key] = (values[key] + (x % 1000) as f64 / 100.0 - 5.0).clamp(5.0, 95.0);
        out.push_str(&format!(
            "-3 3000 {:.6} {key} {:.3}\n",
            0.25 + (i / 3) as f64 * 0.15,
            values[key]
        ));
    }
    out
}

/// The seed of a property test: `VOML_FUZZ_SEED` when it is set (to reproduce a run), else
/// `default`.
pub fn fuzz_seed(default: u64) -> u64 {
    std::env::var("VOML_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Sixteen random records `-3 1 TS K Y` for property tests: two per timestamp, keys 0 to 2,
/// values mostly small integers, now and then a real, a string or -1.
pub fn random_records(rng: &mut Rng) -> String {
    let mut trace = String::new();
    for i in 0..16 {
        let y = match rng.below(6) {
            0 => "2.5".to_string(),
            1 => "\"s\"".to_string(),
            2 => "-1".to_string(),
            _ => format!("{}", rng.below(4)),
        };
        trace.push_str(&format!("-3 1 {}.0 {} {y}\n", i / 2, rng.below(3)));
    }
    trace
}

/// A run's faults as they are reported: kind, part, place, record and message.
pub fn fault_lines(rt: &voml_runtime::Runtime) -> Vec<String> {
    rt.faults()
        .iter()
        .map(|f| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {}",
                f.kind, f.component, f.part, f.location, f.event, f.action, f.message
            )
        })
        .collect()
}

/// What a replay reported besides its outcome.
#[derive(Default)]
pub struct Replayed {
    pub summary: voml_driver::Outcome,
    /// `Display` of every bad trace line, in order.
    pub bad_lines: Vec<String>,
    /// Line numbers of the bad trace lines.
    pub bad_line_numbers: Vec<u64>,
}

/// A reporter that keeps the bad lines and says nothing.
#[derive(Default)]
pub struct Collect {
    pub bad_lines: Vec<String>,
    pub bad_line_numbers: Vec<u64>,
    pub faults: usize,
}

impl voml_driver::Reporter for Collect {
    fn fault(&mut self, _fault: &voml_runtime::Fault) {
        self.faults += 1;
    }
    fn bad_line(&mut self, error: &voml_trace::TraceError, _strict: bool) {
        self.bad_lines.push(error.to_string());
        self.bad_line_numbers.push(error.line);
    }
    fn progress(&mut self, _progress: &voml_driver::Progress) {}
    fn line(&mut self, _text: &str) {}
}

/// Replays trace bytes (named `name` in reports) through `runtime` with the driver, as
/// `voml run --headless` does.
pub fn replay_bytes(
    runtime: &mut voml_runtime::Runtime,
    trace: &[u8],
    name: &str,
    strict: bool,
) -> Replayed {
    let mut source = voml_driver::Source::reader(
        name.to_string(),
        std::io::Cursor::new(trace.to_vec()),
        voml_trace::ReadOptions { strict },
    );
    let options = voml_driver::Options {
        strict,
        ..Default::default()
    };
    let mut collect = Collect::default();
    let summary = voml_driver::run(runtime, &mut source, &options, &mut [], &mut collect);
    Replayed {
        summary,
        bad_lines: collect.bad_lines,
        bad_line_numbers: collect.bad_line_numbers,
    }
}

/// Replays a trace file.
pub fn replay_file(runtime: &mut voml_runtime::Runtime, trace: &Path) -> Replayed {
    let bytes =
        std::fs::read(trace).unwrap_or_else(|e| panic!("cannot read {}: {e}", trace.display()));
    replay_bytes(runtime, &bytes, &trace.display().to_string(), false)
}

/// Replays a trace file of any format as `voml run` reads it (`Source::file`: the format told
/// by its content, a Paraver trace's `.pcf` found beside it).
pub fn replay_path(runtime: &mut voml_runtime::Runtime, trace: &Path) -> Replayed {
    let mut source = voml_driver::Source::file(trace, voml_trace::ReadOptions::default())
        .unwrap_or_else(|e| panic!("cannot open {}: {e}", trace.display()));
    let options = voml_driver::Options::default();
    let mut collect = Collect::default();
    let summary = voml_driver::run(runtime, &mut source, &options, &mut [], &mut collect);
    Replayed {
        summary,
        bad_lines: collect.bad_lines,
        bad_line_numbers: collect.bad_line_numbers,
    }
}

/// The pixels view number `index` shows now (displays drawn when a picture is needed are
/// drawn first).
pub fn view_pixels(runtime: &mut voml_runtime::Runtime, index: usize) -> voml_llvo::RgbaPixels {
    runtime.view_pixels(index).expect("the view has pixels")
}

/// Pixel (x, y) of view number `index`, in pixels of the view's world point (wx, wy).
pub fn world_to_px(runtime: &voml_runtime::Runtime, index: usize, wx: f64, wy: f64) -> (f64, f64) {
    let host = runtime.host();
    let id = host.views[index];
    let map = host
        .drawing
        .llvo()
        .mapping(id)
        .expect("the view has a mapping");
    map.to_px(voml_llvo::Point { x: wx, y: wy })
}

/// Decodes PNG bytes into RGBA pixels, by drawing the image 1:1 into an opaque white view
/// of the image's size (the pictures compared are opaque, so this is exact; the runtime
/// tests check that a picture survives the round trip).
pub fn decode_png(bytes: &[u8]) -> Result<voml_llvo::RgbaPixels, String> {
    let mut llvo = voml_llvo::Llvo::headless();
    let image = llvo.load_image(bytes).map_err(|e| e.to_string())?;
    let (w, h) = llvo.image_size(image).map_err(|e| e.to_string())?;
    let spec = voml_llvo::ViewSpec::new("decode")
        .window(w, h)
        .world(0.0, f64::from(w), 0.0, f64::from(h))
        .margins(0, 0, 0, 0)
        .background(voml_llvo::Color::WHITE);
    let view = llvo.create_view(spec).map_err(|e| e.to_string())?;
    let owner = llvo.new_owner(false);
    let figure = voml_llvo::Primitive::Figure {
        image,
        orig_origin: (0.0, 0.0),
        orig_extents: (0.0, 0.0),
        world_origin: voml_llvo::Point { x: 0.0, y: 0.0 },
        world_extents: (f64::from(w), f64::from(h)),
    };
    llvo.draw(view, owner, &figure, &voml_llvo::Style::default())
        .map_err(|e| e.to_string())?;
    llvo.pixels(view).map_err(|e| e.to_string())
}

/// Encodes RGBA pixels as a PNG (uncompressed deflate blocks: no dependency needed).
pub fn encode_png(p: &voml_llvo::RgbaPixels) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    let row = p.width as usize * 4;
    let mut raw = Vec::with_capacity((row + 1) * p.height as usize);
    for y in 0..p.height as usize {
        raw.push(0); // filter: none
        raw.extend_from_slice(&p.data[y * row..(y + 1) * row]);
    }
    let mut zlib = vec![0x78, 0x01];
    let mut blocks = raw.chunks(65_535).peekable();
    if blocks.peek().is_none() {
        zlib.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        zlib.push(u8::from(blocks.peek().is_none()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&p.width.to_be_bytes());
    ihdr.extend_from_slice(&p.height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]); // 8-bit RGBA
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// Largest difference per channel still taken as the same picture (anti-aliasing may
/// differ by a unit or two between builds of the rasteriser).
pub const PIXEL_TOLERANCE: u8 = 4;

/// Compares a picture with the committed reference `tests/render/<name>.png`; with
/// `VOML_BLESS=1` rewrites the reference instead. On a difference, writes
/// `<name>.actual.png` and `<name>.diff.png` (differing pixels red over a faded copy of the
/// actual picture) into a scratch directory and says where.
pub fn check_render(name: &str, png: &[u8]) -> Option<String> {
    let reference = root().join("tests/render").join(format!("{name}.png"));
    if blessing() {
        std::fs::write(&reference, png)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", reference.display()));
        return None;
    }
    let actual = decode_png(png).expect("the runtime's PNG decodes");
    let expected = match std::fs::read(&reference) {
        Ok(bytes) => match decode_png(&bytes) {
            Ok(p) => p,
            Err(e) => return Some(format!("{}: cannot decode: {e}", reference.display())),
        },
        Err(_) => {
            return Some(format!(
                "{}: reference picture missing; run with VOML_BLESS=1 to create it",
                reference.display()
            ))
        }
    };
    let mut problem = None;
    let mut diff = actual.clone();
    if (actual.width, actual.height) != (expected.width, expected.height) {
        problem = Some(format!(
            "size {}x{} instead of {}x{}",
            actual.width, actual.height, expected.width, expected.height
        ));
    } else {
        let mut count = 0usize;
        let mut worst = 0u8;
        for (i, (a, e)) in actual
            .data
            .chunks(4)
            .zip(expected.data.chunks(4))
            .enumerate()
        {
            let d = a
                .iter()
                .zip(e)
                .map(|(x, y)| x.abs_diff(*y))
                .max()
                .unwrap_or(0);
            let out = &mut diff.data[i * 4..i * 4 + 4];
            if d > PIXEL_TOLERANCE {
                count += 1;
                worst = worst.max(d);
                out.copy_from_slice(&[255, 0, 0, 255]);
            } else {
                for c in &mut out[..3] {
                    *c = 255 - (255 - *c) / 4;
                }
            }
        }
        if count > 0 {
            problem = Some(format!(
                "{count} pixels differ by more than {PIXEL_TOLERANCE} (at most {worst})"
            ));
        }
    }
    let problem = problem?;
    let dir = std::env::temp_dir().join(format!("voml-render-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let actual_path = dir.join(format!("{name}.actual.png"));
    let diff_path = dir.join(format!("{name}.diff.png"));
    let _ = std::fs::write(&actual_path, png);
    let _ = std::fs::write(&diff_path, encode_png(&diff));
    Some(format!(
        "{} differs from the picture drawn: {problem}\n  actual: {}\n  diff:   {}\n  (VOML_BLESS=1 regenerates the reference)",
        reference.display(),
        actual_path.display(),
        diff_path.display()
    ))
}

/// A small deterministic generator (xorshift64*), so a seed reproduces a run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A visual object `name` with one info structure `var` (of any type), `utility` code, and
/// one EP component `name` whose only part, run for every record of type `entry`/1, is `part`
/// (where `$0` is the variable): what hostile-code tests wrap their probes in.
pub fn one_part_spec(name: &str, var: &str, utility: &str, part: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<voml>
  <body>
    <visual-object name="{name}">
      <event-declarations>
        <data-event name="tick" rtype="entry" etype="1">
          <data-field name="ts" type="real"/>
        </data-event>
      </event-declarations>
      <info-structures>
        <variable name="{var}" type="any"/>
      </info-structures>
      <utility-code><![CDATA[
{utility}
      ]]></utility-code>
      <event-processing>
        <ep-component name="{name}" inputs="tick.ts" infos="{var}">
          <input name="^0"><![CDATA[
            {part}
          ]]></input>
        </ep-component>
      </event-processing>
    </visual-object>
  </body>
</voml>
"#
    )
}

/// Spawns `voml run ... --listen` (its standard error piped) and waits, at most a minute, for
/// it to say where it listens: the child (the caller waits for it), the rest of what it
/// says, and `HOST:PORT`.
#[allow(dead_code, clippy::zombie_processes)]
pub fn listening(
    cmd: &mut std::process::Command,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStderr>,
    String,
) {
    use std::io::BufRead;
    let mut child = cmd
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("voml runs");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut line = String::new();
    loop {
        line.clear();
        let said = stderr.read_line(&mut line).unwrap_or(0) > 0;
        if !said || std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("voml did not say where it listens");
        }
        if let Some(rest) = line.trim().strip_prefix("listening on tcp://") {
            let addr = rest.split_whitespace().next().unwrap().to_string();
            return (child, stderr, addr);
        }
    }
}

/// The `counts` info of a dumped state (`--dump-state`), an association list from processor
/// to count, as sorted pairs.
#[allow(dead_code)]
pub fn dumped_counts(state: &Path) -> Vec<(i64, i64)> {
    let text =
        std::fs::read_to_string(state).unwrap_or_else(|e| panic!("{}: {e}", state.display()));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut counts: Vec<(i64, i64)> = v["infos"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_i64().unwrap(), p[1].as_i64().unwrap()))
        .collect();
    counts.sort();
    counts
}

/// Whether a test may run in a network namespace of its own (`unshare -n`, root or user
/// namespaces, with `ip` to bring its loopback up). Without, it says `what` is not tested
/// and answers no, unless `VOML_REQUIRE_TOOLS` is set (as in CI), where that is a failure.
pub fn network_namespaces(what: &str) -> bool {
    let can = std::process::Command::new("unshare")
        .args(["-n", "ip", "link", "set", "lo", "up"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !can {
        assert!(
            std::env::var_os("VOML_REQUIRE_TOOLS").is_none(),
            "`unshare -n` with `ip` is needed (required because VOML_REQUIRE_TOOLS is set)"
        );
        eprintln!("note: `unshare -n` or `ip` unavailable; {what} is not tested");
    }
    can
}
