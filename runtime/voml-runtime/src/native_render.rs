//! Evaluating native drawing parts ([`voml_ir::NativeRender`]) without calling Scheme: every
//! value is worked out by the engine's own primitives (steel's `+`, `=`, `vector-ref`..., the
//! prelude's `nth`, the host's reading of a line and its style), and what the forms change is
//! kept aside: structures assigned, primitives to draw, beeps. Only when every form was
//! evaluated as the engine would evaluate it are the changes made, in the order the forms
//! made them. A primitive that fails, a value the forms do not model (a loop over what is not
//! a list of pairs), or the watchdog firing makes [`Renders::run`] change nothing and answer
//! [`Outcome::Scheme`]: the runtime then calls the part's procedure, which does it all in
//! Scheme and raises its errors where they belong.

use std::rc::Rc;
use steel::primitives::lists::{car, cdr, cons};
use steel::primitives::numbers;
use steel::primitives::vectors::vec_ref;
use steel::rvals::{number_equality, SteelVal};
use steel::steel_vm::engine::Engine;
use steel::steel_vm::primitives::{gt_primitive, gte_primitive, lt_primitive, lte_primitive};
use steel::SteelErr;
use voml_ir::{Form, NativeRender, RenderOp as Op, HERE_GLOBAL};
use voml_llvo::{Point, Primitive, Style, ViewId};

use crate::boundary;
use crate::host::{self, Host, SoundCommand, STYLES_KEPT};
use crate::memory::{self, Meter};
use crate::watchdog::Watchdog;

/// A native part made ready to evaluate in one engine: its forms compiled into instructions
/// over one row of slots, where every value an instruction reads lies: first the registers
/// (the forms' local slots, then the temporaries their values pass through), then the
/// structures the forms name (read from the engine's globals when a round begins), then the
/// literals (made into values once). An operand is a place in the row, read without asking
/// what kind of value lies there.
pub(crate) struct Prepared {
    code: Vec<Instr>,
    /// The row: `registers` registers, the structures, the literals.
    slots: Vec<SteelVal>,
    registers: usize,
    /// The engine's place of each global the instructions name (the structure in slot
    /// `registers + g` is the engine's global `globals[g]`).
    globals: Vec<usize>,
    /// The engine's place of [`HERE_GLOBAL`].
    here: Option<usize>,
    /// The styles each styled line read lately ([`Instr::StyledLine`] indexes this), kept
    /// from round to round.
    styles: Vec<SiteStyles>,
}

/// Where an instruction finds a value: its place in the part's row of slots (see
/// [`Prepared`]), read where it is, not copied (nothing an instruction reads changes while it
/// works). A structure's slot holds it as the forms see it this round: as read when the round
/// began, then as assigned.
#[derive(Clone, Copy, PartialEq)]
struct Src(u32);

/// One instruction. The forms' control (`if`, `begin`, `and`, `or`) becomes jumps within the
/// code; a loop's body is the code after its [`Instr::ForEach`], up to `end`.
enum Instr {
    Move {
        dst: u32,
        src: Src,
    },
    Unary {
        op: Op,
        dst: u32,
        a: Src,
    },
    Binary {
        op: Op,
        dst: u32,
        a: Src,
        b: Src,
    },
    /// `(vector-ref v k)`, read by steel's primitive without going through
    /// [`Instr::Binary`]'s arithmetic first.
    VectorRef {
        dst: u32,
        v: Src,
        k: Src,
    },
    /// A call of any other arity: its arguments copied out in order.
    Call {
        op: Op,
        dst: u32,
        args: Box<[Src]>,
    },
    Set {
        global: u32,
        src: Src,
    },
    /// `(set! S (op a b))` for a primitive of two operands, its value assigned as worked out
    /// (no register holds it on the way).
    SetBinary {
        op: Op,
        global: u32,
        a: Src,
        b: Src,
    },
    /// `(set! voml/here offset)`, the offset a literal's slot.
    Here(Src),
    Jump(u32),
    JumpIfFalse(Src, u32),
    /// `(if (op a b) ...)` for a comparison `op`: on to `to` unless `(op a b)` holds (the
    /// test's value, which nothing else reads, is never kept).
    Unless {
        op: Op,
        a: Src,
        b: Src,
        to: u32,
    },
    JumpIfTrue(Src, u32),
    /// [`Instr::Unless`] whose operand `b` (or `a`, when `element_first`) is `(vector-ref v
    /// k)`, read by steel's primitive and compared where it is read.
    UnlessElement {
        op: Op,
        other: Src,
        v: Src,
        k: Src,
        element_first: bool,
        to: u32,
    },
    /// `alist-for-each`: the code from here to `end` for every entry of the list, `key` and
    /// `value` in their registers; then on at `end`.
    ForEach {
        list: Src,
        key: u32,
        value: u32,
        end: u32,
    },
    /// `(set! S (id-put S key value))`: the entry put where it is when the structure's list
    /// is the engine's and the round's alone (see [`Round::put_entry`]), else a new list.
    PutEntry {
        global: u32,
        key: Src,
        value: Src,
    },
    /// `(voml-line view x0 y0 x1 y1 (voml-style color thick adapt clip dash alpha cap))`,
    /// whose value is void. (Boxed: the other instructions stay small.)
    StyledLine(Box<StyledLine>),
}

impl Instr {
    /// Whether `ok` holds for every slot of the row the instruction reads or writes (a
    /// structure `g` lies at `global_base + g`).
    fn places_all(&self, global_base: u32, ok: impl Fn(u32) -> bool) -> bool {
        let global = |g: u32| global_base.checked_add(g).is_some_and(&ok);
        match self {
            Instr::Move { dst, src } => ok(*dst) && ok(src.0),
            Instr::Unary { dst, a, .. } => ok(*dst) && ok(a.0),
            Instr::Binary { dst, a, b, .. } => ok(*dst) && ok(a.0) && ok(b.0),
            Instr::VectorRef { dst, v, k } => ok(*dst) && ok(v.0) && ok(k.0),
            Instr::Call { dst, args, .. } => ok(*dst) && args.iter().all(|a| ok(a.0)),
            Instr::Set { global: g, src } => global(*g) && ok(src.0),
            Instr::SetBinary {
                global: g, a, b, ..
            } => global(*g) && ok(a.0) && ok(b.0),
            Instr::UnlessElement { other, v, k, .. } => ok(other.0) && ok(v.0) && ok(k.0),
            Instr::Here(at) | Instr::JumpIfFalse(at, _) | Instr::JumpIfTrue(at, _) => ok(at.0),
            Instr::Jump(_) => true,
            Instr::Unless { a, b, .. } => ok(a.0) && ok(b.0),
            Instr::ForEach {
                list, key, value, ..
            } => ok(list.0) && ok(*key) && ok(*value),
            Instr::PutEntry {
                global: g,
                key,
                value,
            } => global(*g) && ok(key.0) && ok(value.0),
            Instr::StyledLine(l) => l.line.iter().chain(&l.style).all(|s| ok(s.0)),
        }
    }
}

/// The operands of an [`Instr::StyledLine`].
struct StyledLine {
    /// `view x0 y0 x1 y1`.
    line: [Src; 5],
    /// The style's parts, as `voml-style` takes them.
    style: [Src; 7],
    /// Its place among [`Prepared::styles`].
    site: u32,
}

/// The styles one styled line read lately, with the parts each was read from: a style chosen
/// at every call (a colour by key) is mostly one of a few, each read once instead of making a
/// style list and reading it at every call. At most [`STYLES_KEPT`]; when full, the one read
/// longest ago gives way. (Reading parts gives the same style whenever it is done: colours
/// are read by name from the language's vocabulary, nothing else is looked up.)
#[derive(Default)]
struct SiteStyles {
    /// (Shared: each line drawn holds its style until the round's changes are made.)
    kept: Vec<([SteelVal; 7], Rc<Style>)>,
    /// Where the next style read goes once `kept` is full.
    next: usize,
}

