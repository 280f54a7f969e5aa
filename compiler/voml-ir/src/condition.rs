//! Native tests of condition parts: conditions the compiler recognised as simple tests of the
//! event (comparisons of its elements with literals, combined with `and`, `or` and `not`), and
//! what they decide for one event — exactly what the Scheme condition would, or
//! [`Decision::Unsure`] where the Scheme would raise an error or the test does not model the
//! answer.
//!
//! The comparisons follow the Scheme engine the runtime embeds (steel 0.8.3), not the Scheme
//! reports: `=` compares an integer with a real by converting the real to an integer and
//! back, the orderings convert the integer to a real, `eqv?` and `eq?` of two numbers compare
//! their values without converting, `equal?` of an integer and a real is false.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// A test of the event `(current-event)` returns: the list `(rtype etype field ...)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Test {
    /// `#t` or `#f`.
    Constant { value: bool },
    /// `(and t ...)`: the tests from the left, until one fails.
    And { tests: Vec<Test> },
    /// `(or t ...)`: the tests from the left, until one holds.
    Or { tests: Vec<Test> },
    /// `(not t)`.
    Not { test: Box<Test> },
    /// `(op left right)`.
    Compare {
        op: CompareOp,
        left: Operand,
        right: Operand,
    },
}

/// A comparison, as the Scheme procedure of that name compares two values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CompareOp {
    /// Numbers only: any other value is an error.
    #[serde(rename = "=")]
    NumEq,
    /// `<`, and the prelude's `lt`. Real numbers only, as `>`, `<=` and `>=`.
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "eqv?")]
    Eqv,
    #[serde(rename = "eq?")]
    Eq,
    #[serde(rename = "equal?")]
    Equal,
}

/// The procedures that read one fixed element of a list, with the element each reads: with
/// `(list-ref event N)`, the ways code reads one element of `(current-event)` that a
/// compiler or runtime may take over (native tests, elements read in place).
pub const ELEMENT_READERS: [(&str, u32); 4] =
    [("car", 0), ("cadr", 1), ("caddr", 2), ("cadddr", 3)];

/// The element the procedure `name` reads, if it is one of [`ELEMENT_READERS`].
pub fn element_reader(name: &str) -> Option<u32> {
    ELEMENT_READERS
        .iter()
        .find(|(reader, _)| *reader == name)
        .map(|&(_, position)| position)
}

/// Whether `name` is one of the names code reads the event's elements with: the
/// [`ELEMENT_READERS`], `list-ref` and `current-event`.
pub fn names_the_event(name: &str) -> bool {
    element_reader(name).is_some() || name == "list-ref" || name == "current-event"
}

/// A value a comparison reads: an element of the event or a literal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operand {
    /// The element at this position of `(current-event)`: 0 the record type, 1 the event
    /// type, 2 the timestamp, 3 the processor... An event too short to have it is an error.
    Field(u32),
    Int(i64),
    /// A finite real.
    Real(f64),
    String(String),
}

/// What a native [`Test`] says of one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Holds,
    Fails,
    /// The Scheme condition would raise an error, or its value depends on something the
    /// test does not model: evaluate it in Scheme.
    Unsure,
}

/// An element of the event as the Scheme code sees it: the value `(current-event)` holds at
/// that position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Element<'a> {
    Int(i64),
    Real(f64),
    Str(&'a str),
}

impl Decision {
    fn of(holds: bool) -> Decision {
        if holds {
            Decision::Holds
        } else {
            Decision::Fails
        }
    }
}

