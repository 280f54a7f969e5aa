//! Turning a view's RGBA frame into the pixels of a window of any size.
//!
//! Kept free of any windowing type so that it can be tested without a
//! display and reused by any presenter that takes `0RGB` words (the format
//! softbuffer and most native framebuffers use).

/// The newest picture of a view, as it came from the renderer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frame {
    pub width: u32,
    pub height: u32,
    /// `width * height * 4` bytes of straight-alpha RGBA, rows top to bottom.
    pub rgba: Vec<u8>,
}

impl Frame {
    /// A frame whose buffer does not match its size is refused here, once,
    /// so that presenting never has to bounds-check pixel by pixel.
    pub fn new(width: u32, height: u32, rgba: Vec<u8>) -> Option<Frame> {
        let expected = (width as usize)
            .checked_mul(height as usize)?
            .checked_mul(4)?;
        (width > 0 && height > 0 && rgba.len() == expected).then_some(Frame {
            width,
            height,
            rgba,
        })
    }
}

/// Packs an 8-bit RGB triple into the `0RGB` word a framebuffer expects.
pub(crate) fn pack_rgb([r, g, b]: [u8; 3]) -> u32 {
    (u32::from(r) << 16) | (u32::from(g) << 8) | u32::from(b)
}

/// One straight-alpha RGBA pixel composited over an opaque background.
/// The renderer hands out straight alpha, so views that leave parts
/// transparent show the window background there instead of black.
fn over(px: &[u8], bg: [u8; 3]) -> u32 {
    let a = u32::from(px[3]);
    if a == 255 {
        return pack_rgb([px[0], px[1], px[2]]);
    }
    let mix = |c: u8, b: u8| ((u32::from(c) * a + u32::from(b) * (255 - a) + 127) / 255) as u8;
    pack_rgb([mix(px[0], bg[0]), mix(px[1], bg[1]), mix(px[2], bg[2])])
}

/// The source index sampled by destination index `d` when `src` pixels are
/// stretched over `dst`: the pixel under the destination pixel's centre.
fn nearest(d: u32, src: u32, dst: u32) -> u32 {
    let s = ((2 * u64::from(d) + 1) * u64::from(src)) / (2 * u64::from(dst));
    (s as u32).min(src - 1)
}

/// Fills a `dw` × `dh` window buffer from `frame`, stretching it with
/// nearest-neighbour sampling when sizes differ. Nearest-neighbour keeps
/// the picture sharp and cheap during the short time between a resize and
/// the renderer's frame at the new size; it is never meant to look good
/// for long.
pub(crate) fn present(frame: Option<&Frame>, dst: &mut [u32], dw: u32, dh: u32, bg: [u8; 3]) {
    let n = (dw as usize) * (dh as usize);
    let Some(f) = frame.filter(|_| dst.len() >= n && n > 0) else {
        dst.fill(pack_rgb(bg));
        return;
    };
    let dst = &mut dst[..n];
    let row_bytes = f.width as usize * 4;
    if f.width == dw && f.height == dh {
        for (out, src_row) in dst
            .chunks_exact_mut(dw as usize)
            .zip(f.rgba.chunks_exact(row_bytes))
        {
            for (o, px) in out.iter_mut().zip(src_row.chunks_exact(4)) {
                *o = over(px, bg);
            }
        }
        return;
    }
    let xs: Vec<usize> = (0..dw)
        .map(|x| nearest(x, f.width, dw) as usize * 4)
        .collect();
    let mut prev: Option<(u32, usize)> = None;
    for y in 0..dh {
        let sy = nearest(y, f.height, dh);
        let start = y as usize * dw as usize;
        // Upscaled rows repeat; copying the row already converted is much
        // cheaper than sampling it again.
        if let Some((psy, pstart)) = prev {
            if psy == sy {
                dst.copy_within(pstart..pstart + dw as usize, start);
                continue;
            }
        }
        let src_row = &f.rgba[sy as usize * row_bytes..(sy as usize + 1) * row_bytes];
        for (o, &sx) in dst[start..start + dw as usize].iter_mut().zip(&xs) {
            *o = over(&src_row[sx..sx + 4], bg);
        }
        prev = Some((sy, start));
    }
}

