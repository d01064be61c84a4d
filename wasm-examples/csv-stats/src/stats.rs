//! Per-column statistics: counts, nulls, distinct values, the most common
//! values, an inferred type, and for numbers min, max, mean, median,
//! quartiles, standard deviation and sum.

use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Distinct values tracked per column before counting stops (memory bound).
pub const MAX_DISTINCT: usize = 100_000;

pub struct Column {
    pub name: String,
    pub index: usize,
    nulls: u64,
    count: u64,
    ints: u64,
    numbers: Vec<f64>,
    bools: u64,
    dates: u64,
    min_len: usize,
    max_len: usize,
    min_date: String,
    max_date: String,
    non_numeric: Vec<String>,
    distinct: HashMap<String, u64>,
    distinct_capped: bool,
}

impl Column {
    pub fn new(name: String, index: usize) -> Self {
        Column {
            name,
            index,
            nulls: 0,
            count: 0,
            ints: 0,
            numbers: Vec::new(),
            bools: 0,
            dates: 0,
            min_len: usize::MAX,
            max_len: 0,
            min_date: String::new(),
            max_date: String::new(),
            non_numeric: Vec::new(),
            distinct: HashMap::new(),
            distinct_capped: false,
        }
    }

    /// Adds one cell. null says whether it is one of the null markers.
    pub fn add(&mut self, raw: &str, null: bool) {
        if null {
            self.nulls += 1;
            return;
        }
        let v = raw.trim();
        self.count += 1;
        let len = v.chars().count();
        self.min_len = self.min_len.min(len);
        self.max_len = self.max_len.max(len);
        match parse_number(v) {
            Some((n, is_int)) => {
                self.numbers.push(n);
                if is_int {
                    self.ints += 1;
                }
            }
            None => {
                if self.non_numeric.len() < 3 && !self.non_numeric.iter().any(|s| s == v) {
                    self.non_numeric.push(v.to_string());
                }
            }
        }
        if parse_bool(v).is_some() {
            self.bools += 1;
        }
        if is_date(v) {
            self.dates += 1;
            if self.min_date.is_empty() || v < self.min_date.as_str() {
                self.min_date = v.to_string();
            }
            if v > self.max_date.as_str() {
                self.max_date = v.to_string();
            }
        }
        if let Some(n) = self.distinct.get_mut(v) {
            *n += 1;
        } else if self.distinct.len() < MAX_DISTINCT {
            self.distinct.insert(v.to_string(), 1);
        } else {
            self.distinct_capped = true;
        }
    }

    pub fn kind(&self) -> &'static str {
        let n = self.count;
        if n == 0 {
            "empty"
        } else if self.ints == n {
            "integer"
        } else if self.numbers.len() as u64 == n {
            "number"
        } else if self.bools == n {
            "boolean"
        } else if self.dates == n {
            "date"
        } else {
            "text"
        }
    }

    pub fn report(mut self, top: usize) -> Value {
        let kind = self.kind();
        let mut m = Map::new();
        m.insert("name".into(), json!(self.name));
        m.insert("index".into(), json!(self.index + 1));
        m.insert("type".into(), json!(kind));
        m.insert("count".into(), json!(self.count));
        m.insert("nulls".into(), json!(self.nulls));
        m.insert("distinct".into(), json!(self.distinct.len()));
        if self.distinct_capped {
            m.insert("distinct_capped".into(), json!(true));
        }
        let mut tops: Vec<(&String, &u64)> = self.distinct.iter().collect();
        tops.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let tops: Vec<Value> = tops.into_iter().take(top).map(|(v, c)| json!({"value": v, "count": c})).collect();
        m.insert("top".into(), Value::Array(tops));
        match kind {
            "integer" | "number" => {
                m.insert("numeric".into(), numeric(&mut self.numbers));
            }
            "date" => {
                m.insert("min".into(), json!(self.min_date));
                m.insert("max".into(), json!(self.max_date));
            }
            "text" => {
                m.insert("min_length".into(), json!(self.min_len));
                m.insert("max_length".into(), json!(self.max_len));
                // Mostly numbers with a few stragglers is usually dirty data:
                // say which values keep the column from being numeric.
                let share = self.numbers.len() as f64 / self.count as f64;
                if share >= 0.5 {
                    m.insert("numeric_share".into(), json!(round(share, 3)));
                    m.insert("non_numeric_examples".into(), json!(self.non_numeric));
                    m.insert("numeric".into(), numeric(&mut self.numbers));
                }
            }
            _ => {}
        }
        Value::Object(m)
    }
}

fn numeric(xs: &mut [f64]) -> Value {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = xs.len();
    let sum: f64 = xs.iter().sum();
    let mean = sum / n as f64;
    let var = if n > 1 { xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64 } else { 0.0 };
    json!({
        "min": xs[0],
        "max": xs[n - 1],
        "mean": round(mean, 6),
        "median": quantile(xs, 0.5),
        "p25": quantile(xs, 0.25),
        "p75": quantile(xs, 0.75),
        "stddev": round(var.sqrt(), 6),
        "sum": round(sum, 6),
    })
}

