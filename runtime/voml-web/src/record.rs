//! A recorded run as one file (`voml run --record run.html`): every command the LLVO core
//! gives its back end, copied by a [`Recorder`] while a headless run draws, grouped by the
//! trace time of the record that drew it, and the sound commands, put into the page the
//! server serves, which replays them in the browser with the same replay controls (pause,
//! step, back, seek, speed). Nothing is fetched: the page, its script and style and the
//! recording are all inside the file.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, MutexGuard};

use voml_llvo::{Backend, Command, Recorder};

/// How many bytes of commands a recording keeps at most; the rest of the run is not
/// recorded (and the page says where the recording was cut).
pub const DEFAULT_RECORD_LIMIT: usize = 256 * 1024 * 1024;

/// The commands of a run so far, grouped into moments.
pub struct Recording {
    /// Moments: the trace time of the record that drew them (`None`: before any record),
    /// and their lines.
    moments: Vec<(Option<f64>, String)>,
    /// Lines not yet given a moment.
    pending: String,
    bytes: usize,
    limit: usize,
    /// The trace time after which nothing more was kept, once over the limit.
    cut: Option<f64>,
    /// Whether the last commands were dropped (over the limit) and the moment not marked.
    dropping: bool,
}

/// A recording shared between the back end that copies commands into it and the sink that
/// marks moments and writes it.
pub type SharedRecording = Arc<Mutex<Recording>>;

impl Recording {
    /// A recording that keeps at most `limit` bytes of commands.
    pub fn new(limit: usize) -> SharedRecording {
        Arc::new(Mutex::new(Recording {
            moments: Vec::new(),
            pending: String::new(),
            bytes: 0,
            limit,
            cut: None,
            dropping: false,
        }))
    }

    /// The recording, to mark or write (a back end that copied a command into it and
    /// panicked left it whole: a command is copied in one piece).
    pub fn lock(recording: &SharedRecording) -> MutexGuard<'_, Recording> {
        recording.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `inner`, with every command it is given copied into `recording`.
    pub fn backend<B: Backend>(recording: &SharedRecording, inner: B) -> Recorder<B> {
        let into = recording.clone();
        Recorder::new(inner, move |command| {
            Recording::lock(&into).command(command)
        })
    }

    fn command(&mut self, command: &Command) {
        // A page shows what it has drawn at its next frame; the status is the driver's.
        if matches!(command, Command::Present { .. } | Command::Status { .. }) {
            return;
        }
        if let Ok(line) = serde_json::to_string(command) {
            self.line(&line);
        }
    }

    fn line(&mut self, line: &str) {
        if self.cut.is_some() {
            self.dropping = true;
            return;
        }
        self.bytes += line.len() + 1;
        self.pending.push_str(line);
        self.pending.push('\n');
    }

