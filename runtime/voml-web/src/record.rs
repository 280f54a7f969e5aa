//! A recorded run as one file (`voml run --record run.html`): every command the LLVO core
//! gives its back end, copied by a [`Recorder`] while a headless run draws, grouped by the
//! trace time of the record that drew it, and the sound commands, put into the page the
//! server serves, which replays them in the browser with the same replay controls (pause,
//! step, back, seek, speed). Nothing is fetched: the page, its script and style and the
//! recording are all inside the file.

use std::cell::RefCell;
use std::rc::Rc;

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
pub type SharedRecording = Rc<RefCell<Recording>>;

impl Recording {
    /// A recording that keeps at most `limit` bytes of commands.
    pub fn new(limit: usize) -> SharedRecording {
        Rc::new(RefCell::new(Recording {
            moments: Vec::new(),
            pending: String::new(),
            bytes: 0,
            limit,
            cut: None,
            dropping: false,
        }))
    }

    /// `inner`, with every command it is given copied into `recording`.
    pub fn backend<B: Backend>(recording: &SharedRecording, inner: B) -> Recorder<B> {
        let into = recording.clone();
        Recorder::new(inner, move |command| into.borrow_mut().command(command))
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

    /// The self-contained page that replays the recording, titled `title`; `origin` is the
    /// first record's time, where the sound's output time begins.
    pub fn page(&self, title: &str, origin: Option<f64>) -> String {
        let moments: Vec<serde_json::Value> = self
            .moments
            .iter()
            .map(|(at, lines)| serde_json::json!([at, lines]))
            .collect();
        let data = serde_json::json!({
            "title": title,
            "origin": origin,
            "cut": self.cut(),
            "moments": moments,
        });
        // Inside a script element, `<` must not open a tag (`</script>` in a text drawn).
        let data = data.to_string().replace('<', "\\u003c");
        crate::server::recorded_page(&data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use voml_llvo::{Color, DrawCmd, LazyRaster, PxRect, ViewId};

    #[test]
    fn commands_are_grouped_by_moment_and_the_page_holds_them_safely() {
        let recording = Recording::new(usize::MAX);
        let mut backend = Recording::backend(&recording, LazyRaster::new());
        backend
            .create_surface(ViewId(0), "</script><b>", 10, 10, Color::WHITE)
            .unwrap();
        recording.borrow_mut().mark(None);
        let clear = DrawCmd::Clear {
            rect: PxRect::new(0, 0, 5, 5),
            color: Color::rgb(1, 2, 3),
        };
        for t in [1.0, 1.0, 2.0] {
            backend.draw(ViewId(0), &clear).unwrap();
            backend.present(ViewId(0)).unwrap();
            recording.borrow_mut().mark(Some(t));
        }
        // Nothing drawn: no moment.
        recording.borrow_mut().mark(Some(3.0));
        let r = recording.borrow();
        let times: Vec<Option<f64>> = r.moments.iter().map(|(t, _)| *t).collect();
        assert_eq!(times, [None, Some(1.0), Some(2.0)]);
        assert_eq!(r.moments[1].1.lines().count(), 2, "two draws at t = 1");
        assert!(!r.moments[1].1.contains("present"));
        let page = r.page("a <title>", None);
        assert!(!page.contains("</script><b>"), "a title closed the script");
        assert!(page.contains(r#"\u003c/script>\u003cb>"#));
        assert!(!page.contains("http://") && !page.contains("https://"));
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
            recording.borrow_mut().mark(Some(f64::from(t)));
        }
        let r = recording.borrow();
        let cut = r.cut().expect("cut");
        assert!(cut < 19.0);
        assert!(r.bytes() < 400, "{} bytes kept", r.bytes());
        assert_eq!(r.moments.last().unwrap().0, Some(cut));
    }
}
