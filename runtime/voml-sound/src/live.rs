//! Live output: a [`Synth`] playing on the default audio device, fed with events from another
//! thread through a lock-free ring buffer.
//!
//! The audio callback owns the synth. Events travel to it through a single-producer,
//! single-consumer ring ([`rtrb`]); the callback moves them into the synth's event heap, then
//! renders. Nothing in the callback locks or allocates: the ring's slots, the heap's capacity,
//! the voices and a scratch buffer all exist before the stream starts, and the callback stops
//! taking events from the ring while the heap is full (the sender then sees [`Full`]). The
//! output clock and the counters the callback keeps are atomics.
//!
//! [`LiveRenderer`] is that callback without a device, so the same code can be driven by a
//! test, or by another audio back end.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};

use crate::event::SoundEvent;
use crate::synth::{Synth, DEFAULT_POLYPHONY};

/// Events that can wait in the ring, and again in the synth's heap, by default.
pub const DEFAULT_EVENT_CAPACITY: usize = 16_384;
/// Environment variable naming the output device [`LiveOptions::from_env`] selects, such as
/// `null` (ALSA's device that discards what it is given).
pub const DEVICE_ENV: &str = "VOML_AUDIO_DEVICE";
/// How many callback buffers the device queues (cpal's ALSA back end keeps two periods): the
/// device part of [`LiveOutput::latency_s`].
pub const DEVICE_PERIODS: u32 = 2;
/// Frames rendered per synth call inside the callback; larger device buffers take several.
const SCRATCH_FRAMES: usize = 256;
/// Longest [`LiveOutput::stop`] waits for its fade-out to be played.
const STOP_TIMEOUT: Duration = Duration::from_millis(500);
/// Length of the fade-out [`LiveOutput::stop`] lets play (several master glide constants).
const STOP_FADE_S: f64 = 0.06;

/// How to open the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveOptions {
    /// Frames per callback to ask the device for; `None` keeps the device's default.
    pub buffer_frames: Option<u32>,
    /// Output device by its back end's name (for ALSA a PCM name such as `null` or
    /// `plughw:0,0`); `None` is the system's default output.
    pub device: Option<String>,
    /// Events that may be waiting at once: the ring holds this many, and the synth's heap is
    /// reserved for as many more.
    pub event_capacity: usize,
    /// Notes sounding at once (see [`Synth::with_polyphony`]).
    pub polyphony: usize,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            buffer_frames: None,
            device: None,
            event_capacity: DEFAULT_EVENT_CAPACITY,
            polyphony: DEFAULT_POLYPHONY,
        }
    }
}

impl LiveOptions {
    /// The defaults, with the device named by the environment variable [`DEVICE_ENV`] when it
    /// is set and not empty.
    pub fn from_env() -> Self {
        LiveOptions {
            device: std::env::var(DEVICE_ENV)
                .ok()
                .filter(|d| !d.trim().is_empty()),
            ..LiveOptions::default()
        }
    }
}

/// Why live output could not start. Each displays as one line, ending with what to do instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveError {
    /// There is no output device to open (no sound card, no sound server).
    NoDevice,
    /// No output device has the name given in [`LiveOptions::device`].
    UnknownDevice(String),
    /// The device exists but could not be used: busy, no usable format, a failing stream.
    Device(String),
}

const INSTEAD: &str = "sound is not played (use --audio FILE.wav to render it)";

impl fmt::Display for LiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiveError::NoDevice => write!(f, "no audio output device; {INSTEAD}"),
            LiveError::UnknownDevice(name) => {
                write!(f, "no audio output device named `{name}`; {INSTEAD}")
            }
            LiveError::Device(why) => write!(f, "audio output failed: {why}; {INSTEAD}"),
        }
    }
}

impl std::error::Error for LiveError {}

/// An event that did not fit: the ring and the synth's heap are full. It was not scheduled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Full {
    pub at_s: f64,
    pub event: SoundEvent,
}

impl fmt::Display for Full {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "live sound queue is full; event at {:.3} s dropped",
            self.at_s
        )
    }
}

impl std::error::Error for Full {}

/// State the callback publishes, read from any thread.
#[derive(Debug)]
struct Shared {
    sample_rate: u32,
    /// Output frames rendered so far: the output clock.
    frames: AtomicU64,
    callbacks: AtomicU64,
    /// Most frames one callback was asked for.
    max_callback_frames: AtomicU64,
    /// Longest time from a callback to the playing of its first frame, in nanoseconds, as the
    /// device's clock predicts it.
    max_delay_ns: AtomicU64,
    errors: AtomicU64,
    underruns: AtomicU64,
}

