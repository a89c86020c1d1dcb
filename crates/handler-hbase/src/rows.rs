//! Bigtable's ReadRows answer as whole rows. The answer is a stream of cell chunks in which a
//! row, and a cell's value, may continue from one message into the next; a row counts only
//! once a chunk commits it, and a chunk may reset the row read so far. (`bigtable_rs` merges
//! each message alone, which breaks rows that span messages.)

use bigtable_rs::google::bigtable::v2::read_rows_response::cell_chunk::RowStatus;
use bigtable_rs::google::bigtable::v2::read_rows_response::CellChunk;

use apiary_storage::handler::{HandlerError, HandlerResult};

/// One cell of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell {
    pub(crate) family: String,
    pub(crate) qualifier: Vec<u8>,
    pub(crate) timestamp_micros: i64,
    pub(crate) labels: Vec<String>,
    pub(crate) value: Vec<u8>,
}

/// A row: its key and cells.
pub(crate) type Row = (Vec<u8>, Vec<Cell>);

fn bad(msg: &str) -> HandlerError {
    HandlerError::Remote(format!("Bigtable sent a malformed ReadRows answer: {msg}"))
}

/// Merges the chunks of a ReadRows answer into rows.
#[derive(Debug, Default)]
pub(crate) struct Merger {
    /// The key of the row being read.
    key: Option<Vec<u8>>,
    cells: Vec<Cell>,
    /// The family and qualifier of the last cell (a chunk may leave them out).
    family: Option<String>,
    qualifier: Option<Vec<u8>>,
    /// A cell whose value continues in the next chunk.
    partial: Option<Cell>,
    /// The last committed key: rows come in key order.
    last: Option<Vec<u8>>,
}

impl Merger {
    fn reset(&mut self) {
        self.key = None;
        self.cells.clear();
        self.family = None;
        self.qualifier = None;
        self.partial = None;
    }

    /// Takes one chunk; a row it commits goes to `out`.
    pub(crate) fn push(&mut self, chunk: CellChunk, out: &mut Vec<Row>) -> HandlerResult<()> {
        if let Some(RowStatus::ResetRow(true)) = chunk.row_status {
            if self.key.is_none() {
                return Err(bad("a reset outside a row"));
            }
            self.reset();
            return Ok(());
        }
        match (&self.key, chunk.row_key.is_empty()) {
            (None, true) => return Err(bad("a new row without a row key")),
            (None, false) => {
                if self.last.as_ref().is_some_and(|l| chunk.row_key <= *l) {
                    return Err(bad("rows out of key order"));
                }
                self.key = Some(chunk.row_key);
            }
            (Some(k), false) if *k != chunk.row_key => {
                return Err(bad("a new row before the last one was committed"))
            }
            _ => {}
        }
        if let Some(mut cell) = self.partial.take() {
            cell.value.extend_from_slice(&chunk.value);
            if chunk.value_size > 0 {
                self.partial = Some(cell);
            } else {
                self.cells.push(cell);
            }
        } else {
            if chunk.family_name.is_some() && chunk.qualifier.is_none() {
                return Err(bad("a new family without a qualifier"));
            }
            if let Some(f) = chunk.family_name {
                self.family = Some(f);
            }
            if let Some(q) = chunk.qualifier {
                self.qualifier = Some(q);
            }
            let (Some(family), Some(qualifier)) = (&self.family, &self.qualifier) else {
                return Err(bad("a cell without a family or qualifier"));
            };
            let cell = Cell {
                family: family.clone(),
                qualifier: qualifier.clone(),
                timestamp_micros: chunk.timestamp_micros,
                labels: chunk.labels,
                value: chunk.value,
            };
            if chunk.value_size > 0 {
                self.partial = Some(cell);
            } else {
                self.cells.push(cell);
            }
        }
        if let Some(RowStatus::CommitRow(true)) = chunk.row_status {
            if self.partial.is_some() {
                return Err(bad("a row committed in the middle of a cell"));
            }
            if let Some(key) = self.key.take() {
                self.last = Some(key.clone());
                out.push((key, std::mem::take(&mut self.cells)));
            }
            self.reset();
        }
        Ok(())
    }

    /// The answer ended: no row may be left open.
    pub(crate) fn finish(&self) -> HandlerResult<()> {
        if self.key.is_some() {
            return Err(bad("the answer ended in the middle of a row"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(
        key: &str,
        family: Option<&str>,
        q: Option<&str>,
        value: &str,
        size: i32,
    ) -> CellChunk {
        CellChunk {
            row_key: key.as_bytes().to_vec(),
            family_name: family.map(str::to_string),
            qualifier: q.map(|q| q.as_bytes().to_vec()),
            timestamp_micros: 1000,
            value: value.as_bytes().to_vec(),
            value_size: size,
            ..Default::default()
        }
    }

    fn commit(mut c: CellChunk) -> CellChunk {
        c.row_status = Some(RowStatus::CommitRow(true));
        c
    }

    #[test]
    fn rows_and_values_continue_across_chunks() {
        let mut m = Merger::default();
        let mut out = Vec::new();
        // One row over three chunks (as if in three messages): a split value, a second cell
        // of the same family given by its qualifier alone.
        m.push(chunk("r1", Some("cf"), Some("a"), "hel", 5), &mut out)
            .unwrap();
        m.push(chunk("", None, None, "lo", 0), &mut out).unwrap();
        assert!(out.is_empty());
        m.push(commit(chunk("", None, Some("b"), "x", 0)), &mut out)
            .unwrap();
        m.push(commit(chunk("r2", Some("cf"), Some("a"), "y", 0)), &mut out)
            .unwrap();
        m.finish().unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0, b"r1");
        let values: Vec<(&str, &[u8])> = out[0]
            .1
            .iter()
            .map(|c| (c.family.as_str(), c.value.as_slice()))
            .collect();
        assert_eq!(values, vec![("cf", &b"hello"[..]), ("cf", &b"x"[..])]);
        assert_eq!(out[0].1[1].qualifier, b"b");
    }

    #[test]
    fn a_reset_drops_the_row_and_malformed_answers_are_errors() {
        let mut m = Merger::default();
        let mut out = Vec::new();
        m.push(chunk("r1", Some("cf"), Some("a"), "v", 0), &mut out)
            .unwrap();
        let reset = CellChunk {
            row_status: Some(RowStatus::ResetRow(true)),
            ..Default::default()
        };
        m.push(reset, &mut out).unwrap();
        m.push(commit(chunk("r1", Some("cf"), Some("a"), "w", 0)), &mut out)
            .unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1[0].value, b"w");
        // A row not committed when the answer ends; a chunk with no key starting a row; rows
        // out of order.
        let mut m = Merger::default();
        m.push(chunk("r1", Some("cf"), Some("a"), "v", 0), &mut out)
            .unwrap();
        assert!(m.finish().is_err());
        assert!(Merger::default()
            .push(chunk("", Some("cf"), Some("a"), "v", 0), &mut out)
            .is_err());
        let mut m = Merger::default();
        m.push(commit(chunk("r2", Some("cf"), Some("a"), "v", 0)), &mut out)
            .unwrap();
        assert!(m
            .push(commit(chunk("r1", Some("cf"), Some("a"), "v", 0)), &mut out)
            .is_err());
    }
}
