package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// NFT metadata for the explorer's NFT page. Blockbook's page fetches the
// token URI from the visitor's browser with a script and shows the image
// it names from any https host; ours is server-rendered under a strict
// CSP, so the server reads the metadata, within bounds:
//   - only data:, http(s): and ipfs: URIs (ipfs through the operator's
//     gateway, -nftgateway; Blockbook's is https://ipfs.io/ipfs/);
//   - a contract's own http(s) host must be a public address (checked at
//     connect time, so no DNS trick reaches loopback, private or
//     link-local services); the gateway is the operator's and trusted;
//   - nftFetchTimeout per read, nftMaxBytes per document, nftMaxRedirects,
//     nftFetchers reads at once (past them the page says so), answers kept
//     nftCacheTTL (failures nftFailTTL) so a popular page does not hammer
//     the host;
//   - the page loads nothing from a third party: an image is shown as a
//     link, except a small data: image, which the CSP's img-src allows.

const (
	nftFetchTimeout = 4 * time.Second
	nftMaxBytes     = 256 << 10
	nftMaxRedirects = 3
	nftFetchers     = 4
	nftCacheTTL     = 10 * time.Minute
	nftFailTTL      = 30 * time.Second
	nftCacheMax     = 512
	nftMaxInline    = 64 << 10 // a data: image shown in the page
	nftMaxRaw       = 64 << 10 // the metadata JSON shown
	nftMaxURL       = 4 << 10  // an http(s) or ipfs URI read (data: URIs are the document)
	nftMaxAttrs     = 50
	nftMaxText      = 2000
)

// nftImageTypes are the data: image types shown inline.
var nftImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/svg+xml": true, "image/avif": true}

// nftMeta is what the page shows of a token's metadata. Note says why
// something is missing (not fetched, too large, not JSON).
type nftMeta struct {
	Source      string // the URL read, "" for a data: URI
	Note        string
	Name        string
	Description string
	Image       *nftImage
	ExternalURL string // http(s) only
	Attributes  []nftAttr
	Raw         string // the JSON, indented
}

// nftImage is an image the metadata names: Link an http(s) URL to follow,
// Inline a checked data: image, Text the URI when it is neither.
type nftImage struct {
	Link   string
	Inline template.URL
	Text   string
}

type nftAttr struct{ Trait, Value string }

// nftFetcher reads metadata documents.
type nftFetcher struct {
	gateway string // ipfs:// base ("" none)
	timeout time.Duration
	public  *http.Client // contracts' hosts: public addresses only
	trusted *http.Client // the gateway
	slots   chan struct{}

	mu    sync.Mutex
	cache map[string]nftCached
}

type nftCached struct {
	meta    *nftMeta
	expires time.Time
}

func newNFTFetcher(gateway string, timeout time.Duration) *nftFetcher {
	if gateway == "none" {
		gateway = ""
	}
	if gateway != "" && !strings.HasSuffix(gateway, "/") {
		gateway += "/"
	}
	gatewayHost := ""
	if u, err := url.Parse(gateway); err == nil {
		gatewayHost = u.Host
	}
	client := func(guard bool) *http.Client {
		d := &net.Dialer{Timeout: timeout}
		if guard {
			d.Control = nftPublicOnly
		}
		return &http.Client{
			Timeout: timeout,
			Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConns: 8, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: timeout,
				MaxResponseHeaderBytes: 16 << 10},
			CheckRedirect: func(r *http.Request, via []*http.Request) error {
				if len(via) > nftMaxRedirects || r.URL.Scheme != "http" && r.URL.Scheme != "https" {
					return errRedirects
				}
				// The gateway is trusted, not the hosts it sends a
				// reader to (a subdomain gateway follows the content).
				if !guard && r.URL.Host != gatewayHost {
					return errRedirects
				}
				return nil
			},
		}
	}
	return &nftFetcher{gateway: gateway, timeout: timeout, public: client(true), trusted: client(false), slots: make(chan struct{}, nftFetchers), cache: map[string]nftCached{}}
}

var (
	// errNotPublic refuses a connection to an address that is not public.
	errNotPublic = errors.New("the host is not a public address")
	errRedirects = errors.New("too many redirects, or a redirect off http(s)")
)

// notPublic are the ranges IsGlobalUnicast and IsPrivate let through
// that no public host has: "this network" and the carrier-grade NAT.
var notPublic = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("198.18.0.0/15"), netip.MustParsePrefix("240.0.0.0/4"),
	// IPv6 forms that carry an IPv4 address a gateway or relay reaches:
	// NAT64, 6to4 and IPv4-compatible.
	netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("::/96")}

