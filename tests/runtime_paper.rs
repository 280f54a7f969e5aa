//! The runtime on the paper's examples and on small behaviour specs: what the pictures
//! show (sampled at positions computed from the specs' own formulas), the info structures
//! and beeps after a whole trace, pictures against committed references
//! (`tests/render/*.png`, regenerated with `VOML_BLESS=1`), and determinism.

mod support;

use std::collections::HashMap;
use std::path::Path;

use support::{
    check_render, compile_spec, compile_text, decode_png, finish, replay_file, root, start_runtime,
    view_pixels, world_to_px,
};
use voml_llvo::RgbaPixels;
use voml_runtime::Runtime;

/// The paper examples do real work per event; a debug build on a busy machine is slow.
const BUDGET_MS: u64 = 10_000;

fn paper(name: &str) -> std::path::PathBuf {
    root().join("examples/paper").join(name)
}

/// A runtime for a spec file, after replaying a trace file through it.
fn run(spec: &Path, trace: &Path) -> Runtime {
    let mut rt = start_runtime(compile_spec(spec), false, BUDGET_MS);
    let replayed = replay_file(&mut rt, trace);
    assert_eq!(replayed.bad_lines, Vec::<String>::new(), "bad trace lines");
    assert!(!replayed.summary.stopped);
    assert!(
        rt.faults().is_empty(),
        "faults: {:#?}",
        rt.faults()
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
    );
    rt
}

/// The PNG of view number 0.
fn png(rt: &mut Runtime) -> Vec<u8> {
    let mut pngs = rt.pngs();
    assert!(!pngs.is_empty(), "the visual object has no view");
    pngs.swap_remove(0).1.expect("the view encodes as PNG")
}

fn rgb(p: &RgbaPixels, x: f64, y: f64) -> [u8; 3] {
    let [r, g, b, _] = p
        .pixel(x.round() as u32, y.round() as u32)
        .unwrap_or_else(|| panic!("({x}, {y}) is outside the view"));
    [r, g, b]
}

fn is_white(c: [u8; 3]) -> bool {
    c.iter().all(|&v| v >= 245)
}

fn is_red(c: [u8; 3]) -> bool {
    c[0] >= 200 && c[1] <= 80 && c[2] <= 80
}

fn is_pure_blue(c: [u8; 3]) -> bool {
    c[2] >= 200 && c[0] <= 80 && c[1] <= 80
}

/// A pixel of the paper's node globe (a blue-shaded ball, lighter than the pure blue of the
/// utilisation bars).
fn is_globe(c: [u8; 3]) -> bool {
    !is_white(c) && c[2] > c[0].saturating_add(40) && !is_pure_blue(c)
}

/// Converts between world and pixel coordinates of view 0 (a linear map).
struct Map {
    x0: f64,
    y0: f64,
    sx: f64,
    sy: f64,
}

impl Map {
    fn of(rt: &Runtime) -> Map {
        let (x0, y0) = world_to_px(rt, 0, 0.0, 0.0);
        let (x1, y1) = world_to_px(rt, 0, 1.0, 1.0);
        Map {
            x0,
            y0,
            sx: x1 - x0,
            sy: y1 - y0,
        }
    }

    fn px(&self, wx: f64, wy: f64) -> (f64, f64) {
        (self.x0 + wx * self.sx, self.y0 + wy * self.sy)
    }

    fn world(&self, px: f64, py: f64) -> (f64, f64) {
        ((px - self.x0) / self.sx, (py - self.y0) / self.sy)
    }
}

// ---------------------------------------------------------------------------------------
// The bandwidth visual object (Section 4, Figures 8 to 13).

/// Where Figures 12 and 13 put a point at `radius` on the spoke of node `k` of `nodes`
/// (the paper's `(* k (/ 6.28 nodes))`, sine on x and cosine on y around the switch at
/// (50, 50)). 6.28 is the paper's, not 2 pi.
#[allow(clippy::approx_constant)]
fn spoke(k: usize, nodes: usize, radius: f64) -> (f64, f64) {
    let angle = k as f64 * (6.28 / nodes as f64);
    (50.0 + radius * angle.sin(), 50.0 + radius * angle.cos())
}

