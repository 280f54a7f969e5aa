//! The primitive API the generated code calls (`voml-line`, `voml-text`, `voml-view-info`,
//! ...; see `voml_ir::primitive_api`), implemented on the low-level visual object layer.
//!
//! steel's native procedures are plain `fn` pointers, so they reach the runtime's state
//! through a thread-local that the runtime sets while it runs VO code ([`enter`]). The engine
//! lives on one thread, and so does its host.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use steel::rerrs::ErrorKind;
use steel::rvals::SteelVal;
use steel::steel_vm::engine::Engine;
use steel::SteelErr;
use voml_ir::vocabulary::limits::{MAX_WINDOW, SOUND_CHANNELS};
use voml_ir::vocabulary::schema::{CAP, CLIP, HALIGN, VALIGN};
use voml_llvo::{
    Backend, ClipMode, Color, FontFamily, FontSpec, HAlign, ImageId, InfoItem, LineCap, Llvo,
    LlvoThread, OwnerId, Point, Primitive, RgbaPixels, Style, VAlign, ViewId,
};
use voml_sound::Voice;

/// What the native procedures act on.
pub struct Host {
    /// The drawing layer, on a thread of its own: lines are handed over, everything else
    /// reaches it ([`LlvoThread::llvo`]) once what was handed over is drawn.
    pub drawing: LlvoThread<Box<dyn Backend>>,
    /// VO view index → LLVO view.
    pub views: Vec<ViewId>,
    /// Who is drawing now (the running IR component, or the general owner).
    pub owner: OwnerId,
    /// Embedded figure files by name, decoded on first use.
    pub assets: HashMap<String, Vec<u8>>,
    images: rustc_hash::FxHashMap<String, ImageId>,
    colours: rustc_hash::FxHashMap<String, Color>,
    /// The styles read lately, with the list each was read from: a style the compiler made
    /// once (`voml/style/K`) is the same list at every call, and is read once.
    styles: Vec<(SteelVal, Style)>,
    /// The style lists `voml-style` made lately, the latest first: a style computed per call
    /// (a colour chosen by key) is mostly one of a few, and handing back the list made before
    /// spares making one (steel's lists allocate a block) and reading it again in [`style`].
    style_lists: Vec<SteelVal>,
    /// The record `(current-event)` shows (a copy, whose storage is reused from record to
    /// record), and the list it is, made on the first call for that record.
    event: Option<voml_trace::Record>,
    event_value: Option<SteelVal>,
    /// Trace time of the current record.
    pub now: f64,
    /// Sound the VO asked for, in trace time, until a consumer takes it
    /// ([`crate::Runtime::take_sounds`]); bounded by [`MAX_PENDING_SOUNDS`].
    pub sounds: VecDeque<TimedSound>,
    /// Sound commands dropped because nobody took them in time.
    pub sounds_dropped: u64,
    /// Whether `<snapshot>` is allowed in this run (the driver has somewhere to put them).
    pub snapshots_allowed: bool,
    /// Snapshots taken and not yet handed to the driver ([`crate::Runtime::take_snapshots`]);
    /// bounded by [`MAX_PENDING_SNAPSHOTS`].
    pub snapshots: VecDeque<Snapshot>,
    /// Why `<pause>` asked the replay to pause at the current record, if it did (the first
    /// reason given for the record).
    pub pause: Option<String>,
}

/// How many styles [`Host::style`] keeps read (and as many style lists, and styles a native
/// drawing part's styled line keeps read).
pub(crate) const STYLES_KEPT: usize = 16;

/// At most this many snapshots wait for the driver; older ones are dropped.
pub const MAX_PENDING_SNAPSHOTS: usize = 64;

/// A picture the VO asked for with `<snapshot>`: the driver's sinks decide where it goes.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The view's name.
    pub view: String,
    /// The file name the VO gave: a relative `.png` path without `..`.
    pub file: String,
    /// Trace time when it was taken.
    pub at: f64,
    /// The view's pixels then.
    pub pixels: RgbaPixels,
}

impl Host {
    pub fn new(llvo: Llvo<Box<dyn Backend>>) -> Host {
        Host {
            drawing: LlvoThread::new(llvo),
            views: Vec::new(),
            owner: OwnerId(0),
            assets: HashMap::new(),
            images: Default::default(),
            colours: Default::default(),
            styles: Vec::new(),
            style_lists: Vec::new(),
            event: None,
            event_value: None,
            now: 0.0,
            sounds: VecDeque::new(),
            sounds_dropped: 0,
            snapshots_allowed: false,
            snapshots: VecDeque::new(),
            pause: None,
        }
    }

    /// Makes `record` the one `(current-event)` shows. The list is made only when some code
    /// asks for it: most records of a visual object whose condition parts are decided
    /// natively run no Scheme at all.
    pub fn set_event(&mut self, record: &voml_trace::Record) {
        match &mut self.event {
            Some(copy) => {
                copy.line = record.line;
                copy.rtype = record.rtype;
                copy.etype = record.etype;
                // Numbers (nearly every field) are copied over in place; a string, or a
                // change of length, takes the general way.
                let numbers = copy.fields.len() == record.fields.len()
                    && copy
                        .fields
                        .iter_mut()
                        .zip(&record.fields)
                        .all(|(to, from)| match (&mut *to, from) {
                            (
                                voml_trace::Value::Int(_) | voml_trace::Value::Real(_),
                                voml_trace::Value::Int(_) | voml_trace::Value::Real(_),
                            ) => {
                                *to = from.clone();
                                true
                            }
                            _ => false,
                        });
                if !numbers {
                    copy.fields.clone_from(&record.fields);
                }
            }
            None => self.event = Some(record.clone()),
        }
        self.event_value = None;
    }

