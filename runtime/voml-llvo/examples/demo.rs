//! Draws the picture of the paper's Figures 12-14 (a switch, nodes around
//! it joined by thick red lines, blue bandwidth bars, a title) through the
//! LLVO layer and writes it as a PNG: `cargo run -p voml-llvo --example demo [out.png]`.

use std::error::Error;
use std::f64::consts::TAU;
use std::path::PathBuf;

use voml_llvo::{
    Color, FontSpec, HAlign, Llvo, OwnerId, Point, Primitive, Style, VAlign, ViewId, ViewSpec,
};

fn colour(name: &str) -> Color {
    Color::parse(name).unwrap_or(Color::BLACK)
}

/// The paper loads `bggif/switch.gif` and `bggif/node.gif`; we draw
/// stand-ins with the LLVO itself and load them back as PNG images.
fn icon(
    llvo: &mut Llvo,
    name: &str,
    draw: &[(Primitive, Style)],
) -> Result<Vec<u8>, Box<dyn Error>> {
    let v = llvo.create_view(
        ViewSpec::new(name)
            .window(48, 48)
            .world(0.0, 48.0, 0.0, 48.0)
            .background(Color::rgba(0, 0, 0, 0)),
    )?;
    for (p, s) in draw {
        llvo.draw(v, OwnerId::NONE, p, s)?;
    }
    let png = llvo.png(v)?;
    llvo.close_view(v)?;
    Ok(png)
}

fn switch_icon(llvo: &mut Llvo) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut prims = vec![(
        Primitive::Rectangle {
            from: Point::new(3.0, 10.0),
            to: Point::new(45.0, 38.0),
        },
        Style {
            fill: Some(colour("lightgray")),
            ..Style::stroke(colour("dimgray"), 2.0)
        },
    )];
    for i in 0..6 {
        let x = 8.0 + f64::from(i) * 6.0;
        prims.push((
            Primitive::Rectangle {
                from: Point::new(x, 15.0),
                to: Point::new(x + 4.0, 21.0),
            },
            Style::filled(colour("black")),
        ));
        prims.push((
            Primitive::Circle {
                center: Point::new(x + 2.0, 30.0),
                radius: 1.5,
            },
            Style::filled(if i % 2 == 0 {
                colour("lime")
            } else {
                colour("orange")
            }),
        ));
    }
    icon(llvo, "switch-icon", &prims)
}

fn node_icon(llvo: &mut Llvo) -> Result<Vec<u8>, Box<dyn Error>> {
    let c = Point::new(24.0, 24.0);
    let line = Style::stroke(colour("white"), 1.5);
    let prims = vec![
        (
            Primitive::Circle {
                center: c,
                radius: 21.0,
            },
            Style {
                fill: Some(colour("steelblue")),
                ..Style::stroke(colour("navy"), 2.0)
            },
        ),
        (
            Primitive::Ellipse {
                center: c,
                radii: (9.0, 21.0),
            },
            line.clone(),
        ),
        (
            Primitive::Line {
                from: Point::new(3.0, 24.0),
                to: Point::new(45.0, 24.0),
            },
            line.clone(),
        ),
        (
            Primitive::Arc {
                center: Point::new(24.0, -6.0),
                radius: 38.0,
                start_deg: 55.0,
                extent_deg: 70.0,
            },
            line.clone(),
        ),
        (
            Primitive::Arc {
                center: Point::new(24.0, 54.0),
                radius: 38.0,
                start_deg: 235.0,
                extent_deg: 70.0,
            },
            line,
        ),
    ];
    icon(llvo, "node-icon", &prims)
}

