//! Marks of where the code runs: every loop and procedure body written in the spec starts by
//! recording its place in a global, so that a runaway stopped by the runtime's watchdog is
//! reported at the loop that was running even when the Scheme engine cannot say where.
//!
//! steel's interrupt error carries the span of the instruction it stopped at, but the
//! instructions its expander adds to a loop (unboxing the loop procedure, the glue of a tail
//! call) have none: a tight `(let loop () (loop))` stops on one of them about one time in
//! five, a `do` loop or a mutual recursion more often, and steel's stack trace does not help
//! (it reads each caller's return address in the callee's span table). So each named `let`,
//! `do`, `while`, `lambda` (`fn`, `λ`), `case-lambda` clause and procedure `define` (`defn`)
//! of the spec's code gets `(set! voml/here K)` as the first form of its body, K being the
//! offset in the program of the form's opening parenthesis; the runtime maps K back through
//! the program's source map. A global `set!` of a constant is three VM instructions, about
//! 60 ns with the heap lock steel takes for it.
//!
//! Only code copied verbatim from the sources is marked (the compiler's own glue runs no
//! loops), never quoted data, and never where the mark would nest deeper than
//! [`voml_ir::MAX_NESTING`].

use voml_ir::{Program as Frag, HERE_GLOBAL, MAX_NESTING};

use voml_ir::tokens::{Token, Tokens};

