//! `Synth::render` never allocates, so it is safe to call from a real-time audio callback:
//! checked with an allocator that counts what the rendering thread asks for.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use voml_sound::{processor_frequency, SoundEvent, Synth, Voice};

struct Counting;

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // `try_with`: the thread-locals may already be gone while a thread shuts down.
        let _ = ARMED.try_with(|armed| {
            if armed.get() {
                COUNT.with(|c| c.set(c.get() + 1));
            }
        });
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn render_does_not_allocate() {
    let mut synth = Synth::new(48_000);
    for c in 0..6u8 {
        synth.schedule(
            0.0,
            SoundEvent::Channel {
                channel: c,
                voice: Voice::ALL[c as usize],
                pan: -0.5 + 0.2 * f64::from(c),
                volume: 0.9,
                mute: c == 5,
            },
        );
    }
    // More notes than voices (stealing), note-offs, swells, tones, master changes.
    for i in 0..200 {
        let t = i as f64 * 0.01;
        let pitch = processor_frequency(i % 80, 80, 100.0, 3500.0);
        let channel = (i % 6) as u8;
        synth.schedule(
            t,
            SoundEvent::NoteOn {
                channel,
                pitch_hz: pitch,
                volume: 0.5,
            },
        );
        synth.schedule(
            t + 0.005,
            SoundEvent::SetVolume {
                channel,
                pitch_hz: None,
                volume: 0.8,
            },
        );
        synth.schedule(
            t + 0.7,
            SoundEvent::NoteOff {
                channel,
                pitch_hz: pitch,
            },
        );
        synth.schedule(
            t,
            SoundEvent::Tone {
                freq_hz: pitch * 1.5,
                duration_s: 0.05,
                volume: 1.0,
                pan: 0.3,
                voice: Voice::ALL[i % 6],
            },
        );
    }
    synth.schedule(1.0, SoundEvent::Master { volume: 0.4 });
    let mut buf = vec![0.0f32; 2 * 441];

    ARMED.with(|a| a.set(true));
    for _ in 0..300 {
        synth.render(&mut buf);
    }
    ARMED.with(|a| a.set(false));

    assert_eq!(COUNT.with(Cell::get), 0, "render allocated");
    assert!(synth.pending_events() == 0);
    assert!(buf.iter().all(|v| v.is_finite()));
}

/// The live audio callback, driven without a device: events sent through the ring are taken
/// into the synth and rendered in the device's format and channel count, with no allocation,
/// even when the ring and the synth's event heap fill up.
#[cfg(feature = "live")]
#[test]
fn live_callback_does_not_allocate() {
    use voml_sound::{LiveOptions, LiveRenderer};

    let options = LiveOptions {
        event_capacity: 512,
        ..LiveOptions::default()
    };
    for channels in [1u16, 2, 6] {
        let (mut tx, mut rx) = LiveRenderer::new(44_100, channels, &options);
        let heap = rx.synth().event_capacity();
        assert!(heap >= 512, "the heap is reserved for the ring's events");
        let mut f32_out = vec![0.0f32; usize::from(channels) * 512];
        let mut i16_out = vec![0i16; usize::from(channels) * 300];
        let mut full = 0;
        let mut heard = 0.0f64;

        ARMED.with(|a| a.set(true));
        for round in 0..400 {
            let now = tx.now_s();
            // A burst of notes to play now, and a note-off for each later.
            for k in 0..8 {
                let pitch = processor_frequency(k, 8, 100.0, 3500.0);
                let sent = tx.send(
                    now + 0.01,
                    SoundEvent::NoteOn {
                        channel: k as u8,
                        pitch_hz: pitch,
                        volume: 0.6,
                    },
                );
                let off = tx.send(
                    now + 0.2,
                    SoundEvent::NoteOff {
                        channel: k as u8,
                        pitch_hz: pitch,
                    },
                );
                full += usize::from(sent.is_err()) + usize::from(off.is_err());
            }
            // Far-future events that stay pending: the heap fills, then the ring.
            for _ in 0..16 {
                let sent = tx.send(1e6, SoundEvent::Master { volume: 0.5 });
                full += usize::from(sent.is_err());
            }
            if round % 2 == 0 {
                rx.render(&mut f32_out);
                heard += f32_out.iter().map(|&s| f64::from(s.abs())).sum::<f64>();
            } else {
                rx.render(&mut i16_out);
                heard += i16_out
                    .iter()
                    .map(|&s| f64::from(s.unsigned_abs()) / 32767.0)
                    .sum::<f64>();
            }
        }
        ARMED.with(|a| a.set(false));

        assert_eq!(COUNT.with(Cell::get), 0, "the live callback allocated");
        assert!(full > 0, "a full queue is reported to the sender");
        assert!(rx.synth().pending_events() <= heap, "the heap never grew");
        assert_eq!(tx.frames_rendered(), 200 * (512 + 300));
        assert_eq!(tx.callbacks(), 400);
        assert!(heard > 1.0, "{channels} channels: the sent notes are heard");
    }
}