    /// The record `(current-event)` shows, if any.
    pub(crate) fn event(&self) -> Option<&voml_trace::Record> {
        self.event.as_ref()
    }

    /// What a condition's native test decides for the record `(current-event)` shows
    /// (unsure before the first record: the Scheme condition would see `#f`).
    pub fn decide(&self, test: &voml_ir::Test) -> voml_ir::Decision {
        match &self.event {
            Some(record) => test.decide(&|p| crate::element(record, p)),
            None => voml_ir::Decision::Unsure,
        }
    }

    /// `(event-ref k)`: element `k` of the list `(current-event)` gives, without making the
    /// list (a string element is taken from the list, so that it is the same string).
    pub fn event_ref(&mut self, k: &SteelVal) -> Result<SteelVal, SteelErr> {
        let fail = |message: String| Err(SteelErr::new(ErrorKind::Generic, message));
        let k = match k {
            SteelVal::IntV(k) if *k >= 0 => *k as usize,
            other => {
                return fail(format!(
                    "event-ref: expected an element number (0, 1, ...), found {other}"
                ))
            }
        };
        let Some(record) = &self.event else {
            return fail("event-ref: there is no event yet ((current-event) is #f)".to_string());
        };
        let field = match k {
            0 => return Ok(SteelVal::IntV(record.rtype as isize)),
            1 => return Ok(SteelVal::IntV(record.etype as isize)),
            p => record.get(p),
        };
        match field {
            Some(voml_trace::Value::Str(_)) => {
                let list = self.current_event();
                match list {
                    SteelVal::ListV(l) => Ok(l.get(k).cloned().unwrap_or(SteelVal::BoolV(false))),
                    other => Ok(other),
                }
            }
            Some(value) => Ok(crate::element_value(value)),
            None => fail(format!(
                "event-ref: the event has {} elements, no element {k}",
                record.fields.len() + 2
            )),
        }
    }

    /// `(current-event)`: the record as a list `(rtype etype field ...)`, the same list for
    /// every call until the next record, or `#f` before the first.
    pub fn current_event(&mut self) -> SteelVal {
        if let Some(value) = &self.event_value {
            return value.clone();
        }
        let Some(record) = &self.event else {
            return SteelVal::BoolV(false);
        };
        // Made while VO code runs and released when the next record replaces it, outside
        // VO code: the runtime's memory, not the VO's.
        let value = crate::memory::uncharged(|| crate::record_value(record));
        self.event_value = Some(value.clone());
        value
    }
}

/// At most this many sound commands wait for a consumer; older ones are dropped (and
/// counted) so that a long run without audio output keeps constant memory.
pub const MAX_PENDING_SOUNDS: usize = 1 << 20;

/// A sound primitive's effect, as the runtime hands it to a sound back end: a plain value that
/// can be recorded, streamed to a page and replayed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum SoundCommand {
    /// A note of fixed length.
    Tone {
        hz: f64,
        duration: f64,
        volume: f64,
        pan: f64,
        voice: Voice,
        channel: Option<i64>,
    },
    /// A held note, sounding until its note-off.
    NoteOn {
        channel: i64,
        hz: f64,
        volume: f64,
    },
    NoteOff {
        channel: i64,
        hz: f64,
    },
    /// A volume change of a held note (or of all held notes of the channel).
    NoteVolume {
        channel: i64,
        hz: Option<f64>,
        volume: f64,
    },
    /// Channel settings; `None` leaves a setting as it is.
    Channel {
        channel: i64,
        voice: Option<Voice>,
        pan: Option<f64>,
        volume: Option<f64>,
        mute: Option<bool>,
    },
    Master {
        volume: f64,
    },
    /// From now on sound runs `factor` times faster against trace time.
    Tempo {
        factor: f64,
    },
    /// The paper's `(beep)`.
    Beep,
}

/// A sound command at a point of trace time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimedSound {
    pub at: f64,
    pub command: SoundCommand,
}