/// `program` with a mark at the start of every loop and procedure body of the spec's code.
pub fn mark_bodies(program: &Frag) -> Frag {
    // (byte offset where a mark goes, byte offset of its form's opening parenthesis)
    let mut points: Vec<(usize, usize)> = Vec::new();
    // The program's top-level forms one at a time: a form's own tokens are all its marks
    // need, and a large program's tokens would take several times its size at once.
    let mut code = Code {
        text: &program.text,
        toks: Vec::new(),
        close: Vec::new(),
    };
    let mut depth = 0usize;
    for tok in Tokens::new(&program.text) {
        match tok {
            Token::Open(_) => depth += 1,
            Token::Close(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        let complete = depth == 0 && !matches!(tok, Token::Prefix(_));
        code.toks.push(tok);
        if complete {
            code.find_marks(program, &mut points);
            code.toks.clear();
        }
    }
    code.find_marks(program, &mut points);
    if points.is_empty() {
        return program.clone();
    }
    points.sort_unstable();

    // Room for the program, its marks and the segments they split, at once: the program is
    // large when the spec is, and a vector grown by doubling holds up to twice its length.
    let mut out = Frag::default();
    out.text
        .reserve_exact(program.text.len() + points.len() * (HERE_GLOBAL.len() + 16));
    out.map
        .reserve_exact(program.map.len() + 2 * points.len() + 1);
    let mut copied = 0;
    // (offset of a mark in `program`, bytes inserted up to and including it)
    let mut inserted: Vec<(usize, usize)> = Vec::with_capacity(points.len());
    for (at, open) in points {
        // The marks placed before the form's parenthesis shift it; they are all placed
        // already, since a form's own marks come after its parenthesis.
        let before = inserted.partition_point(|&(a, _)| a <= open);
        let shift = before.checked_sub(1).map_or(0, |k| inserted[k].1);
        let mark = format!(" (set! {HERE_GLOBAL} {})", open + shift);
        out.push_range(program, copied..at);
        copied = at;
        // An error inside the mark is reported at the form it marks.
        let source = program.source_of(open).unwrap_or_default();
        out.push(&mark, source, false);
        let total = inserted.last().map_or(0, |&(_, t)| t) + mark.len();
        inserted.push((at, total));
    }
    out.push_range(program, copied..program.text.len());
    out
}

/// Whether `tok` (a form's head) was copied verbatim from the sources.
fn verbatim(program: &Frag, tok: Option<&Token>) -> bool {
    matches!(tok, Some(Token::Atom(r)) if program.verbatim(r.start))
}

/// The program's tokens with each parenthesis paired.
struct Code<'t> {
    text: &'t str,
    toks: Vec<Token>,
    /// For an opening parenthesis, the index of its closing one (`usize::MAX` if none).
    close: Vec<usize>,
}

impl<'t> Code<'t> {
    /// Adds to `points` the marks of the tokens held (whole forms), pairing their
    /// parentheses first.
    fn find_marks(&mut self, program: &Frag, points: &mut Vec<(usize, usize)>) {
        self.close.clear();
        self.close.resize(self.toks.len(), usize::MAX);
        let mut open = Vec::new();
        for (i, tok) in self.toks.iter().enumerate() {
            match tok {
                Token::Open(_) => open.push(i),
                Token::Close(_) => {
                    if let Some(o) = open.pop() {
                        self.close[o] = i;
                    }
                }
                _ => {}
            }
        }
        let mut depth = 0usize;
        let mut i = 0;
        while i < self.toks.len() {
            match &self.toks[i] {
                // Quoted data, quasi-quoted templates, vector literals and datum comments do
                // not run as written: leave them alone.
                Token::Prefix(_) => {
                    i = self.datum_end(i).unwrap_or(self.toks.len());
                    continue;
                }
                Token::Open(r) => {
                    if matches!(self.head(i), Some("quote" | "quasiquote")) {
                        i = self.datum_end(i).unwrap_or(self.toks.len());
                        continue;
                    }
                    depth += 1;
                    if depth < MAX_NESTING && verbatim(program, self.toks.get(i + 1)) {
                        if let Some(starts) = self.body_starts(i) {
                            points.extend(starts.into_iter().map(|at| (at, r.start)));
                        }
                    }
                }
                Token::Close(_) => depth = depth.saturating_sub(1),
                Token::Atom(_) | Token::String(_) => {}
            }
            i += 1;
        }
    }

    /// The token index right after the datum starting at token `i` (with its quote-like
    /// prefixes), or `None` if there is none or it does not close.
    fn datum_end(&self, mut i: usize) -> Option<usize> {
        while matches!(self.toks.get(i)?, Token::Prefix(_)) {
            i += 1;
        }
        match self.toks.get(i)? {
            Token::Open(_) => self.close[i].checked_add(1),
            Token::Close(_) => None,
            _ => Some(i + 1),
        }
    }

    /// The atom right after the parenthesis at token `open`.
    fn head(&self, open: usize) -> Option<&'t str> {
        self.atom(open + 1)
    }

    fn atom(&self, i: usize) -> Option<&'t str> {
        match self.toks.get(i)? {
            Token::Atom(r) => Some(&self.text[r.clone()]),
            _ => None,
        }
    }

    fn is_open(&self, i: usize) -> bool {
        matches!(self.toks.get(i), Some(Token::Open(_)))
    }

    /// The token index after the datum at `i` inside a list; `None` at the end of the list,
    /// or before a datum comment (which would throw the count of parts off).
    fn next(&self, i: usize) -> Option<usize> {
        match self.toks.get(i)? {
            Token::Close(_) => None,
            Token::Prefix(r) if &self.text[r.clone()] == "#;" => None,
            _ => self.datum_end(i),
        }
    }

    /// `start` if a body begins there: procedures need one (a mark must not make an empty,
    /// refused body valid); `do` and `while` run without one.
    fn body(&self, start: usize) -> Option<usize> {
        match self.toks.get(start)? {
            Token::Close(_) => None,
            _ => Some(start),
        }
    }

    /// Where the bodies of the form opening at token `open` begin (byte offsets right after
    /// what precedes each body), if the form is a loop or a procedure.
    fn body_starts(&self, open: usize) -> Option<Vec<usize>> {
        let starts = match self.head(open)? {
            // (let name (bindings) body...)
            "let" if self.atom(open + 2).is_some() && self.is_open(open + 3) => {
                vec![self.body(self.next(open + 3)?)?]
            }
            // (do (specs) (test result...) command...)
            "do" if self.is_open(open + 2) => {
                let test = self.next(open + 2)?;
                if !self.is_open(test) {
                    return None;
                }
                vec![self.next(test)?]
            }
            // (define (name formals...) body...)
            "define" | "defn" if self.is_open(open + 2) => {
                vec![self.body(self.next(open + 2)?)?]
            }
            // (lambda formals body...)
            "lambda" | "fn" | "λ" => vec![self.body(self.next(open + 2)?)?],
            // (while test body...) or (while test do body...)
            "while" => {
                let body = self.next(open + 2)?;
                vec![if self.atom(body) == Some("do") {
                    body + 1
                } else {
                    body
                }]
            }
            // (case-lambda (formals body...) ...)
            "case-lambda" => {
                let mut starts = Vec::new();
                let mut clause = open + 2;
                while self.is_open(clause) {
                    starts.push(self.body(self.next(clause + 1)?)?);
                    clause = self.next(clause)?;
                }
                starts
            }
            _ => return None,
        };
        // Each body must begin inside the form, or its mark would land outside it.
        let end = *self.close.get(open)?;
        if end == usize::MAX || starts.iter().any(|&s| s == 0 || s > end) {
            return None;
        }
        Some(
            starts
                .into_iter()
                .map(|t| self.toks[t - 1].range().end)
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use voml_ir::Span;

    /// `code` as verbatim source text of file 0.
    fn spec_code(code: &str) -> Frag {
        let mut frag = Frag::default();
        frag.push(code, Span::new(0, 0, code.len()), true);
        frag
    }

    /// The marks of `program`: (offset of the mark, what the offset it records points at).
    fn marks(program: &Frag) -> Vec<(usize, String)> {
        let text = &program.text;
        let needle = format!("(set! {HERE_GLOBAL} ");
        text.match_indices(&needle)
            .map(|(at, _)| {
                let rest = &text[at + needle.len()..];
                let k: usize = rest[..rest.find(')').unwrap()].parse().unwrap();
                let form = &text[k..];
                let head = form.split_whitespace().next().unwrap().to_string();
                (at, head)
            })
            .collect()
    }

    #[test]
    fn every_loop_and_procedure_body_records_where_its_form_starts() {
        let code = "(define (f x) (let loop ((i 0)) (if (< i x) (loop (+ i 1)))))\n\
                    (define g (lambda args (do ((i 0 (+ i 1))) ((= i 3) i) (display i))))\n\
                    (define h (case-lambda [(a) a] [(a b) (fn (c) c)]))\n\
                    (while (f 1) do (λ () 2))\n\
                    (while #f 3)\n";
        let marked = mark_bodies(&spec_code(code));
        let heads: Vec<String> = marks(&marked).into_iter().map(|(_, h)| h).collect();
        assert_eq!(
            heads,
            [
                "(define",
                "(let",
                "(lambda",
                "(do",
                "(case-lambda",
                "(case-lambda",
                "(fn",
                "(while",
                "(λ",
                "(while"
            ]
        );
        assert_eq!(crate::scheme::read_error(&marked.text), None);
        // Bodies keep their forms, after the mark; the `let` written at offset 14 is at 33
        // once the 19 bytes of `define`'s mark precede it.
        assert!(marked
            .text
            .contains(&format!("(let loop ((i 0)) (set! {HERE_GLOBAL} 33) (if")));
        assert!(marked.text.contains("((= i 3) i) (set! voml/here "));
        assert!(marked.text.contains("(while (f 1) do (set! voml/here "));
        // A `do` whose work is all in its steps runs its (empty) commands each iteration.
        let marked = mark_bodies(&spec_code("(do ((i 0 (+ i 1))) ((= i 3)))"));
        assert_eq!(
            marked.text,
            format!("(do ((i 0 (+ i 1))) ((= i 3)) (set! {HERE_GLOBAL} 0))")
        );
    }

    #[test]
    fn a_mark_maps_to_the_opening_parenthesis_of_its_form() {
        let code = "  (let spin () (spin))";
        let marked = mark_bodies(&spec_code(code));
        let (at, _) = marks(&marked)[0];
        assert_eq!(marked.source_of(at), Some(Span::new(0, 2, 3)));
        assert_eq!(marked.source_of(2), Some(Span::new(0, 2, 3)));
        // The code after the mark still maps to where it was written.
        let spin = marked.text.rfind("(spin)").unwrap();
        assert_eq!(marked.source_of(spin), Some(Span::new(0, 15, 16)));
    }

    #[test]
    fn data_plain_lets_and_values_are_left_alone() {
        let code = "(define x 1) (let ((y 2)) y) '(let loop () (loop)) `(lambda () ,(f))\n\
                    (quote (define (f) 1)) #(lambda) #;(let loop () (loop))\n\
                    \"(lambda () 1)\" ; (lambda () 1)\n\
                    (let loop) (lambda) (lambda (x)) (define (f)) (case-lambda [(a) 1] [(b)])\n\
                    (define (g";
        let marked = mark_bodies(&spec_code(code));
        assert_eq!(marked, spec_code(code));
    }

    #[test]
    fn the_compilers_own_code_is_not_marked() {
        let mut program = Frag::default();
        program.push("(define (voml/ep/c/input/0) ", Span::default(), false);
        program.push("(let loop () (loop))", Span::new(0, 0, 20), true);
        program.push(")", Span::default(), false);
        let marked = mark_bodies(&program);
        assert_eq!(marks(&marked).len(), 1);
        assert!(marked
            .text
            .starts_with("(define (voml/ep/c/input/0) (let loop () (set! voml/here 28)"));
    }

    #[test]
    fn a_mark_never_nests_deeper_than_the_limit() {
        let deep = MAX_NESTING - 1;
        let code = format!(
            "{}(lambda () 1)(lambda () 2){}",
            "(".repeat(deep - 1),
            ")".repeat(deep - 1)
        );
        let marked = mark_bodies(&spec_code(&code));
        assert_eq!(marks(&marked).len(), 2);
        assert_eq!(marked.nesting_depth(), MAX_NESTING);
        let too_deep = format!("{}(lambda () 1){}", "(".repeat(deep), ")".repeat(deep));
        assert_eq!(mark_bodies(&spec_code(&too_deep)), spec_code(&too_deep));
    }
}
