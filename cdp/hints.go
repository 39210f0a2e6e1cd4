package cdp

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/browser"
	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// undoHintsTimeout bounds taking back the geolocation permission after a
// call, which runs when the call's own context may have ended.
const undoHintsTimeout = 5 * time.Second

// ShowHints has tab show ch.To where it shows ch.From (hub.Hinter): the
// language (Emulation.setLocaleOverride for Intl, and the user agent
// override's acceptLanguage for navigator.language and Accept-Language),
// the time zone and the position, each set only when it changes (all of
// them with ch.Reset). With a position, geolocation is granted to the tab's
// origin; done sets it back to ask, once the call is over.
func (b *Browser) ShowHints(ctx context.Context, tab string, ch core.HintChange) (done func(), err error) {
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		return nil, err
	}
	from, to := ch.From, ch.To
	if ch.Reset || from.Locale != to.Locale {
		// An override in effect is cleared first: Chromium refuses to set
		// one over another.
		if _, err := cdpt.Call(ctx, s, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{}); err != nil {
			return nil, fmt.Errorf("clearing the language: %w", err)
		}
		if to.Locale != "" {
			if _, err := cdpt.Call(ctx, s, emulation.SetLocaleOverride, emulation.SetLocaleOverrideParams{Locale: to.Locale}); err != nil {
				return nil, fmt.Errorf("setting the language %q: %w", to.Locale, err)
			}
		}
		ua := b.opts.UserAgent
		if ua == "" {
			v, err := cdpt.Call(ctx, b.conn.Browser(), browser.GetVersion, cdpt.Empty{})
			if err != nil {
				return nil, fmt.Errorf("asking the browser for its user agent: %w", err)
			}
			ua = v.UserAgent
		}
		if _, err := cdpt.Call(ctx, s, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, AcceptLanguage: to.Locale}); err != nil {
			return nil, fmt.Errorf("setting the accepted language %q: %w", to.Locale, err)
		}
	}
	if ch.Reset || from.Timezone != to.Timezone {
		if _, err := cdpt.Call(ctx, s, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{}); err != nil {
			return nil, fmt.Errorf("clearing the time zone: %w", err)
		}
		if to.Timezone != "" {
			if _, err := cdpt.Call(ctx, s, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: to.Timezone}); err != nil {
				return nil, fmt.Errorf("setting the time zone %q: %w", to.Timezone, err)
			}
		}
	}
	samePlace := from.Geo == to.Geo && from.Latitude == to.Latitude && from.Longitude == to.Longitude
	if ch.Reset || !samePlace {
		if to.Geo {
			accuracy := 100.0
			_, err = cdpt.Call(ctx, s, emulation.SetGeolocationOverride, emulation.SetGeolocationOverrideParams{Latitude: &to.Latitude, Longitude: &to.Longitude, Accuracy: &accuracy})
		} else {
			_, err = cdpt.Call(ctx, s, emulation.ClearGeolocationOverride, cdpt.Empty{})
		}
		if err != nil {
			return nil, fmt.Errorf("setting the position: %w", err)
		}
	}
	if !to.Geo || ch.Origin == "" {
		return func() {}, nil
	}
	perm := func(ctx context.Context, setting browser.PermissionSetting) error {
		_, err := cdpt.Call(ctx, b.conn.Browser(), browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: "geolocation"}, Setting: setting, Origin: ch.Origin,
			BrowserContextID: cdpt.BrowserContextID(b.opts.BrowserContext),
		})
		return err
	}
	if err := perm(ctx, browser.PermissionSettingGranted); err != nil {
		return nil, fmt.Errorf("granting %s the position for the call: %w", ch.Origin, err)
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoHintsTimeout)
		defer cancel()
		if err := perm(uctx, browser.PermissionSettingPrompt); err != nil {
			b.logger.Warn("taking back the position granted for a call failed", "origin", ch.Origin, "err", err)
		}
	}, nil
}
