//! Parsing of one trace line into a [`Record`], by hand from the bytes so that numbers never
//! allocate.

use crate::error::{excerpt, LineError, TraceErrorKind};
use crate::interest::{can_skip, Reading};
use crate::record::{Record, Value};

/// Separators between tokens. `\r` is one so that CRLF files need no special case; `\n` is one
/// so that lines handed over by other readers may keep their terminator.
#[inline]
fn is_space(b: u8) -> bool {
    SPACE[b as usize]
}

/// [`is_space`] as a table: one load per byte where the reader spends most of its time.
static SPACE: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 6 {
        table[[b' ', b'\t', b'\r', b'\n', 0x0b, 0x0c][i] as usize] = true;
        i += 1;
    }
    table
};

/// Whether the line carries no record: only whitespace, or a first non-blank character of `#`
/// or `%` (comments). Such lines are skipped by the reader and should be skipped by any other
/// caller of [`parse_line`].
pub fn is_comment_or_blank(line: &str) -> bool {
    is_comment_or_blank_bytes(line.as_bytes())
}

/// Byte version, so that comments need not be valid UTF-8.
pub(crate) fn is_comment_or_blank_bytes(line: &[u8]) -> bool {
    match line.iter().find(|&&b| !is_space(b)) {
        None => true,
        Some(&b) => b == b'#' || b == b'%',
    }
}

/// Parses one line (with or without its terminator) into a record numbered `line_no`.
///
/// On failure returns the 1-based byte column of the offending token and a message saying what
/// was expected. Comment and blank lines are failures here (there is no record in them); test
/// them first with [`is_comment_or_blank`].
pub fn parse_line(line: &str, line_no: u64) -> Result<Record, (usize, String)> {
    parse_record(line.as_bytes(), line_no, &mut Vec::new(), None).map_err(|e| (e.column, e.message))
}

/// The reader's entry point: a new record with exactly sized fields. The line is valid UTF-8
/// (the reader checks a buffer of lines at once, and a line only where the buffer is not
/// ASCII), so that the parser itself works on bytes.
pub(crate) fn parse_record(
    line: &[u8],
    line_no: u64,
    scratch: &mut Vec<Value>,
    reading: Option<Reading<'_>>,
) -> Result<Record, LineError> {
    let (rtype, etype) = parse_fields(line, scratch, reading)?;
    // Moving out (rather than `mem::take`) sizes the record exactly and keeps the scratch
    // capacity for the next line.
    let mut fields = Vec::with_capacity(scratch.len());
    fields.append(scratch);
    Ok(Record {
        line: line_no,
        rtype,
        etype,
        fields,
    })
}

/// Parses `line` into `record`, reusing its field storage: a reader that is handed its
/// records back allocates nothing per record.
pub(crate) fn parse_record_into(
    line: &[u8],
    line_no: u64,
    record: &mut Record,
    reading: Option<Reading<'_>>,
) -> Result<(), LineError> {
    let (rtype, etype) = parse_fields(line, &mut record.fields, reading)?;
    record.line = line_no;
    record.rtype = rtype;
    record.etype = etype;
    Ok(())
}