impl SiteStyles {
    /// The style these parts make: one kept, or read by `host` (as it reads the list
    /// `voml-style` makes of them) and kept.
    fn style(&mut self, host: &mut Host, parts: [&SteelVal; 7]) -> Result<Rc<Style>, SteelErr> {
        if let Some(style) = self.find(parts) {
            return Ok(Rc::clone(style));
        }
        let style = Rc::new(host.read_style_parts("line", parts)?);
        self.keep(parts.map(SteelVal::clone), Rc::clone(&style));
        Ok(style)
    }

    /// The style kept for these parts, each the same as its kept part as `voml-style`'s
    /// lists tell (see [`host::same_part`]).
    fn find(&self, parts: [&SteelVal; 7]) -> Option<&Rc<Style>> {
        self.kept
            .iter()
            .find(|(known, _)| known.iter().zip(parts).all(|(k, p)| host::same_part(k, p)))
            .map(|(_, style)| style)
    }

    /// Keeps `style`, read from `parts`.
    fn keep(&mut self, parts: [SteelVal; 7], style: Rc<Style>) {
        if self.kept.len() < STYLES_KEPT {
            self.kept.push((parts, style));
        } else {
            self.kept[self.next] = (parts, style);
            self.next = (self.next + 1) % STYLES_KEPT;
        }
    }
}

impl Prepared {
    /// `native` ready for `engine`; `None` when a global it names is not defined there (the
    /// procedure then runs, and fails as it does).
    pub(crate) fn new(native: &NativeRender, engine: &Engine) -> Option<Prepared> {
        // The row's layout is known once the code is: compiled once to count the registers
        // and structures, then again with the structures and literals where they lie.
        let counted = Compiler::compile(native, engine, FIRST_PASS, FIRST_PASS * 2)?;
        let registers = counted.registers;
        let literals = registers.checked_add(u32::try_from(counted.globals.len()).ok()?)?;
        let c = Compiler::compile(native, engine, registers, literals)?;
        // (The same forms compile to the same registers and structures whatever the bases.)
        debug_assert_eq!(
            (c.registers, c.globals.len()),
            (registers, counted.globals.len())
        );
        let mut slots = vec![SteelVal::Void; literals as usize];
        slots.extend(c.consts);
        // Every place the code names lies in the row, and every loop ends inside the code
        // (the round reads them unchecked).
        let inside = |at: u32| (at as usize) < slots.len();
        let ends_inside = |i: &Instr| match i {
            Instr::ForEach { end, .. } => *end as usize <= c.code.len(),
            _ => true,
        };
        if !c
            .code
            .iter()
            .all(|i| i.places_all(registers, inside) && ends_inside(i))
        {
            return None;
        }
        Some(Prepared {
            code: c.code,
            slots,
            registers: registers as usize,
            globals: c.globals,
            here: engine.global_index(HERE_GLOBAL),
            styles: (0..c.sites).map(|_| SiteStyles::default()).collect(),
        })
    }

    /// The slots of the registers and the structures: what a round fills and lets go of.
    fn round_slots(&self) -> usize {
        self.registers + self.globals.len()
    }
}

/// Where the first compilation puts structures and literals, beyond any register (its code
/// is only counted, never run).
const FIRST_PASS: u32 = 1 << 30;

/// Compiles forms into instructions, noting the globals they name.
struct Compiler<'a, 'e> {
    engine: &'e Engine,
    names: Vec<&'a str>,
    /// The engine's place of each of `names`.
    globals: Vec<usize>,
    /// The slot of the first structure, and of the first literal.
    global_base: u32,
    const_base: u32,
    consts: Vec<SteelVal>,
    code: Vec<Instr>,
    /// The first free temporary register.
    next: u32,
    /// How many registers the code uses.
    registers: u32,
    /// How many styled lines the code has.
    sites: u32,
    /// Whether entries may be put in place ([`Instr::PutEntry`]): not in forms that draw,
    /// whose changes may stop half made.
    in_place: bool,
    /// Where the value of a `let`'s slot lies when the `let` binds it to another slot's or a
    /// literal's (no code moves it: see [`Compiler::bind`]), by slot.
    aliases: Vec<Option<Src>>,
}

impl<'a, 'e> Compiler<'a, 'e> {
    /// `native`'s code, the structures in slots from `global_base` on and the literals from
    /// `const_base` on.
    fn compile(
        native: &'a NativeRender,
        engine: &'e Engine,
        global_base: u32,
        const_base: u32,
    ) -> Option<Self> {
        let locals = native.locals;
        let mut c = Compiler {
            engine,
            names: Vec::new(),
            globals: Vec::new(),
            global_base,
            const_base,
            consts: Vec::new(),
            code: Vec::new(),
            next: locals,
            registers: locals,
            sites: 0,
            in_place: !native.reads().draws,
            aliases: vec![None; locals as usize],
        };
        for f in &native.forms {
            c.effect(f)?;
        }
        Some(c)
    }

    /// The number of the global `name` among those the code names.
    fn global(&mut self, name: &'a str) -> Option<u32> {
        if let Some(at) = self.names.iter().position(|n| *n == name) {
            return u32::try_from(at).ok();
        }
        self.globals.push(self.engine.global_index(name)?);
        self.names.push(name);
        u32::try_from(self.names.len() - 1).ok()
    }

    /// The slot of the structure `name`.
    fn global_slot(&mut self, name: &'a str) -> Option<Src> {
        let g = self.global(name)?;
        Some(Src(self.global_base.checked_add(g)?))
    }

    /// Whether `src` is a structure's slot.
    fn is_global(&self, src: Src) -> bool {
        (self.global_base..self.const_base).contains(&src.0)
    }

    /// The slot of a literal `v`.
    fn constant(&mut self, v: SteelVal) -> Option<Src> {
        self.consts.push(v);
        let c = u32::try_from(self.consts.len() - 1).ok()?;
        Some(Src(self.const_base.checked_add(c)?))
    }

    fn temporary(&mut self) -> u32 {
        let t = self.next;
        self.next += 1;
        self.registers = self.registers.max(self.next);
        t
    }

    fn here(&self) -> u32 {
        self.code.len() as u32
    }

    /// Points the jump at `at` to where the code now ends.
    fn land(&mut self, at: usize) {
        let to = self.here();
        match &mut self.code[at] {
            Instr::Jump(t)
            | Instr::JumpIfFalse(_, t)
            | Instr::JumpIfTrue(_, t)
            | Instr::Unless { to: t, .. }
            | Instr::UnlessElement { to: t, .. } => *t = to,
            Instr::ForEach { end, .. } => *end = to,
            _ => unreachable!("only jumps and loops land"),
        }
    }

    /// The jump out of an `and` (at `#f`) or an `or` (at anything else) after a form whose
    /// value is `v`; where it lands is set later ([`Compiler::land`]).
    fn exit(&mut self, and: bool, v: Src) -> usize {
        self.code.push(if and {
            Instr::JumpIfFalse(v, 0)
        } else {
            Instr::JumpIfTrue(v, 0)
        });
        self.code.len() - 1
    }

    /// Code that works out `test` and jumps unless it holds; where the jump is, to land
    /// later ([`Compiler::land`]). A comparison of two values is tested as it is worked
    /// out ([`Instr::Unless`]).
    fn unless(&mut self, test: &'a Form) -> Option<usize> {
        let jump = match test {
            Form::Call {
                op: op @ (Op::NumEq | Op::Lt | Op::Gt | Op::Le | Op::Ge),
                args,
            } if args.len() == 2 => {
                let mark = self.next;
                let [a, b] = self.operands(args, &[])?[..] else {
                    return None;
                };
                // An element read last, into a temporary of its own, is compared where it
                // is read.
                match self.code.last() {
                    Some(&Instr::VectorRef { dst, v, k })
                        if dst >= mark && (Src(dst) == a || Src(dst) == b) =>
                    {
                        self.code.pop();
                        let element_first = Src(dst) == a;
                        Instr::UnlessElement {
                            op: *op,
                            other: if element_first { b } else { a },
                            v,
                            k,
                            element_first,
                            to: 0,
                        }
                    }
                    _ => Instr::Unless {
                        op: *op,
                        a,
                        b,
                        to: 0,
                    },
                }
            }
            _ => Instr::JumpIfFalse(self.value(test)?, 0),
        };
        self.code.push(jump);
        Some(self.code.len() - 1)
    }