/// Connected blobs of globe pixels on the ring of globes (world radius 41 to 52 around the
/// switch: beyond the red lines, which end at 39, and inside the title).
fn globe_blobs(p: &RgbaPixels, map: &Map) -> Vec<usize> {
    let (w, h) = (p.width as usize, p.height as usize);
    let mut on = vec![false; w * h];
    for y in 0..h {
        for x in 0..w {
            let (wx, wy) = map.world(x as f64, y as f64);
            let r = ((wx - 50.0).powi(2) + (wy - 50.0).powi(2)).sqrt();
            if (41.0..=52.0).contains(&r) && is_globe(rgb(p, x as f64, y as f64)) {
                on[y * w + x] = true;
            }
        }
    }
    let mut sizes = Vec::new();
    let mut seen = vec![false; w * h];
    for start in 0..w * h {
        if !on[start] || seen[start] {
            continue;
        }
        let mut size = 0;
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(i) = stack.pop() {
            size += 1;
            let (x, y) = (i % w, i / w);
            let near = [
                (x.wrapping_sub(1), y),
                (x + 1, y),
                (x, y.wrapping_sub(1)),
                (x, y + 1),
            ];
            for (nx, ny) in near {
                if nx < w && ny < h && on[ny * w + nx] && !seen[ny * w + nx] {
                    seen[ny * w + nx] = true;
                    stack.push(ny * w + nx);
                }
            }
        }
        // Stray anti-aliased fringes are not globes.
        if size >= 50 {
            sizes.push(size);
        }
    }
    sizes
}

/// Whether a small square of pixels around world point (wx, wy) holds a pixel `test` likes.
fn any_near(p: &RgbaPixels, map: &Map, (wx, wy): (f64, f64), test: fn([u8; 3]) -> bool) -> bool {
    let (cx, cy) = map.px(wx, wy);
    (-2..=2).any(|dy| (-2..=2).any(|dx| test(rgb(p, cx + f64::from(dx), cy + f64::from(dy)))))
}

/// Whether all pixels of a small square around world point (wx, wy) are background.
fn all_white_near(p: &RgbaPixels, map: &Map, (wx, wy): (f64, f64)) -> bool {
    let (cx, cy) = map.px(wx, wy);
    (-3..=3).all(|dy| (-3..=3).all(|dx| is_white(rgb(p, cx + f64::from(dx), cy + f64::from(dy)))))
}

fn trace_records(path: &Path) -> Vec<voml_trace::Record> {
    voml_trace::TraceReader::open(path, voml_trace::ReadOptions { strict: true })
        .expect("the trace opens")
        .map(|r| r.expect("a good record"))
        .collect()
}

/// The last profile (used / received bandwidth) of every node in the trace.
fn last_utilisation(records: &[voml_trace::Record]) -> HashMap<i64, f64> {
    let mut last = HashMap::new();
    for r in records.iter().filter(|r| r.rtype == -3 && r.etype == 3141) {
        let node = r.get(3).and_then(|v| v.as_i64()).unwrap();
        let rkbps = r.get(6).and_then(|v| v.as_f64()).unwrap();
        let used = r.get(8).and_then(|v| v.as_f64()).unwrap();
        last.insert(node, used / rkbps);
    }
    last
}

