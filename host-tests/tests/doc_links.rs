//! The documentation's relative links resolve: every `[text](target)` and
//! `[label]: target` in README.md, docs/*.md and the other READMEs names a
//! file or directory of the checkout, and a `#fragment` names a heading of the
//! Markdown file it points into (GitHub's anchors). Every docs/*.md is
//! reachable from README.md by such links.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::path::{Component, Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The documents checked: README.md, docs/*.md, and the README.md of each
/// top-level directory.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut docs = vec![root.join("README.md")];
    for dir in ["docs"] {
        for e in fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                docs.push(p);
            }
        }
    }
    for e in fs::read_dir(&root).unwrap() {
        let p = e.unwrap().path().join("README.md");
        if p.is_file() {
            docs.push(p);
        }
    }
    docs.sort();
    docs
}

/// The text of `md` without fenced code blocks and inline code spans (a link
/// shown as code is not a link), line by line.
fn prose(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    for (n, line) in md.lines().enumerate() {
        let t = line.trim_start();
        let marker = if t.starts_with("```") {
            Some("```")
        } else if t.starts_with("~~~") {
            Some("~~~")
        } else {
            None
        };
        match (fence, marker) {
            (None, Some(m)) => {
                fence = Some(m);
                continue;
            }
            (Some(f), Some(m)) if f == m => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            _ => {}
        }
        let mut s = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                s.push(c);
            }
        }
        out.push((n + 1, s));
    }
    out
}

/// Every link target in `md`, with its line number.
fn links(md: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose(md) {
        // Reference definitions: `[label]: target`.
        let t = line.trim_start();
        if t.starts_with('[') {
            if let Some(i) = t.find("]:") {
                let target = t[i + 2..].split_whitespace().next().unwrap_or("");
                if !target.is_empty() {
                    out.push((n, target.trim_matches(['<', '>']).to_string()));
                }
                continue;
            }
        }
        // Inline links and images: `](target)` or `](target "title")`.
        let b = line.as_bytes();
        let mut i = 0;
        while let Some(j) = line[i..].find("](") {
            let start = i + j + 2;
            let mut depth = 1;
            let mut end = start;
            while end < b.len() {
                match b[end] {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
            let target = line[start..end].split_whitespace().next().unwrap_or("");
            out.push((n, target.trim_matches(['<', '>']).to_string()));
            i = end.min(line.len());
        }
    }
    out
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and
/// `_` dropped, spaces as `-`; a repeated anchor gets `-1`, `-2`, ...
fn anchors(md: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fence = false;
    for line in md.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = !fence;
            continue;
        }
        if fence || !t.starts_with('#') {
            continue;
        }
        let text = t.trim_start_matches('#');
        if !text.starts_with(' ') && !text.is_empty() {
            continue;
        }
        let base: String = text
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut a = base.clone();
        let mut k = 0;
        while seen.contains(&a) {
            k += 1;
            a = format!("{base}-{k}");
        }
        seen.insert(a);
    }
    seen
}

/// `base/target` with `.` and `..` resolved lexically.
fn join(base: &Path, target: &str) -> PathBuf {
    let mut p = PathBuf::new();
    for c in base.join(target).components() {
        match c {
            Component::ParentDir => {
                p.pop();
            }
            Component::CurDir => {}
            c => p.push(c),
        }
    }
    p
}

/// The broken links of `doc`, as "line: target: why".
fn broken(doc: &Path) -> Vec<String> {
    let md = fs::read_to_string(doc).unwrap();
    let dir = doc.parent().unwrap();
    let mut bad = Vec::new();
    for (n, target) in links(&md) {
        if target.is_empty() {
            bad.push(format!("{n}: empty link"));
            continue;
        }
        if is_external(&target) {
            continue;
        }
        let (path, frag) = match target.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (target.as_str(), None),
        };
        let file = if path.is_empty() { doc.to_path_buf() } else { join(dir, path) };
        if !file.starts_with(repo()) || !file.exists() {
            bad.push(format!("{n}: {target}: no such file"));
            continue;
        }
        if let Some(f) = frag {
            if file.extension().is_some_and(|x| x == "md")
                && !anchors(&fs::read_to_string(&file).unwrap()).contains(f)
            {
                bad.push(format!("{n}: {target}: no heading #{f} in {}", file.display()));
            }
        }
    }
    bad
}

#[test]
fn relative_links_resolve() {
    let mut report = Vec::new();
    for doc in documents() {
        for b in broken(&doc) {
            report.push(format!("{}:{b}", doc.strip_prefix(repo()).unwrap().display()));
        }
    }
    assert!(report.is_empty(), "broken links:\n{}", report.join("\n"));
}

#[test]
fn every_doc_reachable_from_readme() {
    let root = repo();
    let mut reached = BTreeSet::new();
    let mut todo = vec![root.join("README.md")];
    while let Some(doc) = todo.pop() {
        if !reached.insert(doc.clone()) {
            continue;
        }
        let md = fs::read_to_string(&doc).unwrap();
        for (_, target) in links(&md) {
            if is_external(&target) {
                continue;
            }
            let path = target.split('#').next().unwrap();
            if path.is_empty() {
                continue;
            }
            let p = join(doc.parent().unwrap(), path);
            if p.extension().is_some_and(|x| x == "md") && p.is_file() {
                todo.push(p);
            }
        }
    }
    let unreached: Vec<_> = documents()
        .into_iter()
        .filter(|d| d.starts_with(root.join("docs")) && !reached.contains(d))
        .map(|d| d.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(unreached.is_empty(), "not reachable from README.md: {unreached:?}");
}

#[test]
fn readme_is_short() {
    let n = fs::read_to_string(repo().join("README.md")).unwrap().lines().count();
    assert!(n <= 200, "README.md has {n} lines (at most 200: the reference goes in docs/)");
}

#[test]
fn no_dated_docs() {
    let dated: Vec<_> = fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()) || n.contains("issue"))
        .collect();
    assert!(dated.is_empty(), "docs/ is by topic, not by date or work item: {dated:?}");
}

#[test]
fn link_parser() {
    let md = "see [a](x.md#b) and `[no](y.md)` ![i](p.png \"t\")\n```\n[no](z.md)\n```\n[r]: <w.md>\n";
    let got: Vec<_> = links(md).into_iter().map(|(_, t)| t).collect();
    assert_eq!(got, ["x.md#b", "p.png", "w.md"]);
    let a = anchors("# Quick start\n## `make run`, and more!\n## Quick start\n");
    assert!(a.contains("quick-start") && a.contains("make-run-and-more") && a.contains("quick-start-1"));
}
