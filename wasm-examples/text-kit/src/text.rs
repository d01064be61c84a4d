//! Text statistics, slugs and case conversion.

use std::collections::HashMap;

use crate::case;

/// Words per minute of an average adult reader of English prose.
pub const READING_WPM: u64 = 238;

#[derive(Debug, Default, PartialEq)]
pub struct Stats {
    pub bytes: u64,
    pub chars: u64,
    pub words: u64,
    pub unique_words: u64,
    pub lines: u64,
    pub blank_lines: u64,
    pub sentences: u64,
    pub paragraphs: u64,
    /// Average word length in thousandths of a character.
    pub avg_word_milli: u64,
    pub longest_word: String,
    pub reading_seconds: u64,
    /// The most frequent words that are not stop words, most frequent first.
    pub top_words: Vec<(String, u64)>,
}

const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "just", "me", "more", "my", "no", "not", "of", "on", "one", "or", "our", "out", "she",
    "so", "some", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "up", "us",
    "was", "we", "were", "what", "when", "which", "who", "will", "with", "would", "you", "your",
];

fn is_joiner(c: char) -> bool {
    c == '\'' || c == '\u{2019}' || c == '-'
}

/// Splits text into words: runs of letters and digits, joined across a
/// single apostrophe or hyphen ("don't", "well-known").
pub fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_alphanumeric() {
            if start.is_none() {
                start = Some(i);
            }
            continue;
        }
        if let Some(s) = start {
            let next_alnum = chars.peek().map_or(false, |&(_, n)| n.is_alphanumeric());
            if is_joiner(c) && next_alnum {
                continue;
            }
            out.push(&text[s..i]);
            start = None;
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out
}

pub fn stats(text: &str, top: usize) -> Stats {
    let mut st = Stats { bytes: text.len() as u64, chars: text.chars().count() as u64, ..Stats::default() };
    let ws = words(text);
    st.words = ws.len() as u64;
    let mut freq: HashMap<String, u64> = HashMap::new();
    let mut total_len = 0u64;
    for w in &ws {
        let n = w.chars().count() as u64;
        total_len += n;
        if n > st.longest_word.chars().count() as u64 {
            st.longest_word = (*w).to_string();
        }
        *freq.entry(case::to_lower(w)).or_insert(0) += 1;
    }
    st.unique_words = freq.len() as u64;
    if st.words > 0 {
        st.avg_word_milli = (total_len * 1000 + st.words / 2) / st.words;
        st.reading_seconds = (st.words * 60 + READING_WPM - 1) / READING_WPM;
    }
    let mut ranked: Vec<(String, u64)> =
        freq.into_iter().filter(|(w, _)| w.chars().count() > 1 && !STOP_WORDS.contains(&w.as_str())).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(top);
    st.top_words = ranked;

    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut in_para = false;
    if !text.is_empty() {
        for line in body.split('\n') {
            st.lines += 1;
            if line.trim().is_empty() {
                st.blank_lines += 1;
                in_para = false;
            } else if !in_para {
                st.paragraphs += 1;
                in_para = true;
            }
        }
    }
    st.sentences = sentences(text);
    st
}

/// Counts sentences: runs of text holding a word and ending in ".", "!" or
/// "?" followed by white space or the end, plus a trailing unterminated one.
/// Abbreviations ("Dr. Who") over-count; it is an estimate.
fn sentences(text: &str) -> u64 {
    let mut n = 0;
    let mut has_word = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() {
            has_word = true;
        } else if matches!(c, '.' | '!' | '?' | '\u{2026}') {
            while let Some(&('.' | '!' | '?' | '"' | '\'' | ')' | '\u{201d}')) = chars.peek() {
                chars.next();
            }
            let at_end = chars.peek().map_or(true, |n| n.is_whitespace());
            if has_word && at_end {
                n += 1;
                has_word = false;
            }
        }
    }
    if has_word {
        n += 1;
    }
    n
}

