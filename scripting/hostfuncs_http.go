package scripting

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/warrenhq/warren/internal/netguard"
)

// Defaults and fixed limits of the HTTP host functions.
const (
	// DefaultHTTPTimeout bounds one request, redirects and reading the body included.
	DefaultHTTPTimeout = 10 * time.Second
	// DefaultMaxResponseBytes caps a response body; a longer one fails the call.
	DefaultMaxResponseBytes = 1 << 20
	// MaxRedirects is how many redirects one request follows; the next one fails the call.
	MaxRedirects = 5
	// maxResponseHeaderBytes caps the response headers the default transport reads.
	maxResponseHeaderBytes = 64 << 10
	// defaultPostContentType is the Content-Type of a POST that names none.
	defaultPostContentType = "text/plain; charset=utf-8"
	// userAgent identifies script requests to the servers they reach, unless the script sets its
	// own User-Agent header.
	userAgent = "warren-script-tool"
)

var (
	// ErrPrivateAddress refuses a connection to a loopback, private, link-local, CGNAT or otherwise
	// non-public address when the host config does not allow them (HTTPConfig.AllowPrivate).
	ErrPrivateAddress = netguard.ErrNonPublic
	// ErrResponseTooLarge fails a request whose response body is longer than the cap.
	ErrResponseTooLarge = errors.New("response body too large")
	// ErrUnsupportedURL refuses a URL that does not parse or is not http or https with a host.
	ErrUnsupportedURL = errors.New("unsupported URL")
	// ErrTooManyRedirects fails a request that redirects more than MaxRedirects times.
	ErrTooManyRedirects = errors.New("too many redirects")
	// ErrHTTPTimeout fails a request with no complete response within HTTPConfig.Timeout.
	ErrHTTPTimeout = errors.New("HTTP request timed out")
)

// HTTPConfig configures the HTTP host functions.
type HTTPConfig struct {
	// Timeout bounds one request, from dialling to the last byte of the body. 0 means
	// DefaultHTTPTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps the response body (and MaxStringBytes caps it too). 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// AllowPrivate lets scripts reach loopback, private, link-local and the other non-public
	// addresses (see ErrPrivateAddress); false refuses them at connect time.
	AllowPrivate bool
	// Transport sends the requests. nil uses a shared transport whose dialer refuses non-public
	// addresses (unless AllowPrivate) after DNS resolution, on every connection redirects
	// included, and which uses no proxy (a proxy would hide the destination from the guard). A
	// non-nil Transport is trusted as is: the address guard is then its job.
	Transport http.RoundTripper
}

// withDefaults returns c with the defaults of the limits it leaves at zero.
func (c HTTPConfig) withDefaults() HTTPConfig {
	if c.Timeout <= 0 {
		c.Timeout = DefaultHTTPTimeout
	}
	if c.MaxResponseBytes <= 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return c
}

// HTTPGet is http_get: a GET request with the given headers. Any status is a response, not an
// error; the body is capped (ErrResponseTooLarge) and the response headers keep the first value of
// each, under canonical keys.
func (f *Funcs) HTTPGet(ctx context.Context, rawURL string, headers map[string]string) (HTTPResponse, error) {
	return f.doHTTP(ctx, HostFnHTTPGet, http.MethodGet, rawURL, "", "", headers)
}

// HTTPPost is http_post: a POST of body with the given headers. contentType, when not empty,
// overrides a Content-Type in headers; with neither the body is sent as UTF-8 text.
func (f *Funcs) HTTPPost(ctx context.Context, rawURL, contentType, body string, headers map[string]string) (HTTPResponse, error) {
	return f.doHTTP(ctx, HostFnHTTPPost, http.MethodPost, rawURL, contentType, body, headers)
}

// doHTTP runs one request as the host function fn, under the script call's context (parent).
func (f *Funcs) doHTTP(parent context.Context, fn, method, rawURL, contentType, body string, headers map[string]string) (HTTPResponse, error) {
	target, urlErr := parseScriptURL(fn, rawURL)
	shown := summarize(rawURL)
	if urlErr == nil {
		shown = shownURL(target)
	}
	return invokeOutside(f, fn, shown, httpRequestText(method, rawURL, contentType, body, headers), func() (HTTPResponse, error) {
		if urlErr != nil {
			return HTTPResponse{}, urlErr
		}
		if err := f.checkRequestSizes(fn, rawURL, body, headers); err != nil {
			return HTTPResponse{}, err
		}
		ctx, cancel := context.WithTimeout(parent, f.cfg.HTTP.Timeout)
		defer cancel()
		var reqBody io.Reader
		if method == http.MethodPost {
			reqBody = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, target.String(), reqBody)
		if err != nil {
			return HTTPResponse{}, fmt.Errorf("%s %s: %w", fn, shown, err)
		}
		for name, value := range headers {
			req.Header.Set(name, value)
		}
		if method == http.MethodPost {
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			} else if req.Header.Get("Content-Type") == "" {
				req.Header.Set("Content-Type", defaultPostContentType)
			}
		}
		if req.Header.Get("User-Agent") == "" {
			req.Header.Set("User-Agent", userAgent)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			return HTTPResponse{}, f.httpError(parent, ctx, fn, shown, err)
		}
		defer resp.Body.Close()
		limit := min(f.cfg.HTTP.MaxResponseBytes, int64(f.cfg.MaxStringBytes))
		data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
		if err != nil {
			return HTTPResponse{}, f.httpError(parent, ctx, fn, shown, err)
		}
		if int64(len(data)) > limit {
			return HTTPResponse{}, fmt.Errorf("%s %s: %w: the body is longer than the %d-byte cap", fn, shown, ErrResponseTooLarge, limit)
		}
		respHeaders := make(map[string]string, len(resp.Header))
		for name, values := range resp.Header {
			if len(values) > 0 {
				respHeaders[name] = values[0]
			}
		}
		return HTTPResponse{Status: resp.StatusCode, Body: string(data), Headers: respHeaders}, nil
	})
}

