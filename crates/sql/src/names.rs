//! Names shared across the statement layer.

/// Name of the single catalog Apiary exposes (Hive has one per metastore).
pub const CATALOG: &str = "hive";

/// The database every session starts in.
pub const DEFAULT_DATABASE: &str = "default";

/// A short, stable tag for a server id, used in the names of the folders a server keeps for
/// itself (INSERT staging, spill files): start-up recovery touches only folders with its own
/// tag, so servers sharing a warehouse leave each other's work alone. FNV-1a, so the tag is
/// the same in every build.
pub fn server_tag(server_id: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in server_id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:012x}", h & 0xffff_ffff_ffff)
}

/// What the rewrite appends to a column a SELECT list names again (`SELECT c, c`), which
/// Hive allows and a plan's unique names do not: `c` is planned as `c<DUPLICATE>1`, and
/// [`result_name`] gives the name back.
pub const DUPLICATE: &str = "__apiary_again_";

/// A result column's name without [`DUPLICATE`]'s suffix: the column as the query wrote it
/// (`t.c` or `c`).
pub fn result_name(name: &str) -> &str {
    name.split_once(DUPLICATE)
        .map_or(name, |(written, _)| written)
}

/// A result column's name as a table's column: [`result_name`] without the table of a
/// repeated column (`c` for `t.c<DUPLICATE>3`); other names as they are.
pub fn bare_result_name(name: &str) -> &str {
    let written = result_name(name);
    match written.rsplit_once('.') {
        Some((_, column)) if written.len() != name.len() => column,
        _ => written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_columns_get_their_names_back() {
        assert_eq!(result_name(&format!("t.c{DUPLICATE}3")), "t.c");
        assert_eq!(result_name("c"), "c");
        assert_eq!(bare_result_name(&format!("t.c{DUPLICATE}3")), "c");
        assert_eq!(bare_result_name("c"), "c");
    }

    #[test]
    fn tags_are_stable_and_distinct() {
        assert_eq!(server_tag("a"), server_tag("a"));
        assert_ne!(server_tag("host:/data/1"), server_tag("host:/data/2"));
        assert_eq!(server_tag("x").len(), 12);
    }
}
