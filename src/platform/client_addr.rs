//! Which address a request comes from, and how the sign-in throttle keys it.
//!
//! Behind a reverse proxy every request arrives from the proxy, so one
//! attacker could spend the address budget of everyone behind it. The
//! client's own address is then read from the headers the proxy adds, but
//! only when the peer is a proxy the operator named: anyone else could
//! write those headers themselves.

use ipnet::{IpNet, Ipv6Net};
use std::net::{IpAddr, SocketAddr};

/// The client's address: the peer, unless the peer is a trusted proxy; then
/// the rightmost hop of `X-Forwarded-For` (or, when the request has none,
/// of `Forwarded`) that is not itself a trusted proxy. Hops to the right
/// were appended by proxies we trust; the first one that is not a trusted
/// proxy is the furthest address anyone we trust vouches for, and every hop
/// left of it may be made up by the client.
///
/// `forwarded_for` and `forwarded` are the header values in the order they
/// arrived (a header may appear several times). A hop that does not parse
/// stops the walk at the last trusted address, so a malformed header can
/// never name an arbitrary client.
pub fn client_ip(
    peer: IpAddr,
    forwarded_for: &[&str],
    forwarded: &[&str],
    trusted: &[IpNet],
) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(&canonical(*ip)));
    if !is_trusted(&peer) {
        return canonical(peer);
    }
    let hops: Vec<Option<IpAddr>> = if forwarded_for.iter().any(|v| !v.trim().is_empty()) {
        forwarded_for
            .iter()
            .flat_map(|v| v.split(','))
            .map(parse_hop)
            .collect()
    } else {
        forwarded
            .iter()
            .flat_map(|v| v.split(','))
            .map(forwarded_for_param)
            .collect()
    };
    let mut client = canonical(peer);
    for hop in hops.into_iter().rev() {
        match hop {
            Some(ip) if is_trusted(&ip) => client = ip,
            Some(ip) => return ip,
            None => return client,
        }
    }
    client
}

/// One `X-Forwarded-For` entry: an address, possibly with a port
/// (`1.2.3.4:80`, `[2001:db8::1]:443`), possibly in brackets.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim().trim_matches('"');
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Ok(sa) = hop.parse::<SocketAddr>() {
        return Some(canonical(sa.ip()));
    }
    hop.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .and_then(|h| h.parse::<IpAddr>().ok())
        .map(canonical)
}

/// The `for=` parameter of one `Forwarded` element (RFC 7239), e.g.
/// `for="[2001:db8:cafe::17]:4711";proto=https`. `unknown` and obfuscated
/// identifiers do not parse.
fn forwarded_for_param(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("for")
            .then(|| parse_hop(value))
            .flatten()
    })
}

