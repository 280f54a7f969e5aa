//! Reading one line at a time into a reused buffer with a length limit: the line-oriented
//! readers (PICL, Pajé, Paraver) share it, so that none of them can be made to grow a line
//! buffer without bound by an input that never ends its line.

use std::io::{self, BufRead};

use crate::error::{LineError, TraceErrorKind};

/// How a line read by [`read_line`] ended.
pub(crate) struct RawLine {
    /// Bytes beyond the length limit were dropped.
    pub(crate) overflow: bool,
    /// The line ended with `\n` (not with the end of the input).
    pub(crate) terminated: bool,
}

/// Reads up to the next `\n` into `buf` (cleared first, terminator not kept), keeping at most
/// `max` bytes so that a line without end cannot exhaust memory; `None` at end of input.
pub(crate) fn read_line<R: BufRead>(
    inner: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<RawLine>> {
    buf.clear();
    let mut overflow = false;
    let mut any = false;
    loop {
        let avail = match inner.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(any.then_some(RawLine {
                overflow,
                terminated: false,
            }));
        }
        any = true;
        let newline = find_newline(avail);
        let chunk = &avail[..newline.unwrap_or(avail.len())];
        let room = max.saturating_sub(buf.len());
        if chunk.len() > room {
            overflow = true;
            buf.extend_from_slice(&chunk[..room]);
        } else {
            buf.extend_from_slice(chunk);
        }
        let used = newline.map_or(avail.len(), |n| n + 1);
        inner.consume(used);
        if newline.is_some() {
            return Ok(Some(RawLine {
                overflow,
                terminated: true,
            }));
        }
    }
}

/// The text of a line read by [`read_line`] with limit `max`, or why it has none (too long,
/// not UTF-8). A `\r` before the `\n` is dropped.
pub(crate) fn text_of<'a>(buf: &'a [u8], raw: &RawLine, max: usize) -> Result<&'a str, LineError> {
    if raw.overflow {
        return Err(LineError {
            column: max + 1,
            kind: TraceErrorKind::LineTooLong,
            message: format!("line longer than {max} bytes; the rest of it is skipped"),
        });
    }
    let buf = buf.strip_suffix(b"\r").unwrap_or(buf);
    std::str::from_utf8(buf).map_err(|err| {
        let at = err.valid_up_to();
        LineError {
            column: at + 1,
            kind: TraceErrorKind::InvalidUtf8,
            message: format!("invalid UTF-8: unexpected byte 0x{:02X}", buf[at]),
        }
    })
}

/// Position of the first `\n`, a word at a time: lines are short, but this runs on every byte
/// of the input.
#[inline]
pub(crate) fn find_newline(hay: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    let mut chunks = hay.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("chunk of 8"));
        let x = word ^ NL;
        let found = x.wrapping_sub(LO) & !x & HI;
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| offset + i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    #[test]
    fn find_newline_agrees_with_naive_search() {
        let mut hay = vec![b'a'; 40];
        assert_eq!(find_newline(&hay), None);
        for pos in 0..40 {
            hay[pos] = b'\n';
            for start in 0..=pos {
                assert_eq!(find_newline(&hay[start..]), Some(pos - start));
            }
            hay[pos] = 0x8a;
        }
    }

    #[test]
    fn lines_are_cut_at_the_limit_and_read_to_their_end() {
        let mut input = BufReader::with_capacity(4, Cursor::new(b"abcdefgh\nij".to_vec()));
        let mut buf = Vec::new();
        let first = read_line(&mut input, &mut buf, 5).unwrap().unwrap();
        assert_eq!(
            (buf.as_slice(), first.overflow, first.terminated),
            (&b"abcde"[..], true, true)
        );
        let last = read_line(&mut input, &mut buf, 5).unwrap().unwrap();
        assert_eq!(
            (buf.as_slice(), last.overflow, last.terminated),
            (&b"ij"[..], false, false)
        );
        assert!(read_line(&mut input, &mut buf, 5).unwrap().is_none());
    }
}