// nftPublicOnly is the dialer's check of the address it connects to (after
// name resolution, so a name cannot lead to an internal host).
func nftPublicOnly(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	a := ap.Addr().Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return errNotPublic
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return errNotPublic
		}
	}
	return nil
}

// ipfsPath is the path an ipfs:// URI names (Blockbook also drops a
// doubled "ipfs/").
func ipfsPath(uri string) string {
	p := strings.TrimPrefix(uri[len("ipfs://"):], "ipfs/")
	if strings.ContainsAny(p, "?#\\") || slices.Contains(strings.Split(p, "/"), "..") {
		return "" // it could leave the gateway's /ipfs/ tree
	}
	return p
}

// link is where an image or an ipfs URI can be followed: http(s) as is,
// ipfs through the gateway; "" otherwise.
func (f *nftFetcher) link(uri string) string {
	switch {
	case nftIsHTTP(uri):
		return uri
	case strings.HasPrefix(strings.ToLower(uri), "ipfs://") && f.gateway != "" && ipfsPath(uri) != "":
		return f.gateway + ipfsPath(uri)
	}
	return ""
}

// read returns the metadata a token URI names.
func (f *nftFetcher) read(ctx context.Context, uri string) *nftMeta {
	uri = strings.TrimSpace(uri)
	lower := strings.ToLower(uri)
	switch {
	case uri == "":
		return &nftMeta{Note: "The contract gives no URI for this token."}
	case strings.HasPrefix(lower, "data:"):
		body, ctype, err := nftDataURI(uri)
		if err != nil {
			return &nftMeta{Note: "The token's data: URI cannot be read: " + err.Error() + "."}
		}
		return f.parse("", body, ctype)
	case len(uri) > nftMaxURL:
		return &nftMeta{Note: "The token URI is too long to read."}
	case strings.HasPrefix(lower, "ipfs://") && f.gateway == "":
		return &nftMeta{Note: "IPFS metadata is not read on this server."}
	case strings.HasPrefix(lower, "ipfs://") && ipfsPath(uri) == "":
		return &nftMeta{Note: "The token's ipfs: URI names no plain IPFS path."}
	case strings.HasPrefix(lower, "ipfs://"):
		return f.cached(ctx, f.gateway+ipfsPath(uri), f.trusted)
	case nftIsHTTP(uri):
		return f.cached(ctx, uri, f.public)
	}
	return &nftMeta{Note: "Metadata is read from data:, http(s): and ipfs: URIs only."}
}

// cached answers from the cache or reads the URL (keyed by the client
// too: a contract's URL never gets what the trusted client read).
func (f *nftFetcher) cached(ctx context.Context, u string, c *http.Client) *nftMeta {
	now := time.Now()
	key := u
	if c == f.trusted {
		key = "gateway " + u
	}
	f.mu.Lock()
	hit, ok := f.cache[key]
	f.mu.Unlock()
	if ok && now.Before(hit.expires) {
		return hit.meta
	}
	select {
	case f.slots <- struct{}{}:
	default:
		return &nftMeta{Source: u, Note: "The metadata cannot be read now (too many readings at once); please reload the page."}
	}
	m, failed := f.fetch(ctx, u, c)
	<-f.slots
	if ctx.Err() != nil {
		return m // the visitor left or the page ran out of time: not the host's answer
	}
	ttl := nftCacheTTL
	if failed {
		ttl = nftFailTTL
	}
	f.mu.Lock()
	if len(f.cache) >= nftCacheMax {
		clear(f.cache)
	}
	f.cache[key] = nftCached{meta: m, expires: now.Add(ttl)}
	f.mu.Unlock()
	return m
}

// fetch reads one document, bounded in time and size; failed tells a
// document not read from one read.
func (f *nftFetcher) fetch(ctx context.Context, u string, c *http.Client) (m *nftMeta, failed bool) {
	fail := func(why string) (*nftMeta, bool) {
		return &nftMeta{Source: u, Note: "The metadata could not be read: " + why + "."}, true
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fail("the URL is malformed")
	}
	req.Header.Set("Accept", "application/json, image/*;q=0.5")
	resp, err := c.Do(req)
	var ne net.Error
	if err != nil {
		switch {
		case errors.Is(err, errNotPublic):
			return fail("its host is not a public address")
		case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
			return fail(fmt.Sprintf("no answer within %v", f.timeout))
		}
		// No more detail: a gateway's own addresses stay private.
		var dns *net.DNSError
		switch {
		case errors.Is(err, errRedirects):
			return fail(errRedirects.Error())
		case errors.As(err, &dns):
			return fail("its host name does not resolve")
		}
		return fail("the connection failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Sprintf("the server answered %d", resp.StatusCode)) // not its status text: the host's, unbounded
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, nftMaxBytes+1))
	if err != nil {
		return fail("the answer broke off")
	}
	if len(body) > nftMaxBytes {
		return fail(fmt.Sprintf("it is larger than %d KB", nftMaxBytes>>10))
	}
	return f.parse(u, body, resp.Header.Get("Content-Type")), false
}