    /// Code for a body's forms, and where the last one's value is (void for none).
    fn body(&mut self, forms: &'a [Form]) -> Option<Src> {
        match forms.split_last() {
            Some((last, rest)) => {
                for f in rest {
                    self.effect(f)?;
                }
                self.value(last)
            }
            None => self.constant(SteelVal::Void),
        }
    }

    /// Code for `f` whose value is not used.
    fn effect(&mut self, f: &'a Form) -> Option<()> {
        match f {
            Form::If {
                test,
                then,
                otherwise,
            } => {
                let mark = self.next;
                let skip = self.unless(test)?;
                self.next = mark;
                self.effect(then)?;
                if let Some(o) = otherwise {
                    let over = self.code.len();
                    self.code.push(Instr::Jump(0));
                    self.land(skip);
                    self.effect(o)?;
                    self.land(over);
                } else {
                    self.land(skip);
                }
            }
            Form::Begin { forms } => {
                for f in forms {
                    self.effect(f)?;
                }
            }
            Form::And { forms } | Form::Or { forms } => {
                let and = matches!(f, Form::And { .. });
                let mut exits = Vec::new();
                for f in forms {
                    let v = self.value(f)?;
                    exits.push(self.exit(and, v));
                }
                for at in exits {
                    self.land(at);
                }
            }
            // What only gives a value does nothing here (a literal, a variable); the rest is
            // worked out as for its value.
            Form::Int { .. }
            | Form::Real { .. }
            | Form::Str { .. }
            | Form::Bool { .. }
            | Form::Local { .. } => {}
            _ => {
                let mark = self.next;
                self.value(f)?;
                self.next = mark;
            }
        }
        Some(())
    }

    /// Code that works out `f`'s value, and where the value is then. A temporary holding it
    /// stays taken until the caller lets it go (by resetting `next`).
    fn value(&mut self, f: &'a Form) -> Option<Src> {
        Some(match f {
            Form::Int { value } => self.constant(SteelVal::IntV(isize::try_from(*value).ok()?))?,
            Form::Real { value } => self.constant(SteelVal::NumV(*value))?,
            // (One string for every round: strings are immutable in steel.)
            Form::Str { value } => self.constant(SteelVal::StringV(value.as_str().into()))?,
            Form::Bool { value } => self.constant(SteelVal::BoolV(*value))?,
            Form::Local { slot } => self.local(*slot),
            Form::Global { name } | Form::Style { name } => self.global_slot(name)?,
            Form::Set {
                global: name,
                value,
            } if self.in_place && puts_entry(name, value) => {
                let Form::Call { args, .. } = &**value else {
                    return None;
                };
                let global = self.global(name)?;
                let mark = self.next;
                let [key, value] = self.operands(&args[1..], &[])?[..] else {
                    return None;
                };
                self.code.push(Instr::PutEntry { global, key, value });
                self.next = mark;
                self.constant(SteelVal::Void)?
            }
            Form::Set { global, value } => {
                let global = self.global(global)?;
                let mark = self.next;
                let src = self.value(value)?;
                // A value worked out last, into a temporary of its own, is assigned as it is
                // worked out.
                let set = match self.code.last() {
                    Some(&Instr::Binary { op, dst, a, b }) if dst >= mark && Src(dst) == src => {
                        self.code.pop();
                        Instr::SetBinary { op, global, a, b }
                    }
                    _ => Instr::Set { global, src },
                };
                self.code.push(set);
                self.next = mark;
                self.constant(SteelVal::Void)?
            }
            Form::Here { offset } => {
                let at = self.constant(SteelVal::IntV(isize::try_from(*offset).ok()?))?;
                self.code.push(Instr::Here(at));
                self.constant(SteelVal::Void)?
            }
            Form::If {
                test,
                then,
                otherwise,
            } => self.if_value(test, then, otherwise.as_deref(), None)?,
            Form::Begin { forms } => self.body(forms)?,
            Form::And { forms } | Form::Or { forms } => {
                let and = matches!(f, Form::And { .. });
                let dst = self.temporary();
                if forms.is_empty() {
                    let v = self.constant(SteelVal::BoolV(and))?;
                    self.code.push(Instr::Move { dst, src: v });
                }
                let mut exits = Vec::new();
                for f in forms {
                    self.value_into(dst, f)?;
                    exits.push(self.exit(and, Src(dst)));
                }
                for at in exits {
                    self.land(at);
                }
                Src(dst)
            }
            Form::Let {
                first,
                values,
                body,
            } => {
                // The values worked out in order, each into its slot: none can see the slots
                // the `let` binds.
                for (k, v) in values.iter().enumerate() {
                    self.bind(first.checked_add(u32::try_from(k).ok()?)?, v)?;
                }
                self.body(body)?
            }
            Form::ForEachEntry {
                key,
                value,
                list,
                body,
            } => {
                let mark = self.next;
                let list = self.value(list)?;
                let at = self.code.len();
                self.code.push(Instr::ForEach {
                    list,
                    key: *key,
                    value: *value,
                    end: 0,
                });
                for f in body {
                    self.effect(f)?;
                }
                self.land(at);
                self.next = mark;
                self.constant(SteelVal::BoolV(true))?
            }
            Form::Call { op, args } => self.call(*op, args, None)?,
        })
    }

    /// Where the value of local slot `slot` lies.
    fn local(&mut self, slot: u32) -> Src {
        match self.aliases.get(slot as usize) {
            Some(Some(src)) => *src,
            _ => Src(slot),
        }
    }

    /// Code that binds a `let`'s slot `slot` to `f`'s value. A literal, or another slot's
    /// value, is read where it lies for as long as the `let` binds it: nothing changes it
    /// meanwhile (a slot is bound by one form, which encloses whatever reads it, and is bound
    /// before its body runs; the part's arguments never change; literals are not assigned).
    /// Any other value is worked out straight into the slot.
    fn bind(&mut self, slot: u32, f: &'a Form) -> Option<()> {
        let alias = match f {
            Form::Local { slot: s } => Some(self.local(*s)),
            Form::Int { .. } | Form::Real { .. } | Form::Str { .. } | Form::Bool { .. } => {
                Some(self.value(f)?)
            }
            _ => None,
        };
        if let Some(alias) = alias {
            *self.aliases.get_mut(slot as usize)? = Some(alias);
            return Some(());
        }
        *self.aliases.get_mut(slot as usize)? = None;
        self.value_into(slot, f)
    }

    /// Code for `(if test then otherwise)` whose value is used, and where it is then: in
    /// `dst` when given, else in a temporary.
    fn if_value(
        &mut self,
        test: &'a Form,
        then: &'a Form,
        otherwise: Option<&'a Form>,
        dst: Option<u32>,
    ) -> Option<Src> {
        let dst = match dst {
            Some(d) => d,
            None => self.temporary(),
        };
        // (The temporary holding the value, if taken, stays taken.)
        let kept = self.next;
        let skip = self.unless(test)?;
        self.next = kept;
        self.value_into(dst, then)?;
        let over = self.code.len();
        self.code.push(Instr::Jump(0));
        self.land(skip);
        match otherwise {
            Some(o) => self.value_into(dst, o)?,
            None => {
                let void = self.constant(SteelVal::Void)?;
                self.code.push(Instr::Move { dst, src: void });
            }
        }
        self.land(over);
        Some(Src(dst))
    }