/// IPv4-mapped IPv6 addresses (`::ffff:1.2.3.4`, what a dual-stack socket
/// reports) as the IPv4 address they are.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// The key an address spends the sign-in budget under: an IPv4 address
/// itself, an IPv6 address's /64 (one customer's network: an attacker
/// holding a /64 has 2^64 addresses, not 2^64 budgets). Anything that is
/// not an address (`unknown`) is its own key.
pub fn throttle_key(addr: &str) -> String {
    match addr.parse::<IpAddr>().map(canonical) {
        Ok(IpAddr::V6(v6)) => Ipv6Net::new(v6, 64)
            .map(|net| net.trunc().to_string())
            .unwrap_or_else(|_| v6.to_string()),
        Ok(v4) => v4.to_string(),
        Err(_) => addr.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter()
            .map(|n| n.parse().unwrap_or_else(|e| panic!("{n}: {e}")))
            .collect()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    const PROXY: &str = "10.0.0.2";

    #[test]
    fn untrusted_peers_are_taken_at_their_word_and_their_headers_ignored() {
        assert_eq!(
            client_ip(ip("203.0.113.9"), &["198.51.100.1"], &[], &[]),
            ip("203.0.113.9")
        );
        assert_eq!(
            client_ip(
                ip("203.0.113.9"),
                &["198.51.100.1"],
                &["for=198.51.100.2"],
                &nets(&["10.0.0.0/8"])
            ),
            ip("203.0.113.9")
        );
    }

    #[test]
    fn a_trusted_proxy_vouches_for_the_rightmost_untrusted_hop() {
        let trusted = nets(&["10.0.0.0/8"]);
        // The client claimed 1.1.1.1; the proxy appended what it saw.
        assert_eq!(
            client_ip(ip(PROXY), &["1.1.1.1, 203.0.113.7"], &[], &trusted),
            ip("203.0.113.7")
        );
        // Through two trusted proxies, and the header on two lines.
        assert_eq!(
            client_ip(
                ip(PROXY),
                &["1.1.1.1, 203.0.113.7", "10.1.2.3"],
                &[],
                &trusted
            ),
            ip("203.0.113.7")
        );
        // Ports and brackets.
        assert_eq!(
            client_ip(ip(PROXY), &["203.0.113.7:5555"], &[], &trusted),
            ip("203.0.113.7")
        );
        assert_eq!(
            client_ip(ip(PROXY), &["[2001:db8::1]:443"], &[], &trusted),
            ip("2001:db8::1")
        );
    }

    #[test]
    fn without_headers_or_with_only_proxies_the_nearest_trusted_address_is_used() {
        let trusted = nets(&["10.0.0.0/8"]);
        assert_eq!(client_ip(ip(PROXY), &[], &[], &trusted), ip(PROXY));
        assert_eq!(
            client_ip(ip(PROXY), &["10.9.9.9"], &[], &trusted),
            ip("10.9.9.9")
        );
    }

    #[test]
    fn a_garbled_hop_stops_the_walk() {
        let trusted = nets(&["10.0.0.0/8"]);
        assert_eq!(
            client_ip(ip(PROXY), &["203.0.113.7, nonsense"], &[], &trusted),
            ip(PROXY),
            "the hop the proxy appended is garbage: nobody is vouched for"
        );
        assert_eq!(
            client_ip(ip(PROXY), &["nonsense, 203.0.113.7"], &[], &trusted),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn forwarded_is_read_when_there_is_no_x_forwarded_for() {
        let trusted = nets(&["10.0.0.0/8", "2001:db8:ffff::/48"]);
        assert_eq!(
            client_ip(
                ip(PROXY),
                &[],
                &[r#"for=1.1.1.1, for="[2001:db8:cafe::17]:4711";proto=https;by=10.0.0.2"#],
                &trusted
            ),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(
            client_ip(ip(PROXY), &[], &["For=203.0.113.7;proto=http"], &trusted),
            ip("203.0.113.7")
        );
        assert_eq!(
            client_ip(ip(PROXY), &[], &["for=unknown"], &trusted),
            ip(PROXY)
        );
        // X-Forwarded-For wins: a proxy that appends it passes a client's
        // own Forwarded header on untouched.
        assert_eq!(
            client_ip(ip(PROXY), &["203.0.113.7"], &["for=198.51.100.1"], &trusted),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn mapped_addresses_are_ipv4() {
        let trusted = nets(&["127.0.0.1/32"]);
        assert_eq!(
            client_ip(ip("::ffff:127.0.0.1"), &["203.0.113.7"], &[], &trusted),
            ip("203.0.113.7")
        );
        assert_eq!(
            client_ip(ip("::ffff:203.0.113.7"), &[], &[], &[]),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn ipv6_is_keyed_by_its_slash_64() {
        assert_eq!(throttle_key("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_eq!(
            throttle_key("2001:db8:1:2:ffff:ffff:ffff:ffff"),
            throttle_key("2001:db8:1:2::1")
        );
        assert_ne!(
            throttle_key("2001:db8:1:3::1"),
            throttle_key("2001:db8:1:2::1")
        );
        assert_eq!(throttle_key("203.0.113.7"), "203.0.113.7");
        assert_eq!(throttle_key("::ffff:203.0.113.7"), "203.0.113.7");
        assert_eq!(throttle_key("unknown"), "unknown");
    }
}
