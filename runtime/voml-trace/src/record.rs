//! Trace records and their field values.

use std::fmt;

/// One field of a record.
///
/// Bare tokens made only of an optional sign and decimal digits that fit in an `i64` are
/// [`Value::Int`]; other decimal numbers (`0.5`, `-0.000001`, `1e-3`, `.5`, `1.`, and integers
/// too large for `i64`) are [`Value::Real`]; everything else, including quoted strings (kept
/// without their quotes) and words such as `inf` or `nan`, is [`Value::Str`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Real(f64),
    Str(String),
}

impl Value {
    /// The value as a number: integers convert, strings do not.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Int(i) => Some(i as f64),
            Value::Real(r) => Some(r),
            Value::Str(_) => None,
        }
    }

    /// The value as an integer. Reals are not truncated: a real where an integer is
    /// expected is a sign of a misdeclared field, which the caller should see.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Str(v)
    }
}

/// Writes the value so that reading it back gives the same variant: reals always carry a
/// `.` or an exponent, strings are always quoted. Strings containing `"` and non-finite reals
/// have no such spelling in the format.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(r) => {
                let s = r.to_string();
                if s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                    write!(f, "{s}.0")
                } else {
                    f.write_str(&s)
                }
            }
            Value::Str(s) => write!(f, "\"{s}\""),
        }
    }
}

/// One trace record: `rtype etype timestamp processor process ndata [descriptor data...]`.
///
/// `fields` holds the whole record after the two type codes, in order and uninterpreted, so
/// the absolute position `p` of the record (the numbering used by VOML's `index` attribute) is
/// `fields[p - 2]`. Records that do not follow the layout (profile records of PICL extensions,
/// `ndata` that disagrees with the data) lose nothing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// 1-based line of the record in its source.
    pub line: u64,
    pub rtype: i64,
    pub etype: i64,
    pub fields: Vec<Value>,
}

impl Record {
    pub const TIMESTAMP: usize = 2;
    pub const PROCESSOR: usize = 3;
    pub const PROCESS: usize = 4;
    pub const NDATA: usize = 5;

    /// The field at absolute position `position`. Positions 0 and 1 (the type codes) are not
    /// stored as values and give `None`; read `rtype` and `etype` instead.
    pub fn get(&self, position: usize) -> Option<&Value> {
        position.checked_sub(2).and_then(|i| self.fields.get(i))
    }

    pub fn timestamp(&self) -> Option<f64> {
        self.get(Self::TIMESTAMP).and_then(Value::as_f64)
    }

    pub fn processor(&self) -> Option<i64> {
        self.get(Self::PROCESSOR).and_then(Value::as_i64)
    }

    pub fn process(&self) -> Option<i64> {
        self.get(Self::PROCESS).and_then(Value::as_i64)
    }

    /// The declared data count. Real traces do not always honour it (statistics records count
    /// pairs, some records have a descriptor after `ndata` 0), so it is informative only.
    pub fn ndata(&self) -> Option<i64> {
        self.get(Self::NDATA).and_then(Value::as_i64)
    }
}

/// Writes the record as a trace line (without newline) that parses back to an equal record.
impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.rtype, self.etype)?;
        for v in &self.fields {
            write!(f, " {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(fields: Vec<Value>) -> Record {
        Record {
            line: 1,
            rtype: -3,
            etype: -27,
            fields,
        }
    }

    #[test]
    fn positions_are_absolute() {
        let r = rec(vec![
            0.5.into(),
            3.into(),
            0.into(),
            3.into(),
            2.into(),
            400.into(),
        ]);
        assert_eq!(r.get(0), None);
        assert_eq!(r.get(1), None);
        assert_eq!(r.get(2), Some(&Value::Real(0.5)));
        assert_eq!(r.get(7), Some(&Value::Int(400)));
        assert_eq!(r.get(8), None);
        assert_eq!(r.timestamp(), Some(0.5));
        assert_eq!(r.processor(), Some(3));
        assert_eq!(r.process(), Some(0));
        assert_eq!(r.ndata(), Some(3));
    }

    #[test]
    fn accessors_do_not_coerce_across_kinds() {
        let r = rec(vec![7.into(), 1.5.into(), "x".into()]);
        assert_eq!(r.timestamp(), Some(7.0));
        assert_eq!(r.processor(), None);
        assert_eq!(r.process(), None);
        assert_eq!(Value::from("x").as_str(), Some("x"));
        assert_eq!(Value::Int(1).as_str(), None);
        assert_eq!(Value::from("1").as_f64(), None);
        assert_eq!(rec(vec![]).timestamp(), None);
    }

    #[test]
    fn display_keeps_variants_apart() {
        let r = rec(vec![
            1.0.into(),
            (-0.0).into(),
            2.into(),
            "%d%lf".into(),
            1e-7.into(),
            1e300.into(),
        ]);
        let s = r.to_string();
        assert!(s.starts_with("-3 -27 1.0 -0.0 2 \"%d%lf\" 0.0000001 1000"));
        assert!(s.ends_with(".0"));
    }
}