    /// Code that leaves `f`'s value in register `dst`.
    fn value_into(&mut self, dst: u32, f: &'a Form) -> Option<()> {
        let mark = self.next;
        // A call's or an `if`'s value is worked out straight into `dst` (an instruction reads
        // its operands before it writes its result).
        let src = match f {
            Form::Call { op, args } => self.call(*op, args, Some(dst))?,
            Form::If {
                test,
                then,
                otherwise,
            } => self.if_value(test, then, otherwise.as_deref(), Some(dst))?,
            _ => self.value(f)?,
        };
        if src != Src(dst) {
            self.code.push(Instr::Move { dst, src });
        }
        self.next = mark;
        Some(())
    }

    /// A call: its arguments worked out left to right, then the primitive. (Each with the
    /// arguments it takes: the runtime validated the IR.)
    fn call(&mut self, op: Op, args: &'a [Form], dst: Option<u32>) -> Option<Src> {
        if let (
            Op::Line,
            [line @ .., Form::Call {
                op: Op::Style,
                args: style,
            }],
        ) = (op, args)
        {
            return self.styled_line(line, style);
        }
        let mark = self.next;
        let srcs = self.operands(args, &[])?;
        self.next = mark;
        let dst = match dst {
            Some(d) => d,
            None => self.temporary(),
        };
        self.code.push(match srcs[..] {
            [v, k] if op == Op::VectorRef => Instr::VectorRef { dst, v, k },
            [a] => Instr::Unary { op, dst, a },
            [a, b] => Instr::Binary { op, dst, a, b },
            _ => Instr::Call {
                op,
                dst,
                args: srcs.into_boxed_slice(),
            },
        });
        Some(Src(dst))
    }

    /// Code that works out `args` left to right, `later` the forms worked out after them
    /// before the call; and where each value is then. Temporaries holding them stay taken
    /// until the caller lets them go.
    fn operands(&mut self, args: &'a [Form], later: &'a [Form]) -> Option<Vec<Src>> {
        let mut srcs = Vec::with_capacity(args.len());
        for (k, a) in args.iter().enumerate() {
            let mut src = self.value(a)?;
            // A structure read before a later argument assigns one is read as it was then.
            if self.is_global(src) && args[k + 1..].iter().chain(later).any(assigns) {
                let t = self.temporary();
                self.code.push(Instr::Move { dst: t, src });
                src = Src(t);
            }
            srcs.push(src);
        }
        Some(srcs)
    }

    /// `(voml-line view x0 y0 x1 y1 (voml-style ...))` as one instruction: the line's
    /// operands, then the style's parts, worked out as the call's arguments are; the style
    /// list itself is never made.
    fn styled_line(&mut self, line: &'a [Form], style: &'a [Form]) -> Option<Src> {
        let mark = self.next;
        let line = self.operands(line, style)?;
        let style = self.operands(style, &[])?;
        self.next = mark;
        self.code.push(Instr::StyledLine(Box::new(StyledLine {
            line: line.try_into().ok()?,
            style: style.try_into().ok()?,
            site: self.sites,
        })));
        self.sites += 1;
        self.constant(SteelVal::Void)
    }
}

/// Whether `(set! name value)` is `(set! S (id-put S key value))`, its key and value
/// assigning nothing.
fn puts_entry(name: &str, value: &Form) -> bool {
    match value {
        Form::Call {
            op: Op::IdPut,
            args,
        } => match &args[..] {
            [Form::Global { name: list }, key, value] => {
                list == name && !assigns(key) && !assigns(value)
            }
            _ => false,
        },
        _ => false,
    }
}

/// Whether working out `f` may assign a structure.
fn assigns(f: &Form) -> bool {
    match f {
        Form::Set { .. } => true,
        Form::Int { .. }
        | Form::Real { .. }
        | Form::Str { .. }
        | Form::Bool { .. }
        | Form::Local { .. }
        | Form::Global { .. }
        | Form::Style { .. }
        | Form::Here { .. } => false,
        Form::If {
            test,
            then,
            otherwise,
        } => assigns(test) || assigns(then) || otherwise.as_deref().is_some_and(assigns),
        Form::Begin { forms } | Form::And { forms } | Form::Or { forms } => {
            forms.iter().any(assigns)
        }
        Form::Let { values, body, .. } => values.iter().chain(body).any(assigns),
        Form::ForEachEntry { list, body, .. } => assigns(list) || body.iter().any(assigns),
        Form::Call { args, .. } => args.iter().any(assigns),
    }
}

/// The storage native parts reuse from round to round.
#[derive(Default)]
pub(crate) struct Renders {
    args: Vec<SteelVal>,
    effects: Vec<Effect>,
    /// The entries put in place this round, to take back if it goes to Scheme.
    undo: Vec<Undo>,
    /// The engine's globals a round assigns, as [`make`] gathers them.
    sets: Vec<(usize, SteelVal)>,
    /// Vectors no other value refers to any more, which `(vector ...)` may fill in place of
    /// making a new one (see [`Renders::keep_spares`]).
    spares: Vec<SteelVal>,
}

/// The most vectors [`Renders`] keeps to fill again.
const SPARES_KEPT: usize = 8;

/// An entry [`Instr::PutEntry`] put in place: the list (whose global the engine holds void
/// until the round's changes are made), where, and the entry it replaced.
struct Undo {
    /// The engine's place of the global.
    at: usize,
    list: SteelVal,
    index: usize,
    replaced: Replaced,
}

/// What [`Instr::PutEntry`] replaced.
enum Replaced {
    /// The entry, replaced whole by a new pair.
    Entry(SteelVal),
    /// The key and value of the entry's pair, which the list alone held: the pair itself
    /// was kept, and given the new key and value.
    Parts(SteelVal, SteelVal),
}

/// How a native part ended.
pub(crate) enum Outcome {
    /// Evaluated and its changes made.
    Done,
    /// Nothing changed: the part's procedure must run.
    Scheme,
    /// Evaluated, and making its changes failed at this drawing primitive: the changes before
    /// it are made, as the Scheme would have made them.
    Failed(SteelErr),
}

/// A change the forms make. (Small: a round's changes are kept in a list, then made.)
enum Effect {
    /// A global (by its place among [`Prepared::globals`]) assigned.
    Set(usize, SteelVal),
    /// A styled line ([`Instr::StyledLine`]), its style one its site keeps.
    Line(ViewId, Point, Point, Rc<Style>),
    /// Any other primitive.
    Draw(Box<(ViewId, Primitive, Style)>),
    Beep,
}

/// One round's evaluation.
struct Round<'r> {
    engine: &'r mut Engine,
    host: &'r mut Host,
    watchdog: &'r Watchdog,
    code: &'r [Instr],
    styles: &'r mut [SiteStyles],
    /// The part's row of slots (see [`Prepared`]); the structures' from `global_base` on.
    slots: &'r mut [SteelVal],
    global_base: usize,
    args: &'r mut Vec<SteelVal>,
    effects: &'r mut Vec<Effect>,
    undo: &'r mut Vec<Undo>,
    spares: &'r mut Vec<SteelVal>,
    /// The engine's place of each global the code names.
    globals: &'r [usize],
    /// The slot of the offset `voml/here` is set to last.
    here: Option<Src>,
}

/// Why evaluation stopped: the part goes to Scheme.
struct ToScheme;

/// A primitive's result, its error taken as a reason to leave the part to Scheme.
fn engine_says<T>(r: Result<T, SteelErr>) -> Result<T, ToScheme> {
    r.map_err(|_| ToScheme)
}

