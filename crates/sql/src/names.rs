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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_stable_and_distinct() {
        assert_eq!(server_tag("a"), server_tag("a"));
        assert_ne!(server_tag("host:/data/1"), server_tag("host:/data/2"));
        assert_eq!(server_tag("x").len(), 12);
    }
}
