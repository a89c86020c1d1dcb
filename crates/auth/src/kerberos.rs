//! Hive's `KERBEROS` mode: the server side of a GSS-API exchange (SASL GSSAPI on the binary
//! port, SPNEGO `Negotiate` over HTTP) through MIT Kerberos' library, with the server's keys
//! read from a keytab.
//!
//! Built only with the `kerberos` feature (the library's headers and clang are needed to build
//! it); without it, [`KerberosAcceptor::new`] says so and nothing else can be reached.

use std::path::Path;

use crate::AuthError;

/// What the client is told when a ticket is refused: Hive's words, never the library's
/// reason (which the server logs).
#[cfg(feature = "kerberos")]
const REFUSED: &str = "Error validating the login";

/// A service principal as Hive writes it (`hive/_HOST@REALM`), split into its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The first component (`hive`).
    pub service: String,
    /// The instance after `/` (`_HOST` replaced), if any.
    pub instance: Option<String>,
    /// The realm after `@`, if given.
    pub realm: Option<String>,
}

impl Principal {
    /// Parses `service[/instance][@REALM]`, replacing `_HOST` in the instance with `host`
    /// (lowercased, as Hadoop's `SecurityUtil` does).
    pub fn parse(text: &str, host: &str) -> Result<Principal, String> {
        let text = text.trim();
        let (name, realm) = match text.rsplit_once('@') {
            Some((n, r)) if !r.is_empty() => (n, Some(r.to_string())),
            Some(_) => return Err(format!("principal {text:?} has an empty realm")),
            None => (text, None),
        };
        let (service, instance) = match name.split_once('/') {
            Some((s, i)) => (s, Some(i)),
            None => (name, None),
        };
        if service.is_empty() || instance.is_some_and(str::is_empty) {
            return Err(format!(
                "principal {text:?} is not of the form service/host@REALM"
            ));
        }
        let instance = instance.map(|i| {
            if i == "_HOST" {
                host.to_ascii_lowercase()
            } else {
                i.to_string()
            }
        });
        Ok(Principal {
            service: service.to_string(),
            instance,
            realm,
        })
    }
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.service)?;
        if let Some(i) = &self.instance {
            write!(f, "/{i}")?;
        }
        if let Some(r) = &self.realm {
            write!(f, "@{r}")?;
        }
        Ok(())
    }
}

/// The user a client principal logs in as, as Hadoop's default rule has it: the first
/// component of a principal of the server's own realm (`alice@R` and `alice/admin@R` are
/// `alice`; the server's realm is the one its configured principal names). A principal of another realm is refused unless the Kerberos configuration's
/// own `auth_to_local` rules name it (`local_name`, asked first by the caller).
pub fn short_name(client: &str, server_realm: Option<&str>) -> Result<String, String> {
    let (name, realm) = client
        .rsplit_once('@')
        .ok_or_else(|| format!("client principal {client:?} has no realm"))?;
    if server_realm != Some(realm) {
        return Err(format!("No rules applied to {client}"));
    }
    let first = name.split('/').next().unwrap_or(name);
    if first.is_empty() {
        return Err(format!("client principal {client:?} has an empty name"));
    }
    Ok(first.to_string())
}

/// Kerberos 5's mechanism (1.2.840.113554.1.2.2), DER body of its OID.
const KRB5_OID: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02];
/// The OID Microsoft's clients list Kerberos 5 under (1.2.840.48018.1.2.2).
const MS_KRB5_OID: &[u8] = &[0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02];
/// SPNEGO (1.3.6.1.5.5.2).
const SPNEGO_OID: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x02];

