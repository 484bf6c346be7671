//! "Did you mean": the registered tool name closest to an unknown one, and whether a property
//! name given is a near miss of a declared one (the fix a violation suggests).
//!
//! Both look names up in an index of the strings that deleting at most two characters makes of
//! each (a deletion neighbourhood, as SymSpell keeps): two names at most two edits apart share
//! one of those strings, so a lookup generates the query's and measures only the names it meets,
//! however many names there are.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use crate::names::MAX_TOOL_NAME_LEN;

/// A registered name, prepared for "did you mean" (names are ASCII: letters, digits, `_`, and
/// `-` or `.` where the naming rule allows them).
#[derive(Clone, Debug)]
struct Candidate {
    name: String,
    lower: Vec<u8>,
    /// `lower` without separators (see `plain`).
    plain: Vec<u8>,
    /// Which symbols the name holds, one bit each: a cheap lower bound on edit distance.
    symbols: u64,
}

impl Candidate {
    fn new(name: &str) -> Self {
        let lower = fold(name);
        Candidate {
            name: name.to_string(),
            symbols: symbols(&lower),
            plain: plain(&lower),
            lower,
        }
    }
}

/// The registered names, indexed for "did you mean".
#[derive(Default)]
pub struct Suggestions {
    /// In the order they were added: a name's id is its place here.
    names: Vec<Candidate>,
    /// The names up to [`INDEXED_LEN`] symbols long once plain (see `plain`), by their
    /// deletion neighbourhoods.
    index: Neighbours,
    /// The ids of longer names (MCP's names reach 128 characters), measured one by one.
    long: Vec<u32>,
}

/// The longest plain name the index holds. The strings two deletions make of a name of `n`
/// symbols number about n²/2, each a map entry of about 14 bytes: 79 for a name of 12 letters
/// (about 1 KiB), 1,177 for 48 (16 KiB). Names are seldom longer; the few that are (MCP allows
/// 128 characters) are measured one by one.
const INDEXED_LEN: usize = 48;

/// Up to this many names, a lookup measures each rather than make the strings of its
/// neighbourhood (about a hundred hashes for a name of 14 letters): the answer is the same.
const MEASURE_ALL_UP_TO: usize = 48;

impl Suggestions {
    /// Adds a registered name.
    pub fn insert(&mut self, name: &str) {
        let id = u32::try_from(self.names.len()).expect("fewer than 2^31 tools");
        let c = Candidate::new(name);
        if c.plain.len() <= INDEXED_LEN {
            self.index.insert(id, &c.plain);
        } else {
            self.long.push(id);
        }
        self.names.push(c);
    }

    /// The registered name closest to `name`, if it is a typo of one: the two, lower case and
    /// without the separators `_`, `-` and `.`, are at most two edits apart (insertions,
    /// deletions, substitutions, swaps of neighbours), and, letter case aside, at most 2 edits
    /// or a third of the registered name's length apart. The closest by the second measure
    /// wins, then the first by name. So `getWeatherForecast` finds `get_weather_forecast`,
    /// `gte_wether` finds `get_weather`.
    ///
    /// The names that can be two edits away are found in the index, whatever the number of
    /// tools, plus the few names too long for it. Each is filtered by length (an edit distance
    /// of `k` needs lengths within `k`) and by the symbols both names hold (one edit changes at
    /// most two), held to the two edits, then measured with a Levenshtein band of width
    /// `2k + 1` that stops once a row exceeds `k`; `k` shrinks to the best distance so far.
    pub fn closest(&self, name: &str) -> Option<&str> {
        // Names hold at most MAX_TOOL_NAME_LEN characters (128, under MCP's rule), and a typo
        // of one at most a third as many edits: anything longer is no typo of a registered name.
        const LONGEST: usize = MAX_TOOL_NAME_LEN + MAX_TOOL_NAME_LEN / 3;
        if name.chars().nth(LONGEST).is_some() {
            return None;
        }
        let wanted = fold(name);
        let wanted_plain = plain(&wanted);
        let wanted_symbols = symbols(&wanted);
        let ids: Vec<u32> = if self.names.len() <= MEASURE_ALL_UP_TO {
            (0u32..).take(self.names.len()).collect()
        } else {
            let mut ids = Vec::new();
            // Two edits from a name the index holds: no longer than it and two more.
            if wanted_plain.len() <= INDEXED_LEN + 2 {
                self.index.candidates(&wanted_plain, &mut ids);
            }
            ids.extend_from_slice(&self.long);
            ids
        };
        let mut best: Option<(usize, &str)> = None;
        let mut cells = 0;
        for id in ids {
            let c = &self.names[id as usize];
            let allowed = 2.max(c.lower.len() / 3);
            // Equally close names are measured too: the first by name wins.
            let k = best.map_or(allowed, |(d, _)| allowed.min(d));
            if wanted.len().abs_diff(c.lower.len()) > k
                || wanted_plain.len().abs_diff(c.plain.len()) > 2
                || (wanted_symbols ^ c.symbols).count_ones() as usize > 2 * k
            {
                continue;
            }
            cells += wanted_plain.len() * 5 + wanted.len() * (2 * k + 1);
            if cells > MAX_CELLS {
                break;
            }
            if !swaps_within(&wanted_plain, &c.plain, 2) {
                continue;
            }
            if let Some(d) = bounded_distance(&wanted, &c.lower, k) {
                if best.is_none_or(|(b, n)| (d, c.name.as_str()) < (b, n)) {
                    best = Some((d, &c.name));
                }
            }
        }
        best.map(|(_, n)| n)
    }
}

