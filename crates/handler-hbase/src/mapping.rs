//! Hive's `hbase.columns.mapping`: which column is the row key, which are cells, whole families
//! or qualifier prefixes (as maps), which is the cells' timestamp, and how each is encoded
//! (`hbase.table.default.storage.type` and the `#b`/`#s` suffixes), checked with Hive's texts.

use std::collections::{BTreeMap, BTreeSet};

use apiary_metastore::Table;
use apiary_storage::handler::{HandlerError, HandlerResult};
use apiary_storage::types::HiveType;

/// The columns mapping (SERDEPROPERTIES).
pub(crate) const COLUMNS_MAPPING: &str = "hbase.columns.mapping";
/// Whether `cf:prefix.*` is a prefix (default true).
const REGEX_MATCHING: &str = "hbase.columns.mapping.regex.matching";
/// Whether a prefix column's map keys leave the prefix out (default false).
const PREFIX_HIDE: &str = "hbase.columns.mapping.prefix.hide";
/// `string` (default) or `binary`: how non-string primitives are stored.
const DEFAULT_STORAGE: &str = "hbase.table.default.storage.type";
/// The SerDe named in Hive's messages.
pub(crate) const SERDE: &str = "org.apache.hadoop.hive.hbase.HBaseSerDe";
const KEY: &str = ":key";
const TIMESTAMP: &str = ":timestamp";

/// Where a column's values are in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// The row key.
    Key,
    /// The newest cell's timestamp.
    Timestamp,
    /// One cell (`family:qualifier`), its newest version.
    Cell { family: String, qualifier: Vec<u8> },
    /// Every cell of a family (`family:`), a map from qualifier to value.
    Family { family: String },
    /// The cells of a family whose qualifier starts with `prefix` (`family:prefix.*`), a map
    /// from qualifier (without the prefix when `hide`) to value.
    Prefix {
        family: String,
        prefix: Vec<u8>,
        hide: bool,
    },
}

impl Target {
    /// The family the column reads, if it reads cells.
    pub(crate) fn family(&self) -> Option<&str> {
        match self {
            Target::Cell { family, .. }
            | Target::Family { family }
            | Target::Prefix { family, .. } => Some(family),
            Target::Key | Target::Timestamp => None,
        }
    }
}

/// A table column and where it is.
#[derive(Debug, Clone)]
pub(crate) struct Mapped {
    pub(crate) name: String,
    pub(crate) hive: HiveType,
    pub(crate) target: Target,
    /// Whether the value (a map's value) is stored in HBase's binary form (`Bytes.toBytes`).
    pub(crate) binary: bool,
    /// Whether a map's key (the qualifier) is stored in binary form.
    pub(crate) key_binary: bool,
}

/// A table's mapping: every column, in order.
#[derive(Debug, Clone)]
pub(crate) struct Mapping {
    pub(crate) columns: Vec<Mapped>,
    /// The index of the row key column.
    pub(crate) key: usize,
}

impl Mapping {
    /// The families the columns read, each once, in order.
    pub(crate) fn families(&self) -> BTreeSet<String> {
        self.columns
            .iter()
            .filter_map(|c| c.target.family().map(str::to_string))
            .collect()
    }

    /// The row key column.
    pub(crate) fn key(&self) -> &Mapped {
        &self.columns[self.key]
    }

    /// The mapping of `table`, checked against its columns.
    pub(crate) fn of(table: &Table) -> HandlerResult<Mapping> {
        let props = properties(table);
        let get = |k: &str| props.get(k).map(String::as_str);
        let flag = |k: &str, default: bool| {
            get(k).map_or(default, |v| v.trim().eq_ignore_ascii_case("true"))
        };
        let specs = parse(
            get(COLUMNS_MAPPING),
            flag(REGEX_MATCHING, true),
            flag(PREFIX_HIDE, false),
        )?;
        bind(specs, table, get(DEFAULT_STORAGE))
    }
}

/// The properties a Hive SerDe sees: the table's, overridden by SERDEPROPERTIES.
pub(crate) fn properties(table: &Table) -> BTreeMap<String, String> {
    let mut p = table.parameters.clone();
    p.extend(table.sd.serde.parameters.clone());
    p
}

fn def_err(msg: impl Into<String>) -> HandlerError {
    HandlerError::Definition(msg.into())
}

/// One entry of the mapping, before it meets the columns.
#[derive(Debug, Clone)]
struct Spec {
    target: Target,
    /// The text after `#`, if any.
    storage: Option<String>,
}

