package cdp

import (
	"context"
	"fmt"

	"github.com/chromedp/cdproto/target"
)

// Titles returns the current title of every open tab (of the followed
// browser context, with Options.BrowserContext), by the tab's id (its
// target id). Chrome sends Target.targetInfoChanged when a tab navigates,
// before the page has set its title (the title is then the URL), and not
// when the title changes afterwards, so a reader who shows titles asks here.
func (b *Browser) Titles(ctx context.Context) (map[string]string, error) {
	var res target.GetTargetsResult
	if err := b.conn.Browser().Call(ctx, target.CommandGetTargets, &target.GetTargetsParams{}, &res); err != nil {
		return nil, fmt.Errorf("asking the browser for its tabs' titles: %w", err)
	}
	out := make(map[string]string, len(res.TargetInfos))
	for _, ti := range res.TargetInfos {
		if ti.Type == "page" && b.inContext(ti) {
			out[string(ti.TargetID)] = ti.Title
		}
	}
	return out, nil
}
