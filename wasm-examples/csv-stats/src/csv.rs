//! An RFC 4180 CSV reader: quoted fields with "" escapes and embedded line
//! breaks, LF or CRLF records, a leading UTF-8 byte order mark. It is lenient
//! where real files are sloppy (a quote inside an unquoted field is kept as
//! text) and strict where guessing would corrupt data (an unterminated quote
//! is an error naming the line it opened on).

use std::fmt;

#[derive(Debug, PartialEq)]
pub struct CsvError {
    pub line: usize,
    pub msg: String,
}

impl fmt::Display for CsvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

/// A record and the line it starts on (1-based).
#[derive(Debug, PartialEq)]
pub struct Record {
    pub line: usize,
    pub fields: Vec<String>,
}

/// Reads every record of text. Blank lines are skipped.
pub fn parse(text: &str, delim: char, max_records: usize) -> Result<Vec<Record>, CsvError> {
    let mut r = Reader { chars: text.strip_prefix('\u{feff}').unwrap_or(text).chars().peekable(), line: 1, delim };
    let mut out = Vec::new();
    while let Some(rec) = r.record()? {
        if rec.fields.len() == 1 && rec.fields[0].is_empty() {
            continue;
        }
        out.push(rec);
        if max_records > 0 && out.len() >= max_records {
            break;
        }
    }
    Ok(out)
}

struct Reader<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    delim: char,
}

impl<'a> Reader<'a> {
    fn record(&mut self) -> Result<Option<Record>, CsvError> {
        if self.chars.peek().is_none() {
            return Ok(None);
        }
        let start = self.line;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut quoted = false; // the current field began with a quote
        let mut in_quotes = false;
        let mut quote_line = 0;
        while let Some(c) = self.chars.next() {
            if in_quotes {
                match c {
                    '"' if self.chars.peek() == Some(&'"') => {
                        self.chars.next();
                        field.push('"');
                    }
                    '"' => in_quotes = false,
                    '\n' => {
                        self.line += 1;
                        field.push('\n');
                    }
                    _ => field.push(c),
                }
                continue;
            }
            match c {
                '"' if field.is_empty() && !quoted => {
                    quoted = true;
                    in_quotes = true;
                    quote_line = self.line;
                }
                c if c == self.delim => {
                    fields.push(std::mem::take(&mut field));
                    quoted = false;
                }
                '\r' if self.chars.peek() == Some(&'\n') => {}
                '\n' => {
                    self.line += 1;
                    fields.push(field);
                    return Ok(Some(Record { line: start, fields }));
                }
                _ => field.push(c),
            }
        }
        if in_quotes {
            return Err(CsvError {
                line: quote_line,
                msg: "a quoted field is never closed: add the closing \" or escape quotes inside it as \"\"".to_string(),
            });
        }
        fields.push(field);
        Ok(Some(Record { line: start, fields }))
    }
}

/// The delimiters sniffing considers, most common first.
pub const CANDIDATES: [char; 4] = [',', ';', '\t', '|'];

/// Guesses the delimiter from the first records: the candidate that splits
/// them into the same number of fields (more than one), the most fields
/// winning; "," when nothing fits.
pub fn sniff(text: &str) -> char {
    let sample: String = text.lines().take(20).collect::<Vec<_>>().join("\n");
    let mut best = (',', 1usize);
    for &d in &CANDIDATES {
        let recs = match parse(&sample, d, 10) {
            Ok(r) => r,
            Err(_) => continue,
        };
        // The last sampled line may be cut mid-record; ignore it when there are others.
        let usable = if recs.len() > 1 { &recs[..recs.len() - 1] } else { &recs[..] };
        let n = match usable.first() {
            Some(r) => r.fields.len(),
            None => continue,
        };
        if n > best.1 && usable.iter().all(|r| r.fields.len() == n) {
            best = (d, n);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str, d: char) -> Vec<Vec<String>> {
        parse(text, d, 0).unwrap().into_iter().map(|r| r.fields).collect()
    }

    #[test]
    fn rfc4180() {
        assert_eq!(fields("a,b\n1,2\n", ','), vec![vec!["a", "b"], vec!["1", "2"]]);
        assert_eq!(fields("a,b\r\n1,2", ','), vec![vec!["a", "b"], vec!["1", "2"]]);
        assert_eq!(fields("\"x,y\",\"say \"\"hi\"\"\"\n", ','), vec![vec!["x,y", "say \"hi\""]]);
        assert_eq!(fields("\"multi\nline\",z\n", ','), vec![vec!["multi\nline", "z"]]);
        assert_eq!(fields("a,,c\n,\n", ','), vec![vec!["a", "", "c"], vec!["", ""]]);
        assert_eq!(fields("\u{feff}h1;h2\n\n1;2\n\n", ';'), vec![vec!["h1", "h2"], vec!["1", "2"]]);
        assert_eq!(fields("5\" disk,x\n", ','), vec![vec!["5\" disk", "x"]]);
        assert_eq!(fields("é,ü\n", ','), vec![vec!["é", "ü"]]);
    }

    #[test]
    fn record_lines() {
        let recs = parse("h\n\"a\nb\"\nc\n", ',', 0).unwrap();
        let lines: Vec<usize> = recs.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![1, 2, 4]);
    }

    #[test]
    fn unterminated_quote() {
        let err = parse("a,b\n1,\"open\n2,3\n", ',', 0).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.msg.contains("never closed"));
    }

    #[test]
    fn max_records() {
        assert_eq!(parse("1\n2\n3\n", ',', 2).unwrap().len(), 2);
    }

    /// Random inputs never panic; every parsed record comes back in order.
    #[test]
    fn random_inputs_never_panic() {
        let alphabet = ['a', ',', ';', '"', '\n', '\r', ' ', '\t', 'é', '|'];
        let mut state: u64 = 11;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        };
        for _ in 0..20000 {
            let len = next() % 40;
            let text: String = (0..len).map(|_| alphabet[next() % alphabet.len()]).collect();
            let d = CANDIDATES[next() % CANDIDATES.len()];
            if let Ok(recs) = parse(&text, d, 0) {
                assert!(recs.windows(2).all(|w| w[0].line < w[1].line), "{:?}", text);
            }
            sniff(&text);
        }
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff("a,b,c\n1,2,3\n"), ',');
        assert_eq!(sniff("a;b;c\n1,5;2;3\n"), ';');
        assert_eq!(sniff("a\tb\n1\t2\n"), '\t');
        assert_eq!(sniff("a|b|c|d\n1|2|3|4\n"), '|');
        assert_eq!(sniff("single column\nvalue\n"), ',');
        assert_eq!(sniff("\"x;y\",b\n\"1;2\",3\n"), ',');
    }
}
