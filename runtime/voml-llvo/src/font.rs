//! Fonts bundled with the runtime and the text metrics every back end shares.
//!
//! The fonts are embedded so that a visual object renders the same on every
//! machine, with or without fonts installed; the layout (advance, ascent,
//! alignment) is computed here once so that back ends that draw text
//! themselves (a web page) place it where the raster back end would.

use serde::{Deserialize, Serialize};

use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, Glyph, GlyphId, PxScale, ScaleFont};

static SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");
static SANS_BOLD: &[u8] = include_bytes!("../fonts/DejaVuSans-Bold.ttf");
static MONO: &[u8] = include_bytes!("../fonts/DejaVuSansMono.ttf");
static MONO_BOLD: &[u8] = include_bytes!("../fonts/DejaVuSansMono-Bold.ttf");

/// Largest text size we rasterise (the language's limit); beyond it glyph
/// bitmaps would cost hundreds of megabytes for no visible gain.
pub use voml_ir::vocabulary::limits::MAX_FONT_SIZE;

/// A family of type faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FontFamily {
    /// Proportional sans serif (DejaVu Sans).
    #[default]
    Sans,
    /// Proportional serif. No serif face is bundled: drawn with Sans.
    Serif,
    /// Monospaced (DejaVu Sans Mono).
    Mono,
}

/// A font request: family, weight and size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FontSpec {
    /// The family.
    pub family: FontFamily,
    /// Bold weight.
    pub bold: bool,
    /// The em size in pixels (as CSS `font-size: Npx`).
    pub size_px: f32,
}

impl Default for FontSpec {
    fn default() -> Self {
        FontSpec {
            family: FontFamily::Sans,
            bold: false,
            size_px: 12.0,
        }
    }
}

impl FontSpec {
    /// A font from the paper's `getfontname` hints: a family name as X11
    /// programs knew them ("courier", "helvetica", "times", ...), a size in
    /// pixels and a weight ("bold", "medium", ...). Unknown families give
    /// Sans; any weight containing "bold" or "black" or "heavy" is bold.
    pub fn from_hints(family_hint: &str, size_px: f32, weight_hint: &str) -> FontSpec {
        let family = family_hint.to_ascii_lowercase();
        let family = if ["courier", "mono", "fixed", "typewriter", "consol"]
            .iter()
            .any(|k| family.contains(k))
        {
            FontFamily::Mono
        } else if [
            "times",
            "serif",
            "roman",
            "georgia",
            "schoolbook",
            "palatino",
        ]
        .iter()
        .any(|k| family.contains(k))
            && !family.contains("sans")
        {
            FontFamily::Serif
        } else {
            FontFamily::Sans
        };
        let weight = weight_hint.to_ascii_lowercase();
        let bold = ["bold", "black", "heavy"]
            .iter()
            .any(|k| weight.contains(k));
        FontSpec {
            family,
            bold,
            size_px,
        }
    }

    /// The bundled face that draws this spec.
    pub fn face(&self) -> &'static FontRef<'static> {
        &faces()[self.face_index()]
    }

    /// Which of the bundled faces the font is drawn with.
    fn face_index(&self) -> usize {
        match (self.family, self.bold) {
            (FontFamily::Mono, false) => 2,
            (FontFamily::Mono, true) => 3,
            // No serif face is bundled (size); Sans keeps the metrics sane.
            (FontFamily::Sans | FontFamily::Serif, false) => 0,
            (FontFamily::Sans | FontFamily::Serif, true) => 1,
        }
    }

    /// The size as ab_glyph wants it: ab_glyph scales by ascent-descent
    /// height, while our size (like CSS) is the em size.
    pub fn px_scale(&self) -> PxScale {
        // The faces' tables are read once (they are asked for with every text).
        static HEIGHTS: OnceLock<[(f32, f32); 4]> = OnceLock::new();
        let heights = HEIGHTS.get_or_init(|| {
            faces().each_ref().map(|face| {
                (
                    face.height_unscaled(),
                    face.units_per_em().unwrap_or(2048.0),
                )
            })
        });
        let (height, upem) = heights[self.face_index()];
        PxScale::from(self.size_px * height / upem)
    }

    /// Vertical metrics in pixels.
    pub fn metrics(&self) -> LineMetrics {
        let scaled = self.face().as_scaled(self.px_scale());
        LineMetrics {
            ascent: scaled.ascent(),
            descent: scaled.descent(),
            line_height: scaled.ascent() - scaled.descent() + scaled.line_gap(),
        }
    }