#[test]
fn bandwidth_shows_the_switch_the_nodes_and_their_utilisation() {
    let spec = paper("bandwidth.voml");
    let trace = paper("bandwidth.trf");
    let records = trace_records(&trace);
    assert_eq!(records.len(), 41);
    let leave = records
        .iter()
        .position(|r| r.rtype == -4 && r.etype == -901)
        .expect("a node leaves in the trace");
    assert_eq!(records[leave].get(3).and_then(|v| v.as_i64()), Some(4));

    let mut rt = start_runtime(compile_spec(&spec), false, BUDGET_MS);
    let map = Map::of(&rt);
    let mut problems = Vec::new();

    // Just before node 4 leaves: four globes, node 4's spoke drawn.
    for r in &records[..leave] {
        rt.process(r, "bandwidth.trf").expect("no fault");
    }
    assert_eq!(rt.variable("numofnodes").as_deref(), Some("5"));
    let before = view_pixels(&mut rt, 0);
    let blobs = globe_blobs(&before, &map);
    if blobs.len() != 4 {
        problems.push(format!(
            "{} globes with four nodes (sizes {blobs:?})",
            blobs.len()
        ));
    }
    for k in 1..=4 {
        if !any_near(&before, &map, spoke(k, 4, 45.0), is_globe) {
            problems.push(format!("no globe for node {k} of 4"));
        }
        if !any_near(&before, &map, spoke(k, 4, 36.0), is_red) {
            problems.push(format!("no red connection for node {k} of 4"));
        }
    }

    // The rest of the trace: node 4 is gone, the ring is redrawn with three nodes.
    for r in &records[leave..] {
        rt.process(r, "bandwidth.trf").expect("no fault");
    }
    rt.finish(4.75, 0).expect("no fault");
    assert!(rt.faults().is_empty(), "faults: {:?}", rt.faults());
    assert_eq!(rt.stats().records, 41);
    assert_eq!(rt.variable("numofnodes").as_deref(), Some("4"));
    assert_eq!(rt.variable("nodeno").as_deref(), Some("-1"));
    assert_eq!(rt.variable("nodechange").as_deref(), Some("#false"));
    let nodes = rt.variable("nodes").unwrap();
    assert!(
        !nodes.contains("(4 ."),
        "node 4 is still in the node table: {nodes}"
    );

    let after = view_pixels(&mut rt, 0);
    // The switch in the middle: the grey picture of switch.gif, neither red nor blue.
    let (cx, cy) = map.px(50.0, 50.0);
    let mut grey = 0;
    for dy in -8..=8 {
        for dx in -8..=8 {
            let c = rgb(&after, cx + f64::from(dx), cy + f64::from(dy));
            let spread = c.iter().max().unwrap() - c.iter().min().unwrap();
            if !is_white(c) && spread < 40 {
                grey += 1;
            }
        }
    }
    if grey < 150 {
        problems.push(format!(
            "only {grey} of 289 pixels around the centre show the switch"
        ));
    }

    let blobs = globe_blobs(&after, &map);
    if blobs.len() != 3 {
        problems.push(format!(
            "{} globes with three nodes (sizes {blobs:?})",
            blobs.len()
        ));
    }
    let used = last_utilisation(&records);
    for k in 1..=3 {
        if !any_near(&after, &map, spoke(k, 3, 45.0), is_globe) {
            problems.push(format!("no globe for node {k} of 3"));
        }
        // Figure 13: blue from radius 6 to 6 + 25 * used / received, red on to 39.
        let end = 6.0 + 25.0 * used[&(k as i64)];
        for (radius, want, test) in [
            (9.0, "blue", is_pure_blue as fn([u8; 3]) -> bool),
            (end - 2.0, "blue", is_pure_blue),
            (end + 2.5, "red", is_red),
            (36.0, "red", is_red),
        ] {
            if !any_near(&after, &map, spoke(k, 3, radius), test) {
                problems.push(format!(
                    "node {k}: no {want} at radius {radius:.1} (utilisation bar ends at {end:.1})"
                ));
            }
        }
    }
    // Where nodes 1 to 3 sat in the ring of four (node 4's old place is node 3's now),
    // nothing is left: no globe, no red, no blue.
    for k in 1..=3 {
        for radius in [9.0, 20.0, 30.0, 36.0, 45.0] {
            if !all_white_near(&after, &map, spoke(k, 4, radius)) {
                problems.push(format!(
                    "node {k} of the old ring of four still shows at radius {radius}"
                ));
            }
        }
    }
    finish(problems);
}

// ---------------------------------------------------------------------------------------
// The line-plot visual object (Figures 4b and 5).

/// The line plot's segments go to the drawing layer's thread: every one but the first (which
/// finds out that its view and component keep nothing of them) is handed over, and the run
/// waits for that thread once, when its input has ended.
#[test]
fn the_line_plot_hands_its_segments_to_the_drawing_layers_thread() {
    let trace = support::lineplot_trace(3000);
    let mut rt = start_runtime(compile_spec(&paper("lineplot.voml")), false, BUDGET_MS);
    let replayed = support::replay_bytes(&mut rt, trace.as_bytes(), "lineplot", false);
    assert!(!replayed.summary.stopped);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    // Three scalars, a timestamp every three records: one segment after the first, two
    // after the second, three after the third; the round after the end of input draws the
    // last three again.
    let host = rt.host();
    assert_eq!(host.drawing.handed_over(), 6000 + 3 - 1);
    assert_eq!(host.drawing.waits(), 1);
}

/// A lazy raster that refuses blue strokes.
struct RefusesBlue(voml_llvo::LazyRaster);