/// One DER element: its tag, its contents and what follows it.
fn der(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// Whether a client's first token asks for Kerberos 5 and nothing else: a GSS-API initial
/// token (RFC 2743 §3.1) of the Kerberos mechanism, or, where `spnego` is allowed, a SPNEGO
/// NegTokenInit (RFC 4178) listing only Kerberos 5 mechanisms. Others (IAKERB would have the
/// server talk to a KDC the client names, NegoEx, NTLM) never reach the library.
pub fn only_kerberos(token: &[u8], spnego: bool) -> bool {
    let Some((0x60, body, _)) = der(token) else {
        return false;
    };
    let Some((0x06, mech, inner)) = der(body) else {
        return false;
    };
    if mech == KRB5_OID {
        return true;
    }
    if !spnego || mech != SPNEGO_OID {
        return false;
    }
    // NegotiationToken ::= CHOICE { negTokenInit [0] NegTokenInit, .. };
    // NegTokenInit ::= SEQUENCE { mechTypes [0] MechTypeList, .. }.
    let listed = der(inner)
        .filter(|(tag, _, _)| *tag == 0xa0)
        .and_then(|(_, init, _)| der(init))
        .filter(|(tag, _, _)| *tag == 0x30)
        .and_then(|(_, fields, _)| der(fields))
        .filter(|(tag, _, _)| *tag == 0xa0)
        .and_then(|(_, types, _)| der(types))
        .filter(|(tag, _, _)| *tag == 0x30)
        .map(|(_, list, _)| list);
    let Some(mut list) = listed else {
        return false;
    };
    let mut any = false;
    while !list.is_empty() {
        match der(list) {
            Some((0x06, oid, rest)) if oid == KRB5_OID || oid == MS_KRB5_OID => {
                any = true;
                list = rest;
            }
            _ => return false,
        }
    }
    any
}

/// Who a finished exchange proved the client to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TicketLogin {
    /// The client's principal (`alice@EXAMPLE.COM`).
    pub principal: String,
    /// The user the session runs as (`alice`).
    pub user: String,
}

#[cfg(feature = "kerberos")]
mod imp {
    use super::*;
    use libgssapi::context::{CtxFlags, SecurityContext, ServerCtx};
    use libgssapi::credential::{Cred, CredUsage};
    use libgssapi::name::Name;
    use libgssapi::oid::{OidSet, GSS_MECH_KRB5, GSS_MECH_SPNEGO, GSS_NT_KRB5_PRINCIPAL};

    /// The server's Kerberos identity: its credential from the keytab, ready to accept
    /// clients' tickets.
    #[derive(Debug)]
    pub struct KerberosAcceptor {
        cred: Cred,
        principal: Principal,
        spnego: bool,
    }

    impl KerberosAcceptor {
        /// Reads the keys of `principal` from `keytab`. The keytab is named to the library
        /// through `KRB5_KTNAME`, which it reads while the credential is acquired: call this
        /// at start-up, before other threads read the environment.
        pub fn new(
            principal: &Principal,
            keytab: &Path,
            spnego: bool,
        ) -> Result<KerberosAcceptor, String> {
            if !keytab.is_file() {
                return Err(format!(
                    "keytab {} is not a readable file",
                    keytab.display()
                ));
            }
            std::env::set_var("KRB5_KTNAME", format!("FILE:{}", keytab.display()));
            let name = Name::new(
                principal.to_string().as_bytes(),
                Some(GSS_NT_KRB5_PRINCIPAL),
            )
            .map_err(|e| format!("principal {principal}: {e}"))?;
            // Kerberos 5 only (and SPNEGO around it over HTTP), never every mechanism the
            // library has.
            let mut mechs = OidSet::singleton(GSS_MECH_KRB5).map_err(|e| e.to_string())?;
            if spnego {
                mechs.add(GSS_MECH_SPNEGO).map_err(|e| e.to_string())?;
            }
            let cred =
                Cred::acquire(Some(&name), None, CredUsage::Accept, Some(&mechs)).map_err(|e| {
                    format!(
                        "cannot read the keys of {principal} from {}: {e}",
                        keytab.display()
                    )
                })?;
            Ok(KerberosAcceptor {
                cred,
                principal: principal.clone(),
                spnego,
            })
        }

        /// The principal the server accepts tickets for.
        pub fn principal(&self) -> &Principal {
            &self.principal
        }

        /// Starts accepting one client's exchange.
        pub fn start(&self) -> GssExchange {
            GssExchange {
                ctx: ServerCtx::new(Some(self.cred.clone())),
                realm: self.principal.realm.clone(),
                spnego: self.spnego,
                started: false,
            }
        }
    }

    /// One client's GSS-API exchange with the server, token by token.
    #[derive(Debug)]
    pub struct GssExchange {
        ctx: ServerCtx,
        realm: Option<String>,
        spnego: bool,
        /// Whether the client's first token has been taken.
        started: bool,
    }