/// Maps a point in window pixels to the pixels of the frame shown in it,
/// so that input refers to what the user sees even while a stretched
/// frame of the old size is on screen.
pub(crate) fn window_to_frame(
    x: f64,
    y: f64,
    window: (u32, u32),
    frame: Option<(u32, u32)>,
) -> (f64, f64) {
    match frame {
        Some((fw, fh)) if window.0 > 0 && window.1 > 0 => (
            x * f64::from(fw) / f64::from(window.0),
            y * f64::from(fh) / f64::from(window.1),
        ),
        _ => (x, y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> Frame {
        let mut rgba = Vec::new();
        for y in 0..h {
            for x in 0..w {
                rgba.extend_from_slice(&f(x, y));
            }
        }
        Frame::new(w, h, rgba).unwrap()
    }

    #[test]
    fn refuses_buffers_that_do_not_match_the_size() {
        assert!(Frame::new(2, 2, vec![0; 15]).is_none());
        assert!(Frame::new(0, 2, vec![]).is_none());
        assert!(Frame::new(2, 2, vec![0; 16]).is_some());
    }

    #[test]
    fn same_size_copies_and_packs_0rgb() {
        let f = frame(2, 1, |x, _| {
            if x == 0 {
                [255, 0, 0, 255]
            } else {
                [1, 2, 3, 255]
            }
        });
        let mut out = vec![0; 2];
        present(Some(&f), &mut out, 2, 1, [0, 0, 0]);
        assert_eq!(out, [0x00FF_0000, 0x0001_0203]);
    }

    #[test]
    fn no_frame_shows_the_background() {
        let mut out = vec![7; 6];
        present(None, &mut out, 3, 2, [0x10, 0x20, 0x30]);
        assert!(out.iter().all(|&p| p == 0x0010_2030));
    }

    #[test]
    fn transparency_shows_the_background() {
        let f = frame(1, 1, |_, _| [255, 255, 255, 0]);
        let mut out = vec![0; 1];
        present(Some(&f), &mut out, 1, 1, [10, 20, 30]);
        assert_eq!(out[0], pack_rgb([10, 20, 30]));
        let half = frame(1, 1, |_, _| [255, 0, 0, 128]);
        present(Some(&half), &mut out, 1, 1, [0, 0, 255]);
        assert_eq!(out[0], pack_rgb([128, 0, 127]));
    }

    #[test]
    fn upscaling_repeats_each_pixel() {
        // A 2x2 checker stretched to 4x4 becomes four 2x2 blocks.
        let f = frame(2, 2, |x, y| {
            if (x + y) % 2 == 0 {
                [255, 255, 255, 255]
            } else {
                [0, 0, 0, 255]
            }
        });
        let mut out = vec![0; 16];
        present(Some(&f), &mut out, 4, 4, [0, 0, 0]);
        let w = 0x00FF_FFFF;
        #[rustfmt::skip]
        let expected = [
            w, w, 0, 0,
            w, w, 0, 0,
            0, 0, w, w,
            0, 0, w, w,
        ];
        assert_eq!(out, expected);
    }

    #[test]
    fn downscaling_samples_pixel_centres() {
        // Columns 0..4 have red 0, 1, 2, 3; halving keeps columns 1 and 3.
        let f = frame(4, 1, |x, _| [x as u8, 0, 0, 255]);
        let mut out = vec![0; 2];
        present(Some(&f), &mut out, 2, 1, [0, 0, 0]);
        assert_eq!(out, [pack_rgb([1, 0, 0]), pack_rgb([3, 0, 0])]);
    }

    #[test]
    fn non_integer_ratios_stay_in_bounds() {
        let f = frame(7, 5, |x, y| [x as u8, y as u8, 0, 255]);
        for (dw, dh) in [(1, 1), (3, 11), (13, 2), (700, 499)] {
            let mut out = vec![0xDEAD; (dw * dh) as usize];
            present(Some(&f), &mut out, dw, dh, [0, 0, 0]);
            // When enlarging, the corners come from the source's corners.
            if dw >= 7 && dh >= 5 {
                assert_eq!(out[0], pack_rgb([0, 0, 0]), "{dw}x{dh}");
                let last = out[(dw * dh - 1) as usize];
                assert_eq!(last, pack_rgb([6, 4, 0]), "{dw}x{dh}");
            }
            assert!(out.iter().all(|&p| p != 0xDEAD));
        }
    }

    #[test]
    fn input_maps_to_frame_pixels() {
        assert_eq!(
            window_to_frame(50.0, 30.0, (200, 100), Some((100, 100))),
            (25.0, 30.0)
        );
        assert_eq!(window_to_frame(5.0, 6.0, (200, 100), None), (5.0, 6.0));
    }
}