/// Parses the mapping as Hive's `HBaseSerDe.parseColumnsMapping` does: comma-separated
/// entries, each `:key`, `:timestamp`, `family:`, `family:qualifier` or `family:prefix.*`,
/// optionally followed by `#` and a storage specification. With no `:key`, the row key is an
/// implicit first column.
fn parse(spec: Option<&str>, regex: bool, hide: bool) -> HandlerResult<Vec<Spec>> {
    let Some(spec) = spec else {
        return Err(def_err(
            "Error: hbase.columns.mapping missing for this HBase table.",
        ));
    };
    if spec.is_empty() || spec == KEY {
        return Err(def_err(
            "Error: hbase.columns.mapping specifies only the HBase table row key. A valid Hive-HBase table must specify at least one additional column.",
        ));
    }
    let mut out = Vec::new();
    let mut keys = 0;
    for entry in spec.split(',') {
        let entry = entry.trim();
        // As Hive: a storage specification only when there is exactly one non-empty `#` part.
        let parts = java_split(entry, '#');
        let column = parts.first().copied().unwrap_or("");
        let storage = match parts.as_slice() {
            [_, s] => Some(s.to_string()),
            _ => None,
        };
        let first = column.find(':');
        if first.is_none() || first != column.rfind(':') {
            return Err(def_err(
                "Error: the HBase columns mapping contains a badly formed column family, column qualifier specification.",
            ));
        }
        let target = if column == KEY {
            keys += 1;
            Target::Key
        } else if column == TIMESTAMP {
            Target::Timestamp
        } else {
            let (family, qualifier) = column.split_once(':').unwrap_or((column, ""));
            let family = family.to_string();
            if qualifier.is_empty() {
                Target::Family { family }
            } else if let (true, Some(prefix)) = (regex, qualifier.strip_suffix(".*")) {
                Target::Prefix {
                    family,
                    prefix: prefix.as_bytes().to_vec(),
                    hide,
                }
            } else {
                Target::Cell {
                    family,
                    qualifier: qualifier.as_bytes().to_vec(),
                }
            }
        };
        out.push(Spec { target, storage });
    }
    match keys {
        0 => out.insert(
            0,
            Spec {
                target: Target::Key,
                storage: None,
            },
        ),
        1 => {}
        _ => {
            return Err(def_err(format!(
                "Error: hbase.columns.mapping names the row key {KEY} {keys} times; it must name it once"
            )))
        }
    }
    Ok(out)
}