    impl GssExchange {
        /// Takes the client's next token; returns the token to send back, if any. The
        /// library reads the keytab and the replay cache: see [`GssExchange::step_blocking`].
        pub fn step(&mut self, token: &[u8]) -> Result<Option<Vec<u8>>, AuthError> {
            if !self.started {
                self.started = true;
                if !only_kerberos(token, self.spnego) {
                    tracing::warn!("Kerberos login refused: the client's token asks for another mechanism than Kerberos 5");
                    return Err(AuthError::Refused(REFUSED.into()));
                }
            }
            match self.ctx.step(token, None) {
                Ok(out) => Ok(out.map(|b| b.to_vec())),
                Err(e) => {
                    tracing::warn!(reason = %e, "Kerberos ticket refused");
                    Err(AuthError::Refused(REFUSED.into()))
                }
            }
        }

        /// [`GssExchange::step`] on a blocking thread, so file reads in the library never
        /// hold up the server's other connections.
        pub async fn step_blocking(
            mut self,
            token: Vec<u8>,
        ) -> Result<(GssExchange, Option<Vec<u8>>), AuthError> {
            tokio::task::spawn_blocking(move || {
                let reply = self.step(&token)?;
                Ok((self, reply))
            })
            .await
            .map_err(|e| AuthError::Unavailable(format!("the Kerberos check failed: {e}")))?
        }

        /// Whether the client has proved who it is.
        pub fn is_complete(&self) -> bool {
            self.ctx.is_complete()
        }

        /// Who the client is, once the exchange is complete.
        pub fn login(&self) -> Result<TicketLogin, AuthError> {
            let refused = |why: String| {
                tracing::warn!(reason = %why, "Kerberos login refused");
                AuthError::Refused(REFUSED.into())
            };
            let name = self
                .ctx
                .source_name()
                .map_err(|e| refused(format!("no client name: {e}")))?;
            let principal = name
                .display_name()
                .map_err(|e| refused(format!("client name unreadable: {e}")))
                .map(|b| String::from_utf8_lossy(&b).to_string())?;
            if self
                .ctx
                .flags()
                .is_ok_and(|f| f.contains(CtxFlags::GSS_C_ANON_FLAG))
            {
                return Err(refused(format!("anonymous client {principal}")));
            }
            // The server's realm by Hadoop's default rule first; then krb5.conf's
            // auth_to_local rules (MIT's default maps its default_realm's single-component
            // principals).
            let user = match short_name(&principal, self.realm.as_deref()) {
                Ok(user) => user,
                Err(why) => match name.local_name(None) {
                    Ok(local) => String::from_utf8_lossy(&local).to_string(),
                    Err(_) => return Err(refused(why)),
                },
            };
            if user.trim().is_empty() || user.contains('\0') {
                return Err(refused(format!("{principal} maps to no user")));
            }
            Ok(TicketLogin { principal, user })
        }

        /// Seals `msg` for the client without encryption (the SASL security-layer offer).
        pub fn wrap(&mut self, msg: &[u8]) -> Result<Vec<u8>, AuthError> {
            self.ctx
                .wrap(false, msg)
                .map(|b| b.to_vec())
                .map_err(|e| AuthError::Refused(format!("{REFUSED}: {e}")))
        }

        /// Opens a message the client sealed.
        pub fn unwrap(&mut self, msg: &[u8]) -> Result<Vec<u8>, AuthError> {
            self.ctx
                .unwrap(msg)
                .map(|b| b.to_vec())
                .map_err(|e| AuthError::Refused(format!("{REFUSED}: {e}")))
        }
    }
}

#[cfg(not(feature = "kerberos"))]
mod imp {
    use super::*;

    /// Stands for the server's Kerberos identity in a build without Kerberos: it cannot be
    /// made, so nothing that needs one can run.
    #[derive(Debug)]
    pub struct KerberosAcceptor {
        never: std::convert::Infallible,
    }

    impl KerberosAcceptor {
        /// Says this build has no Kerberos.
        pub fn new(
            principal: &Principal,
            keytab: &Path,
            spnego: bool,
        ) -> Result<KerberosAcceptor, String> {
            let _ = (principal, keytab, spnego);
            Err("this build of Apiary has no Kerberos support: build it with `--features kerberos` (needs Debian's libkrb5-dev and clang)".into())
        }

        /// The principal the server accepts tickets for.
        pub fn principal(&self) -> &Principal {
            match self.never {}
        }

        /// Starts accepting one client's exchange.
        pub fn start(&self) -> GssExchange {
            match self.never {}
        }
    }