// httpRequestText is the whole of an HTTP request, as the recording keys it (by its hash: the
// headers may carry credentials).
func httpRequestText(method, rawURL, contentType, body string, headers map[string]string) string {
	var b strings.Builder
	b.WriteString(method + " " + rawURL + "\x00" + contentType + "\x00")
	for _, name := range slices.Sorted(maps.Keys(headers)) {
		b.WriteString(name + ": " + headers[name] + "\x00")
	}
	b.WriteString(body)
	return b.String()
}

// checkRequestSizes applies the string cap to the URL, the body and the headers (together).
func (f *Funcs) checkRequestSizes(fn, rawURL, body string, headers map[string]string) error {
	if err := f.checkString(fn, "URL", rawURL); err != nil {
		return err
	}
	if err := f.checkString(fn, "body", body); err != nil {
		return err
	}
	size := 0
	for name, value := range headers {
		size += len(name) + len(value)
	}
	if size > f.cfg.MaxStringBytes {
		return f.tooLarge(fn, "headers", size)
	}
	return nil
}

// httpError phrases a failed request for the script: cancellation of the agent's call, an
// address refusal, a timeout, or the transport's own error. The *url.Error wrapper is dropped
// because its text repeats the full URL, query and all, which may carry a secret.
func (f *Funcs) httpError(parent, ctx context.Context, fn, shown string, err error) error {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	var refusal *netguard.Refusal
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("%s %s: cancelled: %w", fn, shown, context.Cause(parent))
	case errors.As(err, &refusal):
		return fmt.Errorf("%s %s: %w", fn, shown, refusal)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return realTimeError{fmt.Errorf("%s %s: %w: no complete response within %s", fn, shown, ErrHTTPTimeout, f.cfg.HTTP.Timeout)}
	default:
		return fmt.Errorf("%s %s: %w", fn, shown, err)
	}
}

// parseScriptURL parses a URL a script gave, refusing anything but http and https with a host.
// The parse error is not repeated whole: it quotes the URL, which may carry a secret.
func parseScriptURL(fn, rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return nil, fmt.Errorf("%s: %w: cannot parse the URL: %w", fn, ErrUnsupportedURL, err)
	}
	if err := checkScheme(u); err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	return u, nil
}

// checkScheme refuses a URL that is not http or https with a host.
func checkScheme(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q (only http and https are allowed)", ErrUnsupportedURL, u.Scheme)
	}
	if u.Host == "" {
		return fmt.Errorf("%w: the URL has no host", ErrUnsupportedURL)
	}
	return nil
}

// shownURL is a URL as records and messages show it: scheme, host and path, without the user
// information and with the query and fragment elided, since either may carry a secret.
func shownURL(u *url.URL) string {
	shown := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" || u.Fragment != "" {
		shown += "?…"
	}
	return summarize(shown)
}

// newClient builds the HTTP client of one script call. The client is a value holding the shared
// transport, so building it costs nothing per call.
func newClient(c HTTPConfig) http.Client {
	transport := c.Transport
	if transport == nil {
		transport = sharedTransport(c.AllowPrivate)
	}
	return http.Client{Transport: transport, CheckRedirect: checkRedirect}
}

// checkRedirect caps redirects at MaxRedirects and keeps them on http and https. The address
// guard needs nothing here: every redirect dials through the guarded dialer again.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fmt.Errorf("%w: more than %d", ErrTooManyRedirects, MaxRedirects)
	}
	return checkScheme(req.URL)
}

// sharedTransports hold the two default transports (guarded, and AllowPrivate), built on first
// use and shared by every script call so connections are pooled across calls and agents.
var sharedTransports = [2]func() *http.Transport{
	sync.OnceValue(func() *http.Transport { return newTransport(false) }),
	sync.OnceValue(func() *http.Transport { return newTransport(true) }),
}

// sharedTransport returns the default transport for the AllowPrivate setting.
func sharedTransport(allowPrivate bool) *http.Transport {
	if allowPrivate {
		return sharedTransports[1]()
	}
	return sharedTransports[0]()
}

// newTransport builds a default transport: no proxy, dialling through newDialer.
func newTransport(allowPrivate bool) *http.Transport {
	return &http.Transport{
		DialContext:            newDialer(allowPrivate).DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    DefaultHTTPTimeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
	}
}

// newDialer returns a dialer that, unless allowPrivate, checks each address it is about to
// connect to, after DNS resolution: a name that resolves (or is rebound) to a non-public address
// is refused however it was reached.
func newDialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = guardDial
	}
	return d
}

// privateRule is why a script's connection to a non-public address is refused.
const privateRule = "scripts may not reach loopback, private, link-local or other non-public addresses unless the host config allows them"

// guardDial is the dialer's Control hook: address is the resolved "ip:port" about to be
// connected. An address that does not parse is refused: the guard fails closed.
var guardDial = netguard.Control(privateRule)

// guardAddress refuses an address that is not publicly routable; nil for a public one.
func guardAddress(addr netip.Addr) error { return netguard.Check(addr, privateRule) }
