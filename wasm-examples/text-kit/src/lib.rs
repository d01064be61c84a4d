//! text-kit: word counts, slugs, case conversion and line diffs, as an
//! Extism plugin written against the raw kernel ABI with no crates at all.
//! The tools are plain functions from JSON arguments to a JSON result so that
//! `cargo test` runs them natively; `abi` (wasm32 only) wires them to exports.

pub mod case;
pub mod diff;
pub mod json;
pub mod text;

#[cfg(target_arch = "wasm32")]
mod abi;

use json::{Json, ObjWriter};

/// A tool's answer: the JSON result, or a message for the model.
pub type ToolResult = Result<String, String>;

fn fail(msg: &str) -> String {
    let mut s = String::from("text-kit: ");
    s.push_str(msg);
    s
}

fn args(input: &[u8]) -> Result<Json, String> {
    let v = json::parse(input).map_err(|e| fail(&format!("arguments are not valid JSON: {}", e)))?;
    match v {
        Json::Obj(_) => Ok(v),
        other => Err(fail(&format!("arguments must be a JSON object, got {}", other.type_name()))),
    }
}

fn req_str<'a>(a: &'a Json, key: &str) -> Result<&'a str, String> {
    match a.get(key) {
        Some(Json::Str(s)) => Ok(s),
        Some(other) => Err(fail(&format!("{} must be a string, got {}", key, other.type_name()))),
        None => Err(fail(&format!("missing {}", key))),
    }
}

fn opt_uint(a: &Json, key: &str, default: u64, max: u64) -> Result<u64, String> {
    match a.get(key) {
        None => Ok(default),
        Some(v) => match v.as_u64() {
            Some(n) if n <= max => Ok(n),
            _ => Err(fail(&format!("{} must be a whole number from 0 to {}", key, max))),
        },
    }
}

fn opt_bool(a: &Json, key: &str, default: bool) -> Result<bool, String> {
    match a.get(key) {
        None => Ok(default),
        Some(Json::Bool(b)) => Ok(*b),
        Some(_) => Err(fail(&format!("{} must be true or false", key))),
    }
}

/// stats: {text, top?} -> counts, reading time and the most frequent words.
pub fn stats(input: &[u8]) -> ToolResult {
    let a = args(input)?;
    let text = req_str(&a, "text")?;
    let top = opt_uint(&a, "top", 10, 100)? as usize;
    let st = text::stats(text, top);
    let mut tops = String::from("[");
    for (i, (w, n)) in st.top_words.iter().enumerate() {
        if i > 0 {
            tops.push(',');
        }
        tops.push_str(&ObjWriter::new().str("word", w).num("count", *n).finish());
    }
    tops.push(']');
    Ok(ObjWriter::new()
        .num("bytes", st.bytes)
        .num("chars", st.chars)
        .num("words", st.words)
        .num("unique_words", st.unique_words)
        .num("lines", st.lines)
        .num("blank_lines", st.blank_lines)
        .num("sentences", st.sentences)
        .num("paragraphs", st.paragraphs)
        .fixed3("avg_word_length", st.avg_word_milli)
        .str("longest_word", &st.longest_word)
        .num("reading_time_seconds", st.reading_seconds)
        .raw("top_words", &tops)
        .finish())
}

/// slugify: {text, separator?, max_length?} -> {slug}
pub fn slugify(input: &[u8]) -> ToolResult {
    let a = args(input)?;
    let text = req_str(&a, "text")?;
    let sep = match a.get("separator") {
        None => "-",
        Some(_) => req_str(&a, "separator")?,
    };
    if sep.is_empty() || sep.len() > 3 || !sep.chars().all(|c| c.is_ascii_punctuation()) {
        return Err(fail("separator must be 1 to 3 ASCII punctuation characters, such as - or _"));
    }
    let max = opt_uint(&a, "max_length", 0, 1000)? as usize;
    let slug = text::slugify(text, sep, max);
    if slug.is_empty() {
        return Err(fail("the text has no Latin letters or digits to build a slug from; pass a transliterated title"));
    }
    Ok(ObjWriter::new().str("slug", &slug).finish())
}

