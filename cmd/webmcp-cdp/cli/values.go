package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// Channel is the --channel flag: checked when set, so that a bad value
// from the environment or a config file names its source.
type Channel cdp.Channel

// String implements pflag.Value.
func (c *Channel) String() string { return string(*c) }

// Type implements pflag.Value.
func (c *Channel) Type() string { return "channel" }

// Set implements pflag.Value.
func (c *Channel) Set(s string) error {
	ch, err := cdp.ParseChannel(s)
	if err != nil {
		return fmt.Errorf("invalid channel %q (use stable, beta, dev or canary)", s)
	}
	*c = Channel(ch)
	return nil
}

// Viewport is the --viewport flag, WxH: W and H are 0 when not set.
type Viewport struct{ W, H int }

// String implements pflag.Value.
func (v *Viewport) String() string {
	if v.W == 0 {
		return ""
	}
	return fmt.Sprintf("%dx%d", v.W, v.H)
}

// Type implements pflag.Value.
func (v *Viewport) Type() string { return "WxH" }

// Set implements pflag.Value.
func (v *Viewport) Set(s string) error {
	w, h, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	wi, werr := strconv.Atoi(w)
	hi, herr := strconv.Atoi(h)
	if !ok || werr != nil || herr != nil || wi < 100 || hi < 100 || wi > 10000 || hi > 10000 {
		return fmt.Errorf("invalid size %q (try 1280x720; each side 100 to 10000)", s)
	}
	v.W, v.H = wi, hi
	return nil
}
