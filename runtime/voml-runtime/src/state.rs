//! The state of a visual object as JSON: the values of its info and control structures, for
//! `voml run --dump-state` and, later, an inspector. Numbers, strings and booleans are
//! themselves; symbols and characters are strings; lists and vectors are arrays; a pair
//! `(key . value)` is a two-element array, so an association list is an array of
//! `[key, value]` pairs, and so is a hash table. Numbers JSON cannot hold (infinities, NaN,
//! integers beyond 64 bits) are strings in Scheme's notation. Deep or self-containing
//! values are cut with a `"…"` marker.

use serde_json::{json, Map, Value};
use steel::rvals::SteelVal;

/// How deep a value is followed before it is cut.
const MAX_DEPTH: usize = 64;
/// How many elements are written in all before the rest of a value is cut.
const MAX_ELEMENTS: usize = 1_000_000;

/// A Scheme value as JSON.
pub fn to_json(value: &SteelVal) -> Value {
    let mut budget = MAX_ELEMENTS;
    convert(value, 0, &mut budget)
}

fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(SteelVal::NumV(x).to_string()))
}

fn convert(value: &SteelVal, depth: usize, budget: &mut usize) -> Value {
    if depth > MAX_DEPTH || *budget == 0 {
        return Value::String("…".into());
    }
    *budget -= 1;
    let all = |items: &mut dyn Iterator<Item = SteelVal>, budget: &mut usize| -> Value {
        Value::Array(items.map(|v| convert(&v, depth + 1, budget)).collect())
    };
    match value {
        SteelVal::BoolV(b) => Value::Bool(*b),
        SteelVal::IntV(i) => json!(*i as i64),
        SteelVal::NumV(x) => number(*x),
        SteelVal::Rational(r) => number(f64::from(*r.numer()) / f64::from(*r.denom())),
        SteelVal::StringV(s) | SteelVal::SymbolV(s) => Value::String(s.as_str().to_string()),
        SteelVal::CharV(c) => Value::String(c.to_string()),
        SteelVal::Void => Value::Null,
        SteelVal::ListV(l) => all(&mut l.iter().cloned(), budget),
        SteelVal::Pair(p) => all(&mut [p.car(), p.cdr()].into_iter(), budget),
        SteelVal::VectorV(v) => all(&mut v.iter().cloned(), budget),
        SteelVal::MutableVector(v) => {
            let items: Vec<SteelVal> = v.borrow(|items| items.clone());
            all(&mut items.into_iter(), budget)
        }
        SteelVal::HashMapV(h) => Value::Array(
            h.iter()
                .map(|(k, v)| {
                    Value::Array(vec![
                        convert(k, depth + 1, budget),
                        convert(v, depth + 1, budget),
                    ])
                })
                .collect(),
        ),
        SteelVal::HashSetV(h) => all(&mut h.iter().cloned(), budget),
        other => Value::String(other.to_string()),
    }
}

/// `{"visual-object": NAME, "infos": {NAME: VALUE, ...}, "controls": {...}}`.
pub fn of(runtime: &crate::Runtime) -> Value {
    let vo = runtime.vo();
    let section = |vars: &[voml_ir::Variable]| -> Value {
        let mut map = Map::new();
        for v in vars {
            let value = runtime
                .variable_value(&v.name)
                .map_or(Value::Null, |x| to_json(&x));
            map.insert(v.name.clone(), value);
        }
        Value::Object(map)
    };
    json!({
        "visual-object": vo.name,
        "infos": section(&vo.infos),
        "controls": section(&vo.controls),
    })
}