/// The q-quantile of sorted xs by linear interpolation (numpy's default).
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    let pos = q * (xs.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    round(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo as f64), 6)
}

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    let r = (x * p).round() / p;
    if r.is_finite() {
        r
    } else {
        x
    }
}

/// Parses a number as spreadsheets write them: optional sign, digits with an
/// optional fraction and exponent. Returns the value and whether it is an
/// integer. Thousands separators and currency signs are not numbers here.
pub fn parse_number(s: &str) -> Option<(f64, bool)> {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    let mut is_int = true;
    if i < b.len() && b[i] == b'.' {
        is_int = false;
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - f;
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        is_int = false;
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    if !v.is_finite() {
        return None;
    }
    Some((v, is_int))
}

pub fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "yes" | "y" | "t" => Some(true),
        "false" | "no" | "n" | "f" => Some(false),
        _ => None,
    }
}

/// ISO 8601 dates and date-times: YYYY-MM-DD, optionally followed by "T" or
/// " " and a time. ISO text sorts by time, so min and max are string order.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 10 {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(|c| c.is_ascii_digit());
    if !(digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10)) {
        return false;
    }
    let month = (b[5] - b'0') * 10 + (b[6] - b'0');
    let day = (b[8] - b'0') * 10 + (b[9] - b'0');
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return false;
    }
    b.len() == 10 || (b[10] == b'T' || b[10] == b' ') && b.len() >= 16 && digits(11..13) && b[13] == b':' && digits(14..16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        let cases = [
            ("42", Some((42.0, true))),
            ("-3", Some((-3.0, true))),
            ("+3.5", Some((3.5, false))),
            (".5", Some((0.5, false))),
            ("5.", Some((5.0, false))),
            ("1e3", Some((1000.0, false))),
            ("1E-2", Some((0.01, false))),
            ("1,000", None),
            ("$5", None),
            ("1e", None),
            ("-", None),
            (".", None),
            ("nan", None),
            ("inf", None),
            ("1e999", None),
            ("12abc", None),
        ];
        for (s, want) in cases {
            assert_eq!(parse_number(s), want, "{}", s);
        }
    }

    #[test]
    fn dates() {
        for s in ["2024-01-31", "2024-02-03T10:00", "2024-02-03 10:00:00Z", "1999-12-31T23:59:59.123+02:00"] {
            assert!(is_date(s), "{}", s);
        }
        for s in ["2024-13-01", "2024-1-1", "24-01-01", "2024-01-01x", "2024-01-01T1", "2024/01/01"] {
            assert!(!is_date(s), "{}", s);
        }
    }

    #[test]
    fn quantiles() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&xs, 0.5), 2.5);
        assert_eq!(quantile(&xs, 0.25), 1.75);
        assert_eq!(quantile(&[7.0], 0.5), 7.0);
    }

    fn column(values: &[&str]) -> Value {
        let mut c = Column::new("c".into(), 0);
        for v in values {
            c.add(v, v.is_empty());
        }
        c.report(2)
    }

    #[test]
    fn integer_column() {
        let r = column(&["3", "1", "2", "", "2", "10"]);
        assert_eq!(r["type"], "integer");
        assert_eq!(r["count"], 5);
        assert_eq!(r["nulls"], 1);
        assert_eq!(r["distinct"], 4);
        assert_eq!(r["top"], json!([{"value": "2", "count": 2}, {"value": "1", "count": 1}]));
        assert_eq!(r["numeric"], json!({"min": 1.0, "max": 10.0, "mean": 3.6, "median": 2.0, "p25": 2.0, "p75": 3.0, "stddev": 3.646917, "sum": 18.0}));
    }

    #[test]
    fn kinds() {
        assert_eq!(column(&["1", "2.5"])["type"], "number");
        assert_eq!(column(&["yes", "No", "TRUE"])["type"], "boolean");
        assert_eq!(column(&["2024-01-02", "2023-05-06"])["type"], "date");
        assert_eq!(column(&["2024-01-02", "2023-05-06"])["min"], "2023-05-06");
        assert_eq!(column(&["", ""])["type"], "empty");
        let t = column(&["a", "bb", "ccc"]);
        assert_eq!((t["type"].as_str(), t["min_length"].as_u64(), t["max_length"].as_u64()), (Some("text"), Some(1), Some(3)));
        assert!(t.get("numeric").is_none());
    }

    #[test]
    fn dirty_numeric_column() {
        let r = column(&["10", "20", "n/a", "30", "?"]);
        assert_eq!(r["type"], "text");
        assert_eq!(r["numeric_share"], 0.6);
        assert_eq!(r["non_numeric_examples"], json!(["n/a", "?"]));
        assert_eq!(r["numeric"]["mean"], 20.0);
    }

    #[test]
    fn distinct_is_bounded() {
        let mut c = Column::new("c".into(), 0);
        for i in 0..MAX_DISTINCT + 10 {
            c.add(&i.to_string(), false);
        }
        let r = c.report(1);
        assert_eq!(r["distinct"], MAX_DISTINCT);
        assert_eq!(r["distinct_capped"], true);
        assert_eq!(r["count"], (MAX_DISTINCT + 10) as u64);
    }
}
