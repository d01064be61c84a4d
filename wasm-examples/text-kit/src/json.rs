//! Just enough JSON for tool arguments and results: a strict RFC 8259 parser
//! into a small tree, and a writer. No crates, so the plugin stays tens of KB.

use std::fmt::Write;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The number as written; tools read it with `as_u64`/`as_i64`.
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Num(_) => "number",
            Json::Str(_) => "string",
            Json::Arr(_) => "array",
            Json::Obj(_) => "object",
        }
    }
}

const MAX_DEPTH: usize = 128;

/// Parses exactly one JSON value. The error names the byte offset and what
/// was expected there.
pub fn parse(text: &[u8]) -> Result<Json, String> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != text.len() {
        return Err(p.err("end of input"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, want: &str) -> String {
        let mut m = String::new();
        match self.s.get(self.i) {
            Some(c) if c.is_ascii_graphic() => {
                let _ = write!(m, "unexpected '{}' at byte {}, expected {}", *c as char, self.i, want);
            }
            Some(c) => {
                let _ = write!(m, "unexpected byte 0x{:02x} at byte {}, expected {}", c, self.i, want);
            }
            None => {
                let _ = write!(m, "unexpected end of input at byte {}, expected {}", self.i, want);
            }
        }
        m
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("less nesting (128 levels at most)"));
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Json::Str),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            _ => Err(self.err("a JSON value")),
        }
    }

    fn literal(&mut self, word: &str, v: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err(word))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.i += 1;
        let mut members = Vec::new();
        self.ws();
        if self.eat(b'}') {
            return Ok(Json::Obj(members));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("a double-quoted key"));
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(b':') {
                return Err(self.err("':'"));
            }
            self.ws();
            let v = self.value(depth + 1)?;
            members.push((k, v));
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                return Ok(Json::Obj(members));
            }
            return Err(self.err("',' or '}'"));
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.i += 1;
        let mut items = Vec::new();
        self.ws();
        if self.eat(b']') {
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                return Ok(Json::Arr(items));
            }
            return Err(self.err("',' or ']'"));
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        self.eat(b'-');
        let int_start = self.i;
        let n = self.digits();
        if n == 0 {
            return Err(self.err("a digit"));
        }
        if n > 1 && self.s[int_start] == b'0' {
            self.i = int_start + 1;
            return Err(self.err("no leading zeros"));
        }
        if self.eat(b'.') && self.digits() == 0 {
            return Err(self.err("a digit after '.'"));
        }
        if self.eat(b'e') || self.eat(b'E') {
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if self.digits() == 0 {
                return Err(self.err("an exponent"));
            }
        }
        // The slice holds only ASCII digits, signs, '.', 'e' and 'E'.
        let text: String = self.s[start..self.i].iter().map(|&b| b as char).collect();
        Ok(Json::Num(text))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err("a hex digit")),
            };
            v = v << 4 | d as u32;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            match self.peek() {
                None => return Err(self.err("'\"' to close the string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(String::from_utf8_lossy(&out).into_owned());
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.peek();
                    self.i += 1;
                    match c {
                        Some(b'"') => out.push(b'"'),
                        Some(b'\\') => out.push(b'\\'),
                        Some(b'/') => out.push(b'/'),
                        Some(b'b') => out.push(8),
                        Some(b'f') => out.push(12),
                        Some(b'n') => out.push(b'\n'),
                        Some(b'r') => out.push(b'\r'),
                        Some(b't') => out.push(b'\t'),
                        Some(b'u') => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp) && self.s[self.i..].starts_with(b"\\u") {
                                let save = self.i;
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                } else {
                                    self.i = save;
                                }
                            }
                            let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err("an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX"));
                        }
                    }
                }
                Some(c) if c < 0x20 => return Err(self.err("no raw control characters in a string (write \\n)")),
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }
}

/// Appends s as a JSON string literal.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Builds a JSON object member by member, in order.
pub struct ObjWriter {
    buf: String,
    first: bool,
}

impl ObjWriter {
    pub fn new() -> Self {
        ObjWriter { buf: String::from("{"), first: true }
    }

    fn key(&mut self, k: &str) {
        if !self.first {
            self.buf.push(',');
        }
        self.first = false;
        write_str(&mut self.buf, k);
        self.buf.push(':');
    }

    pub fn num(&mut self, k: &str, v: u64) -> &mut Self {
        self.key(k);
        let _ = write!(self.buf, "{}", v);
        self
    }

    pub fn int(&mut self, k: &str, v: i64) -> &mut Self {
        self.key(k);
        let _ = write!(self.buf, "{}", v);
        self
    }