impl Renders {
    /// Evaluates `native`, `fields` in its first slots (an input part's), and makes its
    /// changes, or changes nothing (see [`Outcome`]). What
    /// the forms hold is charged to `meter` as the Scheme's would be; the host's work is not
    /// (as for the host's procedures called from Scheme).
    pub(crate) fn run(
        &mut self,
        native: &mut Prepared,
        fields: &[SteelVal],
        engine: &mut Engine,
        host: &mut Host,
        watchdog: &Watchdog,
        meter: &Meter,
    ) -> Outcome {
        let Renders {
            args,
            effects,
            undo,
            sets,
            spares,
        } = self;
        let filled = native.round_slots();
        let global_base = native.registers;
        // Whatever the forms make or let go of is charged: the values of the registers too,
        // let go of when the round ends, and the changes when they are made.
        let evaluated = boundary::call(meter, || {
            let Prepared {
                code,
                slots,
                globals,
                styles,
                ..
            } = &mut *native;
            let Some(locals) = slots
                .get_mut(..fields.len())
                .filter(|_| fields.len() <= global_base)
            else {
                return Ok(None);
            };
            for (slot, field) in locals.iter_mut().zip(fields) {
                release(std::mem::replace(slot, field.clone()));
            }
            for (slot, at) in slots[global_base..filled].iter_mut().zip(&*globals) {
                match engine.global_at(*at) {
                    // (What the slot held is plain, as the last round left it.)
                    Some(v) => release(std::mem::replace(slot, v)),
                    None => {
                        let_go(&mut slots[..filled], args);
                        return Ok(None);
                    }
                }
            }
            let mut round = Round {
                engine: &mut *engine,
                host: &mut *host,
                watchdog,
                code,
                styles,
                slots,
                global_base,
                args,
                effects,
                undo,
                spares,
                globals,
                here: None,
            };
            let done = round.run(0, code.len()).is_ok();
            let here = round.here.map(|at| slots[at.0 as usize].clone());
            let_go(&mut slots[..filled], args);
            if !done {
                effects.clear();
            }
            Ok(done.then_some(here))
        });
        // A panic inside a primitive is left to happen again in Scheme, and be reported.
        let Ok(Some(here)) = evaluated else {
            // (After a panic too, nothing of the round is left for the next.)
            let _charged = meter.enter();
            let_go(&mut native.slots[..filled], args);
            effects.clear();
            take_back(undo, engine);
            return Outcome::Scheme;
        };
        // Every form was evaluated: the changes are made in the order the forms made them.
        if let (Some(at), Some(here)) = (native.here, here) {
            sets.push((at, here));
        }
        let made = make(effects, sets, native, engine, host, meter);
        let _charged = meter.enter();
        effects.clear();
        keep_spares(undo, spares);
        made
    }
}

/// The entry `(key . value)`, as `cons` makes it.
fn entry(mut key: SteelVal, mut value: SteelVal) -> SteelVal {
    // (`cons` fails on nothing: it gives a pair, or a list when `value` is one.)
    cons(&mut key, &mut value).unwrap_or(SteelVal::Void)
}

/// Lets go of the entries a round replaced, keeping (the latest [`SPARES_KEPT`]) the vectors among
/// their values that nothing else refers to: an entry no other value holds, whose value is a
/// vector only that entry refers to. Filling such a vector again ([`Round::vector`]) makes
/// what `(vector ...)` would make, a vector no one else sees, without taking a new one from
/// the engine's heap. (The replaced value of a plot's entry, `#(old-time old-value ...)`,
/// is one at every record.)
fn keep_spares(undo: &mut Vec<Undo>, spares: &mut Vec<SteelVal>) {
    for Undo { replaced, .. } in undo.drain(..) {
        let value = match &replaced {
            Replaced::Entry(SteelVal::Pair(entry)) if steel::gc::Gc::strong_count(entry) == 1 => {
                entry.cdr_ref()
            }
            Replaced::Parts(_, value) => value,
            _ => continue,
        };
        if let SteelVal::MutableVector(v) = value {
            if v.handles() == 1 {
                // (The latest are kept: one the heap took back meanwhile is not filled.)
                if spares.len() >= SPARES_KEPT {
                    spares.remove(0);
                }
                spares.push(value.clone());
            }
        }
    }
}

/// Lets go of what a round kept in its registers and structures (`slots`), and arguments.
/// A plain value (see [`release`]) holds nothing and is left where it is: nothing reads a
/// register before the round writes it, and a slot holds a plain value or void between
/// rounds (so that filling it needs no general drop).
fn let_go(slots: &mut [SteelVal], args: &mut Vec<SteelVal>) {
    for slot in slots {
        if !plain_value(slot) {
            drop(std::mem::replace(slot, SteelVal::Void));
        }
    }
    args.clear();
}

/// Takes back the entries a round that goes to Scheme put in place, last first, and gives
/// each list back to its global as it was. (The list is the round's alone again once its
/// registers and changes are let go of; were it held elsewhere still, a copy with the entry
/// taken back is given instead: no one else saw the list before the round.)
fn take_back(undo: &mut Vec<Undo>, engine: &mut Engine) {
    while let Some(Undo {
        at,
        mut list,
        index,
        replaced,
    }) = undo.pop()
    {
        let replaced = match replaced {
            Replaced::Entry(entry) => entry,
            // (A new pair: no one else saw the one given the new parts.)
            Replaced::Parts(key, value) => entry(key, value),
        };
        if let SteelVal::ListV(l) = &mut list {
            if let Err(replaced) = l.replace_unique(index, replaced) {
                let copy = l
                    .iter()
                    .enumerate()
                    .map(|(k, e)| {
                        if k == index {
                            replaced.clone()
                        } else {
                            e.clone()
                        }
                    })
                    .collect();
                list = SteelVal::ListV(copy);
            }
        }
        engine.update_global_at(at, list);
    }
}

/// Makes the changes, in order, until a drawing primitive fails. (The globals assigned, after
/// `sets`, are given to the engine at once, in order, when the drawing and sounds are made:
/// nothing drawn or played reads them.)
fn make(
    effects: &mut Vec<Effect>,
    sets: &mut Vec<(usize, SteelVal)>,
    native: &Prepared,
    engine: &mut Engine,
    host: &mut Host,
    meter: &Meter,
) -> Outcome {
    let mut made = Outcome::Done;
    for effect in effects.drain(..) {
        let drawn = match effect {
            Effect::Set(global, value) => {
                sets.push((native.globals[global], value));
                continue;
            }
            Effect::Beep => {
                host.sound(SoundCommand::Beep);
                continue;
            }
            Effect::Line(view, from, to, style) => {
                host.draw("line", view, Primitive::Line { from, to }, &style)
            }
            Effect::Draw(drawn) => {
                let (view, prim, style) = *drawn;
                host.draw("line", view, prim, &style)
            }
        };
        if let Err(e) = drawn {
            made = Outcome::Failed(e);
            break;
        }
    }
    let _charged = meter.enter();
    engine.update_globals_at(sets.drain(..));
    made
}

