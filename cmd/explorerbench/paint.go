package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// firstPaints loads each page n times in headless Chromium at a desktop
// viewport, with the browser's cache off (a first visit: the stylesheet,
// script and icon are fetched each time), and returns each page's
// first-contentful-paint times: from the start of the navigation to the
// first paint of text, as the browser's Paint Timing reports it.
func firstPaints(chromium, base string, kinds []pageKind, n int) (map[string][]time.Duration, error) {
	profile, err := os.MkdirTemp("", "explorerbench-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(profile))
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // a hung browser
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1366, 900)); err != nil {
		return nil, fmt.Errorf("starting %s: %w", chromium, err)
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		return nil, err
	}
	const fcp = `new Promise(done => {
  const look = () => {
    const e = performance.getEntriesByName('first-contentful-paint')[0];
    if (e) done(e.startTime); else setTimeout(look, 5);
  };
  look();
})`
	out := map[string][]time.Duration{}
	for _, k := range kinds {
		for range n {
			if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(base+k.path)); err != nil {
				return nil, fmt.Errorf("%s: %w", k.path, err)
			}
			ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](fcp, chromedp.EvalAwaitPromise))
			if err != nil {
				return nil, fmt.Errorf("first paint of %s: %w", k.path, err)
			}
			out[k.path] = append(out[k.path], time.Duration(ms*float64(time.Millisecond)))
		}
	}
	return out, nil
}
