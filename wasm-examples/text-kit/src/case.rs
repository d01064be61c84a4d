//! Letter case for the scripts that have it in everyday text: Latin (with
//! Latin-1, Extended-A/B and the Vietnamese block), Greek, Cyrillic and
//! Armenian. Rules instead of std's full Unicode tables keep the plugin
//! about 50 KB smaller; a test checks every mapping here against std. Letters
//! of other cased scripts (Georgian, Cherokee, Deseret...) are left as they are.

/// How a block of code points pairs upper with lower case.
#[derive(Clone, Copy)]
enum Rule {
    /// Upper case at lo..=hi, lower case at an offset above it.
    Offset(u32),
    /// Alternating pairs: upper on even code points, lower on the next one.
    EvenUpper,
    /// Alternating pairs: upper on odd code points, lower on the next one.
    OddUpper,
}

/// (first, last, rule): for an Offset block the range of its upper-case
/// letters; for a pair block the whole run of pairs, first upper to last lower.
const BLOCKS: &[(u32, u32, Rule)] = &[
    (0x41, 0x5A, Rule::Offset(0x20)),
    (0xC0, 0xD6, Rule::Offset(0x20)),
    (0xD8, 0xDE, Rule::Offset(0x20)),
    (0x100, 0x12F, Rule::EvenUpper),
    (0x132, 0x137, Rule::EvenUpper),
    (0x139, 0x148, Rule::OddUpper),
    (0x14A, 0x177, Rule::EvenUpper),
    (0x179, 0x17E, Rule::OddUpper),
    (0x1CD, 0x1DC, Rule::OddUpper),
    (0x1DE, 0x1EF, Rule::EvenUpper),
    (0x1F8, 0x21F, Rule::EvenUpper),
    (0x222, 0x233, Rule::EvenUpper),
    (0x246, 0x24F, Rule::EvenUpper),
    (0x388, 0x38A, Rule::Offset(0x25)),
    (0x38E, 0x38F, Rule::Offset(0x3F)),
    (0x391, 0x3A1, Rule::Offset(0x20)),
    (0x3A3, 0x3AB, Rule::Offset(0x20)),
    (0x3D8, 0x3EF, Rule::EvenUpper),
    (0x400, 0x40F, Rule::Offset(0x50)),
    (0x410, 0x42F, Rule::Offset(0x20)),
    (0x460, 0x481, Rule::EvenUpper),
    (0x48A, 0x4BF, Rule::EvenUpper),
    (0x4C1, 0x4CE, Rule::OddUpper),
    (0x4D0, 0x52F, Rule::EvenUpper),
    (0x531, 0x556, Rule::Offset(0x30)),
    (0x1E00, 0x1E95, Rule::EvenUpper),
    (0x1EA0, 0x1EFF, Rule::EvenUpper),
    (0xFF21, 0xFF3A, Rule::Offset(0x20)),
];

/// Single pairs that follow no block rule: (upper, lower).
const PAIRS: &[(u32, u32)] = &[(0x178, 0xFF), (0x18E, 0x1DD), (0x386, 0x3AC), (0x38C, 0x3CC), (0x4C0, 0x4CF)];

fn ch(u: u32) -> char {
    char::from_u32(u).unwrap_or('\u{FFFD}')
}

/// The lower-case form of c, or c itself.
pub fn lower(c: char) -> char {
    let u = c as u32;
    if u < 0x80 {
        return c.to_ascii_lowercase();
    }
    if u == 0x130 {
        return 'i'; // İ
    }
    for &(lo, hi, rule) in BLOCKS {
        if u < lo || u > hi {
            continue;
        }
        return match rule {
            Rule::Offset(d) => ch(u + d),
            Rule::EvenUpper if u % 2 == 0 => ch(u + 1),
            Rule::OddUpper if u % 2 == 1 => ch(u + 1),
            _ => c,
        };
    }
    for &(up, lo) in PAIRS {
        if u == up {
            return ch(lo);
        }
    }
    c
}

/// Appends the upper-case form of c to out ("ß" becomes "SS").
pub fn push_upper(c: char, out: &mut String) {
    let u = c as u32;
    if u < 0x80 {
        out.push(c.to_ascii_uppercase());
        return;
    }
    let up = match u {
        0xDF => {
            out.push_str("SS");
            return;
        }
        0x131 => 'I',         // dotless ı
        0x17F => 'S',         // long s
        0x3C2 => '\u{3A3}',   // final sigma
        0xB5 => '\u{39C}',    // micro sign
        _ => upper_simple(u).unwrap_or(c),
    };
    out.push(up);
}

fn upper_simple(u: u32) -> Option<char> {
    for &(lo, hi, rule) in BLOCKS {
        let hit = match rule {
            Rule::Offset(d) => u >= lo + d && u <= hi + d,
            Rule::EvenUpper => u > lo && u <= hi && u % 2 == 1,
            Rule::OddUpper => u > lo && u <= hi && u % 2 == 0,
        };
        if hit {
            return Some(match rule {
                Rule::Offset(d) => ch(u - d),
                _ => ch(u - 1),
            });
        }
    }
    PAIRS.iter().find(|&&(_, lo)| lo == u).map(|&(up, _)| ch(up))
}

pub fn is_upper(c: char) -> bool {
    lower(c) != c
}

pub fn is_lower(c: char) -> bool {
    let mut s = String::new();
    push_upper(c, &mut s);
    s.chars().next() != Some(c) || s.chars().count() > 1
}

pub fn to_lower(s: &str) -> String {
    s.chars().map(lower).collect()
}

pub fn to_upper(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_upper(c, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every mapping made here must be std's; and within the covered blocks
    /// every simple std mapping must be made here.
    #[test]
    fn agrees_with_std() {
        let covered = |u: u32| {
            BLOCKS.iter().any(|&(lo, hi, r)| match r {
                Rule::Offset(d) => u >= lo && u <= hi || u >= lo + d && u <= hi + d,
                Rule::EvenUpper | Rule::OddUpper => u >= lo && u <= hi,
            }) || PAIRS.iter().any(|&(a, b)| u == a || u == b)
                || u < 0x80
        };
        for u in (0..0x600).chain(0x1E00..0x1F00).chain(0xFF00..0xFF60) {
            let c = match char::from_u32(u) {
                Some(c) => c,
                None => continue,
            };
            let std_lower: Vec<char> = c.to_lowercase().collect();
            let std_upper: String = c.to_uppercase().collect();
            let mine_lower = lower(c);
            let mut mine_upper = String::new();
            push_upper(c, &mut mine_upper);
            if mine_lower != c || covered(u) && std_lower.len() == 1 {
                if std_lower.len() == 1 {
                    assert_eq!(mine_lower, std_lower[0], "lower({:?} U+{:04X})", c, u);
                } else {
                    assert_eq!(mine_lower, std_lower[0], "lower({:?} U+{:04X}) first char", c, u);
                }
            }
            if mine_upper != c.to_string() || covered(u) && std_upper.chars().count() == 1 {
                assert_eq!(mine_upper, std_upper, "upper({:?} U+{:04X})", c, u);
            }
        }
    }

    #[test]
    fn strings() {
        assert_eq!(to_lower("ÀÉÎÕÜ ĞİŞ ΣΩ ЖЯ ẠỲ Ｆ"), "àéîõü ğiş σω жя ạỳ ｆ");
        assert_eq!(to_upper("straße ς ž ǎ ɏ"), "STRASSE Σ Ž Ǎ Ɏ");
        assert!(is_upper('Ж') && !is_upper('ж') && is_lower('ж') && !is_lower('7') && !is_upper('日'));
    }
}
