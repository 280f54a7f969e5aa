//! The user's edits of control structures (seed 004 §1: a visual object's generated GUI lets
//! the user change its control structures): a value written as JSON, as `--dump-state` and
//! the inspector show them, is checked against the structure's declared type and limits and
//! only then takes the structure's place, between records; a rendering round then shows it.
//! A value that does not fit is refused with why, and nothing changes.

use serde_json::Value;
use steel::rvals::SteelVal;
use voml_ir::VarType;

use crate::{boundary, Runtime, Stop};

/// The longest string an edit may hold, in bytes.
const MAX_STRING: usize = 64 * 1024;
/// The most elements (at every depth) a list or vector an edit may hold.
const MAX_ELEMENTS: usize = 10_000;
/// How deeply lists may nest in an edit.
const MAX_DEPTH: usize = 32;

/// Why an edit did not take place.
#[derive(Debug)]
pub enum EditError {
    /// The value was refused (unknown structure, wrong type, too large): nothing changed.
    Refused(String),
    /// The value was set, and the rendering round that followed stopped the run (strict mode).
    Stop(Stop),
}

impl Runtime {
    /// Sets control structure `name` to `value`: see the module's documentation.
    pub fn set_control(&mut self, name: &str, value: &Value) -> Result<(), EditError> {
        let Some(index) = self.vo.controls.iter().position(|v| v.name == name) else {
            let names: Vec<&str> = self.vo.controls.iter().map(|v| v.name.as_str()).collect();
            let known = if names.is_empty() {
                "it has no control structures".to_string()
            } else {
                format!("its control structures: {}", names.join(", "))
            };
            let what = if self.vo.infos.iter().any(|v| v.name == name) {
                format!("`{name}` is an info structure, which only the visual object changes")
            } else {
                format!("the visual object has no control structure `{name}`")
            };
            return Err(EditError::Refused(format!("{what} ({known})")));
        };
        let var = self.vo.controls[index].clone();
        let mut budget = MAX_ELEMENTS;
        let converted = convert(value, var.ty, 0, &mut budget).map_err(|why| {
            EditError::Refused(format!(
                "`{}` is not a value for `{name}`, a {} control structure: {why}",
                short(value),
                var.ty.word()
            ))
        })?;
        let converted = match converted {
            Data::Value(v) => v,
            Data::Vector(items) => self.mutable_vector(items).map_err(EditError::Refused)?,
        };
        self.scheme_runs += 1;
        if self.engine.update_value(&var.global, converted).is_none() {
            return Err(EditError::Refused(format!(
                "`{name}` cannot be set in this visual object's engine"
            )));
        }
        // Components that read it must not skip their next round as unchanged.
        self.changes.written(&[], &[index]);
        if self.started {
            self.guarded(|rt| rt.render(None))
                .map_err(EditError::Stop)?;
        }
        Ok(())
    }

    /// A vector the visual object may update with `vector-set!` (the engine's own `vector`
    /// makes it: a vector literal would be immutable). `vector` takes the engine's context,
    /// which only code running in the engine has: a procedure compiled here applies it.
    fn mutable_vector(&mut self, items: Vec<SteelVal>) -> Result<SteelVal, String> {
        let cannot = |e: &dyn std::fmt::Display| format!("the engine cannot make a vector: {e}");
        let engine = &mut self.engine;
        let made = boundary::call(&self.meter, || {
            let maker = engine
                .run("(lambda (items) (apply vector items))")?
                .pop()
                .unwrap_or(SteelVal::Void);
            engine
                .call_function_with_args(maker, vec![SteelVal::ListV(items.into_iter().collect())])
        });
        match made {
            Ok(v) => Ok(v),
            Err(boundary::Failure::Scheme(e)) => Err(cannot(&e)),
            Err(boundary::Failure::Panic(e)) => Err(cannot(&e)),
        }
    }
}

/// A converted value; vectors are made by the engine.
enum Data {
    Value(SteelVal),
    Vector(Vec<SteelVal>),
}

/// The value as the message quotes it: its JSON, cut short.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

fn convert(value: &Value, ty: VarType, depth: usize, budget: &mut usize) -> Result<Data, String> {
    let plain = |v| Ok(Data::Value(v));
    match (ty, value) {
        (VarType::Int, Value::Number(n)) => match n.as_i64() {
            Some(i) => plain(SteelVal::IntV(i as isize)),
            None => Err("expected an integer, e.g. 3".into()),
        },
        (VarType::Int, _) => Err("expected an integer, e.g. 3".into()),
        (VarType::Real, Value::Number(n)) => match n.as_f64().filter(|x| x.is_finite()) {
            Some(x) => plain(SteelVal::NumV(x)),
            None => Err("expected a finite number".into()),
        },
        (VarType::Real, _) => Err("expected a number, e.g. 0.5".into()),
        (VarType::Boolean, Value::Bool(b)) => plain(SteelVal::BoolV(*b)),
        (VarType::Boolean, _) => Err("expected true or false".into()),
        (VarType::String, Value::String(s)) => string(s).map(Data::Value),
        (VarType::String, _) => Err("expected a string, in double quotes".into()),
        (VarType::List, Value::Array(items)) => list(items, depth, budget).map(Data::Value),
        (VarType::List, _) => Err("expected a list, e.g. [1, 2, \"three\"]".into()),
        (VarType::Vector, Value::Array(items)) => {
            let items = elements(items, depth, budget)?;
            Ok(Data::Vector(items))
        }
        (VarType::Vector, _) => Err("expected a vector, e.g. [0, 0, 0]".into()),
        (VarType::Any, v) => datum(v, depth, budget).map(Data::Value),
    }
}

fn string(s: &str) -> Result<SteelVal, String> {
    if s.len() > MAX_STRING {
        return Err(format!("a string of at most {MAX_STRING} bytes"));
    }
    Ok(SteelVal::StringV(s.into()))
}

fn list(items: &[Value], depth: usize, budget: &mut usize) -> Result<SteelVal, String> {
    Ok(SteelVal::ListV(
        elements(items, depth, budget)?.into_iter().collect(),
    ))
}

fn elements(items: &[Value], depth: usize, budget: &mut usize) -> Result<Vec<SteelVal>, String> {
    if depth >= MAX_DEPTH {
        return Err(format!("lists nest at most {MAX_DEPTH} deep"));
    }
    if items.len() > *budget {
        return Err(format!("at most {MAX_ELEMENTS} elements in all"));
    }
    *budget -= items.len();
    items.iter().map(|v| datum(v, depth + 1, budget)).collect()
}

/// Any JSON value but an object, as Scheme data: arrays are lists.
fn datum(value: &Value, depth: usize, budget: &mut usize) -> Result<SteelVal, String> {
    match value {
        Value::Null => Ok(SteelVal::Void),
        Value::Bool(b) => Ok(SteelVal::BoolV(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Ok(SteelVal::IntV(i as isize)),
            (None, Some(x)) if x.is_finite() => Ok(SteelVal::NumV(x)),
            _ => Err(format!("{n} is not a number the engine holds")),
        },
        Value::String(s) => string(s),
        Value::Array(items) => list(items, depth, budget),
        Value::Object(_) => Err("objects have no Scheme value; write a list of pairs".into()),
    }
}