/// The two type codes of `line`, and its fields (from the timestamp on) in `fields`; only as
/// many as `interest` wants of its type (the timestamp at least) where the rest cannot be bad.
fn parse_fields(
    b: &[u8],
    fields: &mut Vec<Value>,
    reading: Option<Reading<'_>>,
) -> Result<(i64, i64), LineError> {
    fields.clear();
    let mut pos = 0;
    let rtype = type_code(b, &mut pos, 0)?;
    let etype = type_code(b, &mut pos, 1)?;
    // Fields beyond these are left unread where nothing in the rest can be bad.
    let read = reading.map_or(usize::MAX, |r| r.interest.fields(rtype, etype));
    loop {
        while pos < b.len() && is_space(b[pos]) {
            pos += 1;
        }
        if pos == b.len() {
            break;
        }
        let start = pos;
        let value = if b[pos] == b'"' {
            // A string: what lies between its quotes (`next_token` finds the closing one).
            let Some(tok) = next_token(b, &mut pos)? else {
                break;
            };
            Value::Str(text(&tok.text[1..tok.text.len() - 1]).into_owned())
        } else {
            // Integers (most fields) are read in the same pass that finds the token's end.
            let (end, scanned) = scan_word(b, pos);
            pos = end;
            match scanned {
                Scanned::Int(i) => Value::Int(i),
                Scanned::Real(r) => Value::Real(r),
                // Only the general reader can overflow to an infinity.
                Scanned::Other => match number_or_word(&b[start..end]) {
                    Value::Real(r) if !r.is_finite() => {
                        return Err(LineError {
                            column: start + 1,
                            kind: TraceErrorKind::NonFinite,
                            message: format!(
                                "`{}` is too large for a number (it would be infinite)",
                                shorten(&b[start..end])
                            ),
                        })
                    }
                    value => value,
                },
            }
        };
        if fields.is_empty() && !matches!(value, Value::Int(_) | Value::Real(_)) {
            return Err(LineError {
                column: start + 1,
                kind: TraceErrorKind::Timestamp,
                message: format!(
                    "expected a number timestamp, found `{}`",
                    shorten(&b[start..pos])
                ),
            });
        }
        fields.push(value);
        if fields.len() >= read && can_skip(&b[pos..], reading.is_some_and(|r| r.plain)) {
            break;
        }
    }
    if fields.is_empty() {
        return Err(missing_fields(b, 2));
    }
    Ok((rtype, etype))
}

struct Token<'a> {
    /// Byte offset of the first character (the opening quote for strings).
    start: usize,
    /// The token as written, quotes included.
    text: &'a [u8],
}

/// A quoted string runs from `"` to the next `"`, whatever lies between, because PICL writers
/// print strings with a bare `"%s"`: there are no escapes to undo. A closing quote ends the
/// token even if no space follows.
fn next_token<'a>(b: &'a [u8], pos: &mut usize) -> Result<Option<Token<'a>>, LineError> {
    let mut i = *pos;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i == b.len() {
        *pos = i;
        return Ok(None);
    }
    let start = i;
    if b[i] == b'"' {
        match b[i + 1..].iter().position(|&c| c == b'"') {
            Some(n) => i += n + 2,
            None => return Err(LineError {
                column: start + 1,
                kind: TraceErrorKind::UnterminatedString,
                message:
                    "unterminated quoted string: expected a closing `\"` before the end of the line"
                        .to_owned(),
            }),
        }
    } else {
        while i < b.len() && !is_space(b[i]) {
            i += 1;
        }
    }
    *pos = i;
    // Token bounds are ASCII bytes (space, quote) or the ends of the line, hence char
    // boundaries: the token is valid UTF-8 when the line is.
    Ok(Some(Token {
        start,
        text: &b[start..i],
    }))
}

#[inline(always)]
fn type_code(b: &[u8], pos: &mut usize, index: usize) -> Result<i64, LineError> {
    let mut i = *pos;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i < b.len() && b[i] != b'"' {
        if let (end, Scanned::Int(code)) = scan_word(b, i) {
            *pos = end;
            return Ok(code);
        }
    }
    let tok = next_token(b, pos)?.ok_or_else(|| missing_fields(b, index))?;
    parse_int(tok.text).ok_or_else(|| {
        let (kind, what) = if index == 0 {
            (TraceErrorKind::RecordType, "record type")
        } else {
            (TraceErrorKind::EventType, "event type")
        };
        LineError {
            column: tok.start + 1,
            kind,
            message: format!("expected an integer {what}, found `{}`", shorten(tok.text)),
        }
    })
}

fn missing_fields(line: &[u8], found: usize) -> LineError {
    LineError {
        column: line
            .iter()
            .rposition(|&b| !is_space(b))
            .map_or(0, |i| i + 1)
            + 1,
        kind: TraceErrorKind::MissingFields,
        message: format!(
            "expected at least 3 fields (record type, event type, timestamp), found {found}"
        ),
    }
}

