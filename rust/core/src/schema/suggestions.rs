//! "Did you mean": the registered tool name closest to an unknown one, and whether a property
//! name given is a near miss of a declared one (the fix a violation suggests).

use crate::names::MAX_TOOL_NAME_LEN;

/// A registered name, prepared for "did you mean" (names are ASCII: letters, digits, `_`, and
/// `-` or `.` where the naming rule allows them).
#[derive(Clone, Debug)]
pub struct Candidate {
    pub name: String,
    lower: Vec<u8>,
    /// Which symbols the name holds, one bit each: a cheap lower bound on edit distance.
    symbols: u64,
}

impl Candidate {
    pub fn new(name: &str) -> Self {
        let lower = fold(name);
        Candidate {
            name: name.to_string(),
            symbols: symbols(&lower),
            lower,
        }
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

/// Most edit-distance cells computed for one unknown name: with the filters below a miss costs
/// microseconds even against 10,000 tools, and a pathological registry costs no more than this.
const MAX_CELLS: usize = 1 << 20;

/// The registered name closest to `name` by edit distance, if it is close enough to be a typo
/// (at most 2 edits, or a third of the name's length). `candidates` are sorted by name; of
/// equally close names the first wins.
///
/// Each candidate is first filtered by length (an edit distance of `k` needs lengths within
/// `k`) and by the symbols both names hold (one edit changes at most two), then measured with a
/// Levenshtein band of width `2k + 1` that stops once a row exceeds `k`; `k` shrinks to the best
/// distance found so far.
pub fn closest<'c>(name: &str, candidates: &'c [Candidate]) -> Option<&'c str> {
    // Names hold at most MAX_TOOL_NAME_LEN characters (128, under MCP's rule), and a typo of
    // one at most a third as many edits: anything longer is no typo of a registered name.
    const LONGEST: usize = MAX_TOOL_NAME_LEN + MAX_TOOL_NAME_LEN / 3;
    if name.chars().nth(LONGEST).is_some() {
        return None;
    }
    let wanted = fold(name);
    let wanted_symbols = symbols(&wanted);
    let mut best: Option<(usize, &'c str)> = None;
    let mut cells = 0;
    for c in candidates {
        let allowed = 2.max(c.lower.len() / 3);
        let k = match best {
            Some((0, _)) => break,
            Some((d, _)) => allowed.min(d - 1),
            None => allowed,
        };
        if wanted.len().abs_diff(c.lower.len()) > k
            || (wanted_symbols ^ c.symbols).count_ones() as usize > 2 * k
        {
            continue;
        }
        cells += wanted.len() * (2 * k + 1);
        if cells > MAX_CELLS {
            break;
        }
        if let Some(d) = bounded_distance(&wanted, &c.lower, k) {
            best = Some((d, &c.name));
        }
    }
    best.map(|(_, n)| n)
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
}