/// convert_case: {text (string or array of strings), to} -> {result}
pub fn convert_case(input: &[u8]) -> ToolResult {
    let a = args(input)?;
    let to = req_str(&a, "to")?;
    let convert = |s: &str| {
        text::convert_case(s, to)
            .ok_or_else(|| fail(&format!("unknown case \"{}\": want one of {}", to, text::CASES.join(", "))))
    };
    match a.get("text") {
        Some(Json::Str(s)) => {
            let r = convert(s)?;
            Ok(ObjWriter::new().str("result", &r).finish())
        }
        Some(Json::Arr(items)) => {
            let mut out = String::from("[");
            for (i, it) in items.iter().enumerate() {
                let s = it.as_str().ok_or_else(|| fail(&format!("text[{}] must be a string, got {}", i, it.type_name())))?;
                if i > 0 {
                    out.push(',');
                }
                json::write_str(&mut out, &convert(s)?);
            }
            out.push(']');
            Ok(ObjWriter::new().raw("result", &out).finish())
        }
        Some(other) => Err(fail(&format!("text must be a string or an array of strings, got {}", other.type_name()))),
        None => Err(fail("missing text")),
    }
}

/// Lines per side that diff_stats accepts: the algorithm is O((N+M)D) time.
pub const MAX_DIFF_LINES: usize = 50_000;

