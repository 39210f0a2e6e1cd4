package relay

import (
	"context"
	"encoding/base64"
	"encoding/json"

	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// pointParams name an element by selector, or a point by x and y.
type pointParams struct {
	tabRef
	Selector string   `json:"selector,omitempty"`
	X        *float64 `json:"x,omitempty"`
	Y        *float64 `json:"y,omitempty"`
}

func (p pointParams) check(name string) error {
	if p.Selector == "" && (p.X == nil || p.Y == nil) {
		return proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: %s needs params.selector (CSS), or params.x and params.y (CSS pixels in the viewport)", name)
	}
	return nil
}

func (b *BrowserSide) click(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p pointParams
	if err := decode("click", params, &p); err != nil {
		return nil, err
	}
	if err := p.check("click"); err != nil {
		return nil, err
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if p.Selector != "" {
		err = b.opts.Actions.Click(ctx, ti.ID, p.Selector)
	} else {
		err = b.opts.Actions.ClickAt(ctx, ti.ID, *p.X, *p.Y)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "clicked": true}, nil
}

func (b *BrowserSide) hover(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p pointParams
	if err := decode("hover", params, &p); err != nil {
		return nil, err
	}
	if err := p.check("hover"); err != nil {
		return nil, err
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if p.Selector != "" {
		err = b.opts.Actions.Hover(ctx, ti.ID, p.Selector)
	} else {
		err = b.opts.Actions.HoverAt(ctx, ti.ID, *p.X, *p.Y)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "hovered": true}, nil
}

type typeParams struct {
	tabRef
	Text     string `json:"text"`
	Selector string `json:"selector,omitempty"`
	Submit   bool   `json:"submit,omitempty"`
}

func (b *BrowserSide) typeText(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p typeParams
	if err := decode("type", params, &p); err != nil {
		return nil, err
	}
	if p.Text == "" && !p.Submit {
		return nil, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: type needs params.text (and optionally selector and submit)")
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.Type(ctx, ti.ID, p.Selector, p.Text, p.Submit); err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "typed": len([]rune(p.Text))}, nil
}

type screenshotParams struct {
	tabRef
	Format   string `json:"format,omitempty"`
	Quality  int    `json:"quality,omitempty"`
	FullPage bool   `json:"fullPage,omitempty"`
}

// ScreenshotResult is the result of screenshot.
type ScreenshotResult struct {
	TabID    int    `json:"tabId"`    // the tab captured
	Data     string `json:"data"`     // the image, base64
	MIMEType string `json:"mimeType"` // image/png, image/jpeg or image/webp
}

func (b *BrowserSide) screenshot(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p screenshotParams
	if err := decode("screenshot", params, &p); err != nil {
		return nil, err
	}
	switch p.Format {
	case "":
		p.Format = "png"
	case "png", "jpeg", "webp":
	default:
		return nil, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: screenshot format %q: use png, jpeg or webp", p.Format)
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	img, err := b.opts.Actions.Screenshot(ctx, ti.ID, p.Format, p.Quality, p.FullPage)
	if err != nil {
		return nil, err
	}
	if len(img) > b.opts.MaxScreenshotBytes {
		return nil, proxy.Errorf(proxy.CodeServerError, "The screenshot is %d bytes, over the limit of %d: use format jpeg, or leave fullPage off", len(img), b.opts.MaxScreenshotBytes)
	}
	return ScreenshotResult{TabID: ti.N, Data: base64.StdEncoding.EncodeToString(img), MIMEType: "image/" + p.Format}, nil
}

type cdpParams struct {
	tabRef
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

func (b *BrowserSide) forwardCDP(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	if !b.opts.AllowRawCDP {
		return nil, proxy.Errorf(proxy.CodeMethodNotFound, "Method not found: forwardCDPCommand is off on this browser (start it with --allow-raw-cdp to allow raw CDP commands)")
	}
	var p cdpParams
	if err := decode("forwardCDPCommand", params, &p); err != nil {
		return nil, err
	}
	if p.Method == "" {
		return nil, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: forwardCDPCommand needs params.method (e.g. Page.reload)")
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	return b.opts.Actions.RawCommand(ctx, ti.ID, p.Method, p.Params)
}
