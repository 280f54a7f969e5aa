//! The lines of the paper's line plot (`examples/paper/lineplot.voml`), drawn straight into
//! the LLVO: what drawing a line costs, without the runtime around it.
//!
//! `cargo run --profile profiling -p voml-llvo --example lineplot_draw [RECORDS [OUT.png]]`
//!
//! Three scalars take turns, one sample a record (a random walk between 5 and 95, three
//! records to a timestamp 0.15 apart); after each record, the line plot draws the latest
//! segment of every scalar sampled at the record's timestamp, adaptive, in a 600x400 view
//! that scrolls along x and rescales along y, through the lazy raster. Every line goes
//! through `draw`, which is never inlined: under callgrind, its inclusive cost divided by
//! the lines drawn (printed) is the LLVO's cost of a line.

use voml_llvo::{
    Adaptation, Backend, ClipMode, Color, LazyRaster, Llvo, OwnerId, Point, Primitive, Style,
    ViewId, ViewSpec,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let records: usize = args
        .get(1)
        .map_or(100_000, |a| a.parse().expect("a number of records"));
    let backend: Box<dyn Backend> = Box::new(LazyRaster::new());
    let mut llvo = Llvo::new(backend);
    let view = llvo
        .create_view(
            ViewSpec::new("lineplotview")
                .window(600, 400)
                .world(0.0, 10.0, 0.0, 100.0)
                .margins(40, 10, 10, 30)
                .adapt(Adaptation::parse("x+:scroll y+:rescale").expect("adaptation")),
        )
        .expect("view");
    let owner = llvo.new_owner(false);
    let styles: Vec<Style> = ["red", "blue", "green"]
        .iter()
        .map(|c| {
            Style::stroke(Color::parse(c).expect("colour"), 1.0)
                .adapt(true)
                .clip(ClipMode::Margin)
        })
        .collect();
    let mut x: u64 = 1;
    let mut values = [40.0f64, 20.0, 78.0];
    // Per scalar: old time, old value, new time, new value.
    let mut scalars: [Option<[f64; 4]>; 3] = [None; 3];
    let mut lines = 0u64;
    for i in 0..records {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = i % 3;
        let step = (x % 1000) as f64 / 100.0 - 5.0;
        values[k] = (values[k] + step).clamp(5.0, 95.0);
        let ts = 0.25 + (i / 3) as f64 * 0.15;
        // As a trace file holds it.
        let v: f64 = format!("{:.3}", values[k]).parse().expect("a number");
        scalars[k] = Some(match scalars[k] {
            Some(p) => [p[2], p[3], ts, v],
            None => [ts, v, ts, v],
        });
        llvo.begin_frame(owner).expect("frame");
        for (s, sc) in scalars.iter().enumerate() {
            let Some(sc) = sc.filter(|sc| sc[2] == ts) else {
                continue;
            };
            let line = Primitive::Line {
                from: Point::new(sc[0], sc[1]),
                to: Point::new(ts, sc[3]),
            };
            draw(&mut llvo, view, owner, &line, &styles[s]);
            lines += 1;
        }
    }
    eprintln!("{lines} lines");
    let png = llvo.png(view).expect("picture");
    if let Some(out) = args.get(2) {
        std::fs::write(out, png).expect("written");
    }
}

#[inline(never)]
fn draw(
    llvo: &mut Llvo<Box<dyn Backend>>,
    view: ViewId,
    owner: OwnerId,
    line: &Primitive,
    style: &Style,
) {
    llvo.draw(view, owner, line, style).expect("drawn");
}