/// diff_stats: {before, after, context?, include_diff?, max_diff_lines?} ->
/// added/removed/unchanged line counts, similarity and a unified diff.
pub fn diff_stats(input: &[u8]) -> ToolResult {
    let a = args(input)?;
    let before = req_str(&a, "before")?;
    let after = req_str(&a, "after")?;
    let context = opt_uint(&a, "context", 3, 20)? as usize;
    let include = opt_bool(&a, "include_diff", true)?;
    let max_lines = opt_uint(&a, "max_diff_lines", 200, 5000)? as usize;
    let (la, lb) = (diff::lines(before), diff::lines(after));
    if la.len() > MAX_DIFF_LINES || lb.len() > MAX_DIFF_LINES {
        return Err(fail(&format!(
            "texts of {} and {} lines: diff_stats takes at most {} lines a side; diff a section at a time",
            la.len(),
            lb.len(),
            MAX_DIFF_LINES
        )));
    }
    let (ops, exact) = diff::diff(&la, &lb, diff::DEFAULT_BUDGET);
    let (mut added, mut removed, mut same) = (0u64, 0u64, 0u64);
    for op in &ops {
        match op {
            diff::Op::Equal(..) => same += 1,
            diff::Op::Delete(_) => removed += 1,
            diff::Op::Insert(_) => added += 1,
        }
    }
    let total = (la.len() + lb.len()) as u64;
    let similarity = if total == 0 { 1000 } else { (2 * same * 1000 + total / 2) / total };
    let (text, hunks, cut) = diff::unified(&la, &lb, &ops, context, max_lines);
    let mut w = ObjWriter::new();
    w.num("lines_before", la.len() as u64)
        .num("lines_after", lb.len() as u64)
        .num("added", added)
        .num("removed", removed)
        .num("unchanged", same)
        .fixed3("similarity", similarity)
        .num("hunks", hunks as u64)
        .boolean("identical", added == 0 && removed == 0);
    if !exact {
        // The texts differ too much to find the shortest diff in time.
        w.boolean("approximate", true);
    }
    if include {
        w.str("diff", &text);
        if cut {
            w.boolean("diff_truncated", true);
        }
    }
    Ok(w.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(tool: fn(&[u8]) -> ToolResult, input: &str) -> String {
        tool(input.as_bytes()).unwrap_or_else(|e| panic!("{}: {}", input, e))
    }

    fn err(tool: fn(&[u8]) -> ToolResult, input: &str) -> String {
        match tool(input.as_bytes()) {
            Ok(out) => panic!("{}: no error, got {}", input, out),
            Err(e) => e,
        }
    }

    #[test]
    fn stats_tool() {
        let got = ok(stats, r#"{"text": "Hello hello world.\nBye", "top": 2}"#);
        assert_eq!(
            got,
            r#"{"bytes":22,"chars":22,"words":4,"unique_words":3,"lines":2,"blank_lines":0,"sentences":2,"paragraphs":1,"avg_word_length":4.500,"longest_word":"Hello","reading_time_seconds":2,"top_words":[{"word":"hello","count":2},{"word":"bye","count":1}]}"#
        );
    }

    #[test]
    fn slugify_tool() {
        assert_eq!(ok(slugify, r#"{"text": "Ünïcode Rocks!"}"#), r#"{"slug":"unicode-rocks"}"#);
        assert_eq!(ok(slugify, r#"{"text": "a b c", "separator": "_", "max_length": 3}"#), r#"{"slug":"a_b"}"#);
    }

    #[test]
    fn convert_case_tool() {
        assert_eq!(ok(convert_case, r#"{"text": "user_id", "to": "camel"}"#), r#"{"result":"userId"}"#);
        assert_eq!(ok(convert_case, r#"{"text": ["a b", "cD"], "to": "snake"}"#), r#"{"result":["a_b","c_d"]}"#);
    }

    #[test]
    fn diff_stats_tool() {
        let got = ok(diff_stats, r#"{"before": "a\nb\nc\n", "after": "a\nB\nc\nd\n", "context": 0}"#);
        assert_eq!(
            got,
            r#"{"lines_before":3,"lines_after":4,"added":2,"removed":1,"unchanged":2,"similarity":0.571,"hunks":2,"identical":false,"diff":"@@ -2,1 +2,1 @@\n-b\n+B\n@@ -3,0 +4,1 @@\n+d\n"}"#
        );
        let same = ok(diff_stats, r#"{"before": "x", "after": "x\n", "include_diff": false}"#);
        assert_eq!(same, r#"{"lines_before":1,"lines_after":1,"added":0,"removed":0,"unchanged":1,"similarity":1.000,"hunks":0,"identical":true}"#);
        let empty = ok(diff_stats, r#"{"before": "", "after": ""}"#);
        assert!(empty.contains(r#""similarity":1.000"#), "{}", empty);
    }

    #[test]
    fn errors_say_what_to_do() {
        let cases: &[(fn(&[u8]) -> ToolResult, &str, &str)] = &[
            (stats, "{", "arguments are not valid JSON"),
            (stats, "[1]", "must be a JSON object, got array"),
            (stats, "{}", "missing text"),
            (stats, r#"{"text": 5}"#, "text must be a string, got number"),
            (stats, r#"{"text": "x", "top": 101}"#, "top must be a whole number from 0 to 100"),
            (stats, r#"{"text": "x", "top": -1}"#, "top must be a whole number"),
            (slugify, r#"{"text": "日本語"}"#, "no Latin letters"),
            (slugify, r#"{"text": "a", "separator": "ab"}"#, "ASCII punctuation"),
            (convert_case, r#"{"text": "a", "to": "shout"}"#, "unknown case \"shout\": want one of snake"),
            (convert_case, r#"{"text": [1], "to": "snake"}"#, "text[0] must be a string"),
            (convert_case, r#"{"text": {}, "to": "snake"}"#, "string or an array"),
            (diff_stats, r#"{"before": "a"}"#, "missing after"),
            (diff_stats, r#"{"before": "a", "after": "b", "include_diff": 1}"#, "true or false"),
        ];
        for (tool, input, want) in cases {
            let e = err(*tool, input);
            assert!(e.starts_with("text-kit: ") && e.contains(want), "{}: {:?} does not contain {:?}", input, e, want);
        }
    }

    #[test]
    fn diff_line_cap() {
        let big = "x\n".repeat(MAX_DIFF_LINES + 1);
        let mut input = String::from(r#"{"before": ""#);
        input.push_str(&big.replace('\n', "\\n"));
        input.push_str(r#"", "after": ""}"#);
        assert!(err(diff_stats, &input).contains("at most 50000 lines"));
    }
}
