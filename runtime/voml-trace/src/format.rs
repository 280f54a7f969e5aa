//! Trace formats: which one a file is in (told from its first bytes, or forced), and one
//! reader over all of them, so that whoever reads records (the driver's reader thread,
//! `voml send`) need not know which format they come from.

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Chain, Cursor, Read};
use std::path::Path;
use std::process::ChildStdout;
use std::sync::Arc;

use crate::chrome::ChromeReader;
use crate::error::{TraceError, TraceErrorKind};
use crate::interest::Interest;
use crate::lines::find_newline;
use crate::otf2::Otf2Reader;
use crate::paje::PajeReader;
use crate::paraver::ParaverReader;
use crate::reader::{ReadOptions, TraceReader};
use crate::record::Record;

/// A trace format the reader knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// PICL "new" format, as MPICL writes it: one record a line.
    Picl,
    /// Pajé (PajeNG, SimGrid, Poti): a header of event definitions, then records.
    Paje,
    /// Chrome Trace Event Format: JSON, an array of events or an object with `traceEvents`.
    Chrome,
    /// Paraver (Extrae): a `.prv` with its `.pcf` beside it.
    Paraver,
    /// OTF2 (Score-P): an archive named by its anchor file, read through `otf2-print`.
    Otf2,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Picl,
        Format::Paje,
        Format::Chrome,
        Format::Paraver,
        Format::Otf2,
    ];

    /// The word `--format` takes for it.
    pub fn word(self) -> &'static str {
        match self {
            Format::Picl => "picl",
            Format::Paje => "paje",
            Format::Chrome => "chrome",
            Format::Paraver => "paraver",
            Format::Otf2 => "otf2",
        }
    }

    /// The format a word names (see [`Format::word`]), ignoring case.
    pub fn from_word(word: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.word().eq_ignore_ascii_case(word.trim()))
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// The first byte of an OTF2 anchor file.
const OTF2_FIRST: u8 = 0x03;

/// Most bytes looked at to tell a format; a head that has not decided by then is PICL.
pub const SNIFF_LIMIT: usize = 64 * 1024;

/// The format of a trace that begins with `head`, or `None` if `head` does not tell yet
/// (it holds only blank and comment lines, and more may come; `at_end` says none will).
///
/// An OTF2 anchor file (its bytes 2 to 5 are `OTF2`) is OTF2. After blanks (and a UTF-8
/// byte-order mark): `[` or `{` is Chrome JSON; `#Paraver` is Paraver; a `%EventDef` line
/// before the first record line is Pajé; anything else is PICL, whose comments (`#`, `%`)
/// may come first.
pub fn detect(head: &[u8], at_end: bool) -> Option<Format> {
    // The anchor file's header: a byte, the byte order, then `OTF2`.
    if head.get(2..6) == Some(b"OTF2") {
        return Some(Format::Otf2);
    }
    if !at_end && head.len() < 6 && head.first() == Some(&OTF2_FIRST) {
        return None;
    }
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace());
    let Some(start) = start else {
        return at_end.then_some(Format::Picl);
    };
    match head[start] {
        b'[' | b'{' => return Some(Format::Chrome),
        b'#' if head[start..].starts_with(b"#Paraver") => return Some(Format::Paraver),
        // Not yet enough to tell `#Paraver` from a comment.
        b'#' if !at_end && head.len() - start < 8 && b"#Paraver".starts_with(&head[start..]) => {
            return None
        }
        _ => {}
    }
    let mut rest = &head[start..];
    loop {
        let (line, complete) = match find_newline(rest) {
            Some(n) => (&rest[..n], true),
            None => (rest, at_end),
        };
        if !complete {
            return None;
        }
        let trimmed = line.trim_ascii();
        if let Some(header) = trimmed.strip_prefix(b"%") {
            if header.trim_ascii_start().starts_with(b"EventDef") {
                return Some(Format::Paje);
            }
        } else if !trimmed.is_empty() && !trimmed.starts_with(b"#") {
            return Some(Format::Picl);
        }
        match find_newline(rest) {
            Some(n) => rest = &rest[n + 1..],
            None => return Some(Format::Picl),
        }
    }
}

/// An input whose first bytes were read to tell its format, and are read again first.
pub type Sniffed<R> = Chain<Cursor<Vec<u8>>, R>;

/// Tells the format of `input` from its first bytes (up to [`SNIFF_LIMIT`], reading only as
/// far as it takes: a live producer's first record is enough), and gives the input back
/// whole.
pub fn sniff<R: Read>(mut input: R) -> io::Result<(Format, Sniffed<R>)> {
    let mut head = Vec::new();
    let mut chunk = [0u8; 4096];
    let format = loop {
        if let Some(format) = detect(&head, false) {
            break format;
        }
        if head.len() >= SNIFF_LIMIT {
            break Format::Picl;
        }
        let n = match input.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break detect(&head, true).unwrap_or(Format::Picl);
        }
        head.extend_from_slice(&chunk[..n]);
    };
    Ok((format, Cursor::new(head).chain(input)))
}