/// Figure 12's `nodes-ir`: title, switch, and one globe plus red line per node.
fn nodes_ir(
    llvo: &mut Llvo,
    v: ViewId,
    owner: OwnerId,
    images: (voml_llvo::ImageId, voml_llvo::ImageId),
    numofnodes: u32,
) -> Result<(), Box<dyn Error>> {
    llvo.begin_update(owner)?; // refresh="update"
    llvo.begin_buffer(v)?; // buffer="yes"
    let info = llvo.view_info(v)?;
    let size = (info.width / 40).max(info.height / 40) as f32;
    let font = FontSpec::from_hints("courier", size, "bold");
    let title = Primitive::Text {
        at: Point::new(50.0, 107.0),
        content: "Bandwidth Utilization".into(),
        font,
        halign: HAlign::Center,
        valign: VAlign::Baseline,
    };
    llvo.draw(v, owner, &title, &Style::stroke(colour("black"), 1.0))?;
    let figure = |image, x, y| Primitive::Figure {
        image,
        orig_origin: (0.0, 0.0),
        orig_extents: (0.0, 0.0),
        world_origin: Point::new(x, y),
        world_extents: (10.0, 10.0),
    };
    llvo.draw(v, owner, &figure(images.0, 45.0, 45.0), &Style::default())?;
    let nodenum = f64::from(numofnodes) - 1.0;
    // The paper writes 6.28 for 2 pi.
    let step = TAU / nodenum;
    for num in (1..numofnodes).rev() {
        let angle = f64::from(num) * step;
        let (sine, cosine) = angle.sin_cos();
        llvo.draw(
            v,
            owner,
            &figure(images.1, 45.0 + 45.0 * sine, 45.0 + 45.0 * cosine),
            &Style::default(),
        )?;
        llvo.draw(
            v,
            owner,
            &Primitive::Line {
                from: Point::new(50.0 + 6.0 * sine, 50.0 + 6.0 * cosine),
                to: Point::new(50.0 + 39.0 * sine, 50.0 + 39.0 * cosine),
            },
            &Style::stroke(colour("red"), 12.0),
        )?;
    }
    llvo.flush(v)?;
    Ok(())
}

/// Figure 13's `bu-ir`: a blue bar on top of node `nodeno`'s red line.
fn bu_ir(
    llvo: &mut Llvo,
    v: ViewId,
    numofnodes: u32,
    nodeno: u32,
    used: f64,
) -> Result<(), Box<dyn Error>> {
    let angle = f64::from(nodeno) * (TAU / (f64::from(numofnodes) - 1.0));
    let (sine, cosine) = angle.sin_cos();
    let mag = 25.0 * used;
    let red_line = Primitive::Line {
        from: Point::new(50.0 + 6.0 * sine, 50.0 + 6.0 * cosine),
        to: Point::new(50.0 + 39.0 * sine, 50.0 + 39.0 * cosine),
    };
    let blue_bar = Primitive::Line {
        from: Point::new(50.0 + 6.0 * sine, 50.0 + 6.0 * cosine),
        to: Point::new(50.0 + (6.0 + mag) * sine, 50.0 + (6.0 + mag) * cosine),
    };
    llvo.draw(
        v,
        OwnerId::NONE,
        &red_line,
        &Style::stroke(colour("red"), 12.0),
    )?;
    llvo.draw(
        v,
        OwnerId::NONE,
        &blue_bar,
        &Style::stroke(colour("blue"), 10.0),
    )?;
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let out = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("voml-llvo-demo.png"));
    let mut llvo = Llvo::headless();
    let switch_png = switch_icon(&mut llvo)?;
    let node_png = node_icon(&mut llvo)?;
    let images = (llvo.load_image(&switch_png)?, llvo.load_image(&node_png)?);

    // Figure 10's view.
    let v = llvo.create_view(
        ViewSpec::new("BU-View")
            .title("Switch, nodes and bandwidth utilizations")
            .window(700, 700)
            .world(-10.0, 110.0, -10.0, 120.0),
    )?;
    let nodes = llvo.new_owner(true);

    // Three nodes join (the switch counts as one, as in the paper's
    // `(- $0 1)`), then a fourth: the old picture is undrawn first.
    nodes_ir(&mut llvo, v, nodes, images, 4)?;
    nodes_ir(&mut llvo, v, nodes, images, 5)?;
    for (node, used) in [(1, 0.35), (2, 0.8), (3, 0.55), (4, 0.2)] {
        bu_ir(&mut llvo, v, 5, node, used)?;
    }
    std::fs::write(&out, llvo.png(v)?)?;
    println!("wrote {}", out.display());
    Ok(())
}