/// The sending half: schedules events for the callback and reads its clock.
#[derive(Debug)]
pub struct LiveSender {
    producer: rtrb::Producer<(f64, SoundEvent)>,
    shared: Arc<Shared>,
}

impl LiveSender {
    /// Schedule `event` at `at_s` seconds of output time (see [`Synth::schedule`]). Lock-free
    /// and allocation-free; fails only when the queue is full.
    pub fn send(&mut self, at_s: f64, event: SoundEvent) -> Result<(), Full> {
        self.producer
            .push((at_s, event))
            .map_err(|rtrb::PushError::Full((at_s, event))| Full { at_s, event })
    }

    /// Output time reached by the callback, in seconds: frames rendered / sample rate.
    pub fn now_s(&self) -> f64 {
        self.frames_rendered() as f64 / f64::from(self.shared.sample_rate)
    }

    /// Output frames rendered by the callback so far.
    pub fn frames_rendered(&self) -> u64 {
        self.shared.frames.load(Ordering::Acquire)
    }

    pub fn sample_rate(&self) -> u32 {
        self.shared.sample_rate
    }

    /// Events that can be sent now without [`Full`] (more once the callback takes some).
    pub fn free_slots(&self) -> usize {
        self.producer.slots()
    }

    /// How many times the callback has run.
    pub fn callbacks(&self) -> u64 {
        self.shared.callbacks.load(Ordering::Relaxed)
    }
}

/// The audio callback without a device: owns the synth and the receiving end of the ring.
/// [`LiveOutput`] runs one in cpal's callback; call [`LiveRenderer::render`] to drive one
/// yourself.
pub struct LiveRenderer {
    synth: Synth,
    consumer: rtrb::Consumer<(f64, SoundEvent)>,
    channels: usize,
    scratch: Box<[f32; 2 * SCRATCH_FRAMES]>,
    shared: Arc<Shared>,
}

impl LiveRenderer {
    /// A renderer for a device running at `sample_rate` with `channels` interleaved channels,
    /// and the sender that feeds it. Everything the callback will need is allocated here.
    ///
    /// # Panics
    /// If `sample_rate` is below 1000 or `channels` is 0.
    pub fn new(sample_rate: u32, channels: u16, options: &LiveOptions) -> (LiveSender, Self) {
        assert!(channels > 0, "an output needs at least one channel");
        let capacity = options.event_capacity.max(1);
        let mut synth = Synth::with_polyphony(sample_rate, options.polyphony);
        synth.reserve_events(capacity);
        let (producer, consumer) = rtrb::RingBuffer::new(capacity);
        let shared = Arc::new(Shared {
            sample_rate,
            frames: AtomicU64::new(0),
            callbacks: AtomicU64::new(0),
            max_callback_frames: AtomicU64::new(0),
            max_delay_ns: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            underruns: AtomicU64::new(0),
        });
        let sender = LiveSender {
            producer,
            shared: Arc::clone(&shared),
        };
        let renderer = LiveRenderer {
            synth,
            consumer,
            channels: usize::from(channels),
            scratch: Box::new([0.0; 2 * SCRATCH_FRAMES]),
            shared,
        };
        (sender, renderer)
    }

    /// The callback: take the events sent so far (as many as the synth's reserved heap holds),
    /// then fill `out`, interleaved in the device's channel count, and publish the new output
    /// time. Neither allocates nor locks.
    ///
    /// Stereo goes to the channels in turn (left to even channels, right to odd ones); a mono
    /// device gets their average. Samples are converted to the device's format.
    pub fn render<T>(&mut self, out: &mut [T])
    where
        T: cpal::Sample + cpal::FromSample<f32>,
    {
        while self.synth.pending_events() < self.synth.event_capacity() {
            match self.consumer.pop() {
                Ok((at_s, event)) => self.synth.schedule(at_s, event),
                Err(_) => break,
            }
        }
        let channels = self.channels;
        let frames = out.len() / channels;
        let (whole, rest) = out.split_at_mut(frames * channels);
        for chunk in whole.chunks_mut(SCRATCH_FRAMES * channels) {
            let n = chunk.len() / channels;
            let stereo = &mut self.scratch[..2 * n];
            self.synth.render(stereo);
            for (frame, lr) in chunk.chunks_exact_mut(channels).zip(stereo.chunks_exact(2)) {
                if channels == 1 {
                    frame[0] = T::from_sample(0.5 * (lr[0] + lr[1]));
                } else {
                    for (c, sample) in frame.iter_mut().enumerate() {
                        *sample = T::from_sample(lr[c % 2]);
                    }
                }
            }
        }
        rest.fill(T::EQUILIBRIUM);
        let shared = &self.shared;
        shared
            .max_callback_frames
            .fetch_max(frames as u64, Ordering::Relaxed);
        shared.callbacks.fetch_add(1, Ordering::Relaxed);
        shared
            .frames
            .store(self.synth.frames_rendered(), Ordering::Release);
    }

