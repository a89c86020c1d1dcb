//! Hive's HTTP login cookie (`hive.server2.auth`): after a request proves who sends it (Basic
//! credentials, a JWT), the answer sets a signed cookie naming the user, and later requests
//! carrying it skip the directory. The value is Hive's `cu=<user>&rn=<random>` with an expiry
//! (`e=`, seconds since the epoch) and a signature (`s=`): HMAC-SHA256 under a random key made at
//! start-up, so cookies die with the process and one server's cookies mean nothing to another.
//! Checks are constant-time (`ring::hmac::verify`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

/// Name of Hive's login cookie.
pub const COOKIE_NAME: &str = "hive.server2.auth";

/// Issues and checks login cookies.
pub struct CookieSigner {
    key: hmac::Key,
    max_age: Duration,
    rng: SystemRandom,
}

impl std::fmt::Debug for CookieSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CookieSigner")
            .field("max_age", &self.max_age)
            .finish_non_exhaustive()
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl CookieSigner {
    /// A signer with a fresh random key; cookies last `max_age`
    /// (`hive.server2.thrift.http.cookie.max.age`).
    pub fn new(max_age: Duration) -> Result<Self, String> {
        let rng = SystemRandom::new();
        let key = hmac::Key::generate(hmac::HMAC_SHA256, &rng)
            .map_err(|_| "no random bytes for the cookie key".to_string())?;
        Ok(Self { key, max_age, rng })
    }

    /// How long a cookie lasts.
    pub fn max_age(&self) -> Duration {
        self.max_age
    }

    /// The signed value of a cookie for `user`, valid for the cookie lifetime.
    pub fn issue(&self, user: &str) -> String {
        self.issue_until(user, None).0
    }

    /// The signed value of a cookie for `user` and its lifetime in seconds: the cookie
    /// lifetime, cut to end by `limit` (seconds since the epoch: the expiry of the token the
    /// login used).
    pub fn issue_until(&self, user: &str, limit: Option<u64>) -> (String, u64) {
        let now = now();
        let expiry = match limit {
            Some(limit) => limit.min(now + self.max_age.as_secs()),
            None => now + self.max_age.as_secs(),
        };
        let mut random = [0u8; 8];
        // Without fresh bytes the value is still signed; the random part only varies it.
        let _ = self.rng.fill(&mut random);
        let unsigned = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("cu", user)
            .append_pair("rn", &u64::from_le_bytes(random).to_string())
            .append_pair("e", &expiry.to_string())
            .finish();
        let tag = hmac::sign(&self.key, unsigned.as_bytes());
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tag.as_ref());
        (format!("{unsigned}&s={sig}"), expiry.saturating_sub(now))
    }

    /// The user of a cookie value this signer issued and that has not expired.
    pub fn verify(&self, value: &str) -> Option<String> {
        let (unsigned, sig) = value.rsplit_once("&s=")?;
        let sig = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(sig)
            .ok()?;
        hmac::verify(&self.key, unsigned.as_bytes(), &sig).ok()?;
        let mut user = None;
        let mut expiry = None;
        for (k, v) in url::form_urlencoded::parse(unsigned.as_bytes()) {
            match k.as_ref() {
                "cu" => user = Some(v.into_owned()),
                "e" => expiry = v.parse::<u64>().ok(),
                _ => {}
            }
        }
        (expiry? > now()).then_some(())?;
        user.filter(|u| !u.is_empty())
    }
}

/// The values of cookie `name` in the `Cookie` header values of a request.
pub fn cookie_values<'a>(
    headers: impl IntoIterator<Item = &'a str>,
    name: &'a str,
) -> impl Iterator<Item = &'a str> {
    headers
        .into_iter()
        .flat_map(|h| h.split(';'))
        .filter_map(move |pair| {
            let (k, v) = pair.trim().split_once('=')?;
            (k.trim() == name).then(|| v.trim().trim_matches('"'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_cookie_names_its_user_until_it_expires() {
        let s = CookieSigner::new(Duration::from_secs(60)).unwrap();
        let v = s.issue("alice & bob=x");
        assert_eq!(s.verify(&v).as_deref(), Some("alice & bob=x"));
        // Another process's key.
        let other = CookieSigner::new(Duration::from_secs(60)).unwrap();
        assert_eq!(other.verify(&v), None);
        // Expired.
        let gone = CookieSigner::new(Duration::ZERO).unwrap();
        assert_eq!(gone.verify(&gone.issue("alice")), None);
        // Cut short by the token's expiry: already past, or in 30 s.
        let (v, age) = s.issue_until("alice", Some(now() - 1));
        assert_eq!((s.verify(&v), age), (None, 0));
        let (v, age) = s.issue_until("alice", Some(now() + 30));
        assert_eq!(s.verify(&v).as_deref(), Some("alice"));
        assert!((29..=30).contains(&age), "{age}");
    }

    #[test]
    fn a_changed_cookie_is_refused() {
        let s = CookieSigner::new(Duration::from_secs(60)).unwrap();
        let v = s.issue("alice");
        assert_eq!(s.verify(&v.replacen("cu=alice", "cu=admin", 1)), None);
        let (unsigned, _) = v.rsplit_once("&s=").unwrap();
        assert_eq!(s.verify(unsigned), None);
        assert_eq!(s.verify(&format!("{unsigned}&s=")), None);
        assert_eq!(s.verify(&format!("{unsigned}&s=AAAA")), None);
        assert_eq!(s.verify(""), None);
        // Extending the expiry breaks the signature.
        let later = v.replacen("&e=", "&e=9", 1);
        assert_eq!(s.verify(&later), None);
    }

    #[test]
    fn cookie_headers_are_split_into_pairs() {
        let headers = ["a=1; hive.server2.auth=cu=x&s=y", "hive.server2.auth=\"q\""];
        let found: Vec<_> = cookie_values(headers, COOKIE_NAME).collect();
        assert_eq!(found, ["cu=x&s=y", "q"]);
    }
}
