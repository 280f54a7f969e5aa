//! How the format adapters keep the names of a trace (containers, types, states, keys):
//! maps with a fast hash, maps keyed by names that find a short name without comparing
//! strings, and names given numbers and codes in the order they first appear.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::layout::MAX_CODES;

/// A hash map with a fast hash for the adapters' look-ups of names and numbers (a few per
/// record): the multiplicative hash the Rust compiler uses, not the standard library's
/// SipHash. It does not resist inputs made to collide: at worst such a trace reads slowly.
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The Rust compiler's `FxHasher`: a rotate, a xor and a multiply per word.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The longest name kept packed in one word (see [`NameMap`]).
const PACKED: usize = 15;

/// A name of up to [`PACKED`] bytes as one 128-bit word: its bytes in the low fifteen, its
/// length in the last (so that `a` and `a\0` differ). Read in at most two overlapping loads
/// of each word, not copied byte by byte through memory: this runs on every name of every
/// record.
#[inline]
fn pack(name: &str) -> Option<u128> {
    let b = name.as_bytes();
    let n = b.len();
    let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let half = |i: usize| u64::from(u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes")));
    let (lo, hi) = match n {
        0 => (0, 0),
        // The overlapping loads hold each byte at least once; with the length they tell
        // every name apart.
        1..=3 => (
            u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
            0,
        ),
        4..=7 => (half(0) | half(n - 4) << 32, 0),
        // The last load's bytes beyond the first eight (none for eight).
        8..=PACKED => (
            word(0),
            word(n - 8).checked_shr(8 * (16 - n) as u32).unwrap_or(0),
        ),
        _ => return None,
    };
    Some(u128::from(lo) | u128::from(hi | (n as u64) << 56) << 64)
}

/// A map keyed by names. Most names in traces are short (`r23`, `S`, `MPI state`): those of
/// up to 15 bytes are kept packed in one word, so a look-up hashes two words and compares
/// two, without reading a string; longer names are kept as strings.
#[derive(Debug)]
pub(crate) struct NameMap<V> {
    short: FastMap<u128, V>,
    long: FastMap<Box<str>, V>,
}

impl<V> Default for NameMap<V> {
    fn default() -> Self {
        NameMap {
            short: FastMap::default(),
            long: FastMap::default(),
        }
    }
}

impl<V> NameMap<V> {
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        match pack(name) {
            Some(k) => self.short.get(&k),
            None => self.long.get(name),
        }
    }

    /// Keeps `value` under `name`; what was there before.
    pub(crate) fn insert(&mut self, name: &str, value: V) -> Option<V> {
        match pack(name) {
            Some(k) => self.short.insert(k, value),
            None => self.long.insert(name.into(), value),
        }
    }

    /// The value under `name`, made by `make` if there is none.
    pub(crate) fn get_or_insert_with(&mut self, name: &str, make: impl FnOnce() -> V) -> &mut V {
        match pack(name) {
            Some(k) => self.short.entry(k).or_insert_with(make),
            None => {
                if !self.long.contains_key(name) {
                    self.long.insert(name.into(), make());
                }
                self.long.get_mut(name).expect("just inserted")
            }
        }
    }

    pub(crate) fn remove(&mut self, name: &str) -> Option<V> {
        match pack(name) {
            Some(k) => self.short.remove(&k),
            None => self.long.remove(name),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    pub(crate) fn clear(&mut self) {
        self.short.clear();
        self.long.clear();
    }

    /// Takes every value out, in no particular order.
    pub(crate) fn drain_values(&mut self) -> impl Iterator<Item = V> + '_ {
        self.short
            .drain()
            .map(|(_, v)| v)
            .chain(self.long.drain().map(|(_, v)| v))
    }
}

/// Codes given to names in the order they first appear, from `first`; bounded by
/// [`MAX_CODES`].
#[derive(Debug, Default)]
pub(crate) struct Codes {
    map: NameMap<i64>,
    first: i64,
}

impl Codes {
    pub(crate) fn starting_at(first: i64) -> Codes {
        Codes {
            map: NameMap::default(),
            first,
        }
    }

    /// The code of `name`, giving it the next one if it has none.
    pub(crate) fn code(&mut self, name: &str) -> i64 {
        if let Some(&c) = self.map.get(name) {
            return c;
        }
        if self.map.len() >= MAX_CODES {
            return self.first + MAX_CODES as i64;
        }
        let c = self.first + self.map.len() as i64;
        self.map.insert(name, c);
        c
    }
}

/// Names kept once each and referred to by number (open states keep a number, not a copy of
/// their name); bounded by [`MAX_CODES`], beyond which names read as `(other)`.
#[derive(Debug, Default)]
pub(crate) struct Names {
    map: NameMap<u32>,
    list: Vec<String>,
}

impl Names {
    /// The number of `name`, keeping it if new.
    pub(crate) fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.map.get(name) {
            return i;
        }
        if self.list.len() >= MAX_CODES {
            return u32::MAX;
        }
        let i = self.list.len() as u32;
        self.list.push(name.to_owned());
        self.map.insert(name, i);
        i
    }

    pub(crate) fn get(&self, id: u32) -> &str {
        self.list.get(id as usize).map_or("(other)", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_names_differ_when_the_names_do() {
        // Every name of up to three bytes over a small alphabet, and names of every length
        // differing in one byte at each place.
        let alphabet = [b'a', b'b', 0, 0x7f];
        let mut names: Vec<Vec<u8>> = vec![vec![]];
        for len in 1..=3 {
            let mut out = Vec::new();
            for n in names.iter().filter(|n| n.len() == len - 1) {
                for &c in &alphabet {
                    let mut m = n.clone();
                    m.push(c);
                    out.push(m);
                }
            }
            names.extend(out);
        }
        for len in 4..=PACKED {
            let base = vec![b'x'; len];
            names.push(base.clone());
            for at in 0..len {
                let mut m = base.clone();
                m[at] = b'y';
                names.push(m);
            }
        }
        let mut seen = std::collections::HashMap::new();
        for n in &names {
            let s = String::from_utf8(n.clone()).expect("ASCII");
            let key = pack(&s).expect("short");
            if let Some(other) = seen.insert(key, n.clone()) {
                panic!("{n:?} and {other:?} pack the same");
            }
        }
        assert_eq!(pack(&"z".repeat(PACKED + 1)), None);
    }

    #[test]
    fn short_and_long_names_are_told_apart_exactly() {
        let mut map = NameMap::default();
        let names = [
            "",
            "a",
            "a\0",
            "\0",
            "r23",
            "r2",
            "exactly15bytes!",
            "sixteen bytes!!!",
            "sixteen bytes!!?",
            "a much longer name with spaces",
            "é",
            "e",
        ];
        for (i, n) in names.iter().enumerate() {
            assert_eq!(map.insert(n, i), None, "{n:?}");
        }
        assert_eq!(map.len(), names.len());
        for (i, n) in names.iter().enumerate() {
            assert_eq!(map.get(n), Some(&i), "{n:?}");
        }
        assert_eq!(map.get("r"), None);
        assert_eq!(map.get("sixteen bytes!!"), None);
        *map.get_or_insert_with("r23", || 99) += 100;
        assert_eq!(map.get("r23"), Some(&104));
        assert_eq!(
            *map.get_or_insert_with("a new name longer than fifteen", || 7),
            7
        );
        assert_eq!(map.remove("sixteen bytes!!!"), Some(7));
        assert_eq!(map.get("sixteen bytes!!!"), None);
        let mut all: Vec<usize> = map.drain_values().collect();
        all.sort_unstable();
        assert_eq!(all.len(), names.len());
        assert_eq!(map.len(), 0);
    }

    #[test]
    fn codes_in_first_seen_order_and_bounded() {
        let mut codes = Codes::starting_at(1);
        assert_eq!(codes.code("a"), 1);
        assert_eq!(codes.code("b"), 2);
        assert_eq!(codes.code("a"), 1);
        for i in 0..MAX_CODES + 10 {
            codes.code(&i.to_string());
        }
        assert_eq!(codes.code("never seen"), 1 + MAX_CODES as i64);
        assert_eq!(codes.code("b"), 2);
    }
}
