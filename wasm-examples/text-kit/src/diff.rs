//! Line diffs with Myers' O((N+M)D) algorithm in linear space (the "middle
//! snake" divide and conquer), so two large, very different texts never cost
//! quadratic memory. Time is bounded by a step budget: past it, what is left
//! becomes "delete these, insert those", still a correct script but no longer
//! the shortest, and the caller is told.

use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// a[i] == b[j]
    Equal(usize, usize),
    /// a[i] removed
    Delete(usize),
    /// b[j] added
    Insert(usize),
}

/// Splits text into lines without their terminators ("\n" or "\r\n"). A
/// final newline does not start an extra, empty line.
pub fn lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// Maps each line to a small integer so the inner loops compare integers.
fn intern<'s>(ids: &mut HashMap<&'s str, u32>, lines: &[&'s str]) -> Vec<u32> {
    lines
        .iter()
        .map(|l| {
            let next = ids.len() as u32;
            *ids.entry(*l).or_insert(next)
        })
        .collect()
}

/// Search steps one diff may take: a few hundred milliseconds in WebAssembly.
pub const DEFAULT_BUDGET: i64 = 50_000_000;

/// Returns an edit script turning a into b, and whether it is a shortest one
/// (false when the step budget ran out).
pub fn diff(a: &[&str], b: &[&str], budget: i64) -> (Vec<Op>, bool) {
    let mut ids = HashMap::new();
    let (a, b) = (intern(&mut ids, a), intern(&mut ids, b));
    let mut d = Differ { a: &a, b: &b, ops: Vec::with_capacity(a.len().max(b.len())), budget, exact: true };
    d.run(0, 0, a.len(), b.len());
    (d.ops, d.exact)
}

struct Differ<'a> {
    a: &'a [u32],
    b: &'a [u32],
    ops: Vec<Op>,
    budget: i64,
    exact: bool,
}

/// A box of the edit graph: a[left..right] against b[top..bottom].
#[derive(Clone, Copy)]
struct Box {
    left: isize,
    top: isize,
    right: isize,
    bottom: isize,
}

impl Box {
    fn width(&self) -> isize {
        self.right - self.left
    }
    fn height(&self) -> isize {
        self.bottom - self.top
    }
    fn size(&self) -> isize {
        self.width() + self.height()
    }
    fn delta(&self) -> isize {
        self.width() - self.height()
    }
}

impl<'a> Differ<'a> {
    fn run(&mut self, mut left: usize, mut top: usize, mut right: usize, mut bottom: usize) {
        while left < right && top < bottom && self.a[left] == self.b[top] {
            self.ops.push(Op::Equal(left, top));
            left += 1;
            top += 1;
        }
        let mut suffix = 0;
        while left < right && top < bottom && self.a[right - 1] == self.b[bottom - 1] {
            right -= 1;
            bottom -= 1;
            suffix += 1;
        }
        let bx = Box { left: left as isize, top: top as isize, right: right as isize, bottom: bottom as isize };
        if left == right {
            self.ops.extend((top..bottom).map(Op::Insert));
        } else if top == bottom {
            self.ops.extend((left..right).map(Op::Delete));
        } else if let Some(((x0, y0), (x1, y1))) = self.midpoint(bx) {
            // Both sides differ at their ends, so at least two edits remain and
            // each part below holds strictly fewer: the recursion ends.
            self.run(left, top, x0, y0);
            self.run(x0, y0, x1, y1);
            self.run(x1, y1, right, bottom);
        } else {
            self.exact = false;
            self.ops.extend((left..right).map(Op::Delete));
            self.ops.extend((top..bottom).map(Op::Insert));
        }
        self.ops.extend((0..suffix).map(|i| Op::Equal(right + i, bottom + i)));
    }