// parse reads a metadata document (or an image the URI names directly).
func (f *nftFetcher) parse(src string, body []byte, ctype string) *nftMeta {
	m := &nftMeta{Source: src}
	mt, _, _ := mime.ParseMediaType(ctype)
	if strings.HasPrefix(mt, "image/") {
		m.Note = "The token URI names an image, not a metadata document."
		if src != "" {
			m.Image = &nftImage{Link: src}
		} else {
			m.Image = nftInline(mt, body)
		}
		return m
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		m.Note = "The metadata is not JSON."
		return m
	}
	m.Raw = nftClip(indentBounded(body, 4*nftMaxRaw), nftMaxRaw)
	obj, ok := doc.(map[string]any)
	if !ok {
		m.Note = "The metadata is not a JSON object."
		return m
	}
	str := func(k string) string {
		s, _ := obj[k].(string)
		return nftClip(strings.TrimSpace(s), nftMaxText)
	}
	m.Name, m.Description = str("name"), str("description")
	// The image whole: an on-chain SVG is many KB (the document is
	// bounded already); image cuts what it shows as text.
	whole := func(k string) string {
		s, _ := obj[k].(string)
		return strings.TrimSpace(s)
	}
	if img := cmp.Or(whole("image"), whole("image_url")); img != "" {
		m.Image = f.image(img)
	}
	if u := str("external_url"); nftIsHTTP(u) {
		m.ExternalURL = u
	}
	attrs, _ := obj["attributes"].([]any)
	for _, a := range attrs {
		if len(m.Attributes) == nftMaxAttrs {
			m.Attributes = append(m.Attributes, nftAttr{Trait: "…", Value: "more in the metadata below"})
			break
		}
		at, ok := a.(map[string]any)
		if !ok {
			continue
		}
		m.Attributes = append(m.Attributes, nftAttr{Trait: nftClip(nftOrDash(at["trait_type"]), 200), Value: nftClip(nftOrDash(at["value"]), 500)})
	}
	return m
}

// image classifies the image a metadata document names.
func (f *nftFetcher) image(uri string) *nftImage {
	if l := f.link(uri); l != "" {
		return &nftImage{Link: l}
	}
	if strings.HasPrefix(strings.ToLower(uri), "data:") {
		body, ctype, err := nftDataURI(uri)
		if err == nil {
			if img := nftInline(ctype, body); img != nil {
				return img
			}
		}
	}
	return &nftImage{Text: nftClip(uri, 120)}
}

// nftInline is a small data: image of a known type, re-encoded by us
// (so the page carries exactly the bytes checked); nil otherwise.
func nftInline(ctype string, body []byte) *nftImage {
	mt, _, _ := mime.ParseMediaType(ctype)
	if !nftImageTypes[mt] || len(body) > nftMaxInline || len(body) == 0 {
		return nil
	}
	return &nftImage{Inline: template.URL("data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(body))}
}

// nftDataURI decodes an RFC 2397 data: URI (base64 or percent-encoded).
func nftDataURI(uri string) (body []byte, ctype string, err error) {
	head, data, ok := strings.Cut(uri[len("data:"):], ",")
	if !ok {
		return nil, "", errors.New("it has no comma")
	}
	b64 := strings.HasSuffix(strings.ToLower(head), ";base64")
	if b64 {
		head = head[:len(head)-len(";base64")]
	}
	ctype = cmp.Or(head, "text/plain;charset=US-ASCII")
	if b64 {
		if data, err = url.PathUnescape(data); err == nil {
			body, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(data, "="))
		}
		if err != nil {
			return nil, "", errors.New("its base64 is malformed")
		}
	} else {
		s, err := url.PathUnescape(data)
		if err != nil {
			return nil, "", errors.New("its percent-encoding is malformed")
		}
		body = []byte(s)
	}
	if len(body) > nftMaxBytes {
		return nil, "", fmt.Errorf("it is larger than %d KB", nftMaxBytes>>10)
	}
	return body, ctype, nil
}

func nftClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// nftIsHTTP tells an http(s) URL.
func nftIsHTTP(u string) bool {
	l := strings.ToLower(u)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")
}

// nftOrDash renders a JSON value of an attribute, "—" when absent.
func nftOrDash(v any) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprint(v)
}
