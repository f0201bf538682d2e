package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

// fakeContracts records what reaches the service.
type fakeContracts struct {
	updates, lists int
	errs           []api.InternalDataError
}

func (f *fakeContracts) List(string, int) ([]api.AdminContractInfo, string, error) {
	f.lists++
	return []api.AdminContractInfo{}, "", nil
}
func (f *fakeContracts) Get(context.Context, string) (*api.AdminContractInfo, error) {
	return &api.AdminContractInfo{}, nil
}
func (f *fakeContracts) Update(infos []api.AdminContractInfo) (int, error) {
	f.updates++
	return len(infos), nil
}
func (f *fakeContracts) Delete(a string) (string, *api.AdminContractInfo, error) { return a, nil, nil }
func (f *fakeContracts) InternalDataErrors() ([]api.InternalDataError, error) {
	return append([]api.InternalDataError{}, f.errs...), nil
}

type fakeTraces struct{ asked bool }

func (f *fakeTraces) Request()      { f.asked = true }
func (f *fakeTraces) Pending() bool { return f.asked }

// The requests the handlers refuse before asking the service answer 400
// (405 for a method), and the routes are absent without a service.
func TestAdminContractsInput(t *testing.T) {
	fc, ft := &fakeContracts{}, &fakeTraces{}
	i := NewInternal("127.0.0.1:0", prometheus.NewRegistry(), nil, nil, 1, slog.New(slog.DiscardHandler))
	i.Admin(AdminConfig{User: "u", Password: "p", Contracts: fc, Traces: ft})
	do := func(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.SetBasicAuth("u", "p")
		r.Header.Set("Accept", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/admin/contract-info/?limit=0", "", 400},
		{"GET", "/admin/contract-info/?limit=10001", "", 400},
		{"GET", "/admin/contract-info/?limit=-1", "", 400},
		{"POST", "/admin/contract-info/", "{}", 400},
		{"POST", "/admin/contract-info/", "[{]", 400},
		{"POST", "/admin/contract-info/", "[" + strings.Repeat(" ", maxContractBody) + "]", 400},
		{"POST", "/admin/contract-info/0xabc", "[]", 400},
		{"PATCH", "/admin/contract-info/0xabc", "", 405},
		{"PUT", "/admin/internal-data-errors", "", 405},
		{"POST", "/admin/contract-info", "", 405},
		{"GET", "/admin/contract-info/?limit=10000", "", 200},
		{"PUT", "/admin/contract-info/", "[]", 200},
		{"GET", "/admin/contract-info", "", 200},
		{"GET", "/admin/internal-data-errors", "", 200},
	} {
		if w := do(i.srv.Handler, tc.method, tc.path, tc.body); w.Code != tc.want {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, w.Code, w.Body.String(), tc.want)
		}
	}
	if fc.updates != 1 || fc.lists != 1 || ft.asked {
		t.Errorf("the service saw %d updates, %d lists, retry asked %v", fc.updates, fc.lists, ft.asked)
	}
	if w := do(i.srv.Handler, "POST", "/admin/internal-data-errors", ""); w.Code != 200 || !ft.asked || !strings.Contains(w.Body.String(), `"refetching":true`) {
		t.Errorf("refetch: %d %s", w.Code, w.Body.String())
	}
	if w := do(adminServer("u", "p"), "GET", "/admin/contract-info/", ""); w.Code != 404 {
		t.Errorf("without a contract service: %d", w.Code)
	}
}

// /admin/internal-data-errors is a page, as Blockbook's, to a browser (its
// retry button a form POST), and JSON to a client that asks for it; the
// node's error text is escaped.
func TestAdminInternalDataErrorsPage(t *testing.T) {
	fc := &fakeContracts{errs: []api.InternalDataError{{Height: 7, Hash: "0xab", ErrorMessage: "<b>trace failed</b>"}}}
	ft := &fakeTraces{}
	i := NewInternal("127.0.0.1:0", prometheus.NewRegistry(), nil, nil, 1, slog.New(slog.DiscardHandler))
	i.Admin(AdminConfig{User: "u", Password: "p", Contracts: fc, Traces: ft})
	do := func(method, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, "/admin/internal-data-errors", strings.NewReader(""))
		r.SetBasicAuth("u", "p")
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		i.srv.Handler.ServeHTTP(w, r)
		return w
	}
	w := do("GET", "text/html,application/xhtml+xml,*/*;q=0.8")
	body := w.Body.String()
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") ||
		!strings.Contains(body, "Count: 1") || !strings.Contains(body, "<td>7</td><td>0xab</td><td>&lt;b&gt;trace failed&lt;/b&gt;</td>") ||
		!strings.Contains(body, `<form method="post" action="">`) {
		t.Fatalf("page: %d %q\n%s", w.Code, w.Header().Get("Content-Type"), body)
	}
	if w := do("POST", ""); w.Code != 200 || !ft.asked || !strings.Contains(w.Body.String(), "Fetching...") || strings.Contains(w.Body.String(), "<form") {
		t.Fatalf("retry from the page: asked %v, %d\n%s", ft.asked, w.Code, w.Body.String())
	}
	w = do("GET", "application/json")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"count":1,"refetching":true,"internalDataErrors":[{"height":7,"hash":"0xab","errorMessage":"\u003cb\u003etrace failed\u003c/b\u003e"}]`) {
		t.Fatalf("JSON: %d %s", w.Code, w.Body.String())
	}
}
