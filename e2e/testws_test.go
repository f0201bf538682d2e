package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// /test-websocket.html in headless Chromium: the page connects to the
// server's websocket by itself, and a request picked in the form is
// answered in the log (getBlockHash of block 1, compared with the chain).
// No script errors, policy violations or requests to other hosts.
func TestE2ETestWebsocketPage(t *testing.T) {
	chromium := findChromium(t)
	st := startDemoStack(t, nil)
	b := newBrowser(t, chromium, st.inst.base, artifactDir(t, "test-websocket-screenshots"))
	b.viewport(viewports[0], false)
	b.open("/test-websocket.html")
	b.waitFor(`document.body.dataset.state === 'connected'`, "the websocket to connect")
	want := st.g.Blocks()[1].BlockHash().String()
	b.do(chromedp.SetValue(chromedp.CSS("#method"), "getBlockHash"),
		chromedp.SetValue(chromedp.CSS("#params"), `{"height": 1}`),
		chromedp.Click(chromedp.CSS("#send")))
	b.waitFor(fmt.Sprintf(`document.getElementById('log').textContent.includes(%q)`, want), "the getBlockHash answer")
	// A malformed request is answered with an error, not a dropped socket.
	b.do(chromedp.SetValue(chromedp.CSS("#method"), "getBlockHash"),
		chromedp.SetValue(chromedp.CSS("#params"), `{"height": "x"}`),
		chromedp.Click(chromedp.CSS("#send")))
	b.waitFor(`document.getElementById('log').textContent.includes('"error"')`, "the error answer")
	if !b.eval(`document.body.dataset.state === 'connected'`) {
		t.Error("the socket closed after a bad request")
	}
	b.screenshot("test-websocket")
	if log := b.text("#log"); !strings.Contains(log, "connected to ws://") {
		t.Errorf("log does not show the connection: %.300s", log)
	}
	b.checkProblems()
}