/// `s` split at `sep` as Java's `String.split` does: trailing empty parts are dropped (and an
/// empty `s` is one empty part).
fn java_split(s: &str, sep: char) -> Vec<&str> {
    if s.is_empty() {
        return vec![""];
    }
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// Whether values of `t` are strings.
pub(crate) fn is_text(t: &HiveType) -> bool {
    matches!(
        t,
        HiveType::String | HiveType::Varchar(_) | HiveType::Char(_)
    )
}

/// Whether `option` (a `#` specification part) is `-`, or a prefix of `string` or `binary`.
fn storage_option(option: &str) -> bool {
    option == "-" || "string".starts_with(option) || "binary".starts_with(option)
}

/// Whether a primitive of type `t` under `option` is stored binary.
fn binary_for(t: &HiveType, option: &str, table_binary: bool) -> bool {
    if t.is_complex() || is_text(t) {
        return false;
    }
    match option {
        "-" => table_binary,
        // (Hive's order: `-`, then a prefix of `binary`, which the empty option is too.)
        o => "binary".starts_with(o),
    }
}

/// Checks the mapping against the table's columns, as `HBaseSerDeParameters` does.
fn bind(specs: Vec<Spec>, table: &Table, default_storage: Option<&str>) -> HandlerResult<Mapping> {
    let columns = &table.sd.columns;
    if specs.len() != columns.len() {
        return Err(def_err(format!(
            "{SERDE}: columns has {} elements while hbase.columns.mapping has {} elements (counting the key if implicit)",
            columns.len(),
            specs.len()
        )));
    }
    let table_binary = match default_storage.unwrap_or("") {
        "" | "string" => false,
        "binary" => true,
        other => {
            return Err(def_err(format!(
                "Error: hbase.table.default.storage.type parameter must be specified as 'string' or 'binary'; '{other}' is not a valid specification for this table/serdes property."
            )))
        }
    };
    let mut out = Vec::new();
    let mut key = 0;
    for (i, (spec, column)) in specs.into_iter().zip(columns).enumerate() {
        let hive = HiveType::parse(&column.type_name).ok_or_else(|| {
            def_err(format!(
                "column {}: unknown type {}",
                column.name, column.type_name
            ))
        })?;
        let is_map = matches!(spec.target, Target::Family { .. } | Target::Prefix { .. });
        if is_map {
            let primitive_key = matches!(&hive, HiveType::Map(k, _) if !k.is_complex());
            if !primitive_key {
                return Err(def_err(format!(
                    "{SERDE}: hbase column family '{}' should be mapped to Map<? extends LazyPrimitive<?, ?>,?>, that is the Key for the map should be of primitive type, but is mapped to {}",
                    spec.target.family().unwrap_or_default(),
                    hive
                )));
            }
        }
        match spec.target {
            Target::Key if hive.is_complex() => {
                return Err(def_err(format!(
                    "{SERDE}: the row key column {} must be of a primitive type, not {hive}",
                    column.name
                )));
            }
            Target::Key => key = i,
            Target::Timestamp if !matches!(hive, HiveType::BigInt | HiveType::Timestamp) => {
                return Err(def_err(format!(
                    "{SERDE}: timestamp columns should be of timestamp or bigint type, but is mapped to {hive}"
                )));
            }
            _ => {}
        }
        let (binary, key_binary) = match (&spec.storage, &hive) {
            (None, HiveType::Map(k, v)) => (
                binary_for(v, "-", table_binary),
                binary_for(k, "-", table_binary),
            ),
            (None, t) => (binary_for(t, "-", table_binary), false),
            (Some(s), t) => {
                let parts = java_split(s, ':');
                match (parts.as_slice(), t) {
                    ([one], t) => {
                        if matches!(t, HiveType::Map(..)) || !storage_option(one) {
                            return Err(def_err(format!(
                                "Error: A column storage specification is one of the following: '-', a prefix of 'string', or a prefix of 'binary'. {one} is not a valid storage option specification for {}",
                                column.name
                            )));
                        }
                        (binary_for(t, one, table_binary), false)
                    }
                    ([k, v], HiveType::Map(kt, vt)) if storage_option(k) && storage_option(v) => {
                        (binary_for(vt, v, table_binary), binary_for(kt, k, table_binary))
                    }
                    ([k, v], _) => {
                        return Err(def_err(format!(
                            "Error: To specify a valid column storage type for a Map column, use any two specifiers from '-', a prefix of 'string',  and a prefix of 'binary' separated by a ':'. Valid examples are '-:-', 's:b', etc. They specify the storage type for the key and value parts of the Map<?,?> respectively. Invalid storage specification for column {}; {k}:{v}",
                            column.name
                        )))
                    }
                    _ => {
                        return Err(def_err(format!(
                            "Error: hbase.columns.mapping storage specification {s} is not valid for column: {}",
                            column.name
                        )))
                    }
                }
            }
        };
        out.push(Mapped {
            name: column.name.clone(),
            hive,
            target: spec.target,
            binary,
            key_binary,
        });
    }
    Ok(Mapping { columns: out, key })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use apiary_metastore::{Column, SerDeInfo, StorageDescriptor, TableType};

    pub(crate) fn table(columns: &[(&str, &str)], mapping: &str, extra: &[(&str, &str)]) -> Table {
        let mut serde = SerDeInfo::default();
        serde
            .parameters
            .insert(COLUMNS_MAPPING.into(), mapping.into());
        for (k, v) in extra {
            serde.parameters.insert(k.to_string(), v.to_string());
        }
        Table {
            database: "default".into(),
            name: "t".into(),
            owner: "u".into(),
            create_time: 0,
            table_type: TableType::Managed,
            sd: StorageDescriptor {
                columns: columns
                    .iter()
                    .map(|(n, ty)| Column {
                        name: n.to_string(),
                        type_name: ty.to_string(),
                        comment: None,
                    })
                    .collect(),
                location: None,
                input_format: None,
                output_format: None,
                serde,
                compressed: false,
                num_buckets: -1,
                bucket_columns: vec![],
                sort_columns: vec![],
            },
            partition_keys: vec![],
            parameters: Default::default(),
            view_text: None,
            view_database: None,
            secrets: Default::default(),
            data_token: None,
            constraints: Vec::new(),
        }
    }

    #[test]
    fn every_kind_of_entry_is_understood() {
        let t = table(
            &[
                ("k", "string"),
                ("a", "int"),
                ("m", "map<string,bigint>"),
                ("p", "map<string,string>"),
                ("ts", "bigint"),
            ],
            ":key, cf:a#b, f2:, cf:pre.*, :timestamp",
            &[],
        );
        let m = Mapping::of(&t).unwrap();
        assert_eq!(m.key, 0);
        assert_eq!(
            m.columns[1].target,
            Target::Cell {
                family: "cf".into(),
                qualifier: b"a".to_vec()
            }
        );
        assert!(m.columns[1].binary);
        assert_eq!(
            m.columns[2].target,
            Target::Family {
                family: "f2".into()
            }
        );
        assert!(
            matches!(m.columns[3].target, Target::Prefix { ref prefix, hide: false, .. } if prefix == b"pre")
        );
        assert_eq!(m.columns[4].target, Target::Timestamp);
        assert_eq!(
            m.families().into_iter().collect::<Vec<_>>(),
            vec!["cf".to_string(), "f2".to_string()]
        );
    }

    #[test]
    fn the_key_is_implicit_and_counted() {
        let t = table(&[("k", "string"), ("a", "string")], "cf:a", &[]);
        let m = Mapping::of(&t).unwrap();
        assert_eq!(m.key, 0);
        let t = table(&[("a", "string")], "cf:a", &[]);
        let e = Mapping::of(&t).unwrap_err().to_string();
        assert_eq!(e, "org.apache.hadoop.hive.hbase.HBaseSerDe: columns has 1 elements while hbase.columns.mapping has 2 elements (counting the key if implicit)");
    }

    #[test]
    fn bad_mappings_get_hives_texts() {
        let cols = [("k", "string"), ("a", "string")];
        let err = |m: &str, extra: &[(&str, &str)]| {
            Mapping::of(&table(&cols, m, extra))
                .unwrap_err()
                .to_string()
        };
        assert!(err(":key", &[]).contains("specifies only the HBase table row key"));
        assert!(err(":key,cfa", &[]).contains("badly formed column family"));
        assert!(err(":key,cf:a:b", &[]).contains("badly formed column family"));
        assert!(err(":key,:key", &[]).contains("names the row key :key 2 times"));
        assert!(err(":key,cf:a", &[(DEFAULT_STORAGE, "text")])
            .contains("'text' is not a valid specification"));
        assert!(
            err(":key,cf:a#x", &[]).contains("x is not a valid storage option specification for a")
        );
        assert!(err(":key,cf:", &[])
            .contains("should be mapped to Map<? extends LazyPrimitive<?, ?>,?>"));
        let mut t = table(&cols, ":key,cf:a", &[]);
        t.sd.serde.parameters.remove(COLUMNS_MAPPING);
        assert!(Mapping::of(&t)
            .unwrap_err()
            .to_string()
            .contains("missing for this HBase table"));
    }

    #[test]
    fn storage_specifications_split_as_java_splits_them() {
        let cols = [("k", "string"), ("a", "int"), ("m", "map<int,int>")];
        let binary = [(DEFAULT_STORAGE, "binary")];
        // `cf:a#` has no specification: the table's default.
        let m = Mapping::of(&table(&cols, ":key,cf:a#,f:", &binary)).unwrap();
        assert!(m.columns[1].binary);
        // `#-:` on a map is `-` alone, which a map may not have.
        let e = Mapping::of(&table(&cols, ":key,cf:a,f:#-:", &[])).unwrap_err();
        assert!(e
            .to_string()
            .contains("- is not a valid storage option specification for m"));
        // Two `#`: no specification at all, as in Hive.
        let m = Mapping::of(&table(&cols, ":key,cf:a#s#x,f:", &binary)).unwrap();
        assert!(m.columns[1].binary);
        // `#:b` on a map: an empty key option is a prefix of `binary`.
        let m = Mapping::of(&table(&cols, ":key,cf:a,f:#:s", &[])).unwrap();
        assert!(m.columns[2].key_binary && !m.columns[2].binary);
    }

    #[test]
    fn storage_follows_the_table_default_and_the_suffixes() {
        let t = table(
            &[
                ("k", "int"),
                ("a", "int"),
                ("s", "string"),
                ("m", "map<int,double>"),
            ],
            ":key#s,cf:a,cf:s#b,cf2:#b:-",
            &[(DEFAULT_STORAGE, "binary")],
        );
        let m = Mapping::of(&t).unwrap();
        assert!(!m.columns[0].binary, "#s wins over the table default");
        assert!(m.columns[1].binary, "the table default");
        assert!(!m.columns[2].binary, "strings are always text");
        assert!(m.columns[3].key_binary && m.columns[3].binary);
    }
}