/// Lowercase ASCII; any other character becomes one byte no name holds (still one edit).
fn fold(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_ascii_lowercase() as u8
            } else {
                0xFF
            }
        })
        .collect()
}

/// A folded name (see `fold`) without the separators `_`, `-` and `.`: `read_file`, `readFile`
/// and `read-file` are one plain name.
fn plain(lower: &[u8]) -> Vec<u8> {
    lower
        .iter()
        .copied()
        .filter(|b| !matches!(b, b'_' | b'-' | b'.'))
        .collect()
}

/// Whether `a` and `b` are at most `k` edits apart, counting insertions, deletions,
/// substitutions and swaps of neighbours (the optimal string alignment distance), computed in
/// the band of cells within `k` of the diagonal (a cell outside it is more than `k` already).
fn swaps_within(a: &[u8], b: &[u8], k: usize) -> bool {
    let (m, n) = (a.len(), b.len());
    if m.abs_diff(n) > k {
        return false;
    }
    let far = k + 1;
    let mut before = vec![far; n + 1];
    let mut prev: Vec<usize> = (0..=n).map(|j| j.min(far)).collect();
    let mut cur = vec![far; n + 1];
    for i in 1..=m {
        cur.fill(far);
        cur[0] = i.min(far);
        let mut row_min = cur[0];
        for j in i.saturating_sub(k).max(1)..=(i + k).min(n) {
            let mut d = (prev[j - 1] + usize::from(a[i - 1] != b[j - 1]))
                .min(prev[j] + 1)
                .min(cur[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            cur[j] = d.min(far);
            row_min = row_min.min(cur[j]);
        }
        if row_min > k {
            return false;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[n] <= k
}

fn symbols(lower: &[u8]) -> u64 {
    lower.iter().fold(0u64, |set, &b| {
        let bit = match b {
            b'a'..=b'z' => b - b'a',
            b'0'..=b'9' => 26 + b - b'0',
            b'_' => 36,
            _ => 37 + b % 27,
        };
        set | 1 << bit
    })
}

/// Most edit-distance cells computed for one unknown name: the index hands a lookup a few
/// names, and a pathological registry (names that share their neighbourhoods) costs no more
/// than this.
const MAX_CELLS: usize = 1 << 20;

/// Names (as sequences of symbols) by every string that deleting at most two of their symbols
/// makes: two names at most two edits apart (insertions, deletions, substitutions, and swaps of
/// neighbours) share one, as each edit is undone by deleting one symbol from one name or from
/// both. A lookup makes the query's strings and gathers the names filed under them: its cost
/// does not grow with the number of names, only with the query's length (about n²/2 strings).
///
/// The strings are kept as 32-bit hashes, each made in constant time from the name's prefix
/// hashes: a collision only adds a name to measure, never loses one.
#[derive(Default)]
pub(super) struct Neighbours {
    /// A hash -> the one id filed under it, or `SHARED` + the place in `shared` of several.
    buckets: HashMap<u32, u32, BuildHasherDefault<KeyHasher>>,
    shared: Vec<Vec<u32>>,
}

const SHARED: u32 = 1 << 31;

impl Neighbours {
    /// Files `id` under the strings two deletions or fewer make of `name`.
    pub(super) fn insert<T: Copy + Into<u64>>(&mut self, id: u32, name: &[T]) {
        debug_assert!(id < SHARED);
        let (buckets, shared) = (&mut self.buckets, &mut self.shared);
        deletion_keys(name, |key| match buckets.entry(key) {
            Entry::Vacant(e) => {
                e.insert(id);
            }
            Entry::Occupied(mut e) => {
                let at = *e.get();
                if at & SHARED != 0 {
                    // A name makes some strings more than once (`aab` without either `a`):
                    // those come one after another into the same list.
                    let ids = &mut shared[(at & !SHARED) as usize];
                    if ids.last() != Some(&id) {
                        ids.push(id);
                    }
                } else if at != id {
                    let place = u32::try_from(shared.len()).expect("fewer than 2^31 lists");
                    shared.push(vec![at, id]);
                    e.insert(SHARED | place);
                }
            }
        });
    }

    /// Adds to `out` the ids filed under a string two deletions or fewer make of `name`: every
    /// name at most two edits from it (and a few more), sorted, each once.
    pub(super) fn candidates<T: Copy + Into<u64>>(&self, name: &[T], out: &mut Vec<u32>) {
        deletion_keys(name, |key| match self.buckets.get(&key) {
            Some(&at) if at & SHARED != 0 => {
                out.extend_from_slice(&self.shared[(at & !SHARED) as usize])
            }
            Some(&id) => out.push(id),
            None => {}
        });
        out.sort_unstable();
        out.dedup();
    }
}

/// Hands `each` the hash of every string made by deleting zero, one or two symbols of `s` (a
/// string made several ways comes several times).
///
/// With `P[i]` the polynomial hash of `s[..i]` (`P[i + 1] = P[i] * B + s[i] + 1`, wrapping), the
/// hash of `s` without position `i`, and without positions `i < j`, are sums of three products
/// of prefix hashes and powers of `B`: constant time each.
fn deletion_keys<T: Copy + Into<u64>>(s: &[T], mut each: impl FnMut(u32)) {
    const B: u64 = 0x9E37_79B9_7F4A_7C15;
    let n = s.len();
    let mut prefix = Vec::with_capacity(n + 1);
    let mut power = Vec::with_capacity(n + 1);
    let (mut h, mut p) = (0u64, 1u64);
    prefix.push(h);
    power.push(p);
    for &c in s {
        h = h.wrapping_mul(B).wrapping_add(c.into() + 1);
        p = p.wrapping_mul(B);
        prefix.push(h);
        power.push(p);
    }
    // The hash of s[a..b].
    let part = |a: usize, b: usize| prefix[b].wrapping_sub(prefix[a].wrapping_mul(power[b - a]));
    let key = |h: u64, len: usize| {
        let x = (h ^ (len as u64).wrapping_mul(0xA24B_AED4_963E_E407))
            .wrapping_mul(0x9FB2_1C65_1E98_DF25);
        (x >> 32) as u32
    };
    each(key(prefix[n], n));
    for i in 0..n {
        // s without position i: s[..i] then s[i + 1..].
        let h = prefix[i]
            .wrapping_mul(power[n - 1 - i])
            .wrapping_add(part(i + 1, n));
        each(key(h, n - 1));
        for j in i + 1..n {
            // s without positions i and j: s[..i], s[i + 1..j], s[j + 1..].
            let h = prefix[i]
                .wrapping_mul(power[n - 2 - i])
                .wrapping_add(part(i + 1, j).wrapping_mul(power[n - 1 - j]))
                .wrapping_add(part(j + 1, n));
            each(key(h, n - 2));
        }
    }
}

/// The index's keys are hashes already: a map over them hashes no further.
#[derive(Default)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        // hashbrown takes its control bits from the top of the hash: the key's bits go there.
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

/// A name as near-miss matching compares it: lower case, without `_` and `-`.
fn folded(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
}

/// Levenshtein distance of `a` and `b` if it is at most `k`, computed in the band of cells
/// within `k` of the diagonal.
pub(super) fn bounded_distance(a: &[u8], b: &[u8], k: usize) -> Option<usize> {
    let (m, n) = (a.len(), b.len());
    if m.abs_diff(n) > k {
        return None;
    }
    const FAR: usize = usize::MAX / 2;
    let mut prev: Vec<usize> = (0..=n).map(|j| if j <= k { j } else { FAR }).collect();
    let mut cur = vec![FAR; n + 1];
    for i in 1..=m {
        let lo = i.saturating_sub(k).max(1);
        let hi = (i + k).min(n);
        cur[0] = if i <= k { i } else { FAR };
        cur[lo - 1] = if lo == 1 { cur[0] } else { FAR };
        let mut row_min = cur[0];
        for j in lo..=hi {
            let d = (prev[j - 1] + usize::from(a[i - 1] != b[j - 1]))
                .min(prev[j] + 1)
                .min(cur[j - 1] + 1);
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if hi < n {
            cur[hi + 1] = FAR;
        }
        if row_min > k {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[n] <= k).then_some(prev[n])
}

/// A schema's declared property names, for what an unexpected property was meant to be: in a
/// set, and, when many unexpected names are each to be compared with many declared ones, in a
/// deletion index (see `Neighbours`), so that the cost is not their product.
pub(super) struct Declared<'d> {
    names: &'d [String],
    set: HashSet<&'d str>,
    /// The names by the near-miss folding (see `folded`), and those whose folding is too long to
    /// index (only names of letters that lower to several can be), compared one by one.
    index: Option<(Neighbours, Vec<u32>)>,
}

/// Fewer lookups than this, or fewer declared names, are compared one by one: building the
/// index costs about a hundred hashes a name, a comparison well under that.
const INDEX_FROM: usize = 32;

impl<'d> Declared<'d> {
    /// `names` in declared order, for `lookups` unexpected names.
    pub(super) fn new(names: &'d [String], lookups: usize) -> Self {
        let index = (lookups >= INDEX_FROM && names.len() >= INDEX_FROM).then(|| {
            let (mut index, mut long) = (Neighbours::default(), Vec::new());
            for (id, name) in (0u32..).zip(names) {
                // Longer names are no near miss of anything.
                if name.len() > 64 {
                    continue;
                }
                let key = near_key(name);
                if key.len() <= 64 {
                    index.insert(id, &key);
                } else {
                    long.push(id);
                }
            }
            (index, long)
        });
        Declared {
            names,
            set: names.iter().map(String::as_str).collect(),
            index,
        }
    }

    pub(super) fn contains(&self, name: &str) -> bool {
        self.set.contains(name)
    }

    /// The first declared name, in declared order, that `given` is a near miss of (see
    /// `near_miss`) and that `fits`.
    pub(super) fn first_near_miss(
        &self,
        given: &str,
        fits: impl Fn(&str) -> bool,
    ) -> Option<&'d str> {
        let names = self.names;
        let Some((index, long)) = &self.index else {
            return names
                .iter()
                .map(String::as_str)
                .find(|known| fits(known) && near_miss(given, known));
        };
        if given.len() > 64 {
            return None;
        }
        let mut ids = Vec::new();
        let key = near_key(given);
        if key.len() <= 64 + 2 {
            index.candidates(&key, &mut ids);
        }
        ids.extend_from_slice(long);
        ids.sort_unstable();
        ids.into_iter()
            .map(|id| names[id as usize].as_str())
            .find(|known| fits(known) && near_miss(given, known))
    }
}

/// A property name as the index of `Declared` holds it: folded as `near_miss` compares names.
fn near_key(name: &str) -> Vec<u32> {
    folded(name).map(u32::from).collect()
}

/// Whether `given` is a near miss of the property name `name`: the same but for letter case,
/// `_` and `-`, or at most two edits apart (one for short names). Names longer than 64 bytes
/// are not compared, which keeps the check cheap; nothing is allocated.
pub(super) fn near_miss(given: &str, name: &str) -> bool {
    if given == name || given.len() > 64 || name.len() > 64 {
        return false;
    }
    if given.is_ascii() && name.is_ascii() {
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        let (a, b) = (
            fold_ascii_into(given, &mut a),
            fold_ascii_into(name, &mut b),
        );
        return within_edits(a, b);
    }
    let (mut a, mut b) = (['\0'; FOLDED_MAX], ['\0'; FOLDED_MAX]);
    within_edits(fold_into(given, &mut a), fold_into(name, &mut b))
}

/// Whether folded names are equal or a few edits apart (see `near_miss`).
fn within_edits<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    let budget = if b.len() <= 4 { 1 } else { 2 };
    a == b || (a.len().abs_diff(b.len()) <= budget && edit_distance(a, b) <= budget)
}

/// An ASCII `s` folded (see `folded`) into `buf`.
fn fold_ascii_into<'b>(s: &str, buf: &'b mut [u8; 64]) -> &'b [u8] {
    let mut n = 0;
    for b in s.bytes().filter(|b| *b != b'_' && *b != b'-') {
        buf[n] = b.to_ascii_lowercase();
        n += 1;
    }
    &buf[..n]
}

/// The most characters a name of 64 bytes folds to (a character lowers to at most three).
const FOLDED_MAX: usize = 3 * 64;

/// `s` folded (see `folded`) into `buf`.
fn fold_into<'b>(s: &str, buf: &'b mut [char; FOLDED_MAX]) -> &'b [char] {
    let mut n = 0;
    for (slot, c) in buf.iter_mut().zip(folded(s)) {
        *slot = c;
        n += 1;
    }
    &buf[..n]
}

