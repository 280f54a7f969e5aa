//! The prelude the paper's components assume: the micro-database helpers (`id-get`, `id-put`,
//! `id-rem`, native for speed), `alist-for-each`, `nth` (native), the comparison words `gt`/`lt`/`ge`/
//! `le` (since `<` must be escaped in XML), `getfontname`, `spread!` (time per interval of a
//! range, for the time-per-interval components), and `current-event`.
//!
//! The comparison words, and steel's own `max` and `min` (Scheme procedures of its standard
//! library, which fold a lambda over a rest list: 0.6 µs a call), are native here: what the
//! components of a visual object call for every event should not cost more than the event.

use steel::rerrs::ErrorKind;
use steel::rvals::SteelVal;
use steel::steel_vm::engine::Engine;
use steel::SteelErr;

/// Scheme definitions loaded before the visual object's program (in their own compilation
/// unit, so utility code may redefine any of them).
pub const SCHEME: &str = r#"
;; (alist-for-each proc alist): calls (proc key value) for every entry, in order.
(define (alist-for-each proc alist)
  (if (null? alist)
      #t
      (let ((entry (car alist)))
        (proc (car entry) (cdr entry))
        (alist-for-each proc (cdr alist)))))

;; (getfontname table family size weight): a font for <text font="...">. The table name is
;; kept for compatibility with the paper; the family ("courier", "helvetica", "times") and
;; weight ("bold", "medium") pick one of the bundled fonts.
(define (getfontname table family size weight)
  (list 'font family (exact->inexact size) weight))

;; (processor->hz p nprocs): Trace2au's logarithmic map of processor numbers to pitch,
;; from 100 Hz (processor 0) to 3500 Hz (the last one).
(define (processor->hz p nprocs)
  (* 100.0 (expt 35.0 (/ (exact->inexact p) (max 1 (- nprocs 1))))))

;; The primitives as plain procedures, with options as a property list:
;;   (draw-line view x0 y0 x1 y1 'color "red" 'thick 2 'adapt #t)
;; `view` is a view name (a string) or number. Options: color thick adapt clip dash alpha,
;; and fill (shapes), font size halign valign fcolor (text).
(define (voml-option opts key default)
  (cond ((null? opts) default)
        ((null? (cdr opts)) (error "options come in pairs: 'name value; this one has no value:" (car opts)))
        ((equal? (car opts) key) (car (cdr opts)))
        (else (voml-option (cdr (cdr opts)) key default))))
(define (voml-style-of opts)
  (voml-style (voml-option opts 'color "black") (voml-option opts 'thick 1)
              (voml-option opts 'adapt #f) (voml-option opts 'clip "area")
              (voml-option opts 'dash #f) (voml-option opts 'alpha 1)
              (voml-option opts 'cap "butt")))
(define (draw-line view x0 y0 x1 y1 . opts) (voml-line view x0 y0 x1 y1 (voml-style-of opts)))
(define (draw-polyline view points . opts) (voml-polyline view points (voml-style-of opts)))
(define (draw-polygon view points . opts)
  (voml-polygon view points (voml-option opts 'fill #f) (voml-style-of opts)))
(define (draw-rectangle view x0 y0 x1 y1 . opts)
  (voml-rectangle view x0 y0 x1 y1 (voml-option opts 'fill #f) (voml-style-of opts)))
(define (draw-circle view cx cy r . opts)
  (voml-circle view cx cy r (voml-option opts 'fill #f) (voml-style-of opts)))
(define (draw-ellipse view cx cy rx ry . opts)
  (voml-ellipse view cx cy rx ry (voml-option opts 'fill #f) (voml-style-of opts)))
(define (draw-arc view cx cy r start extent . opts)
  (voml-arc view cx cy r start extent (voml-style-of opts)))
(define (draw-text view x y content . opts)
  (voml-text view x y content (voml-option opts 'font #f)
             (voml-option opts 'fcolor (voml-option opts 'color "black"))
             (voml-option opts 'size #f) (voml-option opts 'halign "LEFT")
             (voml-option opts 'valign "BASELINE") (voml-style-of opts)))
(define (draw-figure view file wx wy ww wh . opts)
  (voml-figure view file 0 0 0 0 wx wy ww wh (voml-style-of opts)))
(define (pause-replay reason) (voml-pause reason))
(define (play-tone hz . opts)
  (voml-tone hz (voml-option opts 'duration 0.25) (voml-option opts 'volume 0.8)
             (voml-option opts 'pan 0) (voml-option opts 'voice "sine")
             (voml-option opts 'channel #f)))

;; (view-info view): the same as the <view-info view="..."/> primitive.
(define (view-info view) (voml-view-info view))
"#;

/// The names of the native procedures, for documentation and tests.
pub const NATIVE: &[&str] = &[
    "id-get",
    "id-put",
    "id-rem",
    "id-count",
    "number->fixed",
    "meter->hz",
    "quantize-hz",
    "nth",
    "gt",
    "lt",
    "ge",
    "le",
    "max",
    "min",
    "spread!",
];

/// Registers the native helpers.
pub fn register(engine: &mut Engine) {
    engine.register_value("id-get", SteelVal::FuncV(id_get));
    engine.register_value("id-put", SteelVal::FuncV(id_put));
    engine.register_value("id-rem", SteelVal::FuncV(id_rem));
    engine.register_value("id-count", SteelVal::FuncV(id_count));
    engine.register_value("number->fixed", SteelVal::FuncV(number_fixed));
    engine.register_value("meter->hz", SteelVal::FuncV(meter_hz));
    engine.register_value("quantize-hz", SteelVal::FuncV(quantize_hz));
    engine.register_value("nth", SteelVal::FuncV(nth));
    engine.register_value("gt", SteelVal::FuncV(gt));
    engine.register_value("lt", SteelVal::FuncV(lt));
    engine.register_value("ge", SteelVal::FuncV(ge));
    engine.register_value("le", SteelVal::FuncV(le));
    // A call of a comparison word with two arguments answers what steel's comparison
    // answers, errors included: steel compiles it to its instruction for the comparison.
    for (word, builtin) in COMPARISONS {
        engine.alias_builtin(word, builtin, Some(2));
    }
    engine.register_value("max", SteelVal::FuncV(max));
    engine.register_value("min", SteelVal::FuncV(min));
    engine.register_value("spread!", SteelVal::FuncV(spread));
}

/// `a`, if it is a real number, as steel's `>` and `<` check their arguments.
fn real(a: &SteelVal) -> Result<&SteelVal, SteelErr> {
    if steel::primitives::numbers::realp(a) {
        Ok(a)
    } else {
        Err(error(format!("expected real numbers, found: {a}")))
    }
}

/// `(gt a b)` and the other comparison words: `(> a b)`, `(< a b)`, `(>= a b)`, `(<= a b)`,
/// with steel's comparison of real numbers (an integer and a real compare as reals; NaN is
/// neither above nor below anything).
fn compare(
    name: &str,
    args: &[SteelVal],
    holds: fn(std::cmp::Ordering) -> bool,
) -> Result<SteelVal, SteelErr> {
    arity(name, args, 2)?;
    let order = real(&args[0])?.partial_cmp(real(&args[1])?);
    Ok(SteelVal::BoolV(order.is_some_and(holds)))
}

/// The comparison words and steel's comparisons they are with two arguments.
const COMPARISONS: [(&str, &str); 4] = [("gt", ">"), ("lt", "<"), ("ge", ">="), ("le", "<=")];

fn gt(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    compare("gt", args, |o| o.is_gt())
}

fn lt(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    compare("lt", args, |o| o.is_lt())
}

fn ge(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    compare("ge", args, |o| o.is_ge())
}

fn le(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    compare("le", args, |o| o.is_le())
}

/// `(max x y ...)` and `(min x y ...)` as steel's standard library defines them: from the
/// left, a value replaces the one kept when it is strictly greater (smaller), so a tie keeps
/// the earlier value, as it is (`(max 1 2.0)` is `2.0`, `(max 2 2.0)` is `2`); `(max x)` is
/// `x`, whatever it is.
fn extreme(
    name: &str,
    args: &[SteelVal],
    replaces: fn(std::cmp::Ordering) -> bool,
) -> Result<SteelVal, SteelErr> {
    let Some((first, rest)) = args.split_first() else {
        return Err(SteelErr::new(
            ErrorKind::ArityMismatch,
            format!("{name}: expected at least 1 argument, got 0"),
        ));
    };
    let mut kept = first;
    for value in rest {
        let order = real(value)?.partial_cmp(real(kept)?);
        if order.is_some_and(replaces) {
            kept = value;
        }
    }
    Ok(kept.clone())
}

/// `(spread! row t0 width from to)`: adds to each element of the vector `row` the part of the
/// time range [from, to] that falls in its interval of time, interval i being
/// [t0 + i·width, t0 + (i+1)·width) and the last one reaching on to `to`: what the
/// time-per-interval components (idle-per-interval, thread-states) add for each interval of
/// time a record closes. Step by step as the Scheme loop it replaces, in the same
/// floating-point operations, so the sums are the same to the last bit:
///
/// ```scheme
/// (let add ((from from))
///   (if (lt from to)
///       (let* ((guess (min last (exact (floor (/ (- from t0) width)))))
///              ;; At an interval's edge the division may round down.
///              (i (if (and (lt guess last) (le (+ t0 (* (+ guess 1) width)) from)) (+ guess 1) guess))
///              (edge (+ t0 (* (+ i 1) width)))
///              (end (if (= i last) to (min to edge))))
///         (if (gt end from)
///             (begin (vector-set! row i (+ (vector-ref row i) (- end from))) (add end))))))
/// ```
///
/// with `last` the index of the last element. Times are real numbers (integers are taken as
/// reals, and the sums are reals); for a range that is not empty, `from` before `t0` is an
/// error, as are a width that is not positive and a `row` element that is not a number.
fn spread(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("spread!", args, 5)?;
    let SteelVal::MutableVector(row) = &args[0] else {
        return Err(error(format!(
            "spread!: expected a vector of numbers, found {}",
            args[0]
        )));
    };
    let real = |name: &str, v: &SteelVal| match v {
        SteelVal::IntV(i) => Ok(*i as f64),
        SteelVal::NumV(x) => Ok(*x),
        other => Err(error(format!(
            "spread!: expected a real number for {name}, found {other}"
        ))),
    };
    let (t0, width) = (real("t0", &args[1])?, real("width", &args[2])?);
    let (mut from, to) = (real("from", &args[3])?, real("to", &args[4])?);
    // An empty range adds nothing, whatever the intervals are (a width still 0, say).
    if from >= to {
        return Ok(SteelVal::Void);
    }
    if !(width > 0.0 && width.is_finite() && t0.is_finite() && to.is_finite()) {
        return Err(error(format!(
            "spread!: expected finite times and a positive width, found t0 {t0}, width {width}, to {to}"
        )));
    }
    if from < t0 || !from.is_finite() {
        return Err(error(format!(
            "spread!: the range starts at {from}, before the first interval ({t0})"
        )));
    }
    let len = row.borrow(|v| v.len());
    let Some(last) = len.checked_sub(1) else {
        return Err(error("spread!: the vector has no intervals".to_string()));
    };
    while from < to {
        // (exact (floor x)) of a finite x >= 0, kept below `last` (a value past i64 only
        // makes it `last`).
        let floor = ((from - t0) / width).floor();
        let guess = if floor >= last as f64 {
            last
        } else {
            floor as usize
        };
        let i = if guess < last && t0 + (guess + 1) as f64 * width <= from {
            guess + 1
        } else {
            guess
        };
        let edge = t0 + (i + 1) as f64 * width;
        let end = if i == last { to } else { to.min(edge) };
        if end <= from {
            break;
        }
        let sum = match row.borrow(|v| v[i].clone()) {
            SteelVal::IntV(n) => n as f64 + (end - from),
            SteelVal::NumV(x) => x + (end - from),
            other => {
                return Err(error(format!(
                    "spread!: element {i} of the vector is {other}, not a number"
                )))
            }
        };
        steel::primitives::vectors::mut_vec_set(row, i, SteelVal::NumV(sum))?;
        from = end;
    }
    Ok(SteelVal::Void)
}

fn max(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    extreme("max", args, |o| o.is_gt())
}

fn min(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    extreme("min", args, |o| o.is_lt())
}

fn error(message: String) -> SteelErr {
    SteelErr::new(ErrorKind::TypeMismatch, message)
}

use crate::host::arity;

/// The entries of an association list (`'()` or `#f` count as empty).
fn entries<'a>(
    name: &str,
    alist: &'a SteelVal,
) -> Result<impl Iterator<Item = &'a SteelVal> + 'a, SteelErr> {
    let list = match alist {
        SteelVal::ListV(l) => Some(l),
        SteelVal::BoolV(false) => None,
        other => {
            return Err(error(format!(
                "{name}: expected an association list, found {other}"
            )))
        }
    };
    Ok(list.into_iter().flat_map(|l| l.iter()))
}

/// How many entries an association list has (for sizing the one made from it).
fn entry_count(alist: &SteelVal) -> usize {
    match alist {
        SteelVal::ListV(l) => l.len(),
        _ => 0,
    }
}

/// The key of one entry, a pair `(key . value)` or a list `(key value ...)`, borrowed.
fn key_of(entry: &SteelVal) -> Option<&SteelVal> {
    match entry {
        SteelVal::Pair(p) => Some(p.car_ref()),
        SteelVal::ListV(l) => l.first(),
        _ => None,
    }
}

/// The value of an entry whose key matched: the cdr of a pair, or of a list (the cdr of a
/// one-element list is the empty list: `(cons k '())` binds k to it).
fn value_of(entry: &SteelVal) -> SteelVal {
    match entry {
        SteelVal::Pair(p) => p.cdr(),
        SteelVal::ListV(l) => SteelVal::ListV(
            l.cdr()
                .unwrap_or_else(|| Vec::<SteelVal>::new().into_iter().collect()),
        ),
        _ => SteelVal::BoolV(false),
    }
}

/// `eqv?` on the keys a micro-database uses (numbers, strings, symbols, characters, booleans).
fn same_key(a: &SteelVal, b: &SteelVal) -> bool {
    match (a, b) {
        (SteelVal::IntV(x), SteelVal::IntV(y)) => x == y,
        (SteelVal::NumV(x), SteelVal::NumV(y)) => x == y,
        (SteelVal::IntV(x), SteelVal::NumV(y)) | (SteelVal::NumV(y), SteelVal::IntV(x)) => {
            *x as f64 == *y
        }
        _ => a == b,
    }
}

/// `(id-get alist key)`: the value stored under `key`, or `#f`. As in the paper, the value is
/// what `id-put` stored (Figures 11 and 13 take `(cdr (id-get ...))` of a stored pair).
pub(crate) fn id_get(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("id-get", args, 2)?;
    entry_value(&args[0], &args[1])
}

/// `(id-get alist key)` of its two arguments where they lie (a native part's operands).
pub(crate) fn entry_value(alist: &SteelVal, key: &SteelVal) -> Result<SteelVal, SteelErr> {
    for entry in entries("id-get", alist)? {
        if key_of(entry).is_some_and(|k| same_key(k, key)) {
            return Ok(value_of(entry));
        }
    }
    Ok(SteelVal::BoolV(false))
}

/// `(id-put alist key value)`: a new list with `key` bound to `value` (replacing it in place
/// if present, else appended).
pub(crate) fn id_put(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("id-put", args, 3)?;
    let entry = steel::primitives::lists::cons(&mut args[1].clone(), &mut args[2].clone())?;
    let at = entry_index(&args[0], &args[1])?;
    let mut out: Vec<SteelVal> = Vec::with_capacity(entry_count(&args[0]) + 1);
    out.extend(entries("id-put", &args[0])?.cloned());
    match at.and_then(|k| out.get_mut(k)) {
        Some(replaced) => *replaced = entry,
        None => out.push(entry),
    }
    Ok(SteelVal::ListV(out.into()))
}

/// Where the entry `id-put` replaces for `key` is in `alist` (`None` when it would add one),
/// with `id-put`'s error for what is not an association list.
pub(crate) fn entry_index(alist: &SteelVal, key: &SteelVal) -> Result<Option<usize>, SteelErr> {
    Ok(entries("id-put", alist)?.position(|e| key_of(e).is_some_and(|k| same_key(k, key))))
}

/// `(id-rem alist key)`: a new list without `key`.
fn id_rem(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("id-rem", args, 2)?;
    let kept: Vec<SteelVal> = entries("id-rem", &args[0])?
        .filter(|e| !key_of(e).is_some_and(|k| same_key(k, &args[1])))
        .cloned()
        .collect();
    Ok(SteelVal::ListV(kept.into_iter().collect()))
}

/// `(id-count alist)`: the number of entries.
fn id_count(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("id-count", args, 1)?;
    let n = entries("id-count", &args[0])?.count();
    Ok(SteelVal::IntV(n as isize))
}

/// `(nth n list)`: the n-th element, counting from 0 (the paper's argument order): steel's
/// `(list-ref list n)`, its errors included, without a Scheme procedure around it (a colour
/// picked per primitive drawn).
pub(crate) fn nth(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("nth", args, 2)?;
    match (&args[0], &args[1]) {
        (SteelVal::IntV(n), _) if *n < 0 => Err(SteelErr::new(
            ErrorKind::Generic,
            format!("list-ref expects a positive integer, found: {n}"),
        )),
        (SteelVal::IntV(n), SteelVal::ListV(list)) => {
            list.get(*n as usize).cloned().ok_or_else(|| {
                SteelErr::new(
                    ErrorKind::Generic,
                    format!(
                        "out of bounds index in list-ref - list length: {}, index: {n}",
                        list.len()
                    ),
                )
            })
        }
        (SteelVal::IntV(_), other) => Err(error(format!("nth: expected a list, found: {other}"))),
        (other, _) => Err(error(format!(
            "nth: expected an integer index, found: {other}"
        ))),
    }
}

/// `(number->fixed x digits)`: `x` as a string with `digits` decimals (labels for pictures).
fn number_fixed(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("number->fixed", args, 2)?;
    let x = crate::host::number(&args[0]).ok_or_else(|| {
        error(format!(
            "number->fixed: expected a number, found {}",
            args[0]
        ))
    })?;
    let digits = match &args[1] {
        SteelVal::IntV(d) if (0..=17).contains(d) => *d as usize,
        other => {
            return Err(error(format!(
                "number->fixed: digits must be an integer from 0 to 17, found {other}"
            )))
        }
    };
    Ok(SteelVal::StringV(format!("{x:.digits$}").into()))
}

fn number_arg(name: &str, what: &str, v: &SteelVal) -> Result<f64, SteelErr> {
    crate::host::number(v)
        .ok_or_else(|| error(format!("{name}: {what} must be a number, found {v}")))
}

/// `(meter->hz percent low-hz high-hz)`: a percentage (0–100) as a pitch between two
/// frequencies, on a logarithmic scale (the seeds' utilisation meter).
fn meter_hz(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("meter->hz", args, 3)?;
    let percent = number_arg("meter->hz", "the percentage", &args[0])?;
    let low = number_arg("meter->hz", "the low frequency", &args[1])?;
    let high = number_arg("meter->hz", "the high frequency", &args[2])?;
    if !(low > 0.0 && high > 0.0) {
        return Err(error(format!(
            "meter->hz: frequencies must be positive, found {low} and {high}"
        )));
    }
    Ok(SteelVal::NumV(voml_sound::meter_pitch(percent, low, high)))
}

/// `(quantize-hz hz scale tonic-hz)`: the nearest pitch of a scale ("chromatic", "major",
/// "minor-pentatonic", "whole-tone") built on a tonic.
fn quantize_hz(args: &[SteelVal]) -> Result<SteelVal, SteelErr> {
    arity("quantize-hz", args, 3)?;
    let hz = number_arg("quantize-hz", "the frequency", &args[0])?;
    let scale_name = match &args[1] {
        SteelVal::StringV(s) | SteelVal::SymbolV(s) => s.as_str().to_string(),
        other => {
            return Err(error(format!(
                "quantize-hz: the scale must be a name, found {other}"
            )))
        }
    };
    let scale: voml_sound::Scale = scale_name.parse().map_err(|_| {
        error(format!(
            "quantize-hz: unknown scale `{scale_name}` (chromatic, major, minor-pentatonic, whole-tone)"
        ))
    })?;
    let tonic = number_arg("quantize-hz", "the tonic", &args[2])?;
    if !(hz > 0.0 && tonic > 0.0) {
        return Err(error("quantize-hz: frequencies must be positive".into()));
    }
    Ok(SteelVal::NumV(voml_sound::quantize_to_scale(
        hz, scale, tonic,
    )))
}

#[cfg(test)]
mod tests {
    /// The native comparison words, `max` and `min` give what the Scheme definitions they
    /// replace give (steel's `(define (max x . rest) (fold ...))`, `(define (gt a b) (> a b))`),
    /// value and exactness alike, and fail where those fail.
    #[test]
    fn native_comparisons_and_extremes_are_the_scheme_ones() {
        let mut sandbox = crate::test_sandbox();
        let engine = &mut sandbox.engine;
        engine
            .run(
                r#"
(define (fold-left f acc xs) (if (null? xs) acc (fold-left f (f (car xs) acc) (cdr xs))))
(define (scheme-max x . rest) (fold-left (lambda (y z) (if (> y z) y z)) x rest))
(define (scheme-min x . rest) (fold-left (lambda (y z) (if (< y z) y z)) x rest))
(define (scheme-gt a b) (> a b))
(define (scheme-lt a b) (< a b))
(define (scheme-ge a b) (>= a b))
(define (scheme-le a b) (<= a b))
"#,
            )
            .expect("the reference definitions compile");
        let values = [
            "0",
            "1",
            "-1",
            "2",
            "2.0",
            "1.5",
            "-0.0",
            "0.0",
            "1/3",
            "(/ 0.0 0.0)",
            "(/ 1.0 0.0)",
            "(/ -1.0 0.0)",
            "100000000000000000000",
            "9007199254740993",
            "\"a\"",
            "'x",
            "#f",
        ];
        let show = |engine: &mut steel::steel_vm::engine::Engine, code: &str| match engine
            .run(format!("(let ((v {code})) (list v (exact? v)))"))
        {
            Ok(v) => v.last().map(|v| v.to_string()).unwrap_or_default(),
            Err(_) => "error".to_string(),
        };
        let mut problems = Vec::new();
        let mut checked = 0;
        for a in values {
            for (native, scheme) in [("max", "scheme-max"), ("min", "scheme-min")] {
                let (n, s) = (
                    show(engine, &format!("({native} {a})")),
                    show(engine, &format!("({scheme} {a})")),
                );
                if n != s {
                    problems.push(format!("({native} {a}): {n}, Scheme {s}"));
                }
            }
            for b in values {
                for word in ["max", "min", "gt", "lt", "ge", "le"] {
                    let native = format!("({word} {a} {b})");
                    let scheme = format!("(scheme-{word} {a} {b})");
                    let (n, s) = (show(engine, &native), show(engine, &scheme));
                    checked += 1;
                    if n != s {
                        problems.push(format!("{native}: {n}, Scheme {s}"));
                    }
                }
                for c in ["0", "3", "1.5"] {
                    for word in ["max", "min"] {
                        let native = format!("({word} {a} {b} {c})");
                        let scheme = format!("(scheme-{word} {a} {b} {c})");
                        let (n, s) = (show(engine, &native), show(engine, &scheme));
                        if n != s {
                            problems.push(format!("{native}: {n}, Scheme {s}"));
                        }
                    }
                }
            }
        }
        assert!(checked > 1000);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    /// A comparison word called with two arguments (steel's instruction for the comparison)
    /// answers what the word's procedure answers (called through `apply`, which the
    /// instructions never see), error messages included; with other counts it stays a call of
    /// the procedure (an arity error).
    #[test]
    fn comparison_words_called_answer_as_their_procedures() {
        let mut sandbox = crate::test_sandbox();
        let engine = &mut sandbox.engine;
        let values = [
            "0",
            "2",
            "2.0",
            "-1.5",
            "1/3",
            "(/ 0.0 0.0)",
            "\"a\"",
            "'x",
            "#f",
        ];
        let mut answer = |code: String| match engine.run(code) {
            Ok(v) => v.last().map(|v| v.to_string()).unwrap_or_default(),
            Err(e) => format!("error: {e}"),
        };
        let mut checked = 0;
        for (word, _) in super::COMPARISONS {
            for args in values
                .iter()
                .flat_map(|a| values.iter().map(move |b| format!("{a} {b}")))
                .chain(["1".to_string(), "1 2 3".to_string()])
            {
                let procedure = answer(format!("(apply {word} (list {args}))"));
                let tail = answer(format!("(define (t) ({word} {args})) (t)"));
                let inner = answer(format!("(define (i) (let ((v ({word} {args}))) v)) (i)"));
                assert_eq!(tail, procedure, "({word} {args}) in tail position");
                assert_eq!(inner, procedure, "({word} {args})");
                checked += 1;
            }
        }
        assert_eq!(checked, 4 * (81 + 2));
    }

    /// Two fixnums or reals are compared at once (steel's `ord_internal`, patched); the
    /// answers are those of the general comparison: integers against reals through the
    /// integer's nearest double, NaN unordered, other values an error.
    #[test]
    fn two_numbers_compare_as_the_general_comparison_does() {
        let mut sandbox = crate::test_sandbox();
        let engine = &mut sandbox.engine;
        let cases = [
            ("(< 1 2)", "#true"),
            ("(< 2 1)", "#false"),
            ("(> -3 -4)", "#true"),
            ("(<= 2 2.0)", "#true"),
            ("(>= 2.0 2)", "#true"),
            ("(> 2.5 2)", "#true"),
            ("(< 2 2.5)", "#true"),
            ("(< 2.5 2)", "#false"),
            ("(< -0.0 0)", "#false"),
            ("(<= -0.0 0)", "#true"),
            ("(< (/ 0.0 0.0) 1)", "#false"),
            ("(>= 1 (/ 0.0 0.0))", "#false"),
            ("(>= (/ 0.0 0.0) (/ 0.0 0.0))", "#false"),
            // 2^53 + 1 as a double is 2^53.
            ("(< 9007199254740992.0 9007199254740993)", "#false"),
            ("(<= 9007199254740993 9007199254740992.0)", "#true"),
            ("(gt 3 2)", "#true"),
            ("(le 3 2)", "#false"),
            ("(< 1/3 0.5)", "#true"),
        ];
        for (code, want) in cases {
            let got = engine
                .run(format!("(define (t) {code}) (t)"))
                .map(|v| v.last().map(|v| v.to_string()).unwrap_or_default())
                .unwrap_or_else(|e| format!("error: {e}"));
            assert_eq!(got, want, "{code}");
        }
        for code in ["(< 1 \"a\")", "(> \"a\" 1.5)", "(<= 'x 2)"] {
            let got = engine.run(format!("(define (t) {code}) (t)"));
            let err = got.expect_err(code).to_string();
            assert!(err.contains("expected real numbers"), "{code}: {err}");
        }
    }

    /// `spread!` adds what the Scheme loop it replaces adds, to the last bit: over random
    /// ranges, interval widths and origins (integers and reals), in vectors of a few lengths.
    #[test]
    fn spread_adds_what_the_scheme_loop_adds() {
        let mut sandbox = crate::test_sandbox();
        let engine = &mut sandbox.engine;
        engine
            .run(
                r#"
(define (scheme-spread! row t0 width from t)
  (let ((last (- (vector-length row) 1)))
    (let add ((from from))
      (if (lt from t)
          (let* ((guess (min last (exact (floor (/ (- from t0) width)))))
                 (i (if (and (lt guess last) (le (+ t0 (* (+ guess 1) width)) from)) (+ guess 1) guess))
                 (edge (+ t0 (* (+ i 1) width)))
                 (to (if (= i last) t (min t edge))))
            (if (gt to from)
                (begin (vector-set! row i (+ (vector-ref row i) (- to from))) (add to))))))))
(define (both t0 width ranges n)
  (let ((a (make-vector n 0.0)) (b (make-vector n 0.0)))
    (let each ((rs ranges))
      (if (pair? rs)
          (begin
            (spread! a t0 width (max (car (car rs)) t0) (cdr (car rs)))
            (scheme-spread! b t0 width (max (car (car rs)) t0) (cdr (car rs)))
            (each (cdr rs)))))
    (list (equal? a b) a b)))
"#,
            )
            .expect("the reference compiles");
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut cases = 0;
        for case in 0..400 {
            let n = [1, 2, 7, 100][case % 4];
            let t0 = if case % 3 == 0 {
                format!("{}", next() % 50)
            } else {
                format!("{:.6}", (next() % 50_000) as f64 / 1000.0)
            };
            let width = format!("{:.6}", 0.001 + (next() % 5_000) as f64 / 1000.0);
            let ranges: Vec<String> = (0..20)
                .map(|_| {
                    let from = (next() % 600_000) as f64 / 1000.0;
                    let to = from + (next() % 40_000) as f64 / 1000.0;
                    if next() % 4 == 0 {
                        format!("({} . {})", from as i64, to as i64)
                    } else {
                        format!("({from:.6} . {to:.6})")
                    }
                })
                .collect();
            let result = engine
                .run(format!("(both {t0} {width} '({}) {n})", ranges.join(" ")))
                .unwrap_or_else(|e| panic!("case {case}: {e}"));
            let text = result.last().unwrap().to_string();
            assert!(
                text.starts_with("(#true"),
                "case {case} (t0 {t0}, width {width}): {text}"
            );
            cases += 1;
        }
        assert_eq!(cases, 400);
        // An empty range adds nothing, even before the intervals have a width.
        let v = engine
            .run("(let ((v (make-vector 3 7.5))) (spread! v 1.0 0 2.0 2.0) v)")
            .unwrap();
        assert_eq!(v.last().unwrap().to_string(), "#(7.5 7.5 7.5)");
        for bad in [
            "(spread! (make-vector 3 0.0) 5.0 1.0 2.0 3.0)",
            "(spread! (make-vector 3 0.0) 0.0 0 2.0 3.0)",
            "(spread! (make-vector 0 0.0) 0.0 1.0 2.0 3.0)",
            "(spread! (make-vector 3 'x) 0.0 1.0 2.0 3.0)",
            "(spread! '(1 2) 0.0 1.0 2.0 3.0)",
        ] {
            assert!(engine.run(bad).is_err(), "{bad} is an error");
        }
    }

    /// The micro-database helpers: `#f` and `'()` are empty, a key is replaced where it is
    /// and appended when new, removing keeps the order, anything else is refused.
    #[test]
    fn association_lists_keep_their_order() {
        let mut sandbox = crate::test_sandbox();
        let engine = &mut sandbox.engine;
        let show = |engine: &mut steel::steel_vm::engine::Engine, code: &str| {
            engine
                .run(code.to_string())
                .map(|v| v.last().map(|v| v.to_string()).unwrap_or_default())
                .map_err(|e| e.to_string())
        };
        for (code, want) in [
            ("(id-put #f 1 'a)", "((1 . a))"),
            ("(id-put '() 1 'a)", "((1 . a))"),
            (
                "(id-put (id-put (id-put #f 1 'a) 2 'b) 1 'c)",
                "((1 . c) (2 . b))",
            ),
            ("(id-put (id-put #f 1 'a) 2.0 'b)", "((1 . a) (2.0 . b))"),
            ("(id-get (id-put (id-put #f 1 'a) 2 'b) 2)", "b"),
            ("(id-get (id-put #f 1 'a) 1.0)", "a"),
            ("(id-get #f 1)", "#false"),
            (
                "(id-rem (id-put (id-put (id-put #f 1 'a) 2 'b) 3 'c) 2)",
                "((1 . a) (3 . c))",
            ),
            ("(id-count (id-put (id-put #f 1 'a) 2 'b))", "2"),
        ] {
            assert_eq!(show(engine, code).as_deref(), Ok(want), "{code}");
        }
        for bad in ["(id-put 5 1 'a)", "(id-get \"x\" 1)", "(id-rem (vector) 1)"] {
            assert!(show(engine, bad).is_err(), "{bad} is refused");
        }
    }

    /// `nth` answers what steel's `list-ref` answers with its arguments the other way round,
    /// its errors included; what `list-ref` refuses, `nth` refuses.
    #[test]
    fn nth_is_list_ref_with_the_papers_argument_order() {
        let mut sandbox = crate::test_sandbox();
        let engine = &mut sandbox.engine;
        let mut show = |code: &str| {
            engine
                .run(code.to_string())
                .map(|v| v.last().map(|v| v.to_string()).unwrap_or_default())
                .map_err(|e| e.to_string())
        };
        let list = "'(\"red\" 2 (3 4) #(5))";
        for n in ["0", "1", "2", "3", "4", "-1", "100"] {
            let native = show(&format!("(nth {n} {list})"));
            let scheme = show(&format!("(list-ref {list} {n})"));
            match (&native, &scheme) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "(nth {n} ...)"),
                (Err(a), Err(b)) => {
                    let message = |e: &str| e.lines().next().unwrap_or_default().to_string();
                    assert_eq!(
                        message(a),
                        message(b),
                        "(nth {n} ...) fails as list-ref does"
                    )
                }
                _ => panic!("(nth {n} ...) gave {native:?}, list-ref {scheme:?}"),
            }
        }
        assert_eq!(show("(nth 1 (list 'a 'b))").as_deref(), Ok("b"));
        for bad in [
            "(nth 1.0 '(1 2))",
            "(nth 0 (vector 1))",
            "(nth 0 \"ab\")",
            "(nth 0)",
        ] {
            assert!(show(bad).is_err(), "{bad} is refused");
        }
    }
}