impl<'r> Round<'r> {
    /// Runs the code from `pc` to `end`.
    fn run(&mut self, mut pc: usize, end: usize) -> Result<(), ToScheme> {
        let code = self.code;
        // (`end` is the code's length or a loop's end, which lies inside it.)
        debug_assert!(end <= code.len());
        while pc < end {
            // SAFETY: `pc < end <= code.len()`: a loop's end is checked in `Prepared::new`.
            match unsafe { code.get_unchecked(pc) } {
                Instr::Move { dst, src } => {
                    let v = copy(self.get(*src));
                    self.put(*dst, v);
                }
                Instr::Unary { op, dst, a } => {
                    let v = self.unary(*op, *a)?;
                    self.put(*dst, v);
                }
                Instr::Binary { op, dst, a, b } => {
                    let v = self.worked_out(*op, *a, *b)?;
                    self.put(*dst, v);
                }
                Instr::VectorRef { dst, v, k } => {
                    let v = engine_says(vec_ref(self.get(*v), self.get(*k)))?;
                    self.put(*dst, v);
                }
                Instr::Call { op, dst, args } => {
                    let v = self.call(*op, args)?;
                    self.put(*dst, v);
                }
                Instr::Set { global, src } => {
                    let v = self.get(*src).clone();
                    self.assign(*global as usize, v);
                }
                Instr::SetBinary { op, global, a, b } => {
                    let v = self.worked_out(*op, *a, *b)?;
                    self.assign(*global as usize, v);
                }
                Instr::UnlessElement {
                    op,
                    other,
                    v,
                    k,
                    element_first,
                    to,
                } => {
                    let e = engine_says(vec_ref(self.get(*v), self.get(*k)))?;
                    let other = self.get(*other);
                    let (x, y) = if *element_first {
                        (&e, other)
                    } else {
                        (other, &e)
                    };
                    let holds = match plain(*op, x, y) {
                        Some(t) => truthy(&t),
                        None => {
                            let pair = [x.clone(), y.clone()];
                            truthy(&self.apply(*op, &pair)?)
                        }
                    };
                    release(e);
                    if !holds {
                        pc = *to as usize;
                        continue;
                    }
                }
                Instr::Here(at) => self.here = Some(*at),
                Instr::Jump(to) => {
                    pc = *to as usize;
                    continue;
                }
                Instr::Unless { op, a, b, to } => {
                    if !truthy(&self.worked_out(*op, *a, *b)?) {
                        pc = *to as usize;
                        continue;
                    }
                }
                Instr::JumpIfFalse(src, to) | Instr::JumpIfTrue(src, to) => {
                    let truth = truthy(self.get(*src));
                    if truth == matches!(code[pc], Instr::JumpIfTrue(..)) {
                        pc = *to as usize;
                        continue;
                    }
                }
                Instr::ForEach {
                    list,
                    key,
                    value,
                    end,
                } => {
                    let SteelVal::ListV(entries) = self.get(*list).clone() else {
                        return Err(ToScheme);
                    };
                    let body = pc + 1;
                    let end = *end as usize;
                    for entry in entries.iter() {
                        if self.watchdog.has_fired() {
                            return Err(ToScheme);
                        }
                        // (A pair's parts read in place: `car` and `cdr` give them.)
                        let (k, v) = match entry {
                            SteelVal::Pair(p) => (copy(p.car_ref()), copy(p.cdr_ref())),
                            _ => (
                                engine_says(car(entry))?,
                                engine_says(cdr(&mut entry.clone()))?,
                            ),
                        };
                        self.put(*key, k);
                        self.put(*value, v);
                        self.run(body, end)?;
                    }
                    pc = end;
                    continue;
                }
                Instr::PutEntry { global, key, value } => {
                    let g = *global as usize;
                    let (key, value) = (copy(self.get(*key)), copy(self.get(*value)));
                    let list = self.put_entry(g, key, value)?;
                    self.assign(g, list);
                }
                Instr::StyledLine(line) => {
                    let host = memory::uncharged(|| self.styled_line(line));
                    let (view, from, to, style) = engine_says(host)?;
                    self.effects.push(Effect::Line(view, from, to, style));
                }
            }
            pc += 1;
        }
        Ok(())
    }

    /// Puts `v` in register `d`. (The old value is taken out as the new one goes in, and let
    /// go of after: the new value is then written where it belongs straight after it is
    /// worked out, rather than kept aside across the letting go and copied whole from memory
    /// just written in parts, which stalls the processor.)
    #[inline(always)]
    fn put(&mut self, d: u32, v: SteelVal) {
        // SAFETY: every place the code names lies in the row (checked in `Prepared::new`;
        // the row's length never changes).
        let slot = unsafe { self.slots.get_unchecked_mut(d as usize) };
        release(std::mem::replace(slot, v));
    }

    /// Structure `g` assigned `v`: the forms see it from now on, and the engine when the
    /// round's changes are made.
    fn assign(&mut self, g: usize, v: SteelVal) {
        *self.known(g) = v.clone();
        self.effects.push(Effect::Set(g, v));
    }

    /// The structure `g` as the forms see it.
    fn known(&mut self, g: usize) -> &mut SteelVal {
        // SAFETY: as in `put`.
        unsafe { self.slots.get_unchecked_mut(self.global_base + g) }
    }

    /// What a styled line draws, where, how, as [`Host::line_parts`] works it out from the
    /// list the style's parts make.
    fn styled_line(
        &mut self,
        line: &StyledLine,
    ) -> Result<(ViewId, Point, Point, Rc<Style>), SteelErr> {
        let Round {
            host,
            slots,
            styles,
            ..
        } = self;
        let slots = &slots[..];
        // SAFETY: as in `put`.
        let get = |src: Src| unsafe { slots.get_unchecked(src.0 as usize) };
        let [view, x0, y0, x1, y1] = line.line.map(get);
        let view = host.view("line", view)?;
        let style = styles[line.site as usize].style(host, line.style.map(get))?;
        let (from, to) = host::segment(x0, y0, x1, y1)?;
        Ok((view, from, to, style))
    }

    /// `(id-put S key value)` of the global `g`, as the list the forms see next. When that
    /// list is the one the engine holds, held by nothing else, has the key, and has not been
    /// put in place this round, the engine lets go of it and the new entry replaces the old
    /// where it is (noted, to be taken back if the round goes to Scheme); otherwise `id-put`
    /// makes a new list, as in Scheme.
    fn put_entry(
        &mut self,
        g: usize,
        key: SteelVal,
        value: SteelVal,
    ) -> Result<SteelVal, ToScheme> {
        let at = self.globals[g];
        if let Some(index) = self.in_place_index(g, at, &key)? {
            if let Some(list) = self.replace_in_place(g, at, index, &key, &value) {
                return Ok(list);
            }
        }
        let list = self.known(g).clone();
        engine_says(crate::prelude::id_put(&[list, key, value]))
    }

    /// Puts the entry `(key . value)` at `index` of the list of global `g` (the engine's
    /// place `at`) where it is: the engine lets go of the list, which the round then holds
    /// alone, and what it replaced is noted. The pair there is given the new key and value
    /// when the list alone holds it, else replaced by a new pair. `None`, the engine's global
    /// as it was, when the engine holds another list or the list is held elsewhere after all.
    fn replace_in_place(
        &mut self,
        g: usize,
        at: usize,
        index: usize,
        key: &SteelVal,
        value: &SteelVal,
    ) -> Option<SteelVal> {
        let held = self.engine.replace_global_at(at, SteelVal::Void)?;
        let SteelVal::ListV(list) = self.known(g) else {
            self.engine.update_global_at(at, held);
            return None;
        };
        if !matches!(&held, SteelVal::ListV(h) if h.ptr_eq(list)) {
            self.engine.update_global_at(at, held);
            return None;
        }
        drop(held);
        // (`cons` of a list makes a list, not a pair: such a value takes the other way.)
        let kept = match list.get_mut_unique(index) {
            Some(SteelVal::Pair(pair)) if !matches!(value, SteelVal::ListV(_)) => {
                pair.get_mut().map(|pair| {
                    let (k, v) = pair.parts_mut();
                    Replaced::Parts(
                        std::mem::replace(k, copy(key)),
                        std::mem::replace(v, copy(value)),
                    )
                })
            }
            _ => None,
        };
        let replaced = match kept {
            Some(parts) => Ok(parts),
            None => list
                .replace_unique(index, entry(copy(key), copy(value)))
                .map(Replaced::Entry),
        };
        match replaced {
            Ok(replaced) => {
                let list = self.known(g).clone();
                self.undo.push(Undo {
                    at,
                    list: list.clone(),
                    index,
                    replaced,
                });
                Some(list)
            }
            Err(_) => {
                let list = self.known(g).clone();
                self.engine.update_global_at(at, list);
                None
            }
        }
    }

    /// Where the entry of `key` is in the list of global `g` (the engine's place `at`), when
    /// it may be put there in place: the list the engine and the round alone hold, not yet
    /// put in place this round. An error where `id-put` would fail.
    fn in_place_index(
        &self,
        g: usize,
        at: usize,
        key: &SteelVal,
    ) -> Result<Option<usize>, ToScheme> {
        let value = &self.slots[self.global_base + g];
        let SteelVal::ListV(list) = value else {
            return Ok(None);
        };
        if list.strong_count() != 2 || self.undo.iter().any(|u| u.at == at) {
            return Ok(None);
        }
        let assigned = self
            .effects
            .iter()
            .any(|e| matches!(e, Effect::Set(s, _) if *s == g));
        if assigned {
            return Ok(None);
        }
        engine_says(crate::prelude::entry_index(value, key))
    }