    /// Finds the middle snake of a non-empty box: the stretch of the
    /// shortest path where the forward and backward searches meet. None when
    /// the step budget runs out first.
    fn midpoint(&mut self, bx: Box) -> Option<((usize, usize), (usize, usize))> {
        let max = (bx.size() + 1) / 2;
        let off = max + 1;
        let n = (2 * max + 3) as usize;
        let mut vf = vec![0isize; n];
        let mut vb = vec![0isize; n];
        vf[(off + 1) as usize] = bx.left;
        vb[(off + 1) as usize] = bx.bottom;
        let at = |k: isize| (k + off) as usize;
        for d in 0..=max {
            self.budget -= 2 * (2 * d + 1) as i64;
            if self.budget < 0 {
                return None;
            }
            // Forward, from the top-left corner.
            let mut k = d;
            while k >= -d {
                let c = k - bx.delta();
                let (px, mut x);
                if k == -d || (k != d && vf[at(k - 1)] < vf[at(k + 1)]) {
                    px = vf[at(k + 1)];
                    x = px;
                } else {
                    px = vf[at(k - 1)];
                    x = px + 1;
                }
                let mut y = bx.top + (x - bx.left) - k;
                let py = if d == 0 || x != px { y } else { y - 1 };
                while x < bx.right && y < bx.bottom && self.a[x as usize] == self.b[y as usize] {
                    x += 1;
                    y += 1;
                    self.budget -= 1;
                }
                vf[at(k)] = x;
                if bx.delta() & 1 == 1 && c >= -(d - 1) && c <= d - 1 && y >= vb[at(c)] {
                    return Some(((px as usize, py as usize), (x as usize, y as usize)));
                }
                k -= 2;
            }
            // Backward, from the bottom-right corner.
            let mut c = d;
            while c >= -d {
                let k = c + bx.delta();
                let (py, mut y);
                if c == -d || (c != d && vb[at(c - 1)] > vb[at(c + 1)]) {
                    py = vb[at(c + 1)];
                    y = py;
                } else {
                    py = vb[at(c - 1)];
                    y = py - 1;
                }
                let mut x = bx.left + (y - bx.top) + k;
                let px = if d == 0 || y != py { x } else { x + 1 };
                while x > bx.left && y > bx.top && self.a[(x - 1) as usize] == self.b[(y - 1) as usize] {
                    x -= 1;
                    y -= 1;
                    self.budget -= 1;
                }
                vb[at(c)] = y;
                if bx.delta() & 1 == 0 && k >= -d && k <= d && x <= vf[at(k)] {
                    return Some(((x as usize, y as usize), (px as usize, py as usize)));
                }
                c -= 2;
            }
        }
        // A non-empty box always has a middle snake by d = max.
        None
    }
}

/// Renders ops as a unified diff with `context` lines around each change.
/// At most `max_lines` lines are written; the bool says whether it was cut.
pub fn unified(a: &[&str], b: &[&str], ops: &[Op], context: usize, max_lines: usize) -> (String, usize, bool) {
    let mut out = String::new();
    let mut written = 0;
    let mut hunks = 0;
    let mut cut = false;
    let mut i = 0;
    while i < ops.len() {
        // Find the next change.
        let start = match ops[i..].iter().position(|o| !matches!(o, Op::Equal(..))) {
            Some(p) => i + p,
            None => break,
        };
        let lo = start.saturating_sub(context).max(i);
        // Extend the hunk while changes are within 2*context of each other.
        let mut end = start;
        let mut j = start;
        while j < ops.len() {
            if !matches!(ops[j], Op::Equal(..)) {
                end = j;
            } else if j - end > 2 * context {
                break;
            }
            j += 1;
        }
        let hi = (end + 1 + context).min(ops.len());
        hunks += 1;
        let (mut a0, mut b0, mut na, mut nb) = (None, None, 0, 0);
        for op in &ops[lo..hi] {
            match *op {
                Op::Equal(x, y) => {
                    a0 = a0.or(Some(x));
                    b0 = b0.or(Some(y));
                    na += 1;
                    nb += 1;
                }
                Op::Delete(x) => {
                    a0 = a0.or(Some(x));
                    na += 1;
                }
                Op::Insert(y) => {
                    b0 = b0.or(Some(y));
                    nb += 1;
                }
            }
        }
        if !cut {
            let a_start = a0.map_or_else(|| a_pos(ops, lo), |x| x + 1);
            let b_start = b0.map_or_else(|| b_pos(ops, lo), |y| y + 1);
            out.push_str(&format!("@@ -{},{} +{},{} @@\n", a_start, na, b_start, nb));
            written += 1;
            for op in &ops[lo..hi] {
                if written >= max_lines {
                    cut = true;
                    break;
                }
                let (sign, text) = match *op {
                    Op::Equal(x, _) => (' ', a[x]),
                    Op::Delete(x) => ('-', a[x]),
                    Op::Insert(y) => ('+', b[y]),
                };
                out.push(sign);
                out.push_str(text);
                out.push('\n');
                written += 1;
            }
        }
        i = hi;
    }
    (out, hunks, cut)
}