/// The text of part of a line (valid UTF-8, see [`parse_record`]), for words, strings and
/// messages: the paths that are not numbers.
fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// Keeps messages readable when a line holds one enormous token.
fn shorten(token: &[u8]) -> String {
    const LIMIT: usize = 40;
    let token = text(token);
    let mut s = excerpt(&token, LIMIT);
    if s.len() < token.len() {
        s.push('…');
    }
    s
}

/// An unquoted token that is not an integer: a real number, or a word.
fn number_or_word(token: &[u8]) -> Value {
    let token = text(token);
    match parse_real(&token) {
        Some(r) => Value::Real(r),
        None => Value::Str(token.into_owned()),
    }
}

/// What [`scan_word`] read of a token on the way to its end.
enum Scanned {
    /// An integer, as [`parse_int`] reads one.
    Int(i64),
    /// A real of the form `[+-]digits.digits`, as [`parse_real`] reads it on its exact fast
    /// path.
    Real(f64),
    /// Anything else: left to [`number_or_word`].
    Other,
}

/// The unquoted token starting at `i` (not a space): where it ends, and its value when it is
/// an integer or a plain decimal, found in the same pass.
///
/// Digits accumulate without overflow checks: up to 19 of them cannot overflow a `u64`, and a
/// longer run (rare: leading zeros, huge numbers) is read again by the checked readers.
#[inline(always)]
fn scan_word(b: &[u8], mut i: usize) -> (usize, Scanned) {
    let start = i;
    let neg = b[i] == b'-';
    if neg || b[i] == b'+' {
        i += 1;
    }
    let digits = i;
    let mut v: u64 = 0;
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    let int_digits = i - digits;
    let mut decimals = None;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let from = i;
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        decimals = Some(i - from);
    }
    if i < b.len() && !is_space(b[i]) {
        while i < b.len() && !is_space(b[i]) {
            i += 1;
        }
        return (i, Scanned::Other);
    }
    let total = int_digits + decimals.unwrap_or(0);
    match decimals {
        None if total > 19 => (
            i,
            parse_int(&b[start..i]).map_or(Scanned::Other, Scanned::Int),
        ),
        None if int_digits > 0 => {
            let int = if neg {
                0i64.checked_sub_unsigned(v)
            } else {
                i64::try_from(v).ok()
            };
            (i, int.map_or(Scanned::Other, Scanned::Int))
        }
        // Below 2^53 the mantissa has at most 16 significant digits, and is exact.
        Some(n) if total > 0 && total <= 19 && n < POW10.len() && v < (1 << 53) => {
            let r = v as f64 / POW10[n];
            (i, Scanned::Real(if neg { -r } else { r }))
        }
        _ => (i, Scanned::Other),
    }
}

/// `[+-]digits` that fits in an `i64`.
#[inline]
pub(crate) fn parse_int(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, b),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    if neg {
        0i64.checked_sub_unsigned(v)
    } else {
        i64::try_from(v).ok()
    }
}

