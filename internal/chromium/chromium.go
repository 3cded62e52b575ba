// Package chromium finds a Chromium and starts it headless, the one way
// that the page's browser tests (export, cmd/tlcheck) and the page report
// (reports/gen) all start it: no GPU, no sandbox (tests may run as root,
// where Chromium's sandbox refuses to start), and none of the background
// connections a closed network refuses.
package chromium

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// Find returns the path of a Chromium or Chrome: $TLCHECK_CHROMIUM if set,
// else the first of the usual names on the PATH, else "".
func Find() string {
	if p := os.Getenv("TLCHECK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start starts the browser at path, headless, with its profile in
// userDataDir, and returns a context of it; cancel ends the browser.
func Start(path, userDataDir string) (ctx context.Context, cancel func(), err error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoSandbox,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(userDataDir),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	cancel = func() { cancelBrowser(); cancelAlloc() }
	if err := chromedp.Do(bctx); err != nil { // start the browser once, with no timeout on it
		cancel()
		return nil, nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return bctx, cancel, nil
}