    /// The value `src` names.
    #[inline(always)]
    fn get(&self, src: Src) -> &SteelVal {
        // SAFETY: as in `put`.
        unsafe { self.slots.get_unchecked(src.0 as usize) }
    }

    fn unary(&mut self, op: Op, a: Src) -> Result<SteelVal, ToScheme> {
        let a = self.get(a);
        match op {
            Op::Not => Ok(SteelVal::BoolV(matches!(a, SteelVal::BoolV(false)))),
            Op::Length => match a {
                SteelVal::ListV(l) => Ok(SteelVal::IntV(l.len() as isize)),
                _ => Err(ToScheme),
            },
            Op::Car => engine_says(car(a)),
            Op::Cdr => engine_says(cdr(&mut a.clone())),
            _ => {
                let a = [a.clone()];
                self.apply(op, &a)
            }
        }
    }

    /// `op` of two values: worked out here where steel's answer is plain (two fixnums that do
    /// not overflow, two reals), everything else by steel's primitive ([`Round::binary`]).
    #[inline(always)]
    fn worked_out(&mut self, op: Op, a: Src, b: Src) -> Result<SteelVal, ToScheme> {
        match plain(op, self.get(a), self.get(b)) {
            Some(v) => Ok(v),
            None => self.binary(op, a, b),
        }
    }

    /// `op` of two values that are not both plain numbers.
    fn binary(&mut self, op: Op, a: Src, b: Src) -> Result<SteelVal, ToScheme> {
        let (a, b) = (self.get(a), self.get(b));
        match op {
            Op::NumEq => engine_says(number_equality(a, b)),
            Op::VectorRef => engine_says(vec_ref(a, b)),
            // (Its operands read where they lie, not copied out.)
            Op::IdGet => engine_says(crate::prelude::entry_value(a, b)),
            // An element of a list, as `nth` gives it, without copying the arguments out
            // (what `nth` refuses is left to it below).
            Op::Nth => match (a, b) {
                (SteelVal::IntV(n), SteelVal::ListV(list)) if *n >= 0 => {
                    list.get(*n as usize).cloned().ok_or(ToScheme)
                }
                _ => {
                    let pair = [a.clone(), b.clone()];
                    self.apply(op, &pair)
                }
            },
            _ => {
                let pair = [a.clone(), b.clone()];
                self.apply(op, &pair)
            }
        }
    }

    fn call(&mut self, op: Op, srcs: &[Src]) -> Result<SteelVal, ToScheme> {
        let mut args = std::mem::take(self.args);
        args.extend(srcs.iter().map(|s| self.get(*s).clone()));
        let result = self.apply(op, &args);
        args.clear();
        *self.args = args;
        result
    }

    /// `op` of `a`.
    #[inline(never)]
    fn apply(&mut self, op: Op, a: &[SteelVal]) -> Result<SteelVal, ToScheme> {
        match op {
            Op::Add => engine_says(numbers::add_primitive(a)),
            Op::Sub => engine_says(numbers::subtract_primitive(a)),
            Op::Mul => engine_says(numbers::multiply_primitive(a)),
            Op::NumEq => engine_says(number_equality(&a[0], &a[1])),
            Op::Lt => engine_says(lt_primitive(a)),
            Op::Gt => engine_says(gt_primitive(a)),
            Op::Le => engine_says(lte_primitive(a)),
            Op::Ge => engine_says(gte_primitive(a)),
            Op::Quotient => engine_says(numbers::quotient(a)),
            Op::Remainder => engine_says(numbers::remainder(a)),
            Op::Modulo => engine_says(numbers::modulo(a)),
            Op::Not => Ok(SteelVal::BoolV(matches!(a[0], SteelVal::BoolV(false)))),
            Op::VectorRef => engine_says(vec_ref(&a[0], &a[1])),
            Op::Length => match &a[0] {
                SteelVal::ListV(l) => Ok(SteelVal::IntV(l.len() as isize)),
                _ => Err(ToScheme),
            },
            Op::Nth => engine_says(crate::prelude::nth(a)),
            Op::Car => engine_says(car(&a[0])),
            Op::Cdr => engine_says(cdr(&mut a[0].clone())),
            Op::Line => {
                let host = &mut *self.host;
                let parts = memory::uncharged(|| host.line_parts(a));
                let drawn = engine_says(parts)?;
                self.effects.push(Effect::Draw(Box::new(drawn)));
                Ok(SteelVal::Void)
            }
            Op::Style => {
                let host = &mut *self.host;
                Ok(memory::uncharged(|| host.style_list(a)))
            }
            Op::Beep => {
                self.effects.push(Effect::Beep);
                Ok(SteelVal::Void)
            }
            Op::IdGet => engine_says(crate::prelude::id_get(a)),
            Op::IdPut => engine_says(crate::prelude::id_put(a)),
            Op::Vector => Ok(self.vector(a)),
        }
    }

    /// `(vector a ...)`: a spare vector of as many elements filled with `a` (see
    /// [`keep_spares`]), or a new mutable vector on the engine's heap. A collection the
    /// allocation runs keeps what the round holds alive: its registers, the structures as it
    /// sees them, the values it assigns, and the spares.
    fn vector(&mut self, a: &[SteelVal]) -> SteelVal {
        let Round {
            engine,
            slots,
            effects,
            spares,
            ..
        } = self;
        // A spare vector of as many elements, filled where it is.
        let filled = spares
            .iter()
            .position(|s| matches!(s, SteelVal::MutableVector(v) if v.overwrite_if_sole(a)));
        if let Some(at) = filled {
            return spares.swap_remove(at);
        }
        let held = || {
            let assigned = effects.iter().filter_map(|e| match e {
                Effect::Set(_, v) => Some(v),
                _ => None,
            });
            slots
                .iter()
                .chain(assigned)
                .chain(spares.iter())
                .cloned()
                .collect()
        };
        engine.make_mutable_vector(a.to_vec(), held)
    }
}

