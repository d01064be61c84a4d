//! csv-stats: a WASI command that reads its JSON arguments on stdin, reads CSV
//! from the arguments or from a file in the workspace, and prints a JSON
//! report of per-column statistics on stdout. Errors go to stderr with exit
//! status 1.

mod records;
mod stats;

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Where the runtime mounts the chat's workspace inside the guest.
const WORKSPACE: &str = "/workspace";
/// Largest file read; bigger ones should be sampled first.
const MAX_FILE_BYTES: u64 = 64 << 20;
const MAX_WARNINGS: usize = 20;
const DEFAULT_NULLS: &[&str] = &["", "NA", "N/A", "n/a", "null", "NULL", "None", "nan", "NaN", "-"];

fn main() {
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("csv-stats: cannot read the arguments from stdin: {}", e);
        std::process::exit(1);
    }
    match run(&input, Path::new(WORKSPACE)) {
        Ok(report) => {
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{}", report).is_err() {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("csv-stats: {}", e);
            std::process::exit(1);
        }
    }
}

struct Options {
    delimiter: Option<char>,
    header: bool,
    columns: Vec<Value>,
    top: usize,
    nulls: Vec<String>,
    max_rows: usize,
}

fn options(args: &Value) -> Result<Options, String> {
    let delimiter = match args.get("delimiter") {
        None => None,
        Some(Value::String(s)) => match s.as_str() {
            "auto" => None,
            "tab" | "\\t" => Some('\t'),
            _ if s.chars().count() == 1 && s != "\"" && s != "\n" && s != "\r" => s.chars().next(),
            _ => return Err(format!("delimiter {:?} must be one character (\",\", \";\", \"tab\", \"|\") or \"auto\"", s)),
        },
        Some(_) => return Err("delimiter must be a string such as \",\" or \"auto\"".into()),
    };
    let header = match args.get("header") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("header must be true or false".into()),
    };
    let columns = match args.get("columns") {
        None => Vec::new(),
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        Some(_) => return Err("columns must be a non-empty array of column names or 1-based numbers".into()),
    };
    let top = match args.get("top") {
        None => 5,
        Some(v) => match v.as_u64() {
            Some(n) if n <= 50 => n as usize,
            _ => return Err("top must be a whole number from 0 to 50".into()),
        },
    };
    let nulls = match args.get("null_values") {
        None => DEFAULT_NULLS.iter().map(|s| s.to_string()).collect(),
        Some(Value::Array(a)) => {
            let mut out = Vec::new();
            for v in a {
                match v {
                    Value::String(s) => out.push(s.clone()),
                    _ => return Err("null_values must be an array of strings".into()),
                }
            }
            out
        }
        Some(_) => return Err("null_values must be an array of strings".into()),
    };
    let max_rows = match args.get("max_rows") {
        None => 0,
        Some(v) => v.as_u64().ok_or("max_rows must be a whole number (0 for all rows)")? as usize,
    };
    Ok(Options { delimiter, header, columns, top, nulls, max_rows })
}

/// Reads the CSV text and names its source.
fn source(args: &Value, workspace: &Path) -> Result<(String, String), String> {
    match (args.get("csv"), args.get("path")) {
        (Some(_), Some(_)) => Err("pass either csv (the text) or path (a file in the workspace), not both".into()),
        (Some(Value::String(s)), None) => Ok((s.clone(), "input".into())),
        (Some(_), None) => Err("csv must be a string holding the CSV text".into()),
        (None, Some(Value::String(p))) => read_file(p, workspace).map(|t| (t, p.clone())),
        (None, Some(_)) => Err("path must be a string such as \"data/sales.csv\"".into()),
        (None, None) => Err("no data: pass csv (the text) or path (a file in the workspace)".into()),
    }
}

fn read_file(p: &str, workspace: &Path) -> Result<String, String> {
    let full: PathBuf = if Path::new(p).is_absolute() { PathBuf::from(p) } else { workspace.join(p) };
    let hint = "the pack reads files only when filesystem_read is granted for them (\"./\" is the workspace)";
    let meta = std::fs::metadata(&full).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("{}: no such file in the workspace; check the name, or {}", p, hint),
        _ => format!("{}: cannot open it ({}); {}", p, e, hint),
    })?;
    if meta.is_dir() {
        return Err(format!("{} is a directory: name a CSV file inside it", p));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} is {} MiB, more than the {} MiB this tool reads: analyse a sample (e.g. the first 100000 lines) instead",
            p,
            meta.len() >> 20,
            MAX_FILE_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(&full).map_err(|e| format!("{}: cannot read it ({}); {}", p, e, hint))?;
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        // Spreadsheet exports are often Latin-1 or Windows-1252: map bytes to
        // the code points of the same value rather than fail.
        Err(e) => Ok(e.into_bytes().iter().map(|&b| b as char).collect()),
    }
}