/// What reads records: any of the readers, driven the same way.
pub trait RecordSource {
    /// The next record or bad record, built in `reuse`'s storage when given.
    fn next_reusing(&mut self, reuse: Option<Record>) -> Option<Result<Record, TraceError>>;

    /// The next record built in `record` itself, or the next bad record (`record` then
    /// holds no record); readers that build records elsewhere move theirs in.
    fn next_into(&mut self, record: &mut Record) -> Option<Result<(), TraceError>> {
        moved_into(self, record)
    }

    /// Whether the next record can come without waiting for more input: a reader of a live
    /// producer hands over what it has when this is false.
    fn next_is_buffered(&self) -> bool;

    /// Which records to parse whole from now on (see [`Interest`]); readers that cannot
    /// parse part of a record read them all whole.
    fn set_interest(&mut self, interest: Option<Arc<Interest>>) {
        let _ = interest;
    }
}

/// [`RecordSource::next_into`] for a reader that builds its records elsewhere: the next
/// record, built in `record`'s storage, moved into it.
fn moved_into<S: RecordSource + ?Sized>(
    source: &mut S,
    record: &mut Record,
) -> Option<Result<(), TraceError>> {
    let item = source.next_reusing(Some(std::mem::take(record)))?;
    Some(item.map(|r| *record = r))
}

impl<R: Read> RecordSource for TraceReader<BufReader<R>> {
    fn next_reusing(&mut self, reuse: Option<Record>) -> Option<Result<Record, TraceError>> {
        TraceReader::next_reusing(self, reuse)
    }

    fn next_into(&mut self, record: &mut Record) -> Option<Result<(), TraceError>> {
        TraceReader::next_into(self, record)
    }

    fn next_is_buffered(&self) -> bool {
        self.whole_line_buffered() || self.get_ref().buffer().contains(&b'\n')
    }

    fn set_interest(&mut self, interest: Option<Arc<Interest>>) {
        TraceReader::set_interest(self, interest);
    }
}

/// The adapters are boxed: they are large, and made once per trace.
enum Inner<R> {
    Picl(TraceReader<R>),
    Paje(Box<PajeReader<R>>),
    Chrome(Box<ChromeReader<R>>),
    Paraver(Box<ParaverReader<R>>),
    /// An OTF2 archive is read from the output of a child process, not from the input.
    Otf2(Box<Otf2Reader<BufReader<ChildStdout>>>),
    /// The input could not be read to tell its format: this error, then nothing.
    Failed(Option<TraceError>),
}

/// A reader of any [`Format`], giving records in the PICL layout.
pub struct FormatReader<R> {
    inner: Inner<R>,
    format: Format,
}

impl FormatReader<BufReader<Sniffed<File>>> {
    /// Opens a trace file in `format`, or in the format its first bytes tell. A Paraver
    /// trace takes its names from the `.pcf` of the same name beside it.
    pub fn open(
        path: impl AsRef<Path>,
        options: ReadOptions,
        format: Option<Format>,
    ) -> io::Result<Self> {
        let path = path.as_ref();
        let file = File::open(path)?;
        Ok(FormatReader::from_input(
            file,
            path.display().to_string(),
            options,
            format,
            Some(path),
        ))
    }
}

impl<R: Read> FormatReader<BufReader<Sniffed<R>>> {
    /// Reads `input` (named `source_name` in errors) in `format`, or in the format its first
    /// bytes tell; `path`, when the input is a file, is where a Paraver trace's `.pcf` is
    /// looked for. A read error while telling the format is the reader's one error.
    pub fn from_input(
        input: R,
        source_name: String,
        options: ReadOptions,
        format: Option<Format>,
        path: Option<&Path>,
    ) -> Self {
        let sniffed = match format {
            Some(f) => Ok((f, Cursor::new(Vec::new()).chain(input))),
            None => sniff(input),
        };
        let (format, input) = match sniffed {
            Ok(s) => s,
            Err(e) => {
                let error = TraceError::at(
                    &source_name,
                    1,
                    1,
                    TraceErrorKind::Io,
                    format!("read error: {e}"),
                    "",
                );
                return FormatReader {
                    inner: Inner::Failed(Some(error)),
                    format: format.unwrap_or(Format::Picl),
                };
            }
        };
        let input = BufReader::with_capacity(64 * 1024, input);
        let inner = match format {
            Format::Picl => Inner::Picl(TraceReader::new(input, source_name, options)),
            Format::Paje => Inner::Paje(Box::new(PajeReader::new(input, source_name, options))),
            Format::Chrome => {
                Inner::Chrome(Box::new(ChromeReader::new(input, source_name, options)))
            }
            Format::Paraver => {
                let mut reader = ParaverReader::new(input, source_name, options);
                match path {
                    Some(path) => reader.load_pcf(path),
                    None => reader.no_pcf(),
                }
                Inner::Paraver(Box::new(reader))
            }
            Format::Otf2 => {
                // The anchor file was read only to tell the format: the tool reads the
                // archive it names.
                drop(input);
                let spawned = match path {
                    Some(path) => Otf2Reader::spawn(path, source_name.clone(), options),
                    None => Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "an OTF2 trace is an archive of files: name its anchor file (`run.otf2`), not a stream",
                    )),
                };
                match spawned {
                    Ok(reader) => Inner::Otf2(Box::new(reader)),
                    Err(e) => Inner::Failed(Some(TraceError::at(
                        &source_name,
                        1,
                        1,
                        TraceErrorKind::Io,
                        e.to_string(),
                        "",
                    ))),
                }
            }
        };
        FormatReader { inner, format }
    }
}

