//! Where Streamkeeper's outbound requests (Schema Registry, webhooks) may
//! go. An admin-chosen URL must not turn the server into a way to read
//! what only it can reach: cloud metadata services and link-local
//! addresses are refused always; loopback and private networks unless
//! the operator allows them (`STREAMKEEPER_EGRESS_ALLOW=loopback,private`,
//! for a local setup or a registry inside the network). The server applies
//! the rule to every address a name resolves to, when it connects, so a
//! name that resolves differently later (DNS rebinding) is caught too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of destination an address is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressClass {
    /// 169.254.0.0/16, fe80::/10 and cloud metadata endpoints
    /// (169.254.169.254, fd00:ec2::254): never.
    LinkLocal,
    /// Multicast, broadcast and reserved addresses: never a server.
    Special,
    /// 127.0.0.0/8, ::1, and the unspecified 0.0.0.0/8 and :: (which
    /// reach this host).
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT, where
    /// some clouds put their metadata too), fc00::/7 and fec0::/10.
    Private,
    Public,
}

/// The AWS metadata service's IPv6 address (inside fc00::/7, so it is
/// named before the private ranges).
const EC2_METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, ..] = ip.octets();
    if ip.is_link_local() {
        AddressClass::LinkLocal
    } else if ip.is_loopback() || a == 0 {
        AddressClass::Loopback
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        AddressClass::Private
    } else if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        AddressClass::Special
    } else {
        AddressClass::Public
    }
}

/// An IPv4 address carried in an IPv6 one that reaches it: IPv4-mapped
/// (`::ffff:a.b.c.d`) and the NAT64 well-known prefix (`64:ff9b::/96`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    (s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]).then(|| {
        let [.., a, b, c, d] = ip.octets();
        Ipv4Addr::new(a, b, c, d)
    })
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let first = ip.segments()[0];
    if ip == EC2_METADATA_V6 || (first & 0xffc0) == 0xfe80 {
        AddressClass::LinkLocal
    } else if ip.is_loopback() || ip.is_unspecified() {
        AddressClass::Loopback
    } else if (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfec0 {
        // Unique local, and the site-local range it replaced.
        AddressClass::Private
    } else if ip.is_multicast() {
        AddressClass::Special
    } else {
        AddressClass::Public
    }
}

/// The class of an address.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Which of the optional destinations the operator allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    pub loopback: bool,
    pub private: bool,
}

/// A destination refused, and why.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error("{}", self.message())]
pub struct EgressRefusal {
    /// The address, or the name that always means it (`localhost`).
    pub address: String,
    pub class: AddressClass,
}

impl EgressRefusal {
    fn message(&self) -> String {
        let a = &self.address;
        match self.class {
            AddressClass::LinkLocal => format!(
                "{a} is a link-local or cloud metadata address; Streamkeeper never connects there"
            ),
            AddressClass::Special => {
                format!("{a} is a multicast, broadcast or reserved address, not a server")
            }
            AddressClass::Loopback => format!(
                "{a} is a loopback address; Streamkeeper connects there only with STREAMKEEPER_EGRESS_ALLOW=loopback"
            ),
            AddressClass::Private => format!(
                "{a} is a private network address; Streamkeeper connects there only with STREAMKEEPER_EGRESS_ALLOW=private"
            ),
            AddressClass::Public => format!("{a} is refused"),
        }
    }
}

/// `STREAMKEEPER_EGRESS_ALLOW` naming something else.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "STREAMKEEPER_EGRESS_ALLOW: '{0}' is not loopback or private (give a comma-separated list, or nothing)"
)]
pub struct EgressSettingError(pub String);

impl EgressPolicy {
    /// Public addresses only: the default.
    pub const STRICT: EgressPolicy = EgressPolicy {
        loopback: false,
        private: false,
    };
    /// Also this host, for the demo and tests.
    pub const LOOPBACK: EgressPolicy = EgressPolicy {
        loopback: true,
        private: false,
    };

