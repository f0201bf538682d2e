package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// NewHTTPClient is a client whose connection pool keeps one idle
// connection per concurrent user (the default keeps two, so most requests
// of many users would open a new connection).
func NewHTTPClient(users int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = users+16, users+16
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}

// Get fetches url with the headers and decodes a 200 answer into out. It
// returns the status (0 on a transport error) and an error for anything
// but a decoded 200.
func Get(ctx context.Context, c *http.Client, url string, hdr http.Header, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: reading the answer: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, fmt.Errorf("GET %s: status %d: %.200s", url, resp.StatusCode, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, fmt.Errorf("GET %s: %w: %.200s", url, err, body)
		}
	}
	return resp.StatusCode, nil
}