/// Runs the tool over the raw JSON arguments.
pub fn run(input: &[u8], workspace: &Path) -> Result<Value, String> {
    let args: Value = serde_json::from_slice(input).map_err(|e| format!("arguments are not valid JSON: {}", e))?;
    if !args.is_object() {
        return Err("arguments must be a JSON object".into());
    }
    let opt = options(&args)?;
    let (text, src) = source(&args, workspace)?;
    let delim = opt.delimiter.unwrap_or_else(|| records::sniff(&text));
    let limit = if opt.max_rows > 0 { opt.max_rows + usize::from(opt.header) } else { 0 };
    let records = records::parse(&text, delim, limit).map_err(|e| format!("{}: {}", src, e))?;
    let mut rows = records.iter();
    let width;
    let names: Vec<String> = if opt.header {
        let head = rows.next().ok_or_else(|| format!("{}: the file is empty: there is no header row", src))?;
        width = head.fields.len();
        unique_names(&head.fields)
    } else {
        width = records.first().map_or(0, |r| r.fields.len());
        (1..=width).map(|i| format!("column_{}", i)).collect()
    };
    let selected = select(&names, &opt.columns)?;
    let mut cols: Vec<stats::Column> = selected.iter().map(|&i| stats::Column::new(names[i].clone(), i)).collect();
    let mut warnings = Vec::new();
    let mut extra_warnings = 0;
    let mut n_rows = 0u64;
    for rec in rows {
        n_rows += 1;
        if rec.fields.len() != width {
            if warnings.len() < MAX_WARNINGS {
                warnings.push(format!(
                    "line {}: {} fields where the header has {}; {}",
                    rec.line,
                    rec.fields.len(),
                    width,
                    if rec.fields.len() < width { "missing ones count as nulls" } else { "extra ones are ignored" }
                ));
            } else {
                extra_warnings += 1;
            }
        }
        for c in cols.iter_mut() {
            match rec.fields.get(c.index) {
                Some(v) => {
                    let null = opt.nulls.iter().any(|n| n == v.trim());
                    c.add(v, null);
                }
                None => c.add("", true),
            }
        }
    }
    if extra_warnings > 0 {
        warnings.push(format!("... and {} more rows with the wrong number of fields", extra_warnings));
    }
    let delim_name = match delim {
        '\t' => "tab".to_string(),
        c => c.to_string(),
    };
    let columns: Vec<Value> = cols.into_iter().map(|c| c.report(opt.top)).collect();
    let mut report = json!({
        "source": src,
        "delimiter": delim_name,
        "header": opt.header,
        "rows": n_rows,
        "columns": columns,
    });
    if opt.max_rows > 0 && n_rows as usize >= opt.max_rows {
        report["truncated_at_rows"] = json!(opt.max_rows);
    }
    if !warnings.is_empty() {
        report["warnings"] = json!(warnings);
    }
    Ok(report)
}

/// Names every column, renaming blanks and repeats so each is unique.
fn unique_names(fields: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let base = if f.trim().is_empty() { format!("column_{}", i + 1) } else { f.trim().to_string() };
        let mut name = base.clone();
        let mut k = 2;
        while out.contains(&name) {
            name = format!("{}_{}", base, k);
            k += 1;
        }
        out.push(name);
    }
    out
}

