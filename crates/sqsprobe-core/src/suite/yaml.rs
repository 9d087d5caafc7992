//! Reading YAML files: the one-document loader, and saphyr's marked node tree read as typed
//! scalars, checked mappings, and positions.
//!
//! [`load_document`] is the only place a file's text becomes a YAML tree (suites and target
//! profiles both go through it). Every [`Reader`] accessor reports its own error (at the
//! node's position) and returns `None`, so callers can keep going and collect every problem
//! in one pass.

use std::time::Duration;

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};

use super::diagnostic::Diagnostic;
use super::model::Pos;
use super::source::LineIndex;
use sqsprobe_facts::duration;
use sqsprobe_facts::text::suggest::{closest, suggest};

/// A node of the parsed file.
pub type Node<'n> = MarkedYaml<'n>;

/// What kind of file a document is, for the loader's messages.
#[derive(Debug, Clone, Copy)]
pub struct DocumentKind {
    /// `suite file` or `profile`: "the suite file is empty", "a profile holds one YAML
    /// document".
    pub noun: &'static str,
    /// What an empty file should hold, shown as the hint of the empty-file error.
    pub empty_hint: &'static str,
}

/// The one document of a file, and the problems that do not stop decoding it.
pub(crate) struct Document<'s> {
    pub root: Node<'s>,
    /// A second document is reported here, while the first is still decoded so that its
    /// errors are reported in the same pass.
    pub diags: Vec<Diagnostic>,
}

/// Loads a file that must hold exactly one YAML document. A syntax error (at its position)
/// or an empty file is the only diagnostic; a further document is one more, beside the first.
pub(crate) fn load_document<'s>(
    path: &str,
    source: &'s str,
    kind: DocumentKind,
) -> Result<Document<'s>, Vec<Diagnostic>> {
    let docs = match MarkedYaml::load_from_str(source) {
        Ok(docs) => docs,
        Err(e) => {
            let at = LineIndex::new(source).clamp(marker_pos(e.marker()));
            let d = Diagnostic::new(path, at, 1, format!("invalid YAML: {}", e.info()));
            return Err(vec![d]);
        }
    };
    let mut docs = docs.into_iter();
    let Some(root) = docs.next() else {
        let d = Diagnostic::new(
            path,
            Pos { line: 1, col: 1 },
            1,
            format!("the {} is empty", kind.noun),
        )
        .with_hint(kind.empty_hint);
        return Err(vec![d]);
    };
    let diags = docs
        .next()
        .map(|second| {
            Diagnostic::new(
                path,
                pos(&second),
                width(&second),
                format!("a {} holds one YAML document; found another", kind.noun),
            )
        })
        .into_iter()
        .collect();
    Ok(Document { root, diags })
}

/// Loads a one-document file and decodes its root with `decode`: the decoded value when no
/// problem was found, else every problem (the loader's and the decoder's) in file order.
/// Suites, target profiles and audit plans are all read through it.
pub fn parse_document<T>(
    path: &str,
    source: &str,
    kind: DocumentKind,
    decode: impl FnOnce(&mut Reader, &Node) -> Option<T>,
) -> Result<T, Vec<Diagnostic>> {
    let doc = load_document(path, source, kind)?;
    let mut r = Reader::new(path, source);
    r.diags = doc.diags;
    match decode(&mut r, &doc.root) {
        Some(value) if r.diags.is_empty() => Ok(value),
        _ => Err(r.into_diagnostics()),
    }
}

/// 1-based position of a node.
pub fn pos(node: &Node) -> Pos {
    marker_pos(&node.span.start)
}

/// 1-based position of a saphyr marker (saphyr lines are 1-based, columns 0-based).
pub(crate) fn marker_pos(m: &saphyr::Marker) -> Pos {
    Pos {
        line: m.line().max(1) as u32,
        col: m.col() as u32 + 1,
    }
}

/// How many characters a node spans on its first line (1 for multi-line or empty nodes).
fn width(node: &Node) -> u32 {
    let (s, e) = (node.span.start, node.span.end);
    if s.line() == e.line() && e.col() > s.col() {
        (e.col() - s.col()) as u32
    } else {
        1
    }
}

/// The keys of one mapping, checked against what is allowed there.
pub struct Fields<'a, 'n> {
    /// Where to point "missing key" errors (the owning key, or the mapping itself).
    pub owner: &'a Node<'n>,
    /// What the mapping is, for messages ("a `send` step").
    pub what: String,
    pub entries: Vec<(&'a str, &'a Node<'n>, &'a Node<'n>)>,
    /// Allowed keys an unknown key was taken for ("did you mean"), so a missing-key error
    /// does not repeat the typo's report.
    pub suggested: Vec<String>,
}

impl<'a, 'n> Fields<'a, 'n> {
    /// No keys at all, for a value that is not a mapping (`sleep: 1s`).
    pub fn empty(owner: &'a Node<'n>, what: &str) -> Fields<'a, 'n> {
        Fields {
            owner,
            what: what.to_string(),
            entries: Vec::new(),
            suggested: Vec::new(),
        }
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&'a Node<'n>> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| *v)
    }