    /// `f` of the glyphs of one line of text, placed from a pen at (0, 0) on the baseline
    /// with kerning, and of its width.
    ///
    /// One text is laid out several times in a row (its width to align it, its ink to know
    /// what it covers, its glyphs to paint it): the last layout is kept, in storage that
    /// the next one reuses.
    fn with_layout<R>(&self, text: &str, f: impl FnOnce(&[(GlyphId, f32)], f32) -> R) -> R {
        struct Kept {
            font: Option<FontSpec>,
            text: String,
            glyphs: Vec<(GlyphId, f32)>,
            width: f32,
        }
        thread_local! {
            static LAST: std::cell::RefCell<Kept> = const {
                std::cell::RefCell::new(Kept {
                    font: None,
                    text: String::new(),
                    glyphs: Vec::new(),
                    width: 0.0,
                })
            };
        }
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            if last.font != Some(*self) || last.text != text {
                let kept = &mut *last;
                kept.width = self.lay_out(text, &mut kept.glyphs);
                kept.text.clear();
                kept.text.push_str(text);
                kept.font = Some(*self);
            }
            f(&last.glyphs, last.width)
        })
    }

    /// Lays one line out into `glyphs`; its width.
    fn lay_out(&self, text: &str, glyphs: &mut Vec<(GlyphId, f32)>) -> f32 {
        let scaled = self.face().as_scaled(self.px_scale());
        let index = self.face_index();
        glyphs.clear();
        let mut pen = 0.0f32;
        let mut prev: Option<GlyphId> = None;
        for ch in text.chars() {
            if ch.is_control() {
                continue;
            }
            let id = glyph_id(index, &scaled, ch);
            if let Some(p) = prev {
                pen += scaled.kern(p, id);
            }
            glyphs.push((id, pen));
            pen += scaled.h_advance(id);
            prev = Some(id);
        }
        pen
    }

    /// The advance width of one line of text in pixels.
    pub fn line_width(&self, text: &str) -> f32 {
        self.with_layout(text, |_, width| width)
    }

    /// The glyphs of one line whose baseline starts at (x, baseline), in
    /// pixels; what a raster back end draws.
    pub fn positioned_glyphs(&self, text: &str, x: f32, baseline: f32) -> Vec<Glyph> {
        let scale = self.px_scale();
        self.with_layout(text, |glyphs, _| {
            glyphs
                .iter()
                .map(|&(id, pen)| id.with_scale_and_position(scale, point(x + pen, baseline)))
                .collect()
        })
    }

    /// The pixels the glyphs of one line can touch (x0, y0, x1, y1), or
    /// `None` for text without ink (spaces). Used to erase text.
    ///
    /// Each glyph's outline box is looked up once per face and kept: bounds are asked for
    /// every text drawn, and outlining a glyph costs far more than placing its box. The
    /// pixels are those of the outlined glyph (`ab_glyph`'s own rounding).
    pub fn ink_bounds(&self, text: &str, x: f32, baseline: f32) -> Option<(f32, f32, f32, f32)> {
        // A text drawn is asked for its ink twice in a row (to record how to erase it, and
        // to know what it covers): the last answer is kept.
        type Bounds = Option<(f32, f32, f32, f32)>;
        struct Kept {
            font: Option<FontSpec>,
            text: String,
            at: (u32, u32),
            bounds: Bounds,
        }
        thread_local! {
            static LAST: std::cell::RefCell<Kept> = const {
                std::cell::RefCell::new(Kept { font: None, text: String::new(), at: (0, 0), bounds: None })
            };
        }
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            let at = (x.to_bits(), baseline.to_bits());
            if last.font != Some(*self) || last.at != at || last.text != text {
                last.bounds = self.measure_ink(text, x, baseline);
                last.text.clear();
                last.text.push_str(text);
                last.at = at;
                last.font = Some(*self);
            }
            last.bounds
        })
    }

    fn measure_ink(&self, text: &str, x: f32, baseline: f32) -> Option<(f32, f32, f32, f32)> {
        let face = self.face();
        let index = self.face_index();
        let scale = self.px_scale();
        let factor = face.as_scaled(scale).scale_factor();
        self.with_layout(text, |glyphs, _| {
            glyphs
                .iter()
                .filter_map(|&(id, pen)| {
                    let bounds = outline_bounds(index, face, id)?;
                    let outline = ab_glyph::Outline {
                        bounds,
                        curves: Vec::new(),
                    };
                    Some(outline.px_bounds(factor, point(x + pen, baseline)))
                })
                .map(|r| (r.min.x, r.min.y, r.max.x, r.max.y))
                .reduce(|a, b| (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3)))
        })
    }
}

/// Vertical metrics of a font in pixels; `descent` is negative (below the
/// baseline), as in the font tables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineMetrics {
    /// Height above the baseline.
    pub ascent: f32,
    /// Depth below the baseline, negative.
    pub descent: f32,
    /// Baseline-to-baseline distance.
    pub line_height: f32,
}