/// Resolves the columns argument (names or 1-based numbers) to indexes.
fn select(names: &[String], wanted: &[Value]) -> Result<Vec<usize>, String> {
    if wanted.is_empty() {
        return Ok((0..names.len()).collect());
    }
    let mut out = Vec::new();
    for w in wanted {
        let i = match w {
            Value::String(s) => names.iter().position(|n| n == s).ok_or_else(|| {
                format!("no column named {:?}; the columns are {}", s, names.join(", "))
            })?,
            Value::Number(n) => match n.as_u64() {
                Some(k) if k >= 1 && (k as usize) <= names.len() => k as usize - 1,
                _ => return Err(format!("column number {} is out of range: the file has {} columns", n, names.len())),
            },
            _ => return Err("columns holds names (strings) or 1-based numbers".into()),
        };
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(args: Value) -> Value {
        run(args.to_string().as_bytes(), Path::new("/nonexistent")).unwrap()
    }

    fn err(args: Value, dir: &Path) -> String {
        match run(args.to_string().as_bytes(), dir) {
            Ok(v) => panic!("{}: no error, got {}", args, v),
            Err(e) => e,
        }
    }

    #[test]
    fn report_from_text() {
        let r = ok(json!({"csv": "city;temp;ok\nOslo;3.5;yes\nRome;18;no\nOslo;;yes\n", "top": 1}));
        assert_eq!(r["delimiter"], ";");
        assert_eq!(r["rows"], 3);
        assert_eq!(r["source"], "input");
        let cols = r["columns"].as_array().unwrap();
        assert_eq!(cols.len(), 3);
        assert_eq!(cols[0]["name"], "city");
        assert_eq!(cols[0]["top"], json!([{"value": "Oslo", "count": 2}]));
        assert_eq!(cols[1]["type"], "number");
        assert_eq!(cols[1]["nulls"], 1);
        assert_eq!(cols[1]["numeric"]["mean"], 10.75);
        assert_eq!(cols[2]["type"], "boolean");
        assert!(r.get("warnings").is_none());
    }

    #[test]
    fn options_shape_the_report() {
        let r = ok(json!({"csv": "1,2,3\n4,5,6\n7,8,9\n", "header": false, "columns": [3, "column_1"], "max_rows": 2}));
        let cols = r["columns"].as_array().unwrap();
        let names: Vec<&str> = cols.iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, vec!["column_3", "column_1"]);
        assert_eq!(r["rows"], 2);
        assert_eq!(r["truncated_at_rows"], 2);
        assert_eq!(cols[0]["numeric"]["max"], 6.0);

        let r = ok(json!({"csv": "a|b\n?|1\n", "delimiter": "|", "null_values": ["?"]}));
        assert_eq!(r["columns"][0]["nulls"], 1);
        let r = ok(json!({"csv": "a\tb\n1\t2\n", "delimiter": "tab"}));
        assert_eq!(r["delimiter"], "tab");
    }

    #[test]
    fn ragged_rows_warn() {
        let mut csv = String::from("a,b\n1\n1,2,3\n");
        for _ in 0..30 {
            csv.push_str("x\n");
        }
        let r = ok(json!({"csv": csv}));
        let w = r["warnings"].as_array().unwrap();
        assert_eq!(w.len(), MAX_WARNINGS + 1);
        assert_eq!(w[0], "line 2: 1 fields where the header has 2; missing ones count as nulls");
        assert_eq!(w[1], "line 3: 3 fields where the header has 2; extra ones are ignored");
        assert_eq!(w[MAX_WARNINGS], "... and 12 more rows with the wrong number of fields");
        assert_eq!(r["columns"][1]["nulls"], 31);
    }

    #[test]
    fn header_names_are_unique() {
        assert_eq!(unique_names(&["a".into(), "".into(), "a".into(), " a ".into()]), vec!["a", "column_2", "a_2", "a_3"]);
    }

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("csv-stats-test-{}-{}", name, std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("data")).unwrap();
        d
    }

    #[test]
    fn reads_workspace_files() {
        let ws = temp_dir("read");
        std::fs::write(ws.join("data/s.csv"), "n\n1\n2\n").unwrap();
        std::fs::write(ws.join("latin1.csv"), b"name\ncaf\xe9\n").unwrap();
        let r = run(json!({"path": "data/s.csv"}).to_string().as_bytes(), &ws).unwrap();
        assert_eq!(r["source"], "data/s.csv");
        assert_eq!(r["columns"][0]["numeric"]["sum"], 3.0);
        let abs = ws.join("data/s.csv");
        let r = run(json!({"path": abs.to_str().unwrap()}).to_string().as_bytes(), &ws).unwrap();
        assert_eq!(r["rows"], 2);
        let r = run(json!({"path": "latin1.csv"}).to_string().as_bytes(), &ws).unwrap();
        assert_eq!(r["columns"][0]["top"][0]["value"], "café");
        assert!(err(json!({"path": "nope.csv"}), &ws).contains("nope.csv: no such file in the workspace"));
        assert!(err(json!({"path": "data"}), &ws).contains("is a directory"));
        std::fs::remove_dir_all(&ws).unwrap();
    }

    #[test]
    fn bad_arguments() {
        let ws = Path::new("/nonexistent");
        let cases = [
            (json!({}), "no data"),
            (json!({"csv": "a", "path": "b"}), "not both"),
            (json!({"csv": 5}), "csv must be a string"),
            (json!({"path": ["x"]}), "path must be a string"),
            (json!({"csv": "a", "delimiter": "::"}), "must be one character"),
            (json!({"csv": "a", "delimiter": 1}), "delimiter must be a string"),
            (json!({"csv": "a", "header": "yes"}), "header must be true or false"),
            (json!({"csv": "a", "columns": []}), "non-empty array"),
            (json!({"csv": "a", "columns": ["b"]}), "no column named \"b\"; the columns are a"),
            (json!({"csv": "a", "columns": [2]}), "out of range"),
            (json!({"csv": "a", "columns": [true]}), "names (strings) or 1-based numbers"),
            (json!({"csv": "a", "top": 51}), "top must be"),
            (json!({"csv": "a", "null_values": [1]}), "null_values must be"),
            (json!({"csv": "a", "max_rows": -1}), "max_rows must be"),
            (json!({"csv": ""}), "input: the file is empty"),
            (json!([1]), "must be a JSON object"),
        ];
        for (args, want) in cases {
            let e = err(args.clone(), ws);
            assert!(e.contains(want), "{}: {:?} does not contain {:?}", args, e, want);
        }
        assert!(run(b"{", ws).unwrap_err().contains("not valid JSON"));
    }
}