impl Test {
    /// What the condition decides for the event whose element at position `p` is
    /// `element(p)` (`None` past its end).
    pub fn decide<'e>(&self, element: &impl Fn(u32) -> Option<Element<'e>>) -> Decision {
        match self {
            Test::Constant { value } => Decision::of(*value),
            // Scheme evaluates from the left and stops at the first operand that decides:
            // an error after it never happens, an error before it always does.
            Test::And { tests } => {
                for t in tests {
                    match t.decide(element) {
                        Decision::Holds => {}
                        other => return other,
                    }
                }
                Decision::Holds
            }
            Test::Or { tests } => {
                for t in tests {
                    match t.decide(element) {
                        Decision::Fails => {}
                        other => return other,
                    }
                }
                Decision::Fails
            }
            Test::Not { test } => match test.decide(element) {
                Decision::Holds => Decision::Fails,
                Decision::Fails => Decision::Holds,
                Decision::Unsure => Decision::Unsure,
            },
            Test::Compare { op, left, right } => {
                // Reading past the end of the event is an error in Scheme.
                match (value_of(left, element), value_of(right, element)) {
                    (Some(l), Some(r)) => compare(*op, l, r),
                    _ => Decision::Unsure,
                }
            }
        }
    }

    /// Every operand position the test reads, for checks.
    pub fn fields(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.visit(&mut |t| {
            if let Test::Compare { left, right, .. } = t {
                for o in [left, right] {
                    if let Operand::Field(p) = o {
                        out.push(*p);
                    }
                }
            }
        });
        out
    }

    /// How deeply tests nest in this one (1 for a test without subtests).
    pub fn depth(&self) -> usize {
        match self {
            Test::And { tests } | Test::Or { tests } => {
                1 + tests.iter().map(Test::depth).max().unwrap_or(0)
            }
            Test::Not { test } => 1 + test.depth(),
            Test::Constant { .. } | Test::Compare { .. } => 1,
        }
    }

    /// Calls `f` on this test and every test inside it.
    pub fn visit(&self, f: &mut impl FnMut(&Test)) {
        f(self);
        match self {
            Test::And { tests } | Test::Or { tests } => {
                for t in tests {
                    t.visit(f);
                }
            }
            Test::Not { test } => test.visit(f),
            Test::Constant { .. } | Test::Compare { .. } => {}
        }
    }
}

fn value_of<'x, 'e: 'x>(
    o: &'x Operand,
    element: &impl Fn(u32) -> Option<Element<'e>>,
) -> Option<Element<'x>> {
    match o {
        Operand::Field(p) => element(*p),
        Operand::Int(i) => Some(Element::Int(*i)),
        Operand::Real(r) => Some(Element::Real(*r)),
        Operand::String(s) => Some(Element::Str(s)),
    }
}