    /// The synth the callback plays.
    pub fn synth(&self) -> &Synth {
        &self.synth
    }

    /// Output channels of the device.
    pub fn channels(&self) -> u16 {
        self.channels as u16
    }
}

/// Sound playing on an audio device. Dropping it stops the sound at once; [`LiveOutput::stop`]
/// fades out first.
pub struct LiveOutput {
    sender: LiveSender,
    stream: cpal::Stream,
    device_name: String,
    sample_format: cpal::SampleFormat,
    channels: u16,
    buffer_frames: u32,
    lead_frames: u32,
}

impl fmt::Debug for LiveOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveOutput")
            .field("device", &self.device_name)
            .field("sample_rate", &self.sample_rate())
            .field("sample_format", &self.sample_format)
            .field("channels", &self.channels)
            .field("buffer_frames", &self.buffer_frames)
            .finish_non_exhaustive()
    }
}

impl LiveOutput {
    /// Open the output device and start playing silence, ready for [`LiveOutput::send`]. The
    /// synth runs at the device's default sample rate, in its default sample format and
    /// channel count.
    ///
    /// Without a device this returns [`LiveError::NoDevice`] and prints nothing (the audio
    /// library's own diagnostics are held back while the device is opened).
    pub fn start(options: LiveOptions) -> Result<LiveOutput, LiveError> {
        let _quiet = quiet::Quiet::new();
        let host = cpal::default_host();
        let device = match &options.device {
            None => host.default_output_device().ok_or(LiveError::NoDevice)?,
            Some(name) => find_device(&host, name)?,
        };
        let device_name = device_name(&device);
        let supported = device.default_output_config().map_err(open_error)?;
        let sample_format = supported.sample_format();
        let mut config = supported.config();
        config.buffer_size = match options.buffer_frames {
            Some(frames) => cpal::BufferSize::Fixed(frames.max(1)),
            None => cpal::BufferSize::Default,
        };
        let (sender, renderer) = LiveRenderer::new(config.sample_rate, config.channels, &options);
        let lead_frames = renderer.synth().lead_frames() as u32;
        use cpal::SampleFormat as F;
        let stream = match sample_format {
            F::F32 => build::<f32>(&device, config, renderer),
            F::F64 => build::<f64>(&device, config, renderer),
            F::I16 => build::<i16>(&device, config, renderer),
            F::I32 => build::<i32>(&device, config, renderer),
            F::I24 => build::<cpal::I24>(&device, config, renderer),
            F::I8 => build::<i8>(&device, config, renderer),
            F::U8 => build::<u8>(&device, config, renderer),
            F::U16 => build::<u16>(&device, config, renderer),
            F::U24 => build::<cpal::U24>(&device, config, renderer),
            F::U32 => build::<u32>(&device, config, renderer),
            other => {
                return Err(LiveError::Device(format!(
                    "unsupported sample format {other}"
                )))
            }
        }
        .map_err(open_error)?;
        stream.play().map_err(open_error)?;
        let buffer_frames = stream
            .buffer_size()
            .ok()
            .filter(|&n| n > 0)
            .or(options.buffer_frames)
            .unwrap_or(1024);
        Ok(LiveOutput {
            sender,
            stream,
            device_name,
            sample_format,
            channels: config.channels,
            buffer_frames,
            lead_frames,
        })
    }

    /// Schedule `event` at `at_s` seconds of output time ([`LiveOutput::now_s`]'s clock). An
    /// event meant to sound now should be sent at `now + latency_s()`: earlier ones play as
    /// soon as possible, late. Fails when the queue is full (the event is then dropped).
    pub fn send(&mut self, at_s: f64, event: SoundEvent) -> Result<(), Full> {
        self.sender.send(at_s, event)
    }