impl Host {
    pub(crate) fn sound(&mut self, command: SoundCommand) {
        if self.sounds.len() >= MAX_PENDING_SOUNDS {
            self.sounds.pop_front();
            self.sounds_dropped += 1;
        }
        let at = self.now;
        self.sounds.push_back(TimedSound { at, command });
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<RefCell<Host>>>> = const { RefCell::new(None) };
}

/// Makes `host` the one the native procedures of this thread act on, until the guard drops.
pub fn enter(host: &Rc<RefCell<Host>>) -> EnterGuard {
    let previous = CURRENT.with(|c| c.replace(Some(host.clone())));
    EnterGuard { previous }
}

pub struct EnterGuard {
    previous: Option<Rc<RefCell<Host>>>,
}

impl Drop for EnterGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

fn with_host<T>(
    name: &str,
    f: impl FnOnce(&mut Host) -> Result<T, SteelErr>,
) -> Result<T, SteelErr> {
    let host = CURRENT.with(|c| c.borrow().clone());
    match host {
        // What the host keeps (drawing commands, sounds, snapshots) is the runtime's, and is
        // released outside the VO's calls (the next frame's undraw, the driver taking the
        // sounds): charged to the VO, it would count against it for ever, until a long run
        // hit the ceiling with little held.
        Some(h) => match h.try_borrow_mut() {
            Ok(mut host) => crate::memory::uncharged(|| f(&mut host)),
            Err(_) => Err(fail(name, "called re-entrantly".into())),
        },
        None => Err(fail(
            name,
            "no view layer is attached to this engine".into(),
        )),
    }
}

fn fail(name: &str, message: String) -> SteelErr {
    SteelErr::new(ErrorKind::Generic, format!("{name}: {message}"))
}

/// Checks the number of arguments a native procedure got.
pub(crate) fn arity(name: &str, args: &[SteelVal], n: usize) -> Result<(), SteelErr> {
    if args.len() == n {
        Ok(())
    } else {
        Err(SteelErr::new(
            ErrorKind::ArityMismatch,
            format!("{name}: expected {n} arguments, got {}", args.len()),
        ))
    }
}

/// A Scheme number as f64 (integers, reals and exact fractions).
pub fn number(v: &SteelVal) -> Option<f64> {
    match v {
        SteelVal::IntV(i) => Some(*i as f64),
        SteelVal::NumV(f) => Some(*f),
        SteelVal::Rational(r) => Some(*r.numer() as f64 / *r.denom() as f64),
        _ => None,
    }
}

fn num(name: &str, what: &str, v: &SteelVal) -> Result<f64, SteelErr> {
    number(v).ok_or_else(|| {
        SteelErr::new(
            ErrorKind::TypeMismatch,
            format!("{name}: {what} must be a number, found {v}"),
        )
    })
}

fn text_of(v: &SteelVal) -> Option<String> {
    match v {
        SteelVal::StringV(s) | SteelVal::SymbolV(s) => Some(s.as_str().to_string()),
        _ => None,
    }
}

/// A list (or vector) as a Vec.
fn items(v: &SteelVal) -> Option<Vec<SteelVal>> {
    match v {
        SteelVal::ListV(l) => Some(l.iter().cloned().collect()),
        SteelVal::VectorV(vec) => Some(vec.iter().cloned().collect()),
        SteelVal::MutableVector(h) => Some(h.get()),
        _ => None,
    }
}

impl Host {
    /// The view a drawing procedure's first argument names: a view number or a view's name.
    pub(crate) fn view(&self, name: &str, v: &SteelVal) -> Result<ViewId, SteelErr> {
        match v {
            SteelVal::IntV(i) => self
                .views
                .get(*i as usize)
                .copied()
                .filter(|_| *i >= 0)
                .ok_or_else(|| fail(name, format!("no view number {i}"))),
            other => match text_of(other) {
                Some(n) => self
                    .drawing
                    .read()
                    .view_by_name(&n)
                    .ok_or_else(|| fail(name, format!("no view named `{n}`"))),
                None => Err(fail(name, format!("expected a view, found {other}"))),
            },
        }
    }

    fn colour(&mut self, name: &str, v: &SteelVal) -> Result<Color, SteelErr> {
        // A colour met before is looked up without copying its name.
        if let SteelVal::StringV(s) | SteelVal::SymbolV(s) = v {
            if let Some(c) = self.colours.get(s.as_str()) {
                return Ok(*c);
            }
        }
        let Some(text) = text_of(v) else {
            return Err(SteelErr::new(
                ErrorKind::TypeMismatch,
                format!(
                    "{name}: a colour must be a string such as \"red\" or \"#ff0000\", found {v}"
                ),
            ));
        };
        let c =
            Color::parse(&text).ok_or_else(|| fail(name, format!("unknown colour `{text}`")))?;
        self.colours.insert(text, c);
        Ok(c)
    }

    /// `(voml-style color thick adapt clip dash alpha cap)` as passed to a drawing procedure.
    fn style(
        &mut self,
        name: &str,
        v: &SteelVal,
        fill: Option<&SteelVal>,
    ) -> Result<Style, SteelErr> {
        let same = |known: &SteelVal| match (known, v) {
            (SteelVal::ListV(a), SteelVal::ListV(b)) => a.ptr_eq(b),
            _ => false,
        };
        let mut style = match self.styles.iter().find(|(known, _)| same(known)) {
            Some((_, style)) => style.clone(),
            None => {
                let style = self.read_style(name, v)?;
                // (Keeping the list keeps its address from being reused by another.)
                if self.styles.len() == STYLES_KEPT {
                    self.styles.remove(0);
                }
                self.styles.push((v.clone(), style.clone()));
                style
            }
        };
        if let Some(fill) = fill {
            if truthy(fill) {
                style.fill = Some(self.colour(name, fill)?);
            }
        }
        Ok(style)
    }

    /// The list `(voml-style …)` gives for these parts: one made before with the same parts,
    /// or a new one.
    pub(crate) fn style_list(&mut self, parts: &[SteelVal]) -> SteelVal {
        let found = self.style_lists.iter().position(|known| match known {
            SteelVal::ListV(list) => {
                list.len() == parts.len() && list.iter().zip(parts).all(|(a, b)| same_part(a, b))
            }
            _ => false,
        });
        let list = match found {
            Some(at) => self.style_lists.remove(at),
            None => SteelVal::ListV(parts.iter().cloned().collect()),
        };
        self.style_lists.insert(0, list.clone());
        self.style_lists.truncate(STYLES_KEPT);
        list
    }