    /// From `loopback,private` (either, both, or empty for neither).
    pub fn parse(setting: &str) -> Result<Self, EgressSettingError> {
        let mut policy = Self::STRICT;
        for word in setting.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word.to_ascii_lowercase().as_str() {
                "loopback" => policy.loopback = true,
                "private" => policy.private = true,
                _ => return Err(EgressSettingError(word.into())),
            }
        }
        Ok(policy)
    }

    /// May a connection be made to this address?
    pub fn check(&self, ip: IpAddr) -> Result<(), EgressRefusal> {
        let class = classify(ip);
        let allowed = match class {
            AddressClass::LinkLocal | AddressClass::Special => false,
            AddressClass::Loopback => self.loopback,
            AddressClass::Private => self.private,
            AddressClass::Public => true,
        };
        if allowed {
            Ok(())
        } else {
            Err(EgressRefusal {
                address: ip.to_string(),
                class,
            })
        }
    }

    /// The check of a URL's host that needs no name lookup: an IP literal
    /// (as a URL writes it, IPv6 in brackets) is checked; a name passes,
    /// to be checked on each address it resolves to.
    pub fn check_literal(&self, host: &str) -> Result<(), EgressRefusal> {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        match bare.parse::<IpAddr>() {
            Ok(ip) => self.check(ip),
            Err(_) => Ok(()),
        }
    }

    /// The check of a URL's host when it is saved: the literal check, and
    /// the names that always mean this host (`localhost` and its
    /// subdomains, RFC 6761), so the admin hears of it at once.
    pub fn check_saved(&self, host: &str) -> Result<(), EgressRefusal> {
        self.check_literal(host)?;
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        let local = name == "localhost" || name.ends_with(".localhost");
        if local && !self.loopback {
            return Err(EgressRefusal {
                address: host.into(),
                class: AddressClass::Loopback,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("an address")
    }

    #[test]
    fn classifies_the_ranges() {
        let cases = [
            ("169.254.169.254", AddressClass::LinkLocal),
            ("169.254.0.1", AddressClass::LinkLocal),
            ("fe80::1", AddressClass::LinkLocal),
            ("febf::1", AddressClass::LinkLocal),
            ("fd00:ec2::254", AddressClass::LinkLocal),
            ("::ffff:169.254.169.254", AddressClass::LinkLocal),
            ("64:ff9b::a9fe:a9fe", AddressClass::LinkLocal),
            ("127.0.0.1", AddressClass::Loopback),
            ("127.255.0.9", AddressClass::Loopback),
            ("0.0.0.0", AddressClass::Loopback),
            ("::1", AddressClass::Loopback),
            ("::", AddressClass::Loopback),
            ("::ffff:127.0.0.1", AddressClass::Loopback),
            ("10.1.2.3", AddressClass::Private),
            ("172.16.0.1", AddressClass::Private),
            ("172.31.255.255", AddressClass::Private),
            ("192.168.1.1", AddressClass::Private),
            ("100.64.0.1", AddressClass::Private),
            ("100.127.255.255", AddressClass::Private),
            ("fc00::1", AddressClass::Private),
            ("fd12:3456::1", AddressClass::Private),
            ("::ffff:10.0.0.1", AddressClass::Private),
            ("224.0.0.1", AddressClass::Special),
            ("255.255.255.255", AddressClass::Special),
            ("240.0.0.1", AddressClass::Special),
            ("ff02::1", AddressClass::Special),
            ("172.32.0.1", AddressClass::Public),
            ("100.128.0.1", AddressClass::Public),
            ("8.8.8.8", AddressClass::Public),
            ("2a00:1450::1", AddressClass::Public),
            ("fec0::1", AddressClass::Private),
        ];
        for (a, class) in cases {
            assert_eq!(classify(ip(a)), class, "{a}");
        }
    }

    #[test]
    fn metadata_is_refused_whatever_is_allowed() {
        let all = EgressPolicy::parse("loopback, private").expect("setting");
        assert_eq!(
            all,
            EgressPolicy {
                loopback: true,
                private: true
            }
        );
        for a in [
            "169.254.169.254",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:169.254.169.254",
        ] {
            let e = all.check(ip(a)).expect_err(a);
            assert_eq!(e.class, AddressClass::LinkLocal);
            assert!(e.to_string().contains("never connects there"), "{e}");
        }
        assert!(all.check_literal("[fd00:ec2::254]").is_err());
    }

    #[test]
    fn loopback_and_private_only_when_allowed() {
        let strict = EgressPolicy::parse("").expect("setting");
        assert_eq!(strict, EgressPolicy::STRICT);
        let e = strict.check(ip("127.0.0.1")).expect_err("loopback");
        assert!(
            e.to_string().contains("STREAMKEEPER_EGRESS_ALLOW=loopback"),
            "{e}"
        );
        assert!(strict.check(ip("10.0.0.1")).is_err());
        assert!(strict.check(ip("8.8.8.8")).is_ok());
        let loopback = EgressPolicy::parse("loopback").expect("setting");
        assert_eq!(loopback, EgressPolicy::LOOPBACK);
        assert!(loopback.check(ip("127.0.0.1")).is_ok());
        assert!(loopback.check(ip("::1")).is_ok());
        assert!(loopback.check(ip("192.168.0.1")).is_err());
        let private = EgressPolicy::parse("PRIVATE").expect("setting");
        assert!(private.check(ip("192.168.0.1")).is_ok());
        assert!(private.check(ip("127.0.0.1")).is_err());
        assert_eq!(
            EgressPolicy::parse("loopback,everything"),
            Err(EgressSettingError("everything".into()))
        );
    }

    #[test]
    fn literal_hosts_are_checked_names_wait_for_their_addresses() {
        let strict = EgressPolicy::STRICT;
        assert!(strict.check_literal("127.0.0.1").is_err());
        assert!(strict.check_literal("[::1]").is_err());
        assert!(strict.check_literal("registry.example").is_ok());
        assert!(strict.check_literal("localhost").is_ok());
        for name in ["localhost", "LOCALHOST.", "sr.localhost"] {
            let e = strict.check_saved(name).expect_err(name);
            assert_eq!(e.class, AddressClass::Loopback);
        }
        assert!(EgressPolicy::LOOPBACK.check_saved("localhost").is_ok());
        assert!(strict.check_saved("registry.example").is_ok());
        assert!(strict.check_saved("169.254.169.254").is_err());
    }
}
