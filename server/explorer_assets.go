package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strconv"
	"time"
)

// assets serves the embedded stylesheet, script and icon under /static/.
// Pages link them with a content hash in the URL, so browsers may keep them
// for good; a new binary with new assets links new URLs.
type assets struct {
	files map[string]asset
}

type asset struct {
	data      []byte
	gz        []byte // data gzipped, nil where not worth it (explorer_gzip.go)
	version   string // short content hash, the ?v= of links
	integrity string // subresource integrity of <link> and <script>
}

func loadAssets(fsys fs.FS) *assets {
	a := &assets{files: map[string]asset{}}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		sri := sha512.Sum384(data)
		a.files[path] = asset{data: data, gz: gzipAsset(path, data), version: hex.EncodeToString(sum[:6]),
			integrity: "sha384-" + base64.StdEncoding.EncodeToString(sri[:])}
		return nil
	})
	if err != nil {
		panic(err) // embedded files are readable
	}
	return a
}

// url is the versioned link of an asset.
func (a *assets) url(name string) string {
	f, ok := a.files[name]
	if !ok {
		panic("explorer: no asset " + name) // a template names a file that is not embedded
	}
	return "/static/" + name + "?v=" + f.version
}

func (a *assets) integrity(name string) string { return a.files[name].integrity }

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, ok := a.files[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	if r.URL.Query().Get("v") == f.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	data, etag := f.data, `"`+f.version+`"`
	if f.gz != nil {
		// Each encoding is its own representation with its own validator,
		// so a cache never answers one with the other's bytes.
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			data, etag = f.gz, `"`+f.version+`-gz"`
			h.Set("Content-Encoding", "gzip")
			// ServeContent leaves the length out once an encoding is set
			// (for writers that compress as they go); these bytes are
			// final. A range or a 304 replaces or drops it.
			h.Set("Content-Length", strconv.Itoa(len(data)))
		}
	}
	h.Set("ETag", etag)
	http.ServeContent(preconditionFailedBare{w}, r, r.PathValue("name"), time.Time{}, bytes.NewReader(data))
}

// preconditionFailedBare drops the body's headers from a 412, which
// ServeContent sends without a body but with the length set above.
type preconditionFailedBare struct{ http.ResponseWriter }

func (w preconditionFailedBare) WriteHeader(code int) {
	if code == http.StatusPreconditionFailed {
		w.Header().Del("Content-Length")
		w.Header().Del("Content-Encoding")
	}
	w.ResponseWriter.WriteHeader(code)
}
