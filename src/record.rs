//! `voml run --headless --record FILE.html`: the run's drawing and sound commands, kept by
//! the trace time of the record that made them, written at the end as one self-contained
//! page that replays them (`voml_web::Recording`).

use std::path::PathBuf;

use voml_driver::{Outcome, Sink};
use voml_runtime::{Runtime, TimedSound};
use voml_web::{Recording, SharedRecording};

/// The sink that marks the recording's moments and writes the page at the end.
pub struct RecordSink {
    recording: SharedRecording,
    path: PathBuf,
    title: String,
}

impl RecordSink {
    /// Writes `recording` to `path` at the end, titled `title`. What the visual object drew
    /// before now (its views made) belongs before any record.
    pub fn new(recording: SharedRecording, path: PathBuf, title: String) -> RecordSink {
        Recording::lock(&recording).mark(None);
        RecordSink {
            recording,
            path,
            title,
        }
    }
}

impl Sink for RecordSink {
    fn follows_records(&self) -> bool {
        true
    }

    fn after_record(&mut self, runtime: &mut Runtime, ts: f64) -> Result<(), String> {
        // The moment ends after the commands the record made, which the drawing layer's
        // thread may still be giving the back end.
        let recording = self.recording.clone();
        runtime.after_drawing(move || Recording::lock(&recording).mark(Some(ts)));
        Ok(())
    }

    fn sounds(&mut self, runtime: &mut Runtime, sounds: &[TimedSound]) -> Result<(), String> {
        // In their place among the drawing commands.
        let recording = self.recording.clone();
        let sounds = sounds.to_vec();
        runtime.after_drawing(move || {
            let mut recording = Recording::lock(&recording);
            for sound in sounds {
                recording.sound(sound.at, &sound.command);
            }
        });
        Ok(())
    }

    fn end(&mut self, runtime: &mut Runtime, outcome: &Outcome) -> Result<Vec<String>, String> {
        // What the end of the input drew belongs to the last moment.
        let last = (outcome.records > 0).then_some(outcome.last_ts);
        runtime.catch_up_drawing();
        let mut recording = Recording::lock(&self.recording);
        recording.mark(last.or(Some(runtime.trace_time())));
        let origin = runtime.stats().first_ts;
        let written = std::fs::File::create(&self.path).and_then(|file| {
            let mut out = std::io::BufWriter::new(file);
            recording.write_page(&self.title, origin, &mut out)?;
            std::io::Write::flush(&mut out)
        });
        written.map_err(|e| format!("cannot write `{}`: {e}", self.path.display()))?;
        let mut notes = vec![format!("wrote {}", self.path.display())];
        if let Some(cut) = recording.cut() {
            notes.push(format!(
                "warning: the recording was cut after trace time {cut} (it keeps at most {} MiB of drawing)",
                voml_web::DEFAULT_RECORD_LIMIT >> 20
            ));
        }
        Ok(notes)
    }
}
