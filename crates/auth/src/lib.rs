//! Who may connect: the password check every front end (HiveServer2's binary and HTTP
//! transports, Arrow Flight SQL) asks the gateway for, with Hive's modes behind one trait.
//! `NONE` needs no authenticator; [`ldap::LdapAuthenticator`] is Hive's `LDAP` mode,
//! [`jwt::JwtVerifier`] its `JWT` mode over HTTP, and [`cookie::CookieSigner`] the signed
//! cookie that spares an HTTP client a login on every request; [`kerberos`] is its `KERBEROS`
//! mode (a GSS-API acceptor, with the `kerberos` feature).

#![warn(missing_docs)]

pub mod cookie;
mod fetch;
pub mod jwt;
pub mod kerberos;
pub mod ldap;
pub mod pam;

pub use cookie::CookieSigner;
pub use jwt::{JwtVerifier, TokenLogin};
pub use kerberos::{GssExchange, KerberosAcceptor, Principal, TicketLogin};
pub use ldap::{LdapAuthenticator, LdapConfig};
pub use pam::PamAuthenticator;

/// Why a login was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The credentials were refused: unknown user, wrong password, blank input.
    #[error("{0}")]
    Refused(String),
    /// The directory could not be asked (unreachable, too slow): the login is refused too,
    /// but the server log should say why.
    #[error("{0}")]
    Unavailable(String),
}

/// A password check (`hive.server2.authentication` LDAP or PAM).
#[async_trait::async_trait]
pub trait Authenticator: Send + Sync + std::fmt::Debug {
    /// Hive's name of the mode (`LDAP`).
    fn mode(&self) -> &'static str;

    /// Accepts `user` with `password`, or says why not. Blank input never reaches this:
    /// [`check_blank`] refuses it first.
    async fn authenticate(&self, user: &str, password: &str) -> Result<(), AuthError>;

    /// The groups `user` is in, where the mode knows them (Hadoop's
    /// `hadoop.proxyuser.<u>.groups` rules ask); none by default.
    async fn groups_of(&self, user: &str) -> Result<Vec<String>, AuthError> {
        let _ = user;
        Ok(Vec::new())
    }
}

/// Refuses a blank user or password before any directory is asked: a simple bind with an
/// empty password is an anonymous bind on many LDAP servers, which would "succeed".
pub fn check_blank(user: &str, password: &str) -> Result<(), AuthError> {
    if user.trim().is_empty() {
        return Err(AuthError::Refused("No user name provided".into()));
    }
    // A password starting with NUL is as good as none to some directories.
    if password.is_empty() || password.starts_with('\0') {
        return Err(AuthError::Refused(
            "Error validating LDAP user: a null or blank password has been provided".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_input_is_refused_first() {
        assert!(matches!(check_blank("", "pw"), Err(AuthError::Refused(_))));
        assert!(matches!(
            check_blank("  ", "pw"),
            Err(AuthError::Refused(_))
        ));
        assert!(matches!(check_blank("bob", ""), Err(AuthError::Refused(_))));
        assert!(matches!(
            check_blank("bob", "\0x"),
            Err(AuthError::Refused(_))
        ));
        assert!(check_blank("bob", "pw").is_ok());
    }
}
