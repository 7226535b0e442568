package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// chromiumPath is the browser the dashboard tests drive: CAUSEWAY_CHROMIUM, or
// Debian's chromium (which .ci/run installs).
func chromiumPath() string {
	if p := os.Getenv("CAUSEWAY_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// browser is one headless Chromium with one tab, at the 1280×800 the dashboard
// is designed for.
type browser struct {
	ctx context.Context
	t   *testing.T
}

// newBrowser starts Chromium for t with a fresh profile and connects to it
// over the DevTools protocol. The process (and its children, which share its
// process group) is killed by its pid when the test ends, failed or not.
// Without Chromium the test is skipped, except in CI or with
// CAUSEWAY_REQUIRE_ALL=1, where it fails.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	bin := chromiumPath()
	if bin == "" {
		msg := "Chromium not found (install Debian's chromium or set CAUSEWAY_CHROMIUM); the dashboard's browser tests need it"
		if os.Getenv("CI") != "" || os.Getenv("CAUSEWAY_REQUIRE_ALL") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	profile := t.TempDir()
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
		"--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--window-size=1280,800", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL) // the browser's process group
		_ = cmd.Wait()
	})
	wsURL, err := devToolsURL(stderr, 30*time.Second)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	allocCtx, cancelAlloc := remote.NewAllocator(context.Background(), wsURL, remote.NoModifyURL)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first action attaches the tab; it must run on the tab's own context,
	// since a context derived with a timeout would close the tab when it ends.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("attach to chromium: %v", err)
	}
	b := &browser{ctx: ctx, t: t}
	b.do(chromedp.EmulateViewport(1280, 800))
	// Every page load fetches its assets afresh, so the sizes measured are
	// what a first visit ships.
	b.call(func(ctx context.Context) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	})
	b.acceptDialogs()
	return b
}

// devToolsURL reads the browser's address from its start-up line, then keeps
// draining stderr so the browser never blocks on a full pipe.
func devToolsURL(r io.Reader, within time.Duration) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			if line := sc.Text(); !sent && strings.Contains(line, "DevTools listening on ") {
				found <- strings.TrimSpace(line[strings.Index(line, "ws://"):])
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			return "", fmt.Errorf("exited before listening")
		}
		return u, nil
	case <-time.After(within):
		return "", fmt.Errorf("no DevTools address within %s", within)
	}
}

// acceptDialogs answers the dashboard's confirm() prompts with OK.
func (b *browser) acceptDialogs() {
	dialogs := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
}

// do runs actions within a minute, failing the test on error.
func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v (at %s)", err, b.location())
	}
}

func (b *browser) call(f func(ctx context.Context) error) {
	b.t.Helper()
	if err := f(b.ctx); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// eval evaluates js and decodes its JSON result into out.
func (b *browser) eval(js string, out any) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %q: %v", js, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			b.t.Fatalf("evaluate %q: decode %s: %v", js, raw, err)
		}
	}
}

func (b *browser) text(js string) string {
	b.t.Helper()
	var s string
	b.eval(js, &s)
	return s
}

func (b *browser) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	u, _ := chromedp.Run(ctx, chromedp.Location())
	return u
}

// waitFor polls js (an expression) until it is true.
func (b *browser) waitFor(what, js string, within time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var ok bool
		b.eval("Boolean("+js+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("timed out after %s waiting for %s at %s; page says: %.600s", within, what, b.location(),
				b.text(`document.querySelector("main") ? document.querySelector("main").innerText : document.body.innerText`))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// open navigates and waits for the page to load.
func (b *browser) open(url string) {
	b.t.Helper()
	b.do(chromedp.Navigate(url))
	b.waitFor("page load", `document.readyState === "complete"`, 30*time.Second)
}

// submit clicks a button and waits for the page it leads to.
func (b *browser) submit(selector string) {
	b.t.Helper()
	before := b.text(`String(performance.timeOrigin)`)
	b.do(chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible))
	b.waitFor("the next page", `String(performance.timeOrigin) !== `+jsString(before)+` && document.readyState === "complete"`, 60*time.Second)
}

// fill replaces a field's value, as typing would.
func (b *browser) fill(selector, value string) {
	b.t.Helper()
	b.eval(fmt.Sprintf(`(() => { const el = document.querySelector(%s); el.focus(); el.value = %s; return true })()`,
		jsString(selector), jsString(value)), nil)
}

// keys sends key presses to whatever has focus.
func (b *browser) keys(k string) {
	b.t.Helper()
	b.do(chromedp.KeyEvent(k))
}

// screenshot writes the viewport as name.png into the screenshots folder.
func (b *browser) screenshot(dir, name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// clearCookies forgets the browser's session, as a browser restart or an
// expired cookie would.
func (b *browser) clearCookies() {
	b.t.Helper()
	if _, err := chromedp.Call(b.ctx, network.ClearBrowserCookies, cdp.Empty{}); err != nil {
		b.t.Fatal(err)
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