    /// A style list read into a [`Style`] (without fill).
    fn read_style(&mut self, name: &str, v: &SteelVal) -> Result<Style, SteelErr> {
        let parts = items(v)
            .filter(|p| p.len() == 7)
            .ok_or_else(|| fail(name, format!("bad style {v}")))?;
        self.read_style_parts(name, std::array::from_fn(|k| &parts[k]))
    }

    /// The parts of a style, `(voml-style color thick adapt clip dash alpha cap)`'s
    /// arguments, read into a [`Style`] (without fill), as [`Host::read_style`] reads the
    /// list they make.
    pub(crate) fn read_style_parts(
        &mut self,
        name: &str,
        parts: [&SteelVal; 7],
    ) -> Result<Style, SteelErr> {
        let mut style = Style {
            color: self.colour(name, parts[0])?,
            thick: num(name, "thick", parts[1])?,
            adapt: truthy(parts[2]),
            clip: word(name, "clip", parts[3], CLIP, ClipMode::parse)?,
            alpha: match parts[5] {
                SteelVal::BoolV(false) => 1.0,
                a => num(name, "alpha", a)?,
            },
            cap: word(name, "cap", parts[6], CAP, LineCap::parse)?,
            ..Style::default()
        };
        if let Some(dash) = items(parts[4]) {
            style.dash = dash
                .iter()
                .map(|d| num(name, "dash", d))
                .collect::<Result<_, _>>()?;
        }
        Ok(style)
    }

    pub(crate) fn draw(
        &mut self,
        name: &str,
        view: ViewId,
        prim: Primitive,
        style: &Style,
    ) -> Result<SteelVal, SteelErr> {
        self.drawing
            .draw(view, self.owner, &prim, style)
            .map_err(|e| fail(name, e.to_string()))?;
        Ok(SteelVal::Void)
    }

