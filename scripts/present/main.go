// Command present takes a screenshot of a run page's teaching view in
// presentation mode (the Present button), which a plain headless
// Chromium --screenshot cannot reach: it opens the page at the given window
// size, waits until the teaching view is shown, presses Present and, once
// the page presents and has drawn, writes the window's picture as PNG.
// scripts/screenshot.sh runs it against the server it starts.
//
// Usage: go run ./scripts/present -url http://localhost:PORT/runs/ID -size 1024x768 -out FILE.png
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	url := flag.String("url", "", "the run page of a 2-D problem")
	size := flag.String("size", "1024x768", "the window, WIDTHxHEIGHT")
	out := flag.String("out", "", "the PNG file to write")
	chromium := flag.String("chromium", "chromium", "the Chromium binary")
	flag.Parse()
	var w, h int
	if _, err := fmt.Sscanf(*size, "%dx%d", &w, &h); err != nil || w <= 0 || h <= 0 {
		fail(fmt.Errorf("-size: want WIDTHxHEIGHT with positive numbers, got %q", *size))
	}
	if *url == "" || *out == "" {
		fail(fmt.Errorf("-url and -out are required"))
	}
	profile, err := os.MkdirTemp("", "fwlab-present-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(profile)
	png, err := shoot(*chromium, profile, *url, w, h)
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, png, 0o644); err != nil {
		fail(err)
	}
}

func shoot(chromium, profile, url string, w, h int) ([]byte, error) {
	actx, acancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(w, h),
	)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	ctx, cancel := context.WithTimeout(bctx, 2*time.Minute)
	defer cancel()
	poll := func(what, pred string) error {
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](pred, chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
			return fmt.Errorf("waiting for %s (%s): %w", what, pred, err)
		}
		return nil
	}
	// the window's viewport is smaller than the window: the page gets w×h
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(w), int64(h)), chromedp.Navigate(url)); err != nil {
		return nil, fmt.Errorf("loading %s: %w", url, err)
	}
	if err := poll("the teaching view", `!!(window.fwlab && fwlab.teach && document.getElementById('teaching') && !document.getElementById('teaching').hidden && fwlab.done === true && fwlab.teach.drawn === true)`); err != nil {
		return nil, err
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("teach-present"))); err != nil {
		return nil, fmt.Errorf("pressing Present: %w", err)
	}
	if err := poll("presentation mode", `fwlab.teach.presenting === true && document.body.classList.contains('presenting')`); err != nil {
		return nil, err
	}
	// the charts and polygons redraw at the new size on the next frames
	time.Sleep(time.Second)
	return chromedp.Run(ctx, chromedp.CaptureScreenshot())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "present:", err)
	os.Exit(1)
}