/// The glyph of `ch` in bundled face `index`: ASCII looked up once per thread.
fn glyph_id(index: usize, scaled: &impl ScaleFont<&'static FontRef<'static>>, ch: char) -> GlyphId {
    thread_local! {
        static ASCII: std::cell::RefCell<[[Option<GlyphId>; 128]; 4]> =
            const { std::cell::RefCell::new([[None; 128]; 4]) };
    }
    if !ch.is_ascii() {
        return scaled.glyph_id(ch);
    }
    ASCII.with(|table| {
        *table.borrow_mut()[index][ch as usize].get_or_insert_with(|| scaled.glyph_id(ch))
    })
}

/// The unscaled outline box of a glyph of bundled face `index` (`None`: no outline, e.g. a
/// space), looked up once per thread: a table per face, by glyph id.
fn outline_bounds(index: usize, face: &FontRef<'static>, id: GlyphId) -> Option<ab_glyph::Rect> {
    type Cache = [Vec<Option<Option<ab_glyph::Rect>>>; 4];
    thread_local! {
        static BOUNDS: std::cell::RefCell<Cache> = std::cell::RefCell::new(Default::default());
    }
    BOUNDS.with(|cache| {
        let mut cache = cache.borrow_mut();
        let table = &mut cache[index];
        let at = usize::from(id.0);
        if table.len() <= at {
            table.resize(at + 1, None);
        }
        *table[at].get_or_insert_with(|| face.outline(id).map(|o| o.bounds))
    })
}

fn faces() -> &'static [FontRef<'static>; 4] {
    static FACES: OnceLock<[FontRef<'static>; 4]> = OnceLock::new();
    FACES.get_or_init(|| {
        // The bytes are ours and tested: failing to parse them is a build
        // defect, not a run-time condition.
        let parse = |bytes: &'static [u8]| FontRef::try_from_slice(bytes).expect("bundled font");
        [parse(SANS), parse(SANS_BOLD), parse(MONO), parse(MONO_BOLD)]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cached glyph boxes give the outlined glyphs' own pixel bounds.
    #[test]
    fn ink_bounds_are_the_outlined_glyphs_bounds() {
        for (i, text) in ["12345", "Wjg|Q", "x y", "utilisation 73.4 %", "ÄÖü"]
            .iter()
            .enumerate()
        {
            for bold in [false, true] {
                for family in [FontFamily::Sans, FontFamily::Mono] {
                    let font = FontSpec {
                        family,
                        bold,
                        size_px: 7.5 + i as f32 * 3.3,
                    };
                    let (x, y) = (10.37 + i as f32 * 0.29, 40.61 - i as f32 * 0.13);
                    let face = font.face();
                    let outlined = font
                        .positioned_glyphs(text, x, y)
                        .into_iter()
                        .filter_map(|g| face.outline_glyph(g))
                        .map(|o| o.px_bounds())
                        .map(|r| (r.min.x, r.min.y, r.max.x, r.max.y))
                        .reduce(|a, b| (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3)));
                    assert_eq!(font.ink_bounds(text, x, y), outlined, "{text} {font:?}");
                }
            }
        }
    }

    #[test]
    fn hints_map_to_families() {
        let f = FontSpec::from_hints("courier", 17.0, "bold");
        assert_eq!(
            (f.family, f.bold, f.size_px),
            (FontFamily::Mono, true, 17.0)
        );
        assert_eq!(
            FontSpec::from_hints("Helvetica", 12.0, "medium").family,
            FontFamily::Sans
        );
        assert_eq!(
            FontSpec::from_hints("arial", 12.0, "").family,
            FontFamily::Sans
        );
        assert_eq!(
            FontSpec::from_hints("times", 12.0, "").family,
            FontFamily::Serif
        );
        assert_eq!(
            FontSpec::from_hints("DejaVu Sans", 12.0, "").family,
            FontFamily::Sans
        );
        assert!(!FontSpec::from_hints("times", 12.0, "normal").bold);
    }

    #[test]
    fn all_faces_load_and_have_latin() {
        for family in [FontFamily::Sans, FontFamily::Serif, FontFamily::Mono] {
            for bold in [false, true] {
                let f = FontSpec {
                    family,
                    bold,
                    size_px: 20.0,
                };
                assert_ne!(f.face().glyph_id('A'), GlyphId(0));
                let m = f.metrics();
                assert!(m.ascent > 10.0 && m.ascent < 25.0, "{m:?}");
                assert!(m.descent < 0.0);
            }
        }
    }

    #[test]
    fn mono_advances_are_equal_and_size_is_em() {
        let f = FontSpec {
            family: FontFamily::Mono,
            bold: false,
            size_px: 20.0,
        };
        let (a, b) = (f.line_width("iiii"), f.line_width("MMMM"));
        assert!((a - b).abs() < 0.01);
        // DejaVu Sans Mono advances are 1233/2048 em.
        assert!((a / 4.0 - 20.0 * 1233.0 / 2048.0).abs() < 0.05, "{a}");
    }
}
