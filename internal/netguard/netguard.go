// Package netguard refuses connections to addresses that are not publicly routable (loopback,
// private, link-local, CGNAT and the other special ranges), checked on each address a dialer is
// about to connect to, after DNS resolution, so that a name resolving (or rebound) to such an
// address is refused however it was reached. Script tools use it for their HTTP host functions,
// and host serve for the models and MCP servers of the runs it serves, which would otherwise let
// whoever holds its token make the server's machine reach its own network (SSRF).
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrNonPublic is what every refusal wraps.
var ErrNonPublic = errors.New("non-public address refused")

// Refusal is one refused connection: the address, its kind of non-public range, and the rule
// that refused it, in words for whoever reads the error (a script, an agent, a person).
type Refusal struct {
	Addr netip.Addr
	Kind string
	Rule string
}

// Error says what was refused and why.
func (e *Refusal) Error() string {
	return fmt.Sprintf("refused to connect to %s, a non-public address (%s): %s", e.Addr.WithZone(""), e.Kind, e.Rule)
}

// Unwrap returns ErrNonPublic.
func (e *Refusal) Unwrap() error { return ErrNonPublic }

// Check refuses addr, by rule, when it is not publicly routable; nil for a public one.
func Check(addr netip.Addr, rule string) error {
	if kind := Kind(addr); kind != "" {
		return &Refusal{Addr: addr, Kind: kind, Rule: rule}
	}
	return nil
}

// Control is a net.Dialer Control hook refusing, by rule, each non-public address it is asked
// to connect to ("ip:port", resolved). An address that does not parse is refused: it fails
// closed.
func Control(rule string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		addrPort, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: cannot check the address %q before connecting", ErrNonPublic, address)
		}
		return Check(addrPort.Addr(), rule)
	}
}

// Dialer is a dialer that refuses non-public addresses by rule.
func Dialer(rule string) *net.Dialer {
	return &net.Dialer{KeepAlive: 30 * time.Second, Control: Control(rule)}
}

// Transport sends each request to a host Allowed names through Open, and every other request
// through Guarded, whose dialer refuses non-public addresses: an operator's own local model or
// MCP server stays reachable, and nothing else of the machine's network is. Redirects are
// requests too, each checked on its own.
type Transport struct {
	// Allowed reports whether a request's host ("name" or "name:port", as its URL writes it)
	// may reach non-public addresses (nil: none may).
	Allowed func(host string) bool
	// Open and Guarded carry the requests.
	Open, Guarded *http.Transport
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport clones base twice (nil: http.DefaultTransport's), one of them dialling through
// Dialer(rule), and routes by allowed.
func NewTransport(base *http.Transport, allowed func(host string) bool, rule string) *Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	guarded := base.Clone()
	guarded.DialContext = Dialer(rule).DialContext
	guarded.Proxy = nil // a proxy would connect on the request's behalf, past the dialer's check
	return &Transport{Allowed: allowed, Open: base.Clone(), Guarded: guarded}
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.Allowed != nil && t.Allowed(req.URL.Host) {
		return t.Open.RoundTrip(req)
	}
	return t.Guarded.RoundTrip(req)
}

// nonPublicRanges are the non-public ranges netip.Addr's own predicates do not cover.
var nonPublicRanges = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// Prefixes of IPv6 ranges that embed an IPv4 address, which is checked in turn: NAT64 (the last
// 32 bits) and 6to4 (bits 16-47).
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// Kind names the kind of non-public address addr is, "" for a public one. An
// IPv4-mapped IPv6 address is judged as its IPv4 address.
func Kind(addr netip.Addr) string {
	addr = addr.Unmap().WithZone("")
	switch {
	case !addr.IsValid():
		return "invalid"
	case addr.IsLoopback():
		return "loopback"
	case addr.IsUnspecified():
		return "unspecified"
	case addr.IsLinkLocalUnicast(), addr.IsLinkLocalMulticast():
		return "link-local"
	case addr.IsMulticast():
		return "multicast"
	case addr.IsPrivate():
		return "private"
	}
	for _, r := range nonPublicRanges {
		if r.prefix.Contains(addr) {
			return r.kind
		}
	}
	raw := addr.As16()
	switch {
	case nat64Prefix.Contains(addr):
		return embeddedKind("NAT64", [4]byte(raw[12:16]))
	case sixToFour.Contains(addr):
		return embeddedKind("6to4", [4]byte(raw[2:6]))
	}
	return ""
}

// embeddedKind judges the IPv4 address an IPv6 tunnel or translation address embeds.
func embeddedKind(via string, v4 [4]byte) string {
	if kind := Kind(netip.AddrFrom4(v4)); kind != "" {
		return kind + ", through " + via
	}
	return ""
}

// ServedRule is why a run host serve runs may not reach an address with its models or MCP
// servers.
const ServedRule = "a run host serve runs reaches only public addresses, unless the server's policy lists the host ([outbound] private, host serve --allow-private)"

// ServedClient is the HTTP client of a served run's live models: every host but those allowed
// reports true for is reached only at public addresses (ServedRule).
func ServedClient(allowed func(host string) bool) *http.Client {
	return &http.Client{Transport: NewTransport(nil, allowed, ServedRule)}
}
