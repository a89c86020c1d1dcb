//! Handles: a 16-byte guid naming a session or operation and a 16-byte secret proving it.

use std::fmt;

use rand::RngCore;

/// A session's or operation's identity on the wire.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Handle {
    /// Public identifier.
    pub guid: [u8; 16],
    /// Secret a client must echo back.
    pub secret: [u8; 16],
}

impl Handle {
    /// A new random handle.
    pub fn random() -> Self {
        let mut rng = rand::thread_rng();
        let mut guid = [0u8; 16];
        let mut secret = [0u8; 16];
        rng.fill_bytes(&mut guid);
        rng.fill_bytes(&mut secret);
        // Version 4, variant 1, so the guid reads as a UUID.
        guid[6] = (guid[6] & 0x0f) | 0x40;
        guid[8] = (guid[8] & 0x3f) | 0x80;
        Self { guid, secret }
    }

    /// A handle from wire bytes; `None` when the lengths are wrong.
    pub fn from_bytes(guid: &[u8], secret: &[u8]) -> Option<Self> {
        Some(Self {
            guid: guid.try_into().ok()?,
            secret: secret.try_into().ok()?,
        })
    }
}

impl fmt::Display for Handle {
    /// The guid in UUID form, as Hive prints handles.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, b) in self.guid.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Handle({self})")
    }
}