impl RefusesBlue {
    fn take_command(&mut self, command: voml_llvo::Command) -> Result<(), voml_llvo::LlvoError> {
        if let voml_llvo::Command::Draw {
            cmd: voml_llvo::DrawCmd::Stroke { color, .. },
            ..
        } = &command
        {
            if *color == voml_llvo::Color::rgb(0, 0, 255) {
                return Err(voml_llvo::LlvoError::Backend("blue is refused".into()));
            }
        }
        command.apply(&mut self.0)
    }
}

impl voml_llvo::Backend for RefusesBlue {
    voml_llvo::calls_as_commands!();

    fn present(&mut self, view: voml_llvo::ViewId) -> Result<(), voml_llvo::LlvoError> {
        self.0.present(view)
    }
    fn snapshot(&mut self, view: voml_llvo::ViewId) -> Result<RgbaPixels, voml_llvo::LlvoError> {
        self.0.snapshot(view)
    }
}

/// A segment the back end refuses on the drawing layer's thread, which no primitive drawn
/// since reported, is noted when the run finishes; the other segments are drawn.
#[test]
fn a_segment_the_back_end_refuses_on_the_layers_thread_is_noted_at_the_end() {
    let vo = compile_spec(&paper("lineplot.voml"));
    let config = voml_runtime::Config {
        budget: std::time::Duration::from_millis(BUDGET_MS),
        ..Default::default()
    };
    let backend = Box::new(RefusesBlue(voml_llvo::LazyRaster::new()));
    let mut rt = Runtime::new(vo, backend, config).expect("the visual object loads");
    let trace = support::lineplot_trace(300);
    let replayed = support::replay_bytes(&mut rt, trace.as_bytes(), "lineplot", false);
    assert!(!replayed.summary.stopped);
    assert!(rt.host().drawing.handed_over() > 500);
    let (notes, _) = rt.drawing_notes();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].message.contains("blue is refused"), "{}", notes[0]);
    // Red (key 0) is drawn.
    let p = view_pixels(&mut rt, 0);
    let red = p
        .data
        .chunks_exact(4)
        .filter(|c| is_hue([c[0], c[1], c[2]], 0))
        .count();
    assert!(red > 100, "{red} red pixels");
}

fn is_hue(c: [u8; 3], main: usize) -> bool {
    let others: Vec<u8> = (0..3).filter(|&i| i != main).map(|i| c[i]).collect();
    let min_other = *others.iter().min().unwrap();
    let max_other = *others.iter().max().unwrap();
    c[main] >= max_other.saturating_add(40) && max_other - min_other <= 30
}

#[test]
fn lineplot_draws_one_line_per_scalar_and_beeps_every_ten_lines() {
    let trace = paper("lineplot.trf");
    let mut rt = run(&paper("lineplot.voml"), &trace);
    assert_eq!(rt.stats().records, 60);

    // Figure 5 beeps when its line counter reaches 10; it draws one line per scalar whose
    // newest sample is at the current time, after every record.
    let records = trace_records(&trace);
    let mut latest: HashMap<i64, f64> = HashMap::new();
    let mut counter = 0;
    let mut expected_beeps = Vec::new();
    for r in &records {
        let ts = r.timestamp().unwrap();
        latest.insert(r.get(3).and_then(|v| v.as_i64()).unwrap(), ts);
        for _ in latest.values().filter(|&&t| t == ts) {
            counter += 1;
            if counter == 10 {
                expected_beeps.push(ts);
                counter = 0;
            }
        }
    }
    assert_eq!(expected_beeps.len(), 6);
    assert_eq!(rt.beeps(), expected_beeps);
    assert_eq!(rt.variable("currenttime").as_deref(), Some("11.95"));

    // One line per scalar in its palette colour (keys 0, 1, 2: red, blue, green), each
    // across most of the view.
    let p = view_pixels(&mut rt, 0);
    let mut problems = Vec::new();
    for (name, channel) in [("red", 0), ("green", 1), ("blue", 2)] {
        let xs: Vec<u32> = (0..p.height)
            .flat_map(|y| (0..p.width).map(move |x| (x, y)))
            .filter(|&(x, y)| is_hue(rgb(&p, f64::from(x), f64::from(y)), channel))
            .map(|(x, _)| x)
            .collect();
        let (Some(lo), Some(hi)) = (xs.iter().min(), xs.iter().max()) else {
            problems.push(format!("no {name} pixels"));
            continue;
        };
        if f64::from(hi - lo) < 0.75 * f64::from(p.width) {
            problems.push(format!(
                "the {name} line spans x {lo} to {hi} of a {} pixel wide view",
                p.width
            ));
        }
    }
    let _ = png(&mut rt);
    finish(problems);
}

