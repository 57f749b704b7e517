package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// RefusedError reports a URL the fetcher will not connect to, and why.
type RefusedError struct {
	Reason string
}

func (e *RefusedError) Error() string { return "refused: " + e.Reason }

// IsRefused reports whether err (or anything it wraps) is a safety refusal.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// Resolver looks up the addresses of a host. *net.Resolver implements it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// metadataHosts are cloud instance-metadata names that must never be
// fetched: they hand out credentials to anything that asks.
var metadataHosts = map[string]bool{
	"metadata.google.internal":   true,
	"metadata":                   true,
	"metadata.goog":              true,
	"instance-data":              true,
	"instance-data.ec2.internal": true,
}

var (
	awsMetadataV4 = netip.MustParseAddr("169.254.169.254")
	awsMetadataV6 = netip.MustParseAddr("fd00:ec2::254")
	// Alibaba Cloud's metadata service.
	aliMetadataV4 = netip.MustParseAddr("100.100.100.200")

	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	ietf      = netip.MustParsePrefix("192.0.0.0/24")
	benchmark = netip.MustParsePrefix("198.18.0.0/15")
	reserved  = netip.MustParsePrefix("240.0.0.0/4")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	// IPv4-compatible IPv6 (deprecated) also carries an IPv4 address in its last 32 bits; :: and ::1 are
	// judged before it.
	v4Compat   = netip.MustParsePrefix("::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	ipv6Disc   = netip.MustParsePrefix("100::/64")
)

// blockedKind says what kind of forbidden address addr is ("a loopback
// address"), or "" when it may be contacted. allowLoopback opens
// 127.0.0.0/8 and ::1 only (local test servers).
func blockedKind(addr netip.Addr, allowLoopback bool) string {
	addr = addr.Unmap()
	switch {
	case addr == awsMetadataV4 || addr == awsMetadataV6 || addr == aliMetadataV4:
		return "a cloud metadata address"
	case addr.IsLoopback():
		if allowLoopback {
			return ""
		}
		return "a loopback address"
	case addr.IsUnspecified() || thisNet.Contains(addr):
		return "an unspecified address"
	case addr.IsPrivate():
		return "a private address"
	case addr.IsLinkLocalUnicast():
		return "a link-local address"
	case cgnat.Contains(addr):
		return "a carrier-grade NAT (shared) address"
	case addr.IsMulticast() || addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast():
		return "a multicast address"
	case addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) || reserved.Contains(addr):
		return "a reserved address"
	case ietf.Contains(addr) || benchmark.Contains(addr) || ipv6Disc.Contains(addr) || nat64Local.Contains(addr):
		return "a special-purpose address"
	case nat64.Contains(addr), v4Compat.Contains(addr):
		// Both forms embed an IPv4 address in the last 32 bits, which
		// some stacks and translators reach; judge the embedded one.
		b := addr.As16()
		inner := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		form := "a NAT64 address"
		if v4Compat.Contains(addr) {
			form = "an IPv4-compatible address"
		}
		if k := blockedKind(inner, allowLoopback); k != "" {
			return form + " embedding " + inner.String() + ", " + k
		}
	}
	return ""
}

// hostAllowed reports whether host is opened by the allow-list. Entries are
// exact host names or IP literals, or "*.example.com" / ".example.com" for a
// domain and all its subdomains.
func (f *Fetcher) hostAllowed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, a := range f.allow {
		switch {
		case strings.HasPrefix(a, "*."):
			if host == a[2:] || strings.HasSuffix(host, a[1:]) {
				return true
			}
		case strings.HasPrefix(a, "."):
			if host == a[1:] || strings.HasSuffix(host, a) {
				return true
			}
		case host == a:
			return true
		}
	}
	return false
}

// checkHost refuses what can be refused from the name alone: metadata host
// names and blocked IP literals. Names are checked again after resolution.
func (f *Fetcher) checkHost(host string) error {
	if f.hostAllowed(host) {
		return nil
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if metadataHosts[h] {
		return &RefusedError{Reason: h + " is a cloud metadata host"}
	}
	if addr, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		if k := blockedKind(addr, f.cfg.AllowLoopback); k != "" {
			return &RefusedError{Reason: addr.Unmap().String() + " is " + k}
		}
	}
	return nil
}

// dialContext resolves the host itself, checks every address and then dials
// the checked IP literal, so a second DNS answer (rebinding) can never steer
// the connection somewhere else.
func (f *Fetcher) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if err := f.checkHost(host); err != nil {
		return nil, err
	}
	allowed := f.hostAllowed(host)
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		ipas, err := f.resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, ipa := range ipas {
			if a, ok := netip.AddrFromSlice(ipa.IP); ok {
				addrs = append(addrs, a.Unmap())
			}
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("lookup %s: no addresses", host)
		}
	}
	if !allowed {
		// Refuse when any answer is blocked: a public name that also
		// resolves to an internal address is an attack, not a mirror.
		for _, a := range addrs {
			if k := blockedKind(a, f.cfg.AllowLoopback); k != "" {
				return nil, &RefusedError{Reason: host + " resolves to " + a.String() + ", " + k}
			}
		}
	}
	var lastErr error
	for _, a := range addrs {
		conn, err := f.dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}