    /// A sound command at trace time `at` (JSON, as the runtime serialises it).
    pub fn sound(&mut self, at: f64, command: &impl serde::Serialize) {
        if let Ok(json) = serde_json::to_string(command) {
            let at = serde_json::Value::from(at);
            self.line(&format!(r#"{{"op":"sound","at":{at},"sound":{json}}}"#));
        }
    }

    /// What was drawn since the last moment belongs to the moment `at` (`None`: before
    /// any record). Beyond the limit, the recording ends here.
    pub fn mark(&mut self, at: Option<f64>) {
        if self.pending.is_empty() {
            return;
        }
        let lines = std::mem::take(&mut self.pending);
        match self.moments.last_mut() {
            // Several marks at one time are one moment.
            Some((last, text)) if *last == at => text.push_str(&lines),
            _ => self.moments.push((at, lines)),
        }
        if self.bytes > self.limit && self.cut.is_none() {
            self.cut = Some(at.unwrap_or(f64::NEG_INFINITY));
        }
    }

    /// The bytes of commands kept.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The trace time after which the recording was cut, if it was.
    pub fn cut(&self) -> Option<f64> {
        self.cut.filter(|_| self.dropping)
    }

    /// Writes the self-contained page that replays the recording, titled `title`, to `out`
    /// as it goes: the recording is not copied (a big one is hundreds of megabytes).
    /// `origin` is the first record's time, where the sound's output time begins.
    pub fn write_page(
        &self,
        title: &str,
        origin: Option<f64>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let (before, after) = crate::server::recorded_page_around();
        out.write_all(before.as_bytes())?;
        // Inside a script element, `<` must not open a tag (`</script>` in a text drawn).
        let mut json = NoTags(&mut *out);
        let json = &mut json;
        // (The keys in order, as a JSON object of them is written.)
        json.write_all(b"{\"cut\":")?;
        serde_json::to_writer(&mut *json, &self.cut())?;
        json.write_all(b",\"moments\":[")?;
        for (k, moment) in self.moments.iter().enumerate() {
            if k > 0 {
                json.write_all(b",")?;
            }
            serde_json::to_writer(&mut *json, moment)?;
        }
        json.write_all(b"],\"origin\":")?;
        serde_json::to_writer(&mut *json, &origin)?;
        json.write_all(b",\"title\":")?;
        serde_json::to_writer(&mut *json, title)?;
        json.write_all(b"}")?;
        out.write_all(after.as_bytes())
    }
}

/// A writer that writes JSON with every `<` as `\u003c` (the same JSON, which cannot open a
/// tag). (`<` is one byte in UTF-8, never part of another character.)
struct NoTags<W: Write>(W);

impl<W: Write> Write for NoTags<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = rest.iter().position(|&b| b == b'<') {
            self.0.write_all(&rest[..at])?;
            self.0.write_all(b"\\u003c")?;
            rest = &rest[at + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use voml_llvo::{Color, DrawCmd, LazyRaster, PxRect, ViewId};

    /// The page [`Recording::write_page`] writes, in memory.
    fn page(r: &Recording, title: &str, origin: Option<f64>) -> String {
        let mut page = Vec::new();
        r.write_page(title, origin, &mut page).unwrap();
        String::from_utf8(page).unwrap()
    }

    #[test]
    fn commands_are_grouped_by_moment_and_the_page_holds_them_safely() {
        let recording = Recording::new(usize::MAX);
        let mut backend = Recording::backend(&recording, LazyRaster::new());
        backend
            .create_surface(ViewId(0), "</script><b>", 10, 10, Color::WHITE)
            .unwrap();
        Recording::lock(&recording).mark(None);
        let clear = DrawCmd::Clear {
            rect: PxRect::new(0, 0, 5, 5),
            color: Color::rgb(1, 2, 3),
        };
        for t in [1.0, 1.0, 2.0] {
            backend.draw(ViewId(0), &clear).unwrap();
            backend.present(ViewId(0)).unwrap();
            Recording::lock(&recording).mark(Some(t));
        }
        // Nothing drawn: no moment.
        Recording::lock(&recording).mark(Some(3.0));
        let r = Recording::lock(&recording);
        let times: Vec<Option<f64>> = r.moments.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, [None, Some(1.0), Some(2.0)]);
        assert_eq!(r.moments[1].1.lines().count(), 2, "two draws at t = 1");
        assert!(!r.moments[1].1.contains("present"));
        let page = page(&r, "a <title>", None);
        assert!(!page.contains("</script><b>"), "a title closed the script");
        assert!(page.contains(r#"\u003c/script>\u003cb>"#));
        assert!(!page.contains("http://") && !page.contains("https://"));
    }

    /// The page is written as it goes into any writer: the same bytes as in memory, every
    /// `<` of the recording escaped however the writes cut it, and a writer's failure told.
    #[test]
    fn the_page_is_written_as_it_goes_and_its_failures_told() {
        let recording = Recording::new(usize::MAX);
        let mut backend = Recording::backend(&recording, LazyRaster::new());
        backend
            .create_surface(ViewId(0), "<<a<", 10, 10, Color::WHITE)
            .unwrap();
        Recording::lock(&recording).mark(Some(0.5));
        let r = Recording::lock(&recording);
        let page = page(&r, "t<", Some(0.25));
        let json = page
            .split_once(r#"id="recording">"#)
            .and_then(|(_, rest)| rest.split_once("</script>"))
            .map(|(json, _)| json)
            .expect("the recording's script");
        assert!(!json.contains('<'), "{json}");
        let data: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(data["title"], "t<");
        assert_eq!(data["origin"], 0.25);
        assert!(data["moments"][0][1].as_str().unwrap().contains("<<a<"));

        // A writer that takes a few bytes at a time.
        struct Dribble(Vec<u8>);
        impl Write for Dribble {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let n = buf.len().min(3);
                self.0.extend_from_slice(&buf[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut dribble = Dribble(Vec::new());
        r.write_page("t<", Some(0.25), &mut dribble).unwrap();
        assert_eq!(String::from_utf8(dribble.0).unwrap(), page);

        // A disk that fills up.
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.0 + buf.len() > 1000 {
                    return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
                }
                self.0 += buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let failed = r.write_page("t", None, &mut Full(0)).unwrap_err();
        assert_eq!(failed.kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn beyond_its_limit_the_recording_is_cut_at_a_moment() {
        let recording = Recording::new(200);
        let mut backend = Recording::backend(&recording, LazyRaster::new());
        backend
            .create_surface(ViewId(0), "v", 10, 10, Color::WHITE)
            .unwrap();
        let clear = DrawCmd::Clear {
            rect: PxRect::new(0, 0, 5, 5),
            color: Color::rgb(1, 2, 3),
        };
        for t in 0..20 {
            backend.draw(ViewId(0), &clear).unwrap();
            Recording::lock(&recording).mark(Some(f64::from(t)));
        }
        let r = Recording::lock(&recording);
        let cut = r.cut().expect("cut");
        assert!(cut < 19.0);
        assert!(r.bytes() < 400, "{} bytes kept", r.bytes());
        assert_eq!(r.moments.last().unwrap().0, Some(cut));
    }
}