    fn image(&mut self, name: &str, file: &str) -> Result<ImageId, SteelErr> {
        if let Some(id) = self.images.get(file) {
            return Ok(*id);
        }
        let bytes = self.assets.get(file).ok_or_else(|| {
            fail(name, format!("figure file `{file}` is not part of the compiled visual object (only file names written literally in `filename` are embedded)"))
        })?;
        let id = self
            .drawing
            .llvo()
            .load_image(bytes)
            .map_err(|e| fail(name, format!("`{file}`: {e}")))?;
        self.images.insert(file.to_string(), id);
        Ok(id)
    }
}

/// Whether two parts of a style are the same value, as far as telling costs nothing: plain
/// values by value (reals by their bits), lists (dashes) by identity; anything else is taken
/// as different.
#[inline(always)]
pub(crate) fn same_part(a: &SteelVal, b: &SteelVal) -> bool {
    match (a, b) {
        (SteelVal::BoolV(x), SteelVal::BoolV(y)) => x == y,
        (SteelVal::IntV(x), SteelVal::IntV(y)) => x == y,
        (SteelVal::NumV(x), SteelVal::NumV(y)) => x.to_bits() == y.to_bits(),
        (SteelVal::StringV(x), SteelVal::StringV(y)) => x == y,
        (SteelVal::SymbolV(x), SteelVal::SymbolV(y)) => x == y,
        (SteelVal::ListV(x), SteelVal::ListV(y)) => x.ptr_eq(y),
        _ => false,
    }
}

/// An enumerated word of the language (`words`, from the vocabulary), read with `parse`:
/// anything else is refused, as `voml check` refuses it in markup.
fn word<T>(
    name: &str,
    what: &str,
    v: &SteelVal,
    words: &[&str],
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, SteelErr> {
    text_of(v).and_then(|w| parse(&w)).ok_or_else(|| {
        fail(
            name,
            format!("{what} must be one of {}, found {v}", words.join(", ")),
        )
    })
}

pub fn truthy(v: &SteelVal) -> bool {
    !matches!(v, SteelVal::BoolV(false))
}

fn point(name: &str, x: &SteelVal, y: &SteelVal) -> Result<Point, SteelErr> {
    Ok(Point {
        x: num(name, "x", x)?,
        y: num(name, "y", y)?,
    })
}

/// A list of numbers `x0 y0 x1 y1 ...` or of pairs `((x0 . y0) ...)`.
fn points(name: &str, v: &SteelVal) -> Result<Vec<Point>, SteelErr> {
    let list = items(v).ok_or_else(|| fail(name, format!("points must be a list, found {v}")))?;
    if list.iter().all(|p| number(p).is_some()) {
        if list.len() % 2 != 0 {
            return Err(fail(
                name,
                "points need an even count of numbers (x y pairs)".into(),
            ));
        }
        return list.chunks(2).map(|c| point(name, &c[0], &c[1])).collect();
    }
    list.iter()
        .map(|p| match p {
            SteelVal::Pair(pair) => point(name, pair.car_ref(), pair.cdr_ref()),
            other => match items(other) {
                Some(xy) if xy.len() == 2 => point(name, &xy[0], &xy[1]),
                _ => Err(fail(name, format!("bad point {other}"))),
            },
        })
        .collect()
}

fn font(name: &str, v: &SteelVal, size: &SteelVal) -> Result<FontSpec, SteelErr> {
    let size_px = match size {
        SteelVal::BoolV(false) => None,
        s => Some(num(name, "size", s)? as f32),
    };
    let spec = match v {
        // The default font, as `from_hints("helvetica", size, "medium")` reads it (a text
        // drawn for every record need not read the hints again).
        SteelVal::BoolV(false) => FontSpec {
            family: FontFamily::Sans,
            bold: false,
            size_px: size_px.unwrap_or(14.0),
        },
        other => match (text_of(other), items(other)) {
            (Some(family), _) => FontSpec::from_hints(&family, size_px.unwrap_or(14.0), "medium"),
            // (font family size weight), as getfontname makes.
            (None, Some(parts)) if parts.len() == 4 => {
                let family = text_of(&parts[1]).unwrap_or_default();
                let weight = text_of(&parts[3]).unwrap_or_default();
                let from_font = number(&parts[2]).unwrap_or(14.0) as f32;
                FontSpec::from_hints(&family, size_px.unwrap_or(from_font), &weight)
            }
            _ => return Err(fail(name, format!("bad font {other} (use getfontname)"))),
        },
    };
    Ok(spec)
}

/// Defines a native procedure `$fname`, called `$scheme` in Scheme, taking `$n` arguments,
/// and beside it a module `$fname` holding that name and arity, so that [`register`] and
/// [`natives`] read them from this one place.
macro_rules! native {
    ($fname:ident, $scheme:literal, $n:literal, |$host:ident, $args:ident| $body:block) => {
        native!($fname, $scheme, $n, |$args| with_host($scheme, |$host| {
            $body
        }));
    };
    ($fname:ident, $scheme:literal, $n:literal, |$args:ident| $body:expr) => {
        fn $fname($args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
            arity($scheme, $args, $n)?;
            $body
        }
        #[allow(non_snake_case)]
        mod $fname {
            pub const NAME: &str = $scheme;
            pub const ARITY: usize = $n;
        }
    };
}

native!(line, "voml-line", 6, |h, a| {
    let (view, prim, style) = h.line_parts(a)?;
    h.draw("line", view, prim, &style)
});

impl Host {
    /// What `(voml-line view x0 y0 x1 y1 style)` draws, where, how: worked out without
    /// drawing it.
    pub(crate) fn line_parts(
        &mut self,
        a: &[SteelVal],
    ) -> Result<(ViewId, Primitive, Style), SteelErr> {
        let view = self.view("line", &a[0])?;
        let style = self.style("line", &a[5], None)?;
        let (from, to) = segment(&a[1], &a[2], &a[3], &a[4])?;
        Ok((view, Primitive::Line { from, to }, style))
    }
}

/// The ends of the segment `(voml-line view x0 y0 x1 y1 style)` draws.
pub(crate) fn segment(
    x0: &SteelVal,
    y0: &SteelVal,
    x1: &SteelVal,
    y1: &SteelVal,
) -> Result<(Point, Point), SteelErr> {
    Ok((point("line", x0, y0)?, point("line", x1, y1)?))
}

native!(polyline, "voml-polyline", 3, |h, a| {
    let view = h.view("polyline", &a[0])?;
    let style = h.style("polyline", &a[2], None)?;
    let prim = Primitive::Polyline {
        points: points("polyline", &a[1])?,
    };
    h.draw("polyline", view, prim, &style)
});

native!(polygon, "voml-polygon", 4, |h, a| {
    let view = h.view("polygon", &a[0])?;
    let style = h.style("polygon", &a[3], Some(&a[2]))?;
    let prim = Primitive::Polygon {
        points: points("polygon", &a[1])?,
    };
    h.draw("polygon", view, prim, &style)
});

native!(rectangle, "voml-rectangle", 7, |h, a| {
    let view = h.view("rectangle", &a[0])?;
    let style = h.style("rectangle", &a[6], Some(&a[5]))?;
    let prim = Primitive::Rectangle {
        from: point("rectangle", &a[1], &a[2])?,
        to: point("rectangle", &a[3], &a[4])?,
    };
    h.draw("rectangle", view, prim, &style)
});

native!(circle, "voml-circle", 6, |h, a| {
    let view = h.view("circle", &a[0])?;
    let style = h.style("circle", &a[5], Some(&a[4]))?;
    let prim = Primitive::Circle {
        center: point("circle", &a[1], &a[2])?,
        radius: num("circle", "radius", &a[3])?,
    };
    h.draw("circle", view, prim, &style)
});

native!(ellipse, "voml-ellipse", 7, |h, a| {
    let view = h.view("ellipse", &a[0])?;
    let style = h.style("ellipse", &a[6], Some(&a[5]))?;
    let prim = Primitive::Ellipse {
        center: point("ellipse", &a[1], &a[2])?,
        radii: (num("ellipse", "rx", &a[3])?, num("ellipse", "ry", &a[4])?),
    };
    h.draw("ellipse", view, prim, &style)
});

native!(arc, "voml-arc", 7, |h, a| {
    let view = h.view("arc", &a[0])?;
    let style = h.style("arc", &a[6], None)?;
    let prim = Primitive::Arc {
        center: point("arc", &a[1], &a[2])?,
        radius: num("arc", "radius", &a[3])?,
        start_deg: num("arc", "start", &a[4])?,
        extent_deg: num("arc", "extent", &a[5])?,
    };
    h.draw("arc", view, prim, &style)
});

native!(text, "voml-text", 10, |h, a| {
    let view = h.view("text", &a[0])?;
    let mut style = h.style("text", &a[9], None)?;
    style.color = h.colour("text", &a[5])?;
    let content = match &a[3] {
        SteelVal::StringV(s) => s.as_str().to_string(),
        other => other.to_string(),
    };
    let prim = Primitive::Text {
        at: point("text", &a[1], &a[2])?,
        content,
        font: font("text", &a[4], &a[6])?,
        halign: word("text", "halign", &a[7], HALIGN, HAlign::parse)?,
        valign: word("text", "valign", &a[8], VALIGN, VAlign::parse)?,
    };
    h.draw("text", view, prim, &style)
});

native!(figure, "voml-figure", 11, |h, a| {
    let view = h.view("figure", &a[0])?;
    let style = h.style("figure", &a[10], None)?;
    let file = text_of(&a[1]).ok_or_else(|| {
        fail(
            "figure",
            format!("filename must be a string, found {}", a[1]),
        )
    })?;
    let image = h.image("figure", &file)?;
    let n = |i: usize, what: &str| num("figure", what, &a[i]);
    let prim = Primitive::Figure {
        image,
        orig_origin: (n(2, "orig-origin")?, n(3, "orig-origin")?),
        orig_extents: (n(4, "orig-extents")?, n(5, "orig-extents")?),
        world_origin: Point {
            x: n(6, "world-origin")?,
            y: n(7, "world-origin")?,
        },
        world_extents: (n(8, "world-extents")?, n(9, "world-extents")?),
    };
    h.draw("figure", view, prim, &style)
});

native!(view_info, "voml-view-info", 1, |h, a| {
    let view = h.view("view-info", &a[0])?;
    let info = h
        .drawing
        .read()
        .view_info(view)
        .map_err(|e| fail("view-info", e.to_string()))?;
    let items: Vec<SteelVal> = info
        .as_list()
        .into_iter()
        .map(|item| match item {
            InfoItem::Text(s) => SteelVal::StringV(s.into()),
            InfoItem::Int(i) => SteelVal::IntV(i as isize),
            InfoItem::Real(r) => SteelVal::NumV(r),
        })
        .collect();
    Ok(SteelVal::ListV(items.into_iter().collect()))
});

native!(scroll, "voml-scroll", 3, |h, a| {
    let view = h.view("scroll", &a[0])?;
    h.drawing
        .llvo()
        .scroll(
            view,
            num("scroll", "dx", &a[1])?,
            num("scroll", "dy", &a[2])?,
        )
        .map_err(|e| fail("scroll", e.to_string()))?;
    Ok(SteelVal::Void)
});

native!(resize, "voml-resize", 3, |h, a| {
    let view = h.view("resize", &a[0])?;
    let w = num("resize", "width", &a[1])?;
    let hh = num("resize", "height", &a[2])?;
    let max = f64::from(MAX_WINDOW);
    if !(1.0..=max).contains(&w) || !(1.0..=max).contains(&hh) {
        return Err(fail(
            "resize",
            format!("size {w}x{hh} is out of range (1 to {MAX_WINDOW} pixels)"),
        ));
    }
    h.drawing
        .llvo()
        .resize(view, w as u32, hh as u32)
        .map_err(|e| fail("resize", e.to_string()))?;
    Ok(SteelVal::Void)
});

native!(rescale, "voml-rescale", 5, |h, a| {
    let view = h.view("rescale", &a[0])?;
    let mut world = [0.0; 4];
    for (i, w) in world.iter_mut().enumerate() {
        *w = num("rescale", "world", &a[i + 1])?;
    }
    h.drawing
        .llvo()
        .rescale(view, world)
        .map_err(|e| fail("rescale", e.to_string()))?;
    Ok(SteelVal::Void)
});

native!(snapshot, "voml-snapshot", 2, |h, a| {
    let view = h.view("snapshot", &a[0])?;
    let file =
        text_of(&a[1]).ok_or_else(|| fail("snapshot", "the file name must be a string".into()))?;
    if !h.snapshots_allowed {
        return Err(fail(
            "snapshot",
            "snapshots are not allowed in this run (give the run an output directory)".into(),
        ));
    }
    let name = std::path::Path::new(&file);
    let plain = name
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || name.extension().is_none_or(|e| e != "png") {
        return Err(fail(
            "snapshot",
            format!("`{file}` must be a relative .png file name inside the output directory"),
        ));
    }
    let pixels = h
        .drawing
        .llvo()
        .pixels(view)
        .map_err(|e| fail("snapshot", e.to_string()))?;
    let view_name = h
        .drawing
        .read()
        .view_spec(view)
        .map(|s| s.name.clone())
        .unwrap_or_default();
    if h.snapshots.len() >= MAX_PENDING_SNAPSHOTS {
        h.snapshots.pop_front();
    }
    let at = h.now;
    h.snapshots.push_back(Snapshot {
        view: view_name,
        file,
        at,
        pixels,
    });
    Ok(SteelVal::Void)
});

native!(style, "voml-style", 7, |h, a| { Ok(h.style_list(a)) });

native!(beep, "beep", 0, |h, _a| {
    h.sound(SoundCommand::Beep);
    Ok(SteelVal::Void)
});

/// A voice name, checked against the synthesiser's voices.
fn voice(name: &str, v: &SteelVal) -> Result<Voice, SteelErr> {
    let text = text_of(v).ok_or_else(|| {
        fail(
            name,
            format!("voice must be a name such as \"vibes\", found {v}"),
        )
    })?;
    match text.parse::<Voice>() {
        Ok(voice) => Ok(voice),
        Err(_) => {
            let names: Vec<&str> = voml_sound::Voice::ALL.iter().map(|v| v.name()).collect();
            Err(fail(
                name,
                format!("unknown voice `{text}` (voices: {})", names.join(", ")),
            ))
        }
    }
}

fn opt_num(name: &str, what: &str, v: &SteelVal) -> Result<Option<f64>, SteelErr> {
    match v {
        SteelVal::BoolV(false) => Ok(None),
        other => num(name, what, other).map(Some),
    }
}

fn channel(name: &str, v: &SteelVal) -> Result<i64, SteelErr> {
    match v {
        SteelVal::IntV(i) if (0..SOUND_CHANNELS as isize).contains(i) => Ok(*i as i64),
        other => Err(fail(
            name,
            format!(
                "a channel is an integer from 0 to {}, found {other}",
                SOUND_CHANNELS - 1
            ),
        )),
    }
}

fn volume(name: &str, v: &SteelVal) -> Result<f64, SteelErr> {
    let x = num(name, "volume", v)?;
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(fail(
            name,
            format!("volume must be between 0 and 1, found {x}"),
        ))
    }
}

fn hz(name: &str, v: &SteelVal) -> Result<f64, SteelErr> {
    let f = num(name, "frequency", v)?;
    if f.is_finite() && (1.0..=24_000.0).contains(&f) {
        Ok(f)
    } else {
        Err(fail(
            name,
            format!("frequency must be between 1 and 24000 Hz, found {f}"),
        ))
    }
}

native!(tone, "voml-tone", 6, |h, a| {
    let duration = num("tone", "duration", &a[1])?;
    if !(0.0..=600.0).contains(&duration) {
        return Err(fail(
            "tone",
            format!("duration must be between 0 and 600 seconds, found {duration}"),
        ));
    }
    let pan = num("tone", "pan", &a[3])?.clamp(-1.0, 1.0);
    let voice = voice("tone", &a[4])?;
    let channel = match &a[5] {
        SteelVal::BoolV(false) => None,
        c => Some(channel("tone", c)?),
    };
    let command = SoundCommand::Tone {
        hz: hz("tone", &a[0])?,
        duration,
        volume: volume("tone", &a[2])?,
        pan,
        voice,
        channel,
    };
    h.sound(command);
    Ok(SteelVal::Void)
});

native!(note_on, "voml-note-on", 3, |h, a| {
    let command = SoundCommand::NoteOn {
        channel: channel("note-on", &a[0])?,
        hz: hz("note-on", &a[1])?,
        volume: volume("note-on", &a[2])?,
    };
    h.sound(command);
    Ok(SteelVal::Void)
});

native!(note_off, "voml-note-off", 2, |h, a| {
    let command = SoundCommand::NoteOff {
        channel: channel("note-off", &a[0])?,
        hz: hz("note-off", &a[1])?,
    };
    h.sound(command);
    Ok(SteelVal::Void)
});

native!(note_volume, "voml-note-volume", 3, |h, a| {
    let pitch = match &a[1] {
        SteelVal::BoolV(false) => None,
        p => Some(hz("note-volume", p)?),
    };
    let command = SoundCommand::NoteVolume {
        channel: channel("note-volume", &a[0])?,
        hz: pitch,
        volume: volume("note-volume", &a[2])?,
    };
    h.sound(command);
    Ok(SteelVal::Void)
});

native!(sound_channel, "voml-sound-channel", 5, |h, a| {
    let voice = match &a[1] {
        SteelVal::BoolV(false) => None,
        v => Some(voice("channel", v)?),
    };
    let vol = match &a[3] {
        SteelVal::BoolV(false) => None,
        v => Some(volume("channel", v)?),
    };
    // `mute` is "yes"/"no" (or a boolean from a call); #f from an absent attribute keeps it.
    let mute = match &a[4] {
        SteelVal::BoolV(false) => None,
        SteelVal::BoolV(true) => Some(true),
        v => match text_of(v).as_deref() {
            Some("yes" | "true") => Some(true),
            Some("no" | "false") => Some(false),
            _ => {
                return Err(fail(
                    "channel",
                    format!("mute must be yes or no, found {v}"),
                ))
            }
        },
    };
    let command = SoundCommand::Channel {
        channel: channel("channel", &a[0])?,
        voice,
        pan: opt_num("channel", "pan", &a[2])?.map(|p| p.clamp(-1.0, 1.0)),
        volume: vol,
        mute,
    };
    h.sound(command);
    Ok(SteelVal::Void)
});

native!(sound_master, "voml-sound-master", 1, |h, a| {
    let command = SoundCommand::Master {
        volume: volume("master", &a[0])?,
    };
    h.sound(command);
    Ok(SteelVal::Void)
});

native!(sound_tempo, "voml-sound-tempo", 1, |h, a| {
    let factor = num("tempo", "factor", &a[0])?;
    if !(factor.is_finite() && (0.001..=1000.0).contains(&factor)) {
        return Err(fail(
            "tempo",
            format!("factor must be between 0.001 and 1000, found {factor}"),
        ));
    }
    h.sound(SoundCommand::Tempo { factor });
    Ok(SteelVal::Void)
});

native!(midi_to_hz, "midi->hz", 1, |args| {
    let n = num("midi->hz", "note", &args[0])?;
    Ok(SteelVal::NumV(440.0 * 2f64.powf((n - 69.0) / 12.0)))
});

native!(current_event, "current-event", 0, |h, _a| {
    Ok(h.current_event())
});

native!(event_ref, "event-ref", 1, |h, a| { h.event_ref(&a[0]) });

native!(pause, "voml-pause", 1, |h, a| {
    let reason = text_of(&a[0])
        .or_else(|| match &a[0] {
            SteelVal::BoolV(false) | SteelVal::Void => Some(String::new()),
            other => Some(other.to_string()),
        })
        .unwrap_or_default();
    if h.pause.is_none() {
        h.pause = Some(reason.chars().take(MAX_PAUSE_REASON).collect());
    }
    Ok(SteelVal::Void)
});

/// The longest pause reason kept, in characters.
const MAX_PAUSE_REASON: usize = 200;

native!(current_time, "current-time", 0, |h, _a| {
    Ok(SteelVal::NumV(h.now))
});

/// The native procedures [`register`] defines: (Scheme name, arity, procedure).
macro_rules! natives {
    ($($f:ident),* $(,)?) => {
        &[$(($f::NAME, $f::ARITY, $f as steel::rvals::FunctionSignature)),*]
    };
}

const NATIVES: &[(&str, usize, steel::rvals::FunctionSignature)] = natives![
    style,
    line,
    polyline,
    polygon,
    rectangle,
    circle,
    ellipse,
    arc,
    text,
    figure,
    view_info,
    scroll,
    resize,
    rescale,
    snapshot,
    pause,
    beep,
    tone,
    note_on,
    note_off,
    note_volume,
    sound_channel,
    sound_master,
    sound_tempo,
    midi_to_hz,
    current_event,
    event_ref,
    current_time,
];

/// The name and arity of every native procedure [`register`] defines (the primitive API and
/// the host-backed prelude procedures), for tests that hold them to the language table.
pub fn natives() -> impl Iterator<Item = (&'static str, usize)> {
    NATIVES.iter().map(|&(name, arity, _)| (name, arity))
}

/// Registers the primitive API and the host-backed prelude procedures.
pub fn register(engine: &mut Engine) {
    for &(name, _, f) in NATIVES {
        engine.register_value(name, SteelVal::FuncV(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `voml-style` hands back the list it made for the same parts, so that a style computed
    /// at every call is read once; other parts make another list, read as they say.
    #[test]
    fn equal_style_parts_give_the_same_list() {
        let backend: Box<dyn Backend> = Box::new(voml_llvo::LazyRaster::default());
        let mut host = Host::new(Llvo::new(backend));
        let s = |t: &str| SteelVal::StringV(t.into());
        let dash = SteelVal::ListV(vec![SteelVal::IntV(2), SteelVal::IntV(1)].into());
        let parts = |colour: &str, thick: SteelVal| {
            vec![
                colour_part(colour),
                thick,
                SteelVal::BoolV(true),
                s("margin"),
                dash.clone(),
                SteelVal::NumV(0.5),
                s("butt"),
            ]
        };
        fn colour_part(c: &str) -> SteelVal {
            SteelVal::StringV(c.into())
        }
        let red = host.style_list(&parts("red", SteelVal::IntV(2)));
        let blue = host.style_list(&parts("blue", SteelVal::IntV(2)));
        let thick = host.style_list(&parts("red", SteelVal::NumV(2.0)));
        let again = host.style_list(&parts("red", SteelVal::IntV(2)));
        let list = |v: &SteelVal| match v {
            SteelVal::ListV(l) => l.clone(),
            other => panic!("not a list: {other}"),
        };
        assert!(list(&red).ptr_eq(&list(&again)));
        assert!(!list(&red).ptr_eq(&list(&blue)));
        assert!(
            !list(&red).ptr_eq(&list(&thick)),
            "2 and 2.0 are told apart"
        );
        let style = host.style("line", &again, None).unwrap();
        assert_eq!(
            (style.thick, style.alpha, style.dash.clone()),
            (2.0, 0.5, vec![2.0, 1.0])
        );
        assert_eq!(style.color, host.colour("line", &s("red")).unwrap());
        assert_eq!(
            host.style("line", &blue, None).unwrap().color,
            host.colour("line", &s("blue")).unwrap()
        );
        // A NaN is never equal: a new list each time, read as it is.
        let nan = host.style_list(&parts("red", SteelVal::NumV(f64::NAN)));
        assert!(host.style("line", &nan, None).unwrap().thick.is_nan());
        // Only the latest few are kept.
        for k in 0..2 * STYLES_KEPT {
            host.style_list(&parts("red", SteelVal::IntV(10 + k as isize)));
        }
        assert_eq!(host.style_lists.len(), STYLES_KEPT);
        assert!(!list(&host.style_list(&parts("red", SteelVal::IntV(2)))).ptr_eq(&list(&red)));
    }

    /// A text without a font gets what the hints `helvetica`, `medium` read as, at the size
    /// given or 14.
    #[test]
    fn the_default_font_is_what_its_hints_say() {
        let none = SteelVal::BoolV(false);
        assert_eq!(
            font("draw-text", &none, &none).unwrap(),
            FontSpec::from_hints("helvetica", 14.0, "medium")
        );
        assert_eq!(
            font("draw-text", &none, &SteelVal::IntV(20)).unwrap(),
            FontSpec::from_hints("helvetica", 20.0, "medium")
        );
    }
}
