package benchproc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// TimeGet times one GET of a JSON answer, reading the whole body, and
// decodes the answer into out (a *any to only check it is JSON). It
// returns the time and the body's size; a status other than 200 is an
// error.
func TimeGet(url string, out any) (time.Duration, int, error) {
	start := time.Now()
	resp, err := http.Get(url)
	if err != nil {
		return 0, 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return d, len(body), json.Unmarshal(body, out)
}

// Percentile returns the p-th percentile of ds (nearest rank), rounded to
// 10 µs for printing.
func Percentile(ds []time.Duration, p int) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Round(10 * time.Microsecond).String()
}

// TimePost is TimeGet for a POST of a JSON body.
func TimePost(url string, body []byte, out any) (time.Duration, int, error) {
	start := time.Now()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("POST %s: %d %.300s", url, resp.StatusCode, answer)
	}
	return d, len(answer), json.Unmarshal(answer, out)
}