impl<R: BufRead> FormatReader<R> {
    /// The format being read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The next record, like [`Iterator::next`], built in `reuse`'s storage when given.
    pub fn next_reusing(&mut self, reuse: Option<Record>) -> Option<Result<Record, TraceError>> {
        match &mut self.inner {
            Inner::Picl(r) => r.next_reusing(reuse),
            Inner::Paje(r) => r.next_reusing(reuse),
            Inner::Chrome(r) => r.next_reusing(reuse),
            Inner::Paraver(r) => r.next_reusing(reuse),
            Inner::Otf2(r) => r.next_reusing(reuse),
            Inner::Failed(e) => e.take().map(Err),
        }
    }

    /// The reader records are read from (`None` if the input failed before any, or records
    /// come from another process: OTF2).
    pub fn get_ref(&self) -> Option<&R> {
        match &self.inner {
            Inner::Picl(r) => Some(r.get_ref()),
            Inner::Paje(r) => Some(r.get_ref()),
            Inner::Chrome(r) => Some(r.get_ref()),
            Inner::Paraver(r) => Some(r.get_ref()),
            Inner::Otf2(_) | Inner::Failed(_) => None,
        }
    }
}

impl<R: Read> RecordSource for FormatReader<BufReader<R>> {
    fn next_reusing(&mut self, reuse: Option<Record>) -> Option<Result<Record, TraceError>> {
        FormatReader::next_reusing(self, reuse)
    }

    fn next_into(&mut self, record: &mut Record) -> Option<Result<(), TraceError>> {
        match &mut self.inner {
            Inner::Picl(r) => r.next_into(record),
            _ => moved_into(self, record),
        }
    }

    fn set_interest(&mut self, interest: Option<Arc<Interest>>) {
        if let Inner::Picl(r) = &mut self.inner {
            r.set_interest(interest);
        }
    }

    fn next_is_buffered(&self) -> bool {
        match &self.inner {
            Inner::Picl(r) => r.next_is_buffered(),
            Inner::Otf2(r) => !r.get_ref().buffer().is_empty(),
            // The adapters' records wait in their reorder buffers until the input passes
            // them: more buffered input is what lets the next one out.
            _ => self.get_ref().is_some_and(|r| !r.buffer().is_empty()),
        }
    }
}

impl<R: BufRead> Iterator for FormatReader<R> {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_reusing(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_their_first_bytes() {
        let cases: [(&[u8], Format); 10] = [
            (b"\x03BOTF2\x00\x03\x02", Format::Otf2),
            (b"  [{\"ph\":\"B\"}]", Format::Chrome),
            (b"\xef\xbb\xbf{\"traceEvents\":[]}", Format::Chrome),
            (
                b"#Paraver (01/01/2020 at 10:00):100_ns:0:1:1(1:1)\n",
                Format::Paraver,
            ),
            (b"# made by poti\n%EventDef PajeSetState 1\n", Format::Paje),
            (b"%\tEventDef PajeSetState 1\n", Format::Paje),
            (b"-3 -901 0.1 0 0 0\n", Format::Picl),
            (
                b"# comment\n% comment\n-3 -901 0.1 0 0 0\n%EventDef X 1\n",
                Format::Picl,
            ),
            (b"", Format::Picl),
            (b"#Paraver", Format::Paraver),
        ];
        for (head, format) in cases {
            assert_eq!(
                detect(head, true),
                Some(format),
                "{:?}",
                String::from_utf8_lossy(head)
            );
        }
        // Only comments so far: more must come before it tells.
        assert_eq!(detect(b"# comment\n", false), None);
        assert_eq!(detect(b"#Para", false), None);
        assert_eq!(detect(b"\x03BOT", false), None);
        assert_eq!(detect(b"-3 -901 0.", false), None);
        assert_eq!(detect(b"-3 -901 0.", true), Some(Format::Picl));
    }

    #[test]
    fn sniffing_gives_the_input_back_whole() {
        /// Hands out one byte per read, as a slow pipe may.
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(out.len()).min(1);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let text = b"# head\n%EventDef PajeSetState 1\n% Time date\n%EndEventDef\n";
        let (format, mut input) = sniff(Slow(text)).unwrap();
        assert_eq!(format, Format::Paje);
        let mut back = Vec::new();
        input.read_to_end(&mut back).unwrap();
        assert_eq!(back, text);
    }

    #[test]
    fn words() {
        for f in Format::ALL {
            assert_eq!(Format::from_word(f.word()), Some(f));
        }
        assert_eq!(Format::from_word("Chrome"), Some(Format::Chrome));
        assert_eq!(Format::from_word("OTF2"), Some(Format::Otf2));
        assert_eq!(Format::from_word("otf"), None);
    }
}
