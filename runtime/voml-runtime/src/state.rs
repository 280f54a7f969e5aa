//! The state of a visual object as JSON: the values of its info and control structures, for
//! `voml run --dump-state` and, later, an inspector. Numbers, strings and booleans are
//! themselves; symbols and characters are strings; lists and vectors are arrays; a pair
//! `(key . value)` is a two-element array, so an association list is an array of
//! `[key, value]` pairs, and so is a hash table (in the order of its keys, so that the same
//! run always writes the same state; a hash set's elements are in order too). Numbers JSON
//! cannot hold (infinities, NaN, integers beyond 64 bits) are strings in Scheme's notation. Deep or self-containing
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
        SteelVal::HashMapV(h) => {
            // In the order of the keys, not the table's, which differs from run to run.
            let mut keyed: Vec<(Value, &SteelVal)> = h
                .iter()
                .map(|(k, v)| (convert(k, depth + 1, budget), v))
                .collect();
            keyed.sort_by(|a, b| key_order(&a.0, &b.0));
            Value::Array(
                keyed
                    .into_iter()
                    .map(|(k, v)| Value::Array(vec![k, convert(v, depth + 1, budget)]))
                    .collect(),
            )
        }
        SteelVal::HashSetV(h) => {
            let mut items: Vec<Value> = h.iter().map(|v| convert(v, depth + 1, budget)).collect();
            items.sort_by(key_order);
            Value::Array(items)
        }
        other => Value::String(other.to_string()),
    }
}

/// The order hash tables and sets are written in: numbers by value first, then strings, then
/// anything else by its JSON text.
fn key_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    let rank = |v: &Value| match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        _ => 2,
    };
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let f = |n: &serde_json::Number| n.as_f64().unwrap_or(f64::NAN);
            f(x).total_cmp(&f(y))
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        _ => a.to_string().cmp(&b.to_string()),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use steel::steel_vm::engine::Engine;

    fn eval(code: &str) -> SteelVal {
        let mut engine = Engine::new();
        engine
            .compile_and_run_raw_program(code.to_owned())
            .expect("runs")
            .pop()
            .expect("a value")
    }

    #[test]
    fn hash_tables_are_written_in_the_order_of_their_keys() {
        // The same entries inserted in two orders, and more than a table keeps in order.
        let keys: Vec<usize> = (0..40).map(|i| (i * 17) % 40).collect();
        let inserts = |keys: &mut dyn Iterator<Item = &usize>| {
            keys.fold("(hash)".to_owned(), |h, k| {
                format!("(hash-insert {h} {k} \"v{k}\")")
            })
        };
        let forward = to_json(&eval(&inserts(&mut keys.iter())));
        let backward = to_json(&eval(&inserts(&mut keys.iter().rev())));
        assert_eq!(forward, backward);
        let expected: Vec<Value> = (0..40).map(|k| json!([k, format!("v{k}")])).collect();
        assert_eq!(forward, Value::Array(expected));
        let mixed = to_json(&eval(r#"(hash "b" 1 'a 2 10 3 9 4 2.5 5)"#));
        assert_eq!(
            mixed,
            json!([[2.5, 5], [9, 4], [10, 3], ["a", 2], ["b", 1]])
        );
        let set = to_json(&eval("(hashset 3 1 2)"));
        assert_eq!(set, json!([1, 2, 3]));
    }
}