/// `op` of two numbers where steel's answer is plain: two fixnums (a sum, difference or
/// product that fits; a quotient, remainder or modulo by a divisor other than 0 and -1), or
/// two reals (steel's arithmetic and comparisons of reals are IEEE's). `None` leaves the
/// answer to steel's primitive.
#[inline(always)]
fn plain(op: Op, a: &SteelVal, b: &SteelVal) -> Option<SteelVal> {
    use SteelVal::{BoolV, IntV, NumV};
    Some(match (a, b) {
        (IntV(x), IntV(y)) => {
            let (x, y) = (*x, *y);
            match op {
                Op::Add => IntV(x.checked_add(y)?),
                // (steel: the first plus the negated second)
                Op::Sub => IntV(x.checked_add(y.checked_neg()?)?),
                Op::Mul => IntV(x.checked_mul(y)?),
                Op::NumEq => BoolV(x == y),
                Op::Lt => BoolV(x < y),
                Op::Gt => BoolV(x > y),
                Op::Le => BoolV(x <= y),
                Op::Ge => BoolV(x >= y),
                Op::Quotient if y != 0 && y != -1 => IntV(x / y),
                Op::Remainder if y != 0 && y != -1 => IntV(x % y),
                Op::Modulo if y != 0 && y != -1 => {
                    // The sign of the divisor.
                    let r = x % y;
                    IntV(if r != 0 && (r < 0) != (y < 0) {
                        r + y
                    } else {
                        r
                    })
                }
                _ => return None,
            }
        }
        (NumV(x), NumV(y)) => {
            let (x, y) = (*x, *y);
            match op {
                Op::Add => NumV(x + y),
                Op::Sub => NumV(x + -y),
                Op::Mul => NumV(x * y),
                Op::NumEq => BoolV(x == y),
                Op::Lt => BoolV(x < y),
                Op::Gt => BoolV(x > y),
                Op::Le => BoolV(x <= y),
                Op::Ge => BoolV(x >= y),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Lets go of `v`: a plain number, boolean, character or void holds nothing to count or let
/// go of, and is not handed to the general drop (most registers hold one).
#[inline(always)]
fn release(v: SteelVal) {
    if plain_value(&v) {
        std::mem::forget(v);
    } else {
        drop(v);
    }
}

/// Whether `v` is a plain number, boolean, character or void, which holds nothing to count
/// or let go of.
#[inline(always)]
fn plain_value(v: &SteelVal) -> bool {
    matches!(
        v,
        SteelVal::IntV(_)
            | SteelVal::NumV(_)
            | SteelVal::BoolV(_)
            | SteelVal::CharV(_)
            | SteelVal::Void
    )
}

/// A copy of `v`: plain values copied here, the rest by their own clone.
#[inline(always)]
fn copy(v: &SteelVal) -> SteelVal {
    match v {
        SteelVal::IntV(i) => SteelVal::IntV(*i),
        SteelVal::NumV(x) => SteelVal::NumV(*x),
        SteelVal::BoolV(b) => SteelVal::BoolV(*b),
        other => other.clone(),
    }
}

/// Scheme's truth: everything but `#f`.
fn truthy(v: &SteelVal) -> bool {
    !matches!(v, SteelVal::BoolV(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A styled line's site gives the style its parts read as, whichever of several styles
    /// come in turn, and still when more come than it keeps (those that gave way are read
    /// again); parts that do not read as a style are refused and not kept.
    #[test]
    fn a_site_gives_the_style_its_parts_read_as() {
        use SteelVal::{BoolV, IntV, NumV};
        let backend: Box<dyn voml_llvo::Backend> = Box::new(voml_llvo::LazyRaster::default());
        let mut host = Host::new(voml_llvo::Llvo::new(backend));
        let text = |t: &str| SteelVal::StringV(t.into());
        let parts = |colour: &str, thick: SteelVal| {
            [
                text(colour),
                thick,
                BoolV(true),
                text("margin"),
                BoolV(false),
                IntV(1),
                text("butt"),
            ]
        };
        let mut site = SiteStyles::default();
        let mut check = |site: &mut SiteStyles, p: [SteelVal; 7]| {
            let given = site.style(&mut host, p.each_ref()).unwrap();
            let read = host.read_style_parts("line", p.each_ref()).unwrap();
            assert_eq!(*given, read, "{p:?}");
            given
        };
        let colours = ["red", "blue", "green"];
        // Three colours by two thicknesses, interleaved.
        let thicks = [IntV(1), NumV(2.5)];
        for k in 0..60 {
            check(&mut site, parts(colours[k % 3], thicks[k % 2].clone()));
        }
        assert_eq!(site.kept.len(), 6, "each style read once");
        let blue = check(&mut site, parts("blue", NumV(2.5)));
        assert_eq!(
            (blue.color, blue.thick),
            (voml_llvo::Color::parse("blue").unwrap(), 2.5)
        );
        // More than it keeps: the oldest give way, and every style is still its parts'.
        let many = 3 * STYLES_KEPT;
        for k in (0..many).chain((0..many).rev()).chain(0..6) {
            let thick = if k < 6 {
                thicks[k % 2].clone()
            } else {
                IntV(k as isize)
            };
            check(&mut site, parts(colours[k % 3], thick));
        }
        assert_eq!(site.kept.len(), STYLES_KEPT);
        // A colour or clip that is not one: refused, nothing kept in its place.
        let before: Vec<Style> = site.kept.iter().map(|(_, s)| (**s).clone()).collect();
        assert!(site
            .style(&mut host, parts("nocolour", IntV(1)).each_ref())
            .is_err());
        let mut clip = parts("red", IntV(1));
        clip[3] = text("nowhere");
        assert!(site.style(&mut host, clip.each_ref()).is_err());
        let after: Vec<Style> = site.kept.iter().map(|(_, s)| (**s).clone()).collect();
        assert_eq!(before, after);
    }

    /// The check that lets a round read its row unchecked refuses an instruction that names
    /// a place outside the row: a register, an operand, a structure past the registers, one
    /// whose place overflows.
    #[test]
    fn an_instruction_naming_a_place_outside_the_row_is_refused() {
        // A row of 4: two registers, then the structures.
        let inside = |at: u32| at < 4;
        let add = |dst, a, b| Instr::Binary {
            op: Op::Add,
            dst,
            a: Src(a),
            b: Src(b),
        };
        assert!(add(0, 1, 3).places_all(2, inside));
        assert!(!add(0, 1, 4).places_all(2, inside));
        assert!(!add(4, 1, 3).places_all(2, inside));
        let set = |global| Instr::Set {
            global,
            src: Src(0),
        };
        assert!(set(1).places_all(2, inside));
        assert!(!set(2).places_all(2, inside));
        assert!(!set(u32::MAX).places_all(2, inside));
        let line = |last| {
            Instr::StyledLine(Box::new(StyledLine {
                line: [Src(0); 5],
                style: [Src(0), Src(1), Src(2), Src(3), Src(0), Src(0), Src(last)],
                site: 0,
            }))
        };
        assert!(line(3).places_all(2, inside));
        assert!(!line(9).places_all(2, inside));
    }

    /// Where [`plain`] answers, it answers what steel's primitive answers, value and kind,
    /// at the fixnum limits, for negative divisors, for NaN and the infinities.
    #[test]
    fn plain_answers_are_steels() {
        let ints = [
            isize::MIN,
            isize::MIN + 1,
            -7,
            -2,
            -1,
            0,
            1,
            2,
            3,
            7,
            isize::MAX,
        ];
        let reals = [
            f64::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            0.5,
            3.0,
            f64::INFINITY,
            f64::NAN,
        ];
        let values: Vec<SteelVal> = ints
            .iter()
            .map(|&i| SteelVal::IntV(i))
            .chain(reals.iter().map(|&r| SteelVal::NumV(r)))
            .collect();
        let ops = [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::NumEq,
            Op::Lt,
            Op::Gt,
            Op::Le,
            Op::Ge,
            Op::Quotient,
            Op::Remainder,
            Op::Modulo,
        ];
        let mut answered = 0;
        for op in ops {
            for a in &values {
                for b in &values {
                    let Some(mine) = plain(op, a, b) else {
                        continue;
                    };
                    answered += 1;
                    let args = [a.clone(), b.clone()];
                    let steel = match op {
                        Op::Add => numbers::add_primitive(&args),
                        Op::Sub => numbers::subtract_primitive(&args),
                        Op::Mul => numbers::multiply_primitive(&args),
                        Op::NumEq => number_equality(a, b),
                        Op::Lt => lt_primitive(&args),
                        Op::Gt => gt_primitive(&args),
                        Op::Le => lte_primitive(&args),
                        Op::Ge => gte_primitive(&args),
                        Op::Quotient => numbers::quotient(&args),
                        Op::Remainder => numbers::remainder(&args),
                        _ => numbers::modulo(&args),
                    }
                    .unwrap_or_else(|e| {
                        panic!("{op:?} {a} {b}: steel fails ({e}), plain gives {mine}")
                    });
                    let same = match (&mine, &steel) {
                        (SteelVal::NumV(x), SteelVal::NumV(y)) => x.to_bits() == y.to_bits(),
                        (SteelVal::IntV(x), SteelVal::IntV(y)) => x == y,
                        (SteelVal::BoolV(x), SteelVal::BoolV(y)) => x == y,
                        _ => false,
                    };
                    assert!(same, "{op:?} {a} {b}: plain {mine:?}, steel {steel:?}");
                }
            }
        }
        assert!(answered > 1000, "{answered}");
    }
}