    /// The key node of `key`, if present.
    pub fn key(&self, key: &str) -> Option<&'a Node<'n>> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, k, _)| *k)
    }

    /// Whether `key` is present.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Whether `key` is absent and no misspelling of it was reported.
    pub fn missing(&self, key: &str) -> bool {
        !self.has(key) && !self.suggested.iter().any(|s| s == key)
    }
}

/// Collects diagnostics while reading one file.
pub struct Reader<'s> {
    pub path: &'s str,
    pub source: &'s str,
    /// Built once per file, so reading a scalar's written text is not a scan of the file.
    index: LineIndex<'s>,
    pub diags: Vec<Diagnostic>,
}

impl<'s> Reader<'s> {
    pub fn new(path: &'s str, source: &'s str) -> Reader<'s> {
        Reader {
            path,
            source,
            index: LineIndex::new(source),
            diags: Vec::new(),
        }
    }

    /// Every diagnostic recorded, in file order, each placed inside the file. saphyr marks
    /// some implicit nodes past the text's end (the empty value of a bare `? ` is marked on
    /// line 2 of a one-line file), so positions are clamped here, where every diagnostic of a
    /// file leaves the reader, rather than at each of the places a node's position is read.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        let mut diags = self.diags;
        for d in &mut diags {
            d.pos = self.index.clamp(d.pos);
        }
        diags.sort_by_key(|d| d.pos);
        diags
    }

    /// Records an error underlining `node`.
    pub fn error(&mut self, node: &Node, message: impl Into<String>) -> &mut Diagnostic {
        self.diags
            .push(Diagnostic::new(self.path, pos(node), width(node), message));
        self.diags.last_mut().expect("just pushed")
    }

    /// Records an error with a hint underlining `node`.
    pub fn error_hint(&mut self, node: &Node, message: impl Into<String>, hint: impl Into<String>) {
        self.error(node, message).hint = Some(hint.into());
    }

    /// The source text of a one-line node (used to keep `1.10` or `0x1F` as written).
    fn text_of(&self, node: &Node) -> Option<String> {
        let (s, e) = (node.span.start, node.span.end);
        if s.line() != e.line() {
            return None;
        }
        let from = self.index.byte_of(marker_pos(&s))?;
        let to = self.index.byte_of(marker_pos(&e))?;
        Some(self.source.get(from..to)?.to_string())
    }

    fn describe(node: &Node) -> &'static str {
        match &node.data {
            YamlData::Value(Scalar::Null) => "nothing",
            YamlData::Value(Scalar::Boolean(_)) => "a boolean",
            YamlData::Value(Scalar::Integer(_)) => "a number",
            YamlData::Value(Scalar::FloatingPoint(_)) => "a number",
            YamlData::Value(Scalar::String(_)) | YamlData::Representation(..) => "a string",
            YamlData::Sequence(_) => "a list",
            YamlData::Mapping(_) => "a mapping",
            YamlData::Tagged(..) => "a tagged value",
            YamlData::Alias(_) | YamlData::BadValue => "an invalid value",
        }
    }

    /// A scalar as text: strings as they are, numbers and booleans as written.
    pub fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.data {
            YamlData::Value(Scalar::String(s)) => Some(s.to_string()),
            YamlData::Value(Scalar::Integer(_) | Scalar::FloatingPoint(_) | Scalar::Boolean(_)) => {
                self.text_of(node)
            }
            _ => {
                let found = Self::describe(node);
                self.error(node, format!("expected {what} (a string), found {found}"));
                None
            }
        }
    }

    /// A non-empty string.
    pub fn nonempty(&mut self, node: &Node, what: &str) -> Option<String> {
        let s = self.string(node, what)?;
        if s.trim().is_empty() {
            self.error(node, format!("{what} must not be empty"));
            return None;
        }
        Some(s)
    }

    /// A whole number within `min..=max`.
    pub fn int(&mut self, node: &Node, what: &str, min: i64, max: i64) -> Option<i64> {
        match &node.data {
            YamlData::Value(Scalar::Integer(n)) if (min..=max).contains(n) => Some(*n),
            YamlData::Value(Scalar::Integer(n)) => {
                self.error(
                    node,
                    format!("{what} must be between {min} and {max}, found {n}"),
                );
                None
            }
            _ => {
                let found = Self::describe(node);
                self.error(
                    node,
                    format!("expected {what} (a whole number), found {found}"),
                );
                None
            }
        }
    }

    /// `true` or `false`.
    pub fn bool(&mut self, node: &Node, what: &str) -> Option<bool> {
        match &node.data {
            YamlData::Value(Scalar::Boolean(b)) => Some(*b),
            _ => {
                let found = Self::describe(node);
                self.error_hint(
                    node,
                    format!("expected {what} (true or false), found {found}"),
                    "write `true` or `false`",
                );
                None
            }
        }
    }

    /// A share: `5%`, `12.5%` or a fraction such as `0.05` (0 and 1 are fractions too).
    pub fn share(&mut self, n: &Node, what: &str) -> Option<f64> {
        const HINT: &str = "write a percentage such as `5%` or a fraction such as `0.05`";
        let value = match &n.data {
            YamlData::Value(Scalar::FloatingPoint(f)) => f.into_inner(),
            YamlData::Value(Scalar::Integer(i)) => *i as f64,
            YamlData::Value(Scalar::String(s)) => {
                let parsed = s
                    .trim()
                    .strip_suffix('%')
                    .and_then(|p| p.trim().parse::<f64>().ok())
                    .filter(|p| p.is_finite());
                match parsed {
                    Some(p) if (0.0..=100.0).contains(&p) => return Some(p / 100.0),
                    Some(p) => {
                        self.error_hint(
                            n,
                            format!("{what} must be between 0% and 100%, found {p}%"),
                            HINT,
                        );
                        return None;
                    }
                    None => {
                        self.error_hint(n, format!("expected {what} (a share), found `{s}`"), HINT);
                        return None;
                    }
                }
            }
            _ => {
                self.error_hint(n, format!("expected {what} (a share)"), HINT);
                return None;
            }
        };
        if (0.0..=1.0).contains(&value) {
            Some(value)
        } else {
            self.error_hint(
                n,
                format!("{what} must be a fraction between 0 and 1, found {value}"),
                HINT,
            );
            None
        }
    }

    /// A duration such as `1500ms` or `2s`; a bare number is refused with a hint.
    pub fn duration(&mut self, node: &Node, what: &str) -> Option<Duration> {
        if let YamlData::Value(Scalar::Integer(n)) = &node.data {
            self.error_hint(
                node,
                format!("{what} needs a unit: `{n}` could mean seconds or milliseconds"),
                format!("write `{n}s` or `{n}ms`"),
            );
            return None;
        }
        let text = self.string(node, &format!("{what} (a duration)"))?;
        match duration::parse(&text) {
            Ok(d) => Some(d),
            Err(e) => {
                self.error_hint(
                    node,
                    format!("invalid duration for {what}: {e}"),
                    "durations are `<whole number><ms|s|m|h|d>`, e.g. `1500ms`, `2s`, `5m`",
                );
                None
            }
        }
    }

    /// A duration SQS takes in whole seconds (the wire has no milliseconds here).
    pub fn seconds(&mut self, node: &Node, what: &str) -> Option<Duration> {
        let d = self.duration(node, what)?;
        if d.subsec_millis() != 0 {
            let hint = format!(
                "SQS takes whole seconds here; write `{}s` or `{}s`",
                d.as_secs(),
                d.as_secs() + 1
            );
            self.error_hint(
                node,
                format!(
                    "{what} must be a whole number of seconds, found {}",
                    duration::format(d)
                ),
                hint,
            );
            return None;
        }
        Some(d)
    }

    /// A list; `what` names one element.
    pub fn seq<'a, 'n>(&mut self, node: &'a Node<'n>, what: &str) -> Option<&'a [Node<'n>]> {
        match &node.data {
            YamlData::Sequence(items) => Some(items),
            _ => {
                let found = Self::describe(node);
                self.error(node, format!("expected a list of {what}, found {found}"));
                None
            }
        }
    }

    /// A list of strings; a single string is accepted as a list of one when `one_ok`.
    pub fn strings(&mut self, node: &Node, what: &str, one_ok: bool) -> Option<Vec<String>> {
        if one_ok && !matches!(node.data, YamlData::Sequence(_)) {
            return self.string(node, what).map(|s| vec![s]);
        }
        let items = self.seq(node, what)?;
        let mut out = Vec::new();
        for item in items {
            out.push(self.string(item, what)?);
        }
        Some(out)
    }

    /// A mapping whose keys are all in `allowed`; unknown keys are errors with a did-you-mean.
    /// A null value (`purge:` with nothing after it) reads as an empty mapping.
    pub fn fields<'a, 'n>(
        &mut self,
        owner: &'a Node<'n>,
        node: &'a Node<'n>,
        what: &str,
        allowed: &[&str],
    ) -> Option<Fields<'a, 'n>> {
        let mut fields = Fields {
            owner,
            what: what.to_string(),
            entries: Vec::new(),
            suggested: Vec::new(),
        };
        match &node.data {
            YamlData::Value(Scalar::Null) => return Some(fields),
            YamlData::Mapping(map) => {
                for (k, v) in map {
                    let Some(name) = self.key_name(k) else {
                        continue;
                    };
                    if allowed.contains(&name) {
                        fields.entries.push((name, k, v));
                    } else {
                        if let Some(c) = closest(name, allowed.iter().copied()) {
                            fields.suggested.push(c.to_string());
                        }
                        self.error_hint(
                            k,
                            format!("unknown key `{name}` in {what}"),
                            suggest(name, allowed),
                        );
                    }
                }
            }
            _ => {
                let found = Self::describe(node);
                self.error_hint(
                    node,
                    format!("expected {what} (a mapping), found {found}"),
                    format!("keys: {}", allowed.join(", ")),
                );
                return None;
            }
        }
        Some(fields)
    }

    /// A mapping of free-form string keys to nodes (queue labels, attribute names).
    pub fn map_entries<'a, 'n>(
        &mut self,
        node: &'a Node<'n>,
        what: &str,
    ) -> Option<Vec<(&'a str, &'a Node<'n>, &'a Node<'n>)>> {
        match &node.data {
            YamlData::Value(Scalar::Null) => Some(Vec::new()),
            YamlData::Mapping(map) => Some(
                map.iter()
                    .filter_map(|(k, v)| Some((self.key_name(k)?, k, v)))
                    .collect(),
            ),
            _ => {
                let found = Self::describe(node);
                self.error(node, format!("expected {what} (a mapping), found {found}"));
                None
            }
        }
    }

    /// A mapping of strings to strings (raw attributes, tags); numbers and booleans keep
    /// their written form.
    pub fn string_map(
        &mut self,
        node: &Node,
        what: &str,
    ) -> Option<std::collections::BTreeMap<String, String>> {
        let entries = self.map_entries(node, what)?;
        let mut out = std::collections::BTreeMap::new();
        for (k, _, v) in entries {
            if let Some(s) = self.string(v, &format!("the value of `{k}`")) {
                out.insert(k.to_string(), s);
            }
        }
        Some(out)
    }

    /// A mapping key, which must be a plain string.
    fn key_name<'a>(&mut self, key: &'a Node) -> Option<&'a str> {
        match &key.data {
            YamlData::Value(Scalar::String(s)) => Some(s.as_ref()),
            _ => {
                let found = Self::describe(key);
                self.error(key, format!("expected a key name, found {found}"));
                None
            }
        }
    }

    /// Reports every key in `required` that `fields` lacks, at the owner.
    pub fn require(&mut self, fields: &Fields, required: &[&str]) -> bool {
        let mut ok = true;
        for key in required {
            if !fields.has(key) && !fields.missing(key) {
                ok = false;
                continue;
            }
            if !fields.has(key) {
                let what = fields.what.clone();
                self.error(fields.owner, format!("{what} needs `{key}`"));
                ok = false;
            }
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: DocumentKind = DocumentKind {
        noun: "profile",
        empty_hint: "a profile is a mapping",
    };

    fn one_lines(r: Result<Document, Vec<Diagnostic>>) -> Vec<String> {
        match r {
            Ok(doc) => doc.diags.iter().map(Diagnostic::one_line).collect(),
            Err(diags) => diags.iter().map(Diagnostic::one_line).collect(),
        }
    }

    #[test]
    fn one_document_loads_with_no_problems() {
        let doc = load_document("p.yaml", "a: 1\n", KIND).ok().unwrap();
        assert!(doc.diags.is_empty());
        assert!(doc.root.data.is_mapping());
    }

    #[test]
    fn empty_files_several_documents_and_syntax_errors_are_positioned() {
        assert_eq!(
            one_lines(load_document("p.yaml", "# only a comment\n", KIND)),
            ["p.yaml:1:1: the profile is empty (a profile is a mapping)"]
        );
        // The second document is reported, and the first is still returned for decoding.
        let two = load_document("p.yaml", "a: 1\n---\nb: 2\n", KIND);
        assert!(two.as_ref().is_ok_and(|d| d.root.data.is_mapping()));
        assert_eq!(
            one_lines(two),
            ["p.yaml:3:1: a profile holds one YAML document; found another"]
        );
        assert_eq!(
            one_lines(load_document("p.yaml", "a: [1\n", KIND)),
            ["p.yaml:2:1: invalid YAML: while parsing a flow sequence, expected ',' or ']'"]
        );
    }
}