    /// One client's exchange (never made in this build).
    #[derive(Debug)]
    pub struct GssExchange {
        never: std::convert::Infallible,
    }

    impl GssExchange {
        /// Takes the client's next token.
        pub fn step(&mut self, _token: &[u8]) -> Result<Option<Vec<u8>>, AuthError> {
            match self.never {}
        }
        /// Takes the client's next token on a blocking thread.
        pub async fn step_blocking(
            self,
            _token: Vec<u8>,
        ) -> Result<(GssExchange, Option<Vec<u8>>), AuthError> {
            match self.never {}
        }
        /// Whether the client has proved who it is.
        pub fn is_complete(&self) -> bool {
            match self.never {}
        }
        /// Who the client is.
        pub fn login(&self) -> Result<TicketLogin, AuthError> {
            match self.never {}
        }
        /// Seals a message.
        pub fn wrap(&mut self, _msg: &[u8]) -> Result<Vec<u8>, AuthError> {
            match self.never {}
        }
        /// Opens a message.
        pub fn unwrap(&mut self, _msg: &[u8]) -> Result<Vec<u8>, AuthError> {
            match self.never {}
        }
    }
}

pub use imp::{GssExchange, KerberosAcceptor};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_parse_as_hive_writes_them() {
        let p = Principal::parse("hive/_HOST@EXAMPLE.COM", "Node1.Example.com").unwrap();
        assert_eq!(p.to_string(), "hive/node1.example.com@EXAMPLE.COM");
        let p = Principal::parse("HTTP/web@R", "x").unwrap();
        assert_eq!(
            (
                p.service.as_str(),
                p.instance.as_deref(),
                p.realm.as_deref()
            ),
            ("HTTP", Some("web"), Some("R"))
        );
        assert!(Principal::parse("hive/@R", "x").is_err());
        assert!(Principal::parse("hive@", "x").is_err());
        assert!(Principal::parse("/h@R", "x").is_err());
    }

    #[test]
    fn only_kerberos_tokens_reach_the_library() {
        // GSS initial token: 0x60 len, OID, inner token.
        let krb5 = [&[0x60, 13, 0x06, 9][..], KRB5_OID, &[0x01, 0x00]].concat();
        assert!(only_kerberos(&krb5, false));
        let iakerb_oid: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x02, 0x05];
        let iakerb = [&[0x60, 10, 0x06, 6][..], iakerb_oid, &[0x05, 0x01]].concat();
        assert!(!only_kerberos(&iakerb, true));
        // SPNEGO NegTokenInit listing the given mechanisms.
        let spnego = |oids: &[&[u8]]| {
            let list: Vec<u8> = oids
                .iter()
                .flat_map(|o| [&[0x06, o.len() as u8][..], o].concat())
                .collect();
            let types = [&[0x30, list.len() as u8][..], &list].concat();
            let field = [&[0xa0, types.len() as u8][..], &types].concat();
            let init = [&[0x30, field.len() as u8][..], &field].concat();
            let choice = [&[0xa0, init.len() as u8][..], &init].concat();
            let body = [&[0x06, 6][..], SPNEGO_OID, &choice].concat();
            [&[0x60, body.len() as u8][..], &body].concat()
        };
        assert!(only_kerberos(&spnego(&[KRB5_OID, MS_KRB5_OID]), true));
        assert!(!only_kerberos(&spnego(&[KRB5_OID]), false));
        assert!(!only_kerberos(&spnego(&[KRB5_OID, iakerb_oid]), true));
        assert!(!only_kerberos(&spnego(&[]), true));
        for junk in [
            &b""[..],
            b"\x60",
            b"\x60\x84\xff\xff\xff\xff",
            b"\x00\x00\x00",
        ] {
            assert!(!only_kerberos(junk, true));
        }
    }

    #[test]
    fn short_names_follow_hadoops_default_rule() {
        assert_eq!(short_name("alice@R", Some("R")).unwrap(), "alice");
        assert_eq!(short_name("hive/host@R", Some("R")).unwrap(), "hive");
        assert_eq!(
            short_name("alice@OTHER", Some("R")).unwrap_err(),
            "No rules applied to alice@OTHER"
        );
        assert!(short_name("alice", Some("R")).is_err());
        // A server whose principal names no realm maps nobody by this rule.
        assert!(short_name("alice@R", None).is_err());
    }
}