    /// Output time rendered so far, in seconds: frames rendered / sample rate, as the
    /// callback last published it.
    pub fn now_s(&self) -> f64 {
        self.sender.now_s()
    }

    /// How far ahead of what is heard the synth works, in seconds: the device's buffer
    /// ([`DEVICE_PERIODS`] callback buffers) plus the synth's lead ([`Synth::lead_frames`]).
    /// An event sent for `now + latency_s()` sounds on time.
    pub fn latency_s(&self) -> f64 {
        f64::from(DEVICE_PERIODS * self.buffer_frames + self.lead_frames)
            / f64::from(self.sample_rate())
    }

    /// The latency seen by the device's own clock so far: the largest callback buffer plus the
    /// largest predicted delay from a callback to the playing of its first frame, plus the
    /// synth's lead. `None` before the first callback.
    pub fn measured_latency_s(&self) -> Option<f64> {
        let shared = &self.sender.shared;
        if shared.callbacks.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let rate = f64::from(self.sample_rate());
        let frames = shared.max_callback_frames.load(Ordering::Relaxed) as f64;
        let delay = shared.max_delay_ns.load(Ordering::Relaxed) as f64 * 1e-9;
        Some((frames + f64::from(self.lead_frames)) / rate + delay)
    }

    pub fn sample_rate(&self) -> u32 {
        self.sender.sample_rate()
    }

    /// Frames per callback buffer, as the device reports it.
    pub fn buffer_frames(&self) -> u32 {
        self.buffer_frames
    }

    /// Output channels of the device (stereo is spread over them).
    pub fn channels(&self) -> u16 {
        self.channels
    }

    pub fn sample_format(&self) -> cpal::SampleFormat {
        self.sample_format
    }

    /// The device as its back end names it, with its description.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// Events that can be sent now without [`Full`].
    pub fn free_slots(&self) -> usize {
        self.sender.free_slots()
    }

    /// How many times the callback has run.
    pub fn callbacks(&self) -> u64 {
        self.sender.callbacks()
    }

    /// Errors the stream reported (underruns included). They are counted, never printed.
    pub fn stream_errors(&self) -> u64 {
        self.sender.shared.errors.load(Ordering::Relaxed)
    }

    /// Underruns (the device ran out of audio) among [`LiveOutput::stream_errors`].
    pub fn underruns(&self) -> u64 {
        self.sender.shared.underruns.load(Ordering::Relaxed)
    }

    /// Fade out (the master volume glides to silence), let the fade reach the speakers, then
    /// close the device. Waits half a second at most.
    pub fn stop(mut self) {
        let started = Instant::now();
        let rate = f64::from(self.sample_rate());
        if self.send(0.0, SoundEvent::Master { volume: 0.0 }).is_ok() {
            let until = self.sender.frames_rendered()
                + u64::from(DEVICE_PERIODS * self.buffer_frames + self.lead_frames)
                + (STOP_FADE_S * rate) as u64;
            while self.sender.frames_rendered() < until && started.elapsed() < STOP_TIMEOUT {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let _ = self.stream.pause();
    }
}

/// Build the output stream for samples of type `T`, with `renderer` as its callback.
fn build<T>(
    device: &cpal::Device,
    config: cpal::StreamConfig,
    mut renderer: LiveRenderer,
) -> Result<cpal::Stream, cpal::Error>
where
    T: cpal::SizedSample + cpal::FromSample<f32>,
{
    let errors = Arc::clone(&renderer.shared);
    device.build_output_stream::<T, _, _>(
        config,
        move |out: &mut [T], info: &cpal::OutputCallbackInfo| {
            renderer.render(out);
            let t = info.timestamp();
            let delay = t.playback.saturating_duration_since(t.callback);
            let delay_ns = u64::try_from(delay.as_nanos()).unwrap_or(u64::MAX);
            renderer
                .shared
                .max_delay_ns
                .fetch_max(delay_ns, Ordering::Relaxed);
        },
        move |error: cpal::Error| {
            errors.errors.fetch_add(1, Ordering::Relaxed);
            if error.kind() == cpal::ErrorKind::Xrun {
                errors.underruns.fetch_add(1, Ordering::Relaxed);
            }
        },
        None,
    )
}

/// The device's id for its host, with its description when that says more.
fn device_name(device: &cpal::Device) -> String {
    let id = device.id().map(|id| id.id().to_string()).ok();
    let description = device.description().map(|d| d.name().to_string()).ok();
    match (id, description) {
        (Some(id), Some(d)) if d != id => format!("{id} ({d})"),
        (Some(name), _) | (None, Some(name)) => name,
        (None, None) => device.to_string(),
    }
}

/// An output device by name: its id for the host, or failing that its description.
fn find_device(host: &cpal::Host, name: &str) -> Result<cpal::Device, LiveError> {
    let id = cpal::DeviceId::new(host.id(), name);
    if let Some(device) = host.device_by_id(&id) {
        return Ok(device);
    }
    let devices = host.output_devices().map_err(open_error)?;
    for device in devices {
        if device.description().is_ok_and(|d| d.name() == name) {
            return Ok(device);
        }
    }
    Err(LiveError::UnknownDevice(name.to_string()))
}

/// What a failure to open or start the device means to the user.
fn open_error(error: cpal::Error) -> LiveError {
    use cpal::ErrorKind as K;
    match error.kind() {
        K::DeviceNotAvailable | K::HostUnavailable => LiveError::NoDevice,
        _ => LiveError::Device(one_line(&error.to_string())),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Keeps ALSA's diagnostics (several lines on stderr for a machine without a sound card) off
/// the terminal while a device is opened on this thread; [`LiveError`] says what went wrong.
#[cfg(any(
    target_os = "linux",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "netbsd"
))]
mod quiet {
    use std::ffi::{c_char, c_int};

