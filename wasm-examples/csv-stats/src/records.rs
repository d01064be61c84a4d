//! Records from CSV text, read by the `csv` crate (RFC 4180: quoted fields
//! with "" escapes and embedded line breaks, LF or CRLF records), plus what
//! the crate leaves to its caller: the line each record starts on, a leading
//! UTF-8 byte order mark, and guessing the delimiter. The crate is lenient
//! where real files are sloppy: a quote inside an unquoted field is kept as
//! text, and a quote that is never closed runs to the end of the file.

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

/// Reads every record of text (at most max_records when it is not 0). Blank
/// lines are skipped.
pub fn parse(text: &str, delim: char, max_records: usize) -> Result<Vec<Record>, CsvError> {
    if !delim.is_ascii() {
        return Err(CsvError { line: 1, msg: format!("the delimiter {:?} is not an ASCII character", delim) });
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delim as u8)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| CsvError {
            line: e.position().map_or(0, |p| p.line() as usize),
            msg: e.to_string(),
        })?;
        let line = rec.position().map_or(0, |p| p.line() as usize);
        if rec.len() == 1 && rec[0].is_empty() {
            continue;
        }
        out.push(Record { line, fields: rec.iter().map(str::to_string).collect() });
        if max_records > 0 && out.len() >= max_records {
            break;
        }
    }
    Ok(out)
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
    fn unterminated_quote_runs_to_the_end() {
        let recs = parse("a,b\n1,\"open\n2,3\n", ',', 0).unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].line, 2);
        assert_eq!(recs[1].fields, vec!["1", "open\n2,3\n"]);
    }

    #[test]
    fn non_ascii_delimiter() {
        assert!(parse("a§b\n", '§', 0).unwrap_err().msg.contains("not an ASCII"));
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
                // A lone CR ends a record without starting a line, so two may share one.
                assert!(recs.windows(2).all(|w| w[0].line <= w[1].line), "{:?}", text);
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