// ---------------------------------------------------------------------------------------
// Pictures against references.

#[test]
fn png_round_trip_is_exact() {
    // The reference comparison decodes PNGs through the LLVO; it must give the pixels back.
    let mut rt = run(&paper("bandwidth.voml"), &paper("bandwidth.trf"));
    let pixels = view_pixels(&mut rt, 0);
    let decoded = decode_png(&png(&mut rt)).expect("decodes");
    assert_eq!(
        (decoded.width, decoded.height),
        (pixels.width, pixels.height)
    );
    assert!(decoded.data == pixels.data, "decoding changed pixels");
    let again = decode_png(&support::encode_png(&pixels)).expect("decodes");
    assert!(again.data == pixels.data, "the test encoder changed pixels");
}

#[test]
fn paper_examples_match_their_reference_pictures() {
    let mut problems = Vec::new();
    for name in ["bandwidth", "lineplot"] {
        let mut rt = run(
            &paper(&format!("{name}.voml")),
            &paper(&format!("{name}.trf")),
        );
        problems.extend(check_render(name, &png(&mut rt)));
    }
    finish(problems);
}

/// The behaviour specs in `tests/render/` all run over this trace.
fn steps() -> std::path::PathBuf {
    root().join("tests/render/steps.trf")
}

fn render_spec(name: &str) -> Runtime {
    run(&root().join(format!("tests/render/{name}.voml")), &steps())
}

fn count(p: &RgbaPixels, test: impl Fn([u8; 3]) -> bool) -> usize {
    p.data
        .chunks(4)
        .filter(|c| test([c[0], c[1], c[2]]))
        .count()
}

/// The colour at world point (wx, wy) of view 0.
fn at(rt: &Runtime, p: &RgbaPixels, wx: f64, wy: f64) -> [u8; 3] {
    let (x, y) = world_to_px(rt, 0, wx, wy);
    rgb(p, x, y)
}

#[test]
fn refresh_update_undraws_the_previous_frame() {
    let mut rt = render_spec("refresh-update");
    let p = view_pixels(&mut rt, 0);
    // Only the square of the last step (5) is left; those of steps 1 to 4 were undrawn.
    assert_eq!(at(&rt, &p, 5.0, 1.0), [0, 128, 128], "the last square");
    for step in 1..=4 {
        assert!(
            is_white(at(&rt, &p, f64::from(step), 1.0)),
            "the square of step {step} is still there"
        );
    }
    // The trail drawn without `update` keeps every step.
    for step in 1..=5 {
        assert!(
            !is_white(at(&rt, &p, f64::from(step), 0.25)),
            "the trail of step {step} is missing"
        );
    }
    finish(
        check_render("refresh-update", &png(&mut rt))
            .into_iter()
            .collect(),
    );
}

/// `<view undraw>`: a cursor redrawn at each step over bands drawn once. Where it was
/// undrawn, the view that paints over (the default) shows gaps in the bands; the exact view
/// shows them whole. Both show the last cursor.
#[test]
fn an_exact_view_keeps_what_lay_beneath_an_undrawn_shape() {
    let mut rt = render_spec("undraw-exact");
    let gold = |c: [u8; 3]| c == [255, 215, 0];
    let gray = |c: [u8; 3]| c == [128, 128, 128];
    for (view, whole) in [(0, false), (1, true)] {
        let p = view_pixels(&mut rt, view);
        let at = |wx: f64, wy: f64| {
            let (x, y) = world_to_px(&rt, view, wx, wy);
            rgb(&p, x, y)
        };
        // The cursors of positions 0 to 4 were undrawn.
        for pos in 0..=4 {
            let x = f64::from(pos);
            assert_eq!(
                gold(at(x, 0.6)) && gray(at(x, 1.4)),
                whole,
                "view {view}, position {pos}: band {:?}, line {:?}",
                at(x, 0.6),
                at(x, 1.4)
            );
            if !whole {
                assert!(is_white(at(x, 0.6)), "a painted-over gap is background");
            }
        }
        // Between the cursors the bands were never touched; the last cursor is there.
        assert!(gold(at(2.5, 0.6)) && gray(at(2.5, 1.4)));
        assert_eq!(at(5.0, 1.0), [220, 20, 60], "the last cursor (crimson)");
    }
}