/// Levenshtein distance (insertions, deletions, substitutions, and a swap of two neighbours)
/// of names folded by `fold_into`, on three rows kept on the stack.
fn edit_distance<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    // Distances stay below FOLDED_MAX + 2, which a byte holds.
    let mut rows = [[0u8; FOLDED_MAX + 1]; 3];
    let [mut before, mut previous, mut row] = [0, 1, 2];
    for (j, cell) in rows[previous][..=b.len()].iter_mut().enumerate() {
        *cell = j as u8;
    }
    for i in 1..=a.len() {
        rows[row][0] = i as u8;
        for j in 1..=b.len() {
            let cost = u8::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[previous][j] + 1)
                .min(rows[row][j - 1] + 1)
                .min(rows[previous][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[before][j - 2] + 1);
            }
            rows[row][j] = d;
        }
        [before, previous, row] = [previous, row, before];
    }
    usize::from(rows[previous][b.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_fold_case_and_separators_and_allow_a_few_edits() {
        for (given, name) in [
            ("filePath", "file_path"),
            ("FILE-PATH", "file_path"),
            ("pth", "path"),
            ("contnet", "content"),
            ("contetn", "content"),
            ("recursve", "recursive"),
            ("İd", "id\u{307}"),
        ] {
            assert!(near_miss(given, name), "{given} / {name}");
        }
        for (given, name) in [
            ("path", "path"),
            ("xyz", "path"),
            ("pt", "path"),
            ("description", "destination"),
            (&"a".repeat(65), &"a".repeat(64)),
        ] {
            assert!(!near_miss(given, name), "{given} / {name}");
        }
    }

    /// The distance by the textbook table, for comparison.
    fn reference_distance(a: &[char], b: &[char]) -> usize {
        let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        d[0] = (0..=b.len()).collect();
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1)
                    .min(d[i][j - 1] + 1)
                    .min(d[i - 1][j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[a.len()][b.len()]
    }

    proptest::proptest! {
        #[test]
        fn the_stack_distance_is_the_table_distance(a in "[abc_İ-]{0,70}", b in "[abc_İ-]{0,70}") {
            let (mut x, mut y) = (['\0'; FOLDED_MAX], ['\0'; FOLDED_MAX]);
            let (x, y) = (fold_into(&a, &mut x), fold_into(&b, &mut y));
            proptest::prop_assert_eq!(edit_distance(x, y), reference_distance(x, y));
        }
    }

    /// The keys of the strings two deletions or fewer make of `s`, each string built and hashed
    /// whole.
    fn keys_by_hand(s: &[u32]) -> Vec<u32> {
        let hash = |t: &[u32]| {
            let h = t.iter().fold(0u64, |h, &c| {
                h.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .wrapping_add(u64::from(c) + 1)
            });
            let x = (h ^ (t.len() as u64).wrapping_mul(0xA24B_AED4_963E_E407))
                .wrapping_mul(0x9FB2_1C65_1E98_DF25);
            (x >> 32) as u32
        };
        let without = |skip: &[usize]| -> Vec<u32> {
            (0..s.len())
                .filter(|i| !skip.contains(i))
                .map(|i| s[i])
                .collect()
        };
        let mut keys = vec![hash(s)];
        for i in 0..s.len() {
            keys.push(hash(&without(&[i])));
            for j in i + 1..s.len() {
                keys.push(hash(&without(&[i, j])));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    proptest::proptest! {
        #[test]
        fn each_deletion_key_is_the_hash_of_its_string(s in "[ab_1]{0,12}") {
            let s: Vec<u32> = s.bytes().map(u32::from).collect();
            let mut keys = Vec::new();
            deletion_keys(&s, |k| keys.push(k));
            keys.sort_unstable();
            keys.dedup();
            proptest::prop_assert_eq!(keys, keys_by_hand(&s));
        }

        #[test]
        fn swaps_within_is_the_table_distance_held_to_the_bound(
            a in "[abc]{0,10}", b in "[abc]{0,10}", k in 0usize..4,
        ) {
            let d = reference_distance(&chars(&a), &chars(&b));
            proptest::prop_assert_eq!(swaps_within(a.as_bytes(), b.as_bytes(), k), d <= k);
        }

        #[test]
        fn the_index_finds_every_name_two_edits_away(
            names in proptest::collection::vec("[abc]{0,7}", 1..40),
            query in "[abc]{0,8}",
        ) {
            let mut index = Neighbours::default();
            let key = |s: &str| s.bytes().map(u32::from).collect::<Vec<_>>();
            for (id, name) in (0u32..).zip(&names) {
                index.insert(id, &key(name));
            }
            let mut found = Vec::new();
            index.candidates(&key(&query), &mut found);
            for (id, name) in (0u32..).zip(&names) {
                if reference_distance(&chars(name), &chars(&query)) <= 2 {
                    proptest::prop_assert!(found.contains(&id), "{query:?} missed {name:?}");
                }
            }
            proptest::prop_assert!(found.windows(2).all(|w| w[0] < w[1]));
        }

        #[test]
        fn the_closest_name_is_the_closest_of_those_two_edits_away_once_folded(
            // Up to MEASURE_ALL_UP_TO names are each measured; more are found in the index.
            names in proptest::collection::hash_set("[abcAB_.-]{1,9}", 1..3 * MEASURE_ALL_UP_TO),
            query in "[abcAB_.-]{1,10}",
        ) {
            let mut suggestions = Suggestions::default();
            for name in &names {
                suggestions.insert(name);
            }
            // By hand: every name whose folded form without separators is at most two edits
            // from the query's, held to the typo bound, the closest (then the first by name).
            let plain = |s: &str| plain(&fold(s)).into_iter().map(char::from).collect::<Vec<_>>();
            let wanted = fold(&query);
            let best = names
                .iter()
                .filter(|n| reference_distance(&plain(n), &plain(&query)) <= 2)
                .filter_map(|n| {
                    let lower = fold(n);
                    let allowed = 2.max(lower.len() / 3);
                    bounded_distance(&wanted, &lower, allowed).map(|d| (d, n.as_str()))
                })
                .min();
            proptest::prop_assert_eq!(suggestions.closest(&query), best.map(|(_, n)| n));
        }

        #[test]
        fn declared_names_indexed_give_the_near_miss_compared_one_by_one(
            names in proptest::collection::vec("[abcAB_-]{0,8}", INDEX_FROM..INDEX_FROM + 20),
            given in "[abcAB_-]{0,9}",
            taken in proptest::collection::hash_set("[abc]{0,3}", 0..4),
        ) {
            let fits = |known: &str| !taken.contains(known);
            let indexed = Declared::new(&names, INDEX_FROM);
            let compared = Declared::new(&names, 1);
            proptest::prop_assert!(indexed.index.is_some() && compared.index.is_none());
            proptest::prop_assert_eq!(
                indexed.first_near_miss(&given, fits),
                compared.first_near_miss(&given, fits)
            );
        }
    }

    #[test]
    fn separators_and_case_aside_a_long_name_is_found() {
        let mut suggestions = Suggestions::default();
        for name in ["get_weather_forecast", "get_weather", "set_alarm"] {
            suggestions.insert(name);
        }
        assert_eq!(
            suggestions.closest("getWeatherForecast"),
            Some("get_weather_forecast")
        );
        assert_eq!(suggestions.closest("gte_wether"), Some("get_weather"));
        assert_eq!(suggestions.closest("set-alarms"), Some("set_alarm"));
        assert_eq!(suggestions.closest("weather"), None);
    }
}
