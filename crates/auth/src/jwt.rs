//! Hive's JWT mode (HTTP only): a request carries `Authorization: Bearer <token>`; the token
//! must be signed by a key of the JSON Web Key Set named by
//! `hive.server2.authentication.jwt.jwks.url` (loaded once at start-up), must not have
//! expired when it has an `exp`, and names its user in `sub`.
//!
//! The key is chosen by the token's `kid` (every key when it has none); a key that states its
//! algorithm is used only with that algorithm, and a key is never used with an algorithm of
//! another family, so a token "signed" with an RSA public key as an HMAC secret, or with
//! `alg: none`, is refused. Signatures are checked by `jsonwebtoken` (on `ring`).

use std::str::FromStr;
use std::time::Duration;

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};

use crate::AuthError;

/// The claims Apiary reads.
#[derive(Debug, serde::Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    exp: Option<u64>,
}

/// Who a valid token names, and until when it is valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenLogin {
    /// The user (`sub`).
    pub user: String,
    /// The token's expiry (`exp`, seconds since the epoch), if it has one: nothing it leads
    /// to (a login cookie) may outlive it.
    pub expires: Option<u64>,
}

/// Checks bearer tokens against a key set.
#[derive(Debug, Clone)]
pub struct JwtVerifier {
    keys: Vec<Jwk>,
}

impl JwtVerifier {
    /// A verifier over the keys of a JWKS document (`{"keys": [...]}`).
    pub fn from_jwks(json: &str) -> Result<Self, String> {
        let set: JwkSet =
            serde_json::from_str(json).map_err(|e| format!("not a JSON Web Key Set: {e}"))?;
        if set.keys.is_empty() {
            return Err("the JSON Web Key Set has no keys".into());
        }
        Ok(Self { keys: set.keys })
    }

    /// Loads and merges the key sets at `urls` (`http://`, `https://` trusting the system's
    /// certificate authorities, `file://` or a plain path), each within `timeout`.
    pub async fn load(urls: &[String], timeout: Duration) -> Result<Self, String> {
        let mut keys = Vec::new();
        for url in urls {
            let text = tokio::time::timeout(timeout, crate::fetch::get_text(url))
                .await
                .map_err(|_| format!("{url}: no answer within {} s", timeout.as_secs()))?
                .map_err(|e| format!("{url}: {e}"))?;
            keys.extend(
                Self::from_jwks(&text)
                    .map_err(|e| format!("{url}: {e}"))?
                    .keys,
            );
        }
        if keys.is_empty() {
            return Err("hive.server2.authentication.jwt.jwks.url names no key set".into());
        }
        Ok(Self { keys })
    }