#[test]
fn a_false_enable_expression_draws_nothing() {
    let mut rt = render_spec("enable");
    let p = view_pixels(&mut rt, 0);
    assert_eq!(
        count(&p, |c| c == [0, 0, 0]),
        0,
        "the disabled component drew"
    );
    assert!(
        count(&p, |c| c == [0, 128, 0]) > 100,
        "the enabled one did not"
    );
    assert_eq!(rt.variable("show").as_deref(), Some("#false"));
    finish(check_render("enable", &png(&mut rt)).into_iter().collect());
}

#[test]
fn the_later_ir_component_draws_on_top() {
    let mut rt = render_spec("ir-order");
    let p = view_pixels(&mut rt, 0);
    assert_eq!(at(&rt, &p, 1.5, 1.0), [255, 0, 0], "first only");
    assert_eq!(at(&rt, &p, 3.5, 1.0), [0, 0, 255], "second only");
    assert_eq!(at(&rt, &p, 2.5, 1.0), [0, 0, 255], "overlap: second on top");
    finish(
        check_render("ir-order", &png(&mut rt))
            .into_iter()
            .collect(),
    );
}

#[test]
fn reverse_rendition_order_puts_the_first_component_on_top() {
    let mut rt = render_spec("reverse-order");
    let p = view_pixels(&mut rt, 0);
    assert_eq!(at(&rt, &p, 1.5, 1.0), [255, 0, 0], "first only");
    assert_eq!(at(&rt, &p, 3.5, 1.0), [0, 0, 255], "second only");
    assert_eq!(at(&rt, &p, 2.5, 1.0), [255, 0, 0], "overlap: first on top");
    finish(
        check_render("reverse-order", &png(&mut rt))
            .into_iter()
            .collect(),
    );
}

#[test]
fn buffered_drawing_gives_the_same_picture() {
    let path = root().join("tests/render/buffer.voml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#"buffer="yes""#));
    let mut buffered = render_spec("buffer");
    let unbuffered_vo = compile_text(
        "tests/render/buffer-no.voml",
        &text.replace(r#"buffer="yes""#, r#"buffer="no""#),
    );
    let mut unbuffered = start_runtime(unbuffered_vo, false, BUDGET_MS);
    replay_file(&mut unbuffered, &steps());
    assert!(unbuffered.faults().is_empty());
    let (a, b) = (
        view_pixels(&mut buffered, 0),
        view_pixels(&mut unbuffered, 0),
    );
    assert!(a.data == b.data, "buffer=\"yes\" changed the final picture");
    assert!(count(&a, |c| !is_white(c)) > 500, "nothing much was drawn");
    finish(
        check_render("buffer", &png(&mut buffered))
            .into_iter()
            .collect(),
    );
}

#[test]
fn the_same_run_gives_the_same_bytes() {
    for name in ["bandwidth", "lineplot"] {
        let spec = paper(&format!("{name}.voml"));
        let trace = paper(&format!("{name}.trf"));
        let first = png(&mut run(&spec, &trace));
        let second = png(&mut run(&spec, &trace));
        assert!(first == second, "{name}: two runs gave different PNGs");
    }
}

#[test]
fn view_initialisation_code_reaches_its_view() {
    // The init code of a view runs once at the start, with the view layer attached.
    let vo = compile_text(
        "tests/render/view-init.voml",
        r#"<voml><body><visual-object name="init">
  <control-structures><variable name="width" type="int" init="-1"/></control-structures>
  <view-initializations>
    <view name="v" window="120 90" controls="width">(set! %0 (list-ref (view-info "v") 5))</view>
  </view-initializations>
</visual-object></body></voml>"#,
    );
    let mut rt = start_runtime(vo, false, BUDGET_MS);
    support::replay_bytes(&mut rt, b"-3 1 0.5 0 0\n", "one.trf", false);
    assert!(rt.faults().is_empty(), "{:?}", rt.faults());
    assert_eq!(rt.variable("width").as_deref(), Some("120"));
}