    pub struct Quiet(alsa_sys::snd_local_error_handler_t);

    impl Quiet {
        pub fn new() -> Self {
            // SAFETY: sets a thread-local handler in alsa-lib; `swallow` has its signature.
            Quiet(unsafe { alsa_sys::snd_lib_error_set_local(Some(swallow)) })
        }
    }

    impl Drop for Quiet {
        fn drop(&mut self) {
            // SAFETY: restores the handler this thread had before.
            unsafe {
                alsa_sys::snd_lib_error_set_local(self.0);
            }
        }
    }

    unsafe extern "C" fn swallow(
        _file: *const c_char,
        _line: c_int,
        _function: *const c_char,
        _err: c_int,
        _format: *const c_char,
        _args: *mut alsa_sys::__va_list_tag,
    ) {
    }
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "dragonfly",
    target_os = "freebsd",
    target_os = "netbsd"
)))]
mod quiet {
    pub struct Quiet;

    impl Quiet {
        pub fn new() -> Self {
            Quiet
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_display_on_one_line() {
        assert_eq!(
            LiveError::NoDevice.to_string(),
            "no audio output device; sound is not played (use --audio FILE.wav to render it)"
        );
        let e = LiveError::Device(one_line("device busy\n  try later"));
        assert_eq!(e.to_string().lines().count(), 1);
        assert!(e.to_string().contains("device busy try later"));
    }

    #[test]
    fn sender_and_output_can_move_to_other_threads() {
        fn assert_send<T: Send>() {}
        assert_send::<LiveSender>();
        assert_send::<LiveRenderer>();
        assert_send::<LiveOutput>();
    }

    #[test]
    fn stereo_is_spread_over_the_device_channels() {
        let options = LiveOptions {
            event_capacity: 8,
            ..LiveOptions::default()
        };
        for channels in [1u16, 2, 3, 6] {
            let (mut tx, mut rx) = LiveRenderer::new(48_000, channels, &options);
            tx.send(
                0.0,
                SoundEvent::Tone {
                    freq_hz: 440.0,
                    duration_s: 1.0,
                    volume: 1.0,
                    pan: -1.0,
                    voice: crate::Voice::Sine,
                },
            )
            .unwrap();
            // With more than one channel, one sample too many: an incomplete frame.
            let extra = usize::from(channels > 1);
            let mut out = vec![1.0f32; usize::from(channels) * 1000 + extra];
            rx.render(&mut out);
            assert_eq!(tx.frames_rendered(), 1000);
            if extra == 1 {
                assert_eq!(*out.last().unwrap(), 0.0, "an incomplete frame is silent");
            }
            let energy = |c: usize| -> f32 {
                out.chunks_exact(usize::from(channels))
                    .map(|f| f[c] * f[c])
                    .sum()
            };
            assert!(energy(0) > 1.0, "{channels} channels: left is heard");
            if channels > 1 {
                // Panned hard left: the odd (right) channels stay silent.
                assert!(energy(1) < 1e-6 * energy(0));
                for c in 2..usize::from(channels) {
                    assert_eq!(energy(c), energy(c % 2));
                }
            }
        }
    }
}