/// Folds common Latin letters with diacritics to ASCII.
fn fold(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => "a",
        'æ' => "ae",
        'ç' | 'ć' | 'č' => "c",
        'ď' | 'đ' | 'ð' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => "e",
        'ğ' => "g",
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'į' | 'ı' => "i",
        'ł' | 'ľ' => "l",
        'ñ' | 'ń' | 'ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => "o",
        'œ' => "oe",
        'ř' => "r",
        'ś' | 'š' | 'ş' => "s",
        'ß' => "ss",
        'ť' | 'ţ' => "t",
        'þ' => "th",
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' | 'ų' => "u",
        'ý' | 'ÿ' => "y",
        'ź' | 'ż' | 'ž' => "z",
        _ => return None,
    })
}

/// Makes a URL slug: lower-case ASCII letters and digits joined by sep.
/// Accented Latin letters fold to ASCII, "&" reads "and", everything else
/// separates words. max_len (in bytes) cuts at a word boundary when it can.
pub fn slugify(text: &str, sep: &str, max_len: usize) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, words: &mut Vec<String>| {
        if !cur.is_empty() {
            words.push(std::mem::take(cur));
        }
    };
    for c in text.chars().map(case::lower) {
        if c.is_ascii_alphanumeric() {
            cur.push(c);
        } else if let Some(f) = fold(c) {
            cur.push_str(f);
        } else if c == '\'' || c == '\u{2019}' {
            // "don't" -> "dont"
        } else if c == '&' {
            flush(&mut cur, &mut words);
            words.push("and".to_string());
        } else {
            flush(&mut cur, &mut words);
        }
    }
    flush(&mut cur, &mut words);
    let mut out = String::new();
    for w in words {
        let extra = if out.is_empty() { 0 } else { sep.len() };
        if max_len > 0 && out.len() + extra + w.len() > max_len {
            if out.is_empty() {
                out.push_str(&w[..max_len]); // ASCII only, so any cut is a char boundary
            }
            break;
        }
        if !out.is_empty() {
            out.push_str(sep);
        }
        out.push_str(&w);
    }
    out
}