/// Exact powers of ten representable in an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `[+-](digits[.digits*] | .digits)([eE][+-]digits)`, correctly rounded.
///
/// The syntax is checked here because `str::parse` also accepts `inf` and `nan`, which trace
/// writers never print as numbers. Trace timestamps (`0.000057`) have few significant digits,
/// so they take the exact fast path: an integer mantissa below 2^53 scaled by an exact power of
/// ten is correctly rounded by one IEEE operation (Clinger). Anything else goes to the standard
/// library's parser.
pub(crate) fn parse_real(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = match b.first()? {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mantissa: u64 = 0;
    let mut significant = 0u32;
    let mut digits = 0usize;
    let mut exp: i64 = 0;
    let mut take_digit = |d: u8, mantissa: &mut u64| {
        if *mantissa == 0 && d == 0 {
            return;
        }
        significant += 1;
        if significant <= 19 {
            *mantissa = *mantissa * 10 + u64::from(d);
        }
    };
    while i < b.len() && b[i].is_ascii_digit() {
        take_digit(b[i] - b'0', &mut mantissa);
        digits += 1;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            take_digit(b[i] - b'0', &mut mantissa);
            digits += 1;
            exp -= 1;
            i += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] | 0x20) == b'e' {
        i += 1;
        let exp_neg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            e = (e * 10 + i64::from(b[i] - b'0')).min(1 << 20);
            i += 1;
        }
        if i == start {
            return None;
        }
        exp += if exp_neg { -e } else { e };
    }
    if i != b.len() {
        return None;
    }
    if significant <= 19 && mantissa < (1 << 53) && (-22..=22).contains(&exp) {
        let m = mantissa as f64;
        let v = if exp >= 0 {
            m * POW10[exp as usize]
        } else {
            m / POW10[(-exp) as usize]
        };
        return Some(if neg { -v } else { v });
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(line: &str) -> Vec<Value> {
        parse_line(line, 1).unwrap().fields
    }

    #[test]
    fn whole_record_after_type_codes() {
        let r = parse_line("-3 -27 0.000068 0 0 3 2 400 100 7", 9).unwrap();
        assert_eq!((r.line, r.rtype, r.etype), (9, -3, -27));
        assert_eq!(r.fields.len(), 8);
        assert_eq!(r.timestamp(), Some(0.000068));
        assert_eq!(r.processor(), Some(0));
        assert_eq!(r.get(9), Some(&Value::Int(7)));
    }

    #[test]
    fn numbers_beyond_f64_are_bad_lines_at_their_column() {
        for (line, column) in [
            ("-3 1 1e309 0 0", 6),
            ("-3 1 0.5 0 -1e400", 12),
            ("-3 1 0.5 1234567890e300 0", 10),
        ] {
            let e = parse_record(line.as_bytes(), 1, &mut Vec::new(), None).unwrap_err();
            assert_eq!(e.kind, TraceErrorKind::NonFinite, "{line}");
            assert_eq!(e.column, column, "{line}: {}", e.message);
            assert!(e.message.contains("infinite"), "{}", e.message);
        }
        // Large but finite numbers are values.
        assert_eq!(fields("-3 1 1e300 0")[0], Value::Real(1e300));
    }

    #[test]
    fn the_timestamp_must_be_a_number() {
        for (line, column) in [
            ("-3 1 inf 0", 6),
            ("-3 1 nan 0", 6),
            ("-3 1 \"0.5\" 0", 6),
            ("-3 1 abc", 6),
        ] {
            let e = parse_record(line.as_bytes(), 1, &mut Vec::new(), None).unwrap_err();
            assert_eq!(e.kind, TraceErrorKind::Timestamp, "{line}");
            assert_eq!(e.column, column, "{line}");
        }
        // Other fields may be words (`inf` is a string there, as before).
        assert_eq!(fields("-3 1 0.5 inf")[1], Value::Str("inf".into()));
    }

    #[test]
    fn statistics_descriptor_is_a_string() {
        let f = fields("-101 -1 0.115758 0 0 2 \"%d%lf\" -22 0.000060 -27 0.000330 ");
        assert_eq!(f[4], Value::Str("%d%lf".into()));
        assert_eq!(f[5], Value::Int(-22));
        assert_eq!(f[6], Value::Real(0.00006));
        assert_eq!(f.len(), 9);
    }

    #[test]
    fn number_classification() {
        let f = fields("1 2 -0.000001 1e-3 -0.000000 +5 -0 .5 1. 1E+2 99999999999999999999 inf nan 0x10 - . e5 1e 1.5e- abc 1_0");
        assert_eq!(f[0], Value::Real(-0.000001));
        assert_eq!(f[1], Value::Real(0.001));
        assert!(matches!(f[2], Value::Real(z) if z == 0.0 && z.is_sign_negative()));
        assert_eq!(f[3], Value::Int(5));
        assert_eq!(f[4], Value::Int(0));
        assert_eq!(f[5], Value::Real(0.5));
        assert_eq!(f[6], Value::Real(1.0));
        assert_eq!(f[7], Value::Real(100.0));
        assert_eq!(f[8], Value::Real(1e20));
        // More digits than a u64 can always hold, but an i64's value: still an integer.
        let long = fields("-3 1 0.5 0000000000000000000000042 -00000000000000000000009223372036854775808 00000000000000000000009223372036854775808");
        assert_eq!(
            long[1..],
            [
                Value::Int(42),
                Value::Int(i64::MIN),
                Value::Real(9223372036854775808.0)
            ]
        );
        for (i, s) in [
            "inf", "nan", "0x10", "-", ".", "e5", "1e", "1.5e-", "abc", "1_0",
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(f[9 + i], Value::Str((*s).into()));
        }
    }

    #[test]
    fn integer_limits() {
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int(b"9223372036854775808"), None);
        assert_eq!(parse_int(b"-9223372036854775809"), None);
        assert_eq!(parse_int(b"000000000000000000000042"), Some(42));
        assert_eq!(parse_int(b"+"), None);
        assert_eq!(parse_int(b""), None);
    }

    #[test]
    fn reals_match_the_standard_parser() {
        let samples = [
            "0.000057",
            "11.582554",
            "-0.000001",
            "123456789.123456789",
            "0.1",
            "0.30000000000000004",
            "9007199254740993",
            "9007199254740993.0",
            "1e22",
            "1e23",
            "1.7976931348623157e308",
            "2e308",
            "4.9e-324",
            "1e-400",
            "00000000000000000000000000.5",
            "0.00000000000000000000000000000000001",
            "123456789012345678901234567890e-10",
            "1e1048577",
            "-0",
            "5.",
            ".5",
            "-.5",
            "+7.25",
            "1234567890123456789",
            "123456789012345.6789",
            "0.0000000000000000001",
            "0.0000000000000000000001",
            "9007199254740992.5",
        ];
        for s in samples {
            let want: f64 = s.parse().unwrap();
            assert_eq!(parse_real(s).map(f64::to_bits), Some(want.to_bits()), "{s}");
        }
        // Numbers of every length and point position, as trace writers print them.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let text = random_decimal(&mut seed);
            let want: f64 = text.parse().unwrap();
            assert_eq!(
                parse_real(&text).map(f64::to_bits),
                Some(want.to_bits()),
                "{text}"
            );
        }
        for bad in [".", "-", "+", "1.2.3", "1e", "--1", "1 ", "inf", "nan", ""] {
            assert_eq!(parse_real(bad), None, "{bad}");
        }
    }

    /// The next of a sequence of unsigned decimals of 1 to 24 digits, with or without a
    /// point anywhere among them (xorshift from `seed`).
    fn random_decimal(seed: &mut u64) -> String {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let s = *seed;
        let len = 1 + (s % 24) as usize;
        let mut text: String = (0..len)
            .map(|k| char::from(b'0' + ((s >> (k % 60)) % 10) as u8))
            .collect();
        let point = (s >> 40) as usize % (len + 2);
        if point <= len {
            text.insert(point, '.');
        }
        text
    }

    /// The fields a line is parsed into read integers and plain decimals in one pass: they
    /// are what the standard library reads, bit for bit, signs and long mantissas included.
    #[test]
    fn fields_read_in_one_pass_are_the_standard_numbers() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut text = random_decimal(&mut seed);
            match (seed >> 50) % 3 {
                0 => text.insert(0, '-'),
                1 => text.insert(0, '+'),
                _ => {}
            }
            let f = fields(&format!("-3 1 {text} {text}"));
            for value in &f {
                match (value, text.contains('.')) {
                    (Value::Real(r), true) => {
                        let want: f64 = text.parse().unwrap();
                        assert_eq!(r.to_bits(), want.to_bits(), "{text}");
                    }
                    (Value::Int(i), false) => assert_eq!(Ok(*i), text.parse::<i64>(), "{text}"),
                    // Integers too large for an i64 are reals.
                    (Value::Real(r), false) => {
                        assert!(text.parse::<i64>().is_err(), "{text}");
                        assert_eq!(
                            r.to_bits(),
                            text.parse::<f64>().unwrap().to_bits(),
                            "{text}"
                        );
                    }
                    (other, _) => panic!("{text}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn quoted_strings() {
        let f = fields("-5 7 0.1 0 0 1 \"two words\" \"\" \"a\"b x\"y");
        assert_eq!(f[4], Value::Str("two words".into()));
        assert_eq!(f[5], Value::Str(String::new()));
        assert_eq!(f[6], Value::Str("a".into()));
        assert_eq!(f[7], Value::Str("b".into()));
        assert_eq!(f[8], Value::Str("x\"y".into()));
    }

    #[test]
    fn separators_and_terminators() {
        let r = parse_line("\t-3  1\t0.5 \r\n", 1).unwrap();
        assert_eq!((r.rtype, r.etype), (-3, 1));
        assert_eq!(r.fields, vec![Value::Real(0.5)]);
    }

    #[test]
    fn error_record_type() {
        assert_eq!(
            parse_line("abc -901 0.1", 1),
            Err((1, "expected an integer record type, found `abc`".into()))
        );
        assert_eq!(
            parse_line("  -3.0 -901 0.1", 1),
            Err((3, "expected an integer record type, found `-3.0`".into()))
        );
        assert_eq!(
            parse_line("\"-3\" -901 0.1", 1),
            Err((1, "expected an integer record type, found `\"-3\"`".into()))
        );
        let long = format!("{} 1 2", "x".repeat(100));
        let (col, msg) = parse_line(&long, 1).unwrap_err();
        assert_eq!(col, 1);
        assert_eq!(
            msg,
            format!(
                "expected an integer record type, found `{}…`",
                "x".repeat(40)
            )
        );
    }

    #[test]
    fn error_event_type() {
        assert_eq!(
            parse_line("-3 tracekey 0.1", 1),
            Err((4, "expected an integer event type, found `tracekey`".into()))
        );
    }

    #[test]
    fn error_missing_fields() {
        let msg = |n: usize| {
            format!("expected at least 3 fields (record type, event type, timestamp), found {n}")
        };
        assert_eq!(parse_line("-3 -901", 1), Err((8, msg(2))));
        assert_eq!(parse_line("-3 -901   \r\n", 1), Err((8, msg(2))));
        assert_eq!(parse_line(" -3", 1), Err((4, msg(1))));
        assert_eq!(parse_line("", 1), Err((1, msg(0))));
        assert_eq!(parse_line("   ", 1), Err((1, msg(0))));
    }

    #[test]
    fn error_unterminated_string() {
        let msg = "unterminated quoted string: expected a closing `\"` before the end of the line";
        assert_eq!(
            parse_line("-102 -1 0.1 0 0 5 \"%d%d -12 1", 1),
            Err((19, msg.into()))
        );
        assert_eq!(parse_line("\"-3 1 2", 1), Err((1, msg.into())));
    }

    #[test]
    fn comments_and_blanks() {
        for s in ["", "  \t", "\r\n", "# note", "  % matlab style", "#"] {
            assert!(is_comment_or_blank(s), "{s:?}");
        }
        for s in ["-3 1 0", " x", "1#"] {
            assert!(!is_comment_or_blank(s), "{s:?}");
        }
    }

    #[test]
    fn display_round_trips() {
        for line in [
            "-101 -1 0.115758 0 0 4 \"%d%lf\" -22 0.000060 -27 1e-3",
            "-3 3141 -0.000000 3 0 7 100.5 2 3 hello \"two words\" 99999999999999999999",
        ] {
            let r = parse_line(line, 1).unwrap();
            assert_eq!(parse_line(&r.to_string(), 1).unwrap(), r, "{line}");
        }
    }
}