/// `(op l r)` as steel computes it.
fn compare(op: CompareOp, l: Element<'_>, r: Element<'_>) -> Decision {
    use Element::{Int, Real, Str};
    match op {
        // steel's `number_equality`: a real equals an integer when converting it to an
        // integer and back gives the same real, and that integer is the integer.
        CompareOp::NumEq => match (l, r) {
            (Int(a), Int(b)) => Decision::of(a == b),
            (Real(a), Real(b)) => Decision::of(a == b),
            (Int(i), Real(x)) | (Real(x), Int(i)) => {
                let converted = x as i64;
                Decision::of(x == converted as f64 && i == converted)
            }
            // `=` of anything but numbers is an error.
            _ => Decision::Unsure,
        },
        // steel's orderings check that both are real numbers, then compare an integer with
        // a real as two reals; NaN is unordered, so every ordering of it is false.
        CompareOp::Lt | CompareOp::Gt | CompareOp::Le | CompareOp::Ge => {
            let ordering = match (l, r) {
                (Int(a), Int(b)) => a.partial_cmp(&b),
                (Real(a), Real(b)) => a.partial_cmp(&b),
                (Int(a), Real(b)) => (a as f64).partial_cmp(&b),
                (Real(a), Int(b)) => a.partial_cmp(&(b as f64)),
                _ => return Decision::Unsure,
            };
            Decision::of(match op {
                CompareOp::Lt => ordering == Some(Ordering::Less),
                CompareOp::Gt => ordering == Some(Ordering::Greater),
                CompareOp::Le => matches!(ordering, Some(Ordering::Less | Ordering::Equal)),
                _ => matches!(ordering, Some(Ordering::Greater | Ordering::Equal)),
            })
        }
        // steel's `eqv?` and `eq?` are the same: numbers of one kind by value, other values
        // by identity. Whether two strings are one object depends on where they came from
        // (the engine shares equal literals): Scheme decides.
        CompareOp::Eqv | CompareOp::Eq => match (l, r) {
            (Int(a), Int(b)) => Decision::of(a == b),
            (Real(a), Real(b)) => Decision::of(a == b),
            (Str(_), Str(_)) => Decision::Unsure,
            _ => Decision::Fails,
        },
        CompareOp::Equal => match (l, r) {
            (Int(a), Int(b)) => Decision::of(a == b),
            (Real(a), Real(b)) => Decision::of(a == b),
            (Str(a), Str(b)) => Decision::of(a == b),
            _ => Decision::Fails,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(op: CompareOp, left: Operand, right: Operand) -> Test {
        Test::Compare { op, left, right }
    }

    /// An event `(-3 1 2.0 "a")`.
    fn event(p: u32) -> Option<Element<'static>> {
        [
            Element::Int(-3),
            Element::Int(1),
            Element::Real(2.0),
            Element::Str("a"),
        ]
        .get(p as usize)
        .copied()
    }

    #[test]
    fn comparisons_follow_steel() {
        use CompareOp::*;
        use Decision::*;
        use Operand::{Field, Int, Real, String as Str};
        let cases = [
            (cmp(NumEq, Field(0), Int(-3)), Holds),
            (cmp(NumEq, Field(2), Int(2)), Holds),
            (
                cmp(NumEq, Int(9007199254740993), Real(9007199254740992.0)),
                Fails,
            ),
            (
                cmp(Lt, Int(9007199254740993), Real(9007199254740992.0)),
                Fails,
            ),
            (cmp(Le, Field(2), Int(2)), Holds),
            (cmp(Gt, Field(1), Real(0.5)), Holds),
            // Numbers of different kinds are never `eqv?` nor `equal?`.
            (cmp(Eqv, Field(2), Int(2)), Fails),
            (cmp(Equal, Field(2), Real(2.0)), Holds),
            (cmp(Equal, Field(3), Str("a".into())), Holds),
            (cmp(Equal, Field(3), Int(1)), Fails),
            (cmp(Eq, Field(3), Int(1)), Fails),
            // Errors in Scheme, and strings whose identity decides.
            (cmp(NumEq, Field(3), Int(1)), Unsure),
            (cmp(Lt, Field(3), Int(1)), Unsure),
            (cmp(NumEq, Field(4), Int(1)), Unsure),
            (cmp(Eq, Field(3), Str("a".into())), Unsure),
        ];
        for (test, expected) in cases {
            assert_eq!(test.decide(&event), expected, "{test:?}");
        }
    }

    #[test]
    fn and_or_stop_where_scheme_stops() {
        let error = cmp(CompareOp::NumEq, Operand::Field(9), Operand::Int(1));
        let yes = Test::Constant { value: true };
        let no = Test::Constant { value: false };
        let and = |tests: Vec<Test>| Test::And { tests };
        let or = |tests: Vec<Test>| Test::Or { tests };
        assert_eq!(
            and(vec![no.clone(), error.clone()]).decide(&event),
            Decision::Fails
        );
        assert_eq!(
            and(vec![yes.clone(), error.clone()]).decide(&event),
            Decision::Unsure
        );
        assert_eq!(
            or(vec![yes.clone(), error.clone()]).decide(&event),
            Decision::Holds
        );
        assert_eq!(
            or(vec![error.clone(), yes.clone()]).decide(&event),
            Decision::Unsure
        );
        assert_eq!(and(vec![]).decide(&event), Decision::Holds);
        assert_eq!(or(vec![]).decide(&event), Decision::Fails);
        let not = Test::Not {
            test: Box::new(error),
        };
        assert_eq!(not.decide(&event), Decision::Unsure);
    }

    #[test]
    fn tests_read_and_write_as_json() {
        let test = Test::And {
            tests: vec![
                cmp(CompareOp::NumEq, Operand::Field(0), Operand::Int(-3)),
                Test::Not {
                    test: Box::new(cmp(
                        CompareOp::Equal,
                        Operand::Field(4),
                        Operand::String("x".into()),
                    )),
                },
            ],
        };
        let json = serde_json::to_string(&test).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"and","tests":[{"kind":"compare","op":"=","left":{"field":0},"right":{"int":-3}},{"kind":"not","test":{"kind":"compare","op":"equal?","left":{"field":4},"right":{"string":"x"}}}]}"#
        );
        assert_eq!(serde_json::from_str::<Test>(&json).unwrap(), test);
    }
}