/// Splits an identifier or phrase into words: at separators, at a lower to
/// upper change ("fooBar"), and before the last capital of an acronym
/// followed by lower case ("HTTPServer" -> "HTTP", "Server"). Digits stay
/// with the letters before them ("utf8", "v2").
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some(&prev) = cur.chars().last().as_ref() {
            let next_lower = chars.get(i + 1).map_or(false, |&n| case::is_lower(n));
            let boundary = case::is_upper(c) && (case::is_lower(prev) || prev.is_numeric() || case::is_upper(prev) && next_lower);
            if boundary {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub const CASES: &[&str] = &["snake", "kebab", "camel", "pascal", "constant", "dot", "title", "sentence", "lower", "upper"];

const SMALL_WORDS: &[&str] =
    &["a", "an", "and", "as", "at", "but", "by", "for", "in", "nor", "of", "on", "or", "the", "to", "up", "via", "vs"];

fn capitalize(w: &str) -> String {
    let mut cs = w.chars();
    match cs.next() {
        Some(f) => {
            let mut out = String::with_capacity(w.len());
            case::push_upper(f, &mut out);
            out.extend(cs.map(case::lower));
            out
        }
        None => String::new(),
    }
}

/// Converts text to the named case, or returns None for an unknown name.
pub fn convert_case(text: &str, to: &str) -> Option<String> {
    if to == "lower" {
        return Some(case::to_lower(text));
    }
    if to == "upper" {
        return Some(case::to_upper(text));
    }
    let words = split_words(text);
    let lower: Vec<String> = words.iter().map(|w| case::to_lower(w)).collect();
    Some(match to {
        "snake" => lower.join("_"),
        "kebab" => lower.join("-"),
        "dot" => lower.join("."),
        "constant" => words.iter().map(|w| case::to_upper(w)).collect::<Vec<_>>().join("_"),
        "camel" => lower.iter().enumerate().map(|(i, w)| if i == 0 { w.clone() } else { capitalize(w) }).collect(),
        "pascal" => lower.iter().map(|w| capitalize(w)).collect(),
        "title" => {
            let last = lower.len().saturating_sub(1);
            lower
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    if i != 0 && i != last && SMALL_WORDS.contains(&w.as_str()) {
                        w.clone()
                    } else {
                        capitalize(w)
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        }
        "sentence" => {
            lower.iter().enumerate().map(|(i, w)| if i == 0 { capitalize(w) } else { w.clone() }).collect::<Vec<_>>().join(" ")
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_splitting() {
        assert_eq!(words("Don't stop — well-known, 42 times!"), vec!["Don't", "stop", "well-known", "42", "times"]);
        assert_eq!(words("  -a- b'  "), vec!["a", "b"]);
        assert_eq!(words("élan vital naïve"), vec!["élan", "vital", "naïve"]);
        assert!(words("... --- !!!").is_empty());
    }

    #[test]
    fn statistics() {
        let text = "The quick brown fox. It jumps!\n\nDoes the fox sleep? No\n";
        let st = stats(text, 3);
        assert_eq!(st.bytes, text.len() as u64);
        assert_eq!(st.words, 11);
        assert_eq!(st.unique_words, 9);
        assert_eq!(st.lines, 3);
        assert_eq!(st.blank_lines, 1);
        assert_eq!(st.paragraphs, 2);
        assert_eq!(st.sentences, 4);
        assert_eq!(st.longest_word, "quick");
        assert_eq!(st.reading_seconds, 3);
        assert_eq!(st.top_words, vec![("fox".to_string(), 2), ("brown".to_string(), 1), ("jumps".to_string(), 1)]);
        // 40 letters over 11 words.
        assert_eq!(st.avg_word_milli, 3636);
    }

    #[test]
    fn empty_statistics() {
        assert_eq!(stats("", 5), Stats::default());
        let st = stats("\n\n", 5);
        assert_eq!((st.lines, st.blank_lines, st.paragraphs, st.words), (2, 2, 0, 0));
    }

    #[test]
    fn sentence_edges() {
        assert_eq!(sentences("Wait... what?! Yes."), 3);
        assert_eq!(sentences("v1.2.3 is out"), 1);
        assert_eq!(sentences("\"Go.\" He went."), 2);
        assert_eq!(sentences("..."), 0);
    }

    #[test]
    fn slugs() {
        let cases = [
            ("Hello, World!", "-", 0, "hello-world"),
            ("  Crème Brûlée & Straße  ", "-", 0, "creme-brulee-and-strasse"),
            ("Don't Panic", "_", 0, "dont_panic"),
            ("Ünïcödé — 日本語 test", "-", 0, "unicode-test"),
            ("the quick brown fox", "-", 15, "the-quick-brown"),
            ("supercalifragilistic", "-", 5, "super"),
            ("!!!", "-", 0, ""),
        ];
        for (text, sep, max, want) in cases {
            assert_eq!(slugify(text, sep, max), want, "slugify({:?})", text);
        }
    }

    #[test]
    fn case_conversion() {
        let cases = [
            ("parseHTTPResponse v2", "snake", "parse_http_response_v2"),
            ("user_id", "camel", "userId"),
            ("user-account-id", "pascal", "UserAccountId"),
            ("XMLHttpRequest", "kebab", "xml-http-request"),
            ("maxRetryCount", "constant", "MAX_RETRY_COUNT"),
            ("getUTF8String", "dot", "get.utf8.string"),
            ("the lord of the rings", "title", "The Lord of the Rings"),
            ("a tale of two cities", "title", "A Tale of Two Cities"),
            ("SHOUTING_CONSTANT_NAME", "sentence", "Shouting constant name"),
            ("Mixed Case, kept!", "lower", "mixed case, kept!"),
            ("straße", "upper", "STRASSE"),
            ("", "snake", ""),
        ];
        for (text, to, want) in cases {
            assert_eq!(convert_case(text, to).as_deref(), Some(want), "{:?} to {}", text, to);
        }
        assert_eq!(convert_case("x", "screaming"), None);
    }
}