/// The 1-based line of a before ops[at] when the hunk holds no line of a
/// (the unified format then names the line before the hunk).
fn a_pos(ops: &[Op], at: usize) -> usize {
    ops[..at].iter().filter(|o| !matches!(o, Op::Insert(_))).count()
}

fn b_pos(ops: &[Op], at: usize) -> usize {
    ops[..at].iter().filter(|o| !matches!(o, Op::Delete(_))).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Length of the longest common subsequence, by dynamic programming.
    fn lcs(a: &[&str], b: &[&str]) -> usize {
        let mut dp = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                dp[i][j] = if a[i] == b[j] { dp[i + 1][j + 1] + 1 } else { dp[i + 1][j].max(dp[i][j + 1]) };
            }
        }
        dp[0][0]
    }

    /// Checks that ops is a valid script from a to b and returns its length
    /// in edits.
    fn check(a: &[&str], b: &[&str], ops: &[Op]) -> usize {
        let (mut i, mut j, mut edits) = (0, 0, 0);
        for op in ops {
            match *op {
                Op::Equal(x, y) => {
                    assert_eq!((x, y), (i, j), "equal out of order");
                    assert_eq!(a[x], b[y]);
                    i += 1;
                    j += 1;
                }
                Op::Delete(x) => {
                    assert_eq!(x, i);
                    i += 1;
                    edits += 1;
                }
                Op::Insert(y) => {
                    assert_eq!(y, j);
                    j += 1;
                    edits += 1;
                }
            }
        }
        assert_eq!((i, j), (a.len(), b.len()), "script does not cover both texts");
        edits
    }

    #[test]
    fn minimal_against_brute_force() {
        // A fixed linear congruential generator: reproducible, no crates.
        let mut seed: u64 = 42;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let alphabet = ["a", "b", "c", "d"];
        for _ in 0..2000 {
            let n = next() % 14;
            let m = next() % 14;
            let a: Vec<&str> = (0..n).map(|_| alphabet[next() % alphabet.len()]).collect();
            let b: Vec<&str> = (0..m).map(|_| alphabet[next() % alphabet.len()]).collect();
            let (ops, exact) = diff(&a, &b, DEFAULT_BUDGET);
            assert!(exact);
            let edits = check(&a, &b, &ops);
            assert_eq!(edits, n + m - 2 * lcs(&a, &b), "not minimal for {:?} -> {:?}", a, b);
        }
    }

    #[test]
    fn lines_split() {
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("a"), vec!["a"]);
        assert_eq!(lines("a\n"), vec!["a"]);
        assert_eq!(lines("a\r\nb\n\n"), vec!["a", "b", ""]);
    }

    #[test]
    fn unified_output() {
        let a = lines("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
        let b = lines("1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n");
        let (ops, _) = diff(&a, &b, DEFAULT_BUDGET);
        let (text, hunks, cut) = unified(&a, &b, &ops, 1, 100);
        assert_eq!(hunks, 2);
        assert!(!cut);
        assert_eq!(text, "@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n@@ -12,1 +12,2 @@\n 12\n+13\n");
        let (text, _, cut) = unified(&a, &b, &ops, 1, 3);
        assert!(cut);
        assert_eq!(text.lines().count(), 3);
    }

    #[test]
    fn unified_insert_into_empty() {
        let a: Vec<&str> = Vec::new();
        let b = lines("x\ny\n");
        let (ops, _) = diff(&a, &b, DEFAULT_BUDGET);
        let (text, hunks, _) = unified(&a, &b, &ops, 3, 100);
        assert_eq!(hunks, 1);
        assert_eq!(text, "@@ -0,0 +1,2 @@\n+x\n+y\n");
    }

    #[test]
    fn budget_bounds_the_work() {
        // Two long, unrelated texts: the budget runs out, and what comes back
        // is still a correct script.
        let a: Vec<String> = (0..20000).map(|i| (i * 7 % 1000).to_string()).collect();
        let b: Vec<String> = (0..20000).map(|i| (i * 11 % 1000).to_string()).collect();
        let a: Vec<&str> = a.iter().map(|s| s.as_str()).collect();
        let b: Vec<&str> = b.iter().map(|s| s.as_str()).collect();
        let (ops, exact) = diff(&a, &b, 1_000_000);
        assert!(!exact);
        check(&a, &b, &ops);
        // A small change in a long text stays exact within the same budget.
        let mut c = a.clone();
        c[10000] = "changed";
        let (ops, exact) = diff(&a, &c, 1_000_000);
        assert!(exact);
        assert_eq!(check(&a, &c, &ops), 2);
    }
}
