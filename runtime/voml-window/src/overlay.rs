//! The status strip along the bottom of every window, below the picture: where the replay
//! stands (paused or playing, records, trace time, speed) or the help, shown whatever the
//! window manager does with titles (a bare X server shows none).

use ab_glyph::Font;
use voml_llvo::FontSpec;

/// Height of the strip, in window pixels; the window is this much taller than its view.
pub(crate) const STRIP_HEIGHT: u32 = 18;

/// The strip's colours: a dark band and light text, readable over any picture.
pub(crate) const STRIP_BACKGROUND: [u8; 3] = [24, 24, 32];
const STRIP_TEXT: [u8; 3] = [240, 240, 240];

/// Draws the band (`dw` x `bh` 0RGB pixels, below the picture) with `text` on it.
pub(crate) fn status_strip(band: &mut [u32], dw: u32, bh: u32, text: &str) {
    let n = dw as usize * bh as usize;
    if band.len() < n {
        return;
    }
    band[..n].fill(crate::present::pack_rgb(STRIP_BACKGROUND));
    if text.is_empty() || bh < 12 {
        return;
    }
    let font = FontSpec {
        size_px: 12.0,
        ..FontSpec::default()
    };
    // The text's baseline sits so that capitals and descenders fit the band.
    let baseline = (bh as f32 + 8.0) / 2.0 + 1.0;
    let face = font.face();
    for glyph in font.positioned_glyphs(text, 6.0, baseline) {
        let Some(outline) = face.outline_glyph(glyph) else {
            continue;
        };
        let bounds = outline.px_bounds();
        outline.draw(|gx, gy, coverage| {
            let x = bounds.min.x as i64 + i64::from(gx);
            let y = bounds.min.y as i64 + i64::from(gy);
            // Text that runs past the window's right edge is cut there.
            if x < 0 || x >= i64::from(dw) - 4 || y < 0 || y >= i64::from(bh) {
                return;
            }
            let i = y as usize * dw as usize + x as usize;
            band[i] = blend(band[i], STRIP_TEXT, coverage.clamp(0.0, 1.0));
        });
    }
}

fn blend(under: u32, over: [u8; 3], alpha: f32) -> u32 {
    let channel = |shift: u32, o: u8| {
        let u = f32::from(((under >> shift) & 0xff) as u8);
        (u + (f32::from(o) - u) * alpha).round() as u32
    };
    (channel(16, over[0]) << 16) | (channel(8, over[1]) << 8) | channel(0, over[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strip_shows_its_text_on_a_band() {
        let (w, h) = (300u32, STRIP_HEIGHT);
        let mut band = vec![0x00ff_ffff; (w * h) as usize];
        status_strip(&mut band, w, h, "paused — 12 records");
        let dark = crate::present::pack_rgb(STRIP_BACKGROUND);
        let lit = band.iter().filter(|&&p| p != dark).count();
        assert!(lit > 100, "text pixels: {lit}");
        assert!(band.iter().filter(|&&p| p == dark).count() > lit);
        // No text: the plain band.
        status_strip(&mut band, w, h, "");
        assert!(band.iter().all(|&p| p == dark));
    }
}