    /// Number of keys known.
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// The user (`sub`) and expiry of a valid token, or why it is not valid.
    pub fn verify(&self, token: &str) -> Result<TokenLogin, AuthError> {
        let refused = |why: &str| AuthError::Refused(format!("Failed to validate JWT: {why}"));
        let header = jsonwebtoken::decode_header(token).map_err(|e| refused(&e.to_string()))?;
        let mut tried = false;
        for jwk in &self.keys {
            if header.kid.is_some() && jwk.common.key_id != header.kid {
                continue;
            }
            if let Some(stated) = jwk.common.key_algorithm {
                // KeyAlgorithm also names encryption algorithms; only a signing one compares.
                let stated = Algorithm::from_str(&format!("{stated:?}")).ok();
                if stated != Some(header.alg) {
                    continue;
                }
            }
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let mut validation = Validation::new(header.alg);
            validation.leeway = 0;
            validation.validate_aud = false;
            validation.set_required_spec_claims(&["sub"]);
            tried = true;
            match jsonwebtoken::decode::<Claims>(token, &key, &validation) {
                Ok(data) if data.claims.sub.trim().is_empty() => {
                    return Err(refused("the token's sub claim is blank"))
                }
                Ok(data) => {
                    return Ok(TokenLogin {
                        user: data.claims.sub,
                        expires: data.claims.exp,
                    })
                }
                Err(e) => match e.kind() {
                    // Another key of the set may be the one.
                    jsonwebtoken::errors::ErrorKind::InvalidSignature
                    | jsonwebtoken::errors::ErrorKind::InvalidAlgorithm
                    | jsonwebtoken::errors::ErrorKind::InvalidKeyFormat
                    | jsonwebtoken::errors::ErrorKind::InvalidEcdsaKey
                    | jsonwebtoken::errors::ErrorKind::InvalidRsaKey(_) => continue,
                    _ => return Err(refused(&e.to_string())),
                },
            }
        }
        Err(refused(if tried {
            "no key of the JWKS verifies its signature"
        } else {
            "no key of the JWKS matches its kid and alg"
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A P-256 key pair: its PKCS#8 form and its public JWK.
    fn ec_key(kid: &str) -> (Vec<u8>, serde_json::Value) {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .unwrap()
            .as_ref()
            .to_vec();
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8, &rng).unwrap();
        let point = pair.public_key().as_ref();
        let jwk = serde_json::json!({
            "kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
            "x": b64(&point[1..33]), "y": b64(&point[33..65]),
        });
        (pkcs8, jwk)
    }

    fn now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    fn es256(pkcs8: &[u8], kid: &str, claims: serde_json::Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.into());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ec_der(pkcs8)).unwrap()
    }

    fn verifier(keys: &[serde_json::Value]) -> JwtVerifier {
        JwtVerifier::from_jwks(&serde_json::json!({ "keys": keys }).to_string()).unwrap()
    }

    #[test]
    fn a_signed_unexpired_token_names_its_user() {
        let (k1, j1) = ec_key("one");
        let (k2, j2) = ec_key("two");
        let v = verifier(&[j1, j2]);
        let claims = serde_json::json!({"sub": "alice", "exp": now() + 600});
        let login = v.verify(&es256(&k1, "one", claims.clone())).unwrap();
        assert_eq!(login.user, "alice");
        assert_eq!(login.expires, claims["exp"].as_u64());
        assert_eq!(
            v.verify(&es256(&k2, "two", claims.clone())).unwrap().user,
            "alice"
        );
        // No exp at all is accepted, as Hive does.
        let forever = serde_json::json!({"sub": "bob"});
        let login = v.verify(&es256(&k1, "one", forever)).unwrap();
        assert_eq!((login.user.as_str(), login.expires), ("bob", None));
        // Signed by "two" but claiming to be "one".
        assert!(v.verify(&es256(&k2, "one", claims)).is_err());
    }

    #[test]
    fn expired_unknown_key_and_wrong_algorithms_are_refused() {
        let (k1, j1) = ec_key("one");
        let (stranger, _) = ec_key("one");
        let v = verifier(std::slice::from_ref(&j1));
        let expired = serde_json::json!({"sub": "alice", "exp": now() - 10});
        let e = v.verify(&es256(&k1, "one", expired)).unwrap_err();
        assert!(e.to_string().contains("Expired"), "{e}");
        let fresh = serde_json::json!({"sub": "alice", "exp": now() + 600});
        assert!(v.verify(&es256(&stranger, "one", fresh.clone())).is_err());
        assert!(v.verify(&es256(&k1, "three", fresh.clone())).is_err());
        // An HMAC token whose secret is the public key's text: a key of another family.
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("one".into());
        let secret = j1.to_string();
        let forged = jsonwebtoken::encode(
            &header,
            &fresh,
            &EncodingKey::from_secret(secret.as_bytes()),
        )
        .unwrap();
        assert!(v.verify(&forged).is_err());
        // alg "none": header and payload without a signature.
        let none = format!(
            "{}.{}.",
            b64(br#"{"alg":"none","kid":"one"}"#),
            b64(fresh.to_string().as_bytes())
        );
        assert!(v.verify(&none).is_err());
        // No sub.
        let nobody = serde_json::json!({"exp": now() + 600});
        assert!(v.verify(&es256(&k1, "one", nobody)).is_err());
        assert!(v.verify("not a token").is_err());
    }

    #[test]
    fn an_hmac_key_set_verifies_hs256() {
        let secret = b"0123456789abcdef0123456789abcdef";
        let v = verifier(&[serde_json::json!({"kty": "oct", "k": b64(secret), "alg": "HS256"})]);
        let token = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &serde_json::json!({"sub": "carol"}),
            &EncodingKey::from_secret(secret),
        )
        .unwrap();
        assert_eq!(v.verify(&token).unwrap().user, "carol");
        let other = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &serde_json::json!({"sub": "carol"}),
            &EncodingKey::from_secret(b"another secret"),
        )
        .unwrap();
        assert!(v.verify(&other).is_err());
    }

    #[test]
    fn bad_key_sets_are_refused_at_start() {
        assert!(JwtVerifier::from_jwks("{}").is_err());
        assert!(JwtVerifier::from_jwks(r#"{"keys": []}"#).is_err());
        assert!(JwtVerifier::from_jwks("not json").is_err());
    }
}