    /// A fixed-point decimal: `milli` thousandths, written as "12.345".
    pub fn fixed3(&mut self, k: &str, milli: u64) -> &mut Self {
        self.key(k);
        let _ = write!(self.buf, "{}.{:03}", milli / 1000, milli % 1000);
        self
    }

    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k);
        write_str(&mut self.buf, v);
        self
    }

    pub fn boolean(&mut self, k: &str, v: bool) -> &mut Self {
        self.key(k);
        self.buf.push_str(if v { "true" } else { "false" });
        self
    }

    /// Inserts already-encoded JSON.
    pub fn raw(&mut self, k: &str, json: &str) -> &mut Self {
        self.key(k);
        self.buf.push_str(json);
        self
    }

    pub fn finish(&mut self) -> String {
        self.buf.push('}');
        std::mem::take(&mut self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_values() {
        let v = parse(br#" {"a": [1, -2.5e3, true, null], "b": "x\u00e9\ud83d\ude00\n", "a": "last"} "#).unwrap();
        assert_eq!(v.get("a"), Some(&Json::Str("last".into())));
        assert_eq!(v.get("b").and_then(Json::as_str), Some("xé😀\n"));
        let arr = parse(b"[0, 10, -2.5e3]").unwrap();
        assert_eq!(arr, Json::Arr(vec![Json::Num("0".into()), Json::Num("10".into()), Json::Num("-2.5e3".into())]));
        assert_eq!(arr.type_name(), "array");
    }

    #[test]
    fn rejects_bad_json_with_position() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "at byte 0"),
            (b"{\"a\": 1,}", "unexpected '}' at byte 8, expected a double-quoted key"),
            (b"[1 2]", "at byte 3, expected ',' or ']'"),
            (b"{'a': 1}", "unexpected ''' at byte 1"),
            (b"01", "no leading zeros"),
            (b"1.", "a digit after '.'"),
            (b"\"a\\qb\"", "an escape"),
            (b"\"a\nb\"", "no raw control characters"),
            (b"\"abc", "to close the string"),
            (b"tru", "expected true"),
            (b"{} x", "expected end of input"),
            (b"\"\\u12g4\"", "a hex digit"),
        ];
        for (input, want) in cases {
            let err = parse(input).unwrap_err();
            assert!(err.contains(want), "{:?}: {} does not contain {}", String::from_utf8_lossy(input), err, want);
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = "[".repeat(1000) + &"]".repeat(1000);
        assert!(parse(deep.as_bytes()).unwrap_err().contains("128 levels"));
    }

    #[test]
    fn writes_escaped_strings() {
        let mut s = String::new();
        write_str(&mut s, "a\"b\\c\n\u{1}é");
        assert_eq!(s, r#""a\"b\\c\n\u0001é""#);
        let back = parse(s.as_bytes()).unwrap();
        assert_eq!(back.as_str(), Some("a\"b\\c\n\u{1}é"));
    }

    /// Random and mutated inputs never panic, and what parses re-encodes to
    /// text that parses to the same value (no cargo-fuzz offline; a fixed
    /// generator keeps it reproducible).
    #[test]
    fn random_inputs_never_panic() {
        let seeds: &[&[u8]] = &[br#"{"a": [1, -2.5e3, "x\u00e9", true, null, {"b": {}}]}"#, b"[[[]]]", br#""\ud83d\ude00""#];
        let mut state: u64 = 7;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        for i in 0..20000 {
            let mut input: Vec<u8> = seeds[i % seeds.len()].to_vec();
            for _ in 0..(next() % 4) {
                let at = next() % (input.len() + 1);
                match next() % 3 {
                    0 if at < input.len() => {
                        input.remove(at);
                    }
                    1 => input.insert(at, (next() % 256) as u8),
                    _ => {
                        let punct = b"{}[]\",:\\u0";
                        input.insert(at, punct[next() % punct.len()]);
                    }
                }
            }
            if let Ok(v) = parse(&input) {
                let mut out = String::new();
                encode(&v, &mut out);
                assert_eq!(parse(out.as_bytes()).as_ref(), Ok(&v), "{}", out);
            }
        }
    }

    fn encode(v: &Json, out: &mut String) {
        match v {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.push_str(n),
            Json::Str(s) => write_str(out, s),
            Json::Arr(items) => {
                out.push('[');
                for (i, it) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    encode(it, out);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                out.push('{');
                for (i, (k, it)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, k);
                    out.push(':');
                    encode(it, out);
                }
                out.push('}');
            }
        }
    }

    #[test]
    fn object_writer() {
        let s = ObjWriter::new().num("n", 3).int("i", -4).fixed3("f", 12045).str("s", "x").boolean("b", true).raw("r", "[1]").finish();
        assert_eq!(s, r#"{"n":3,"i":-4,"f":12.045,"s":"x","b":true,"r":[1]}"#);
    }
}
