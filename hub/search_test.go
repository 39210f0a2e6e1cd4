package hub_test

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/bench"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// searchHub is a shop and a widget on two sites, as in the e2e test.
func searchHub(t testing.TB) *hub.Hub {
	t.Helper()
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	h.Update(core.Source{Key: "shop", Tab: "A", Frame: "A", Origin: "https://shop.example", URL: "https://shop.example/store/", Backend: "polyfill"}, []core.Tool{
		{Name: "search_products", Description: "Search the shop's products by name."},
		{Name: "addToCart", Title: "Add to cart", Description: "Add a product to the shopping cart."},
		{Name: "remove_from_cart", Description: "Remove a product from the shopping cart."},
		{Name: "view_cart", Description: "Show what the shopping cart holds."},
		{Name: "checkout", Description: "Place the order for everything in the cart."},
	}, nil)
	h.Update(core.Source{Key: "widget", Tab: "B", Frame: "B", Origin: "https://weather.example", URL: "https://weather.example/widget/", Backend: "polyfill"}, []core.Tool{
		{Name: "update_chart", Description: "Redraw the forecast chart."},
		{Name: "get_forecast", Description: "Get the five-day forecast."},
		{Name: "calculate_wind_chill", Description: "Work out how cold it feels."},
	}, nil)
	return h
}

func TestSearch(t *testing.T) {
	h := searchHub(t)
	const shop, weather = "shop_example_", "weather_example_"
	tests := []struct {
		name  string
		query string
		limit int
		want  []string // the hits, in order; nil for none
		total int
	}{
		{"a word, not a near one (cart, not chart)", "cart", 0,
			[]string{shop + "addToCart", shop + "remove_from_cart", shop + "view_cart", shop + "checkout"}, 4},
		{"several words: the tool with all of them first", "add item to cart", 0,
			[]string{shop + "addToCart", shop + "remove_from_cart", shop + "view_cart", shop + "checkout"}, 4},
		{"plural and letter case", "CARTS", 1, []string{shop + "addToCart"}, 4},
		{"a word's start", "calc", 0, []string{weather + "calculate_wind_chill"}, 1},
		{"the site", "weather chart", 0, []string{weather + "update_chart", weather + "calculate_wind_chill", weather + "get_forecast"}, 3},
		{"the URL's path", "widget", 0, []string{weather + "calculate_wind_chill", weather + "get_forecast", weather + "update_chart"}, 3},
		{"nothing matches", "flight", 0, nil, 0},
		{"only stop words list all", "the", 2, []string{shop + "addToCart", shop + "checkout"}, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, total := h.Search(tt.query, tt.limit)
			var got []string
			for _, hit := range hits {
				got = append(got, hit.Tool.Name)
			}
			if !slices.Equal(got, tt.want) || total != tt.total {
				t.Errorf("Search(%q) = %q (%d in all), want %q (%d)", tt.query, got, total, tt.want, tt.total)
			}
		})
	}
}

// TestSearchFollowsTheCatalog: a search after a change finds the new tools
// and not the gone ones.
func TestSearchFollowsTheCatalog(t *testing.T) {
	h := searchHub(t)
	if hits, _ := h.Search("cart", 0); len(hits) == 0 {
		t.Fatal("no cart tools before the change")
	}
	h.TabClosed("A")
	h.Update(core.Source{Key: "w2", Tab: "B", Frame: "B", Origin: "https://weather.example", URL: "https://weather.example/widget/", Backend: "polyfill"},
		[]core.Tool{{Name: "plan_trip", Description: "Plan a trip by cart and horse."}}, nil)
	hits, _ := h.Search("cart", 0)
	if len(hits) != 1 || hits[0].Tool.Name != "weather_example_plan_trip" {
		t.Errorf("after the change, cart finds %v, want only weather_example_plan_trip", hits)
	}
}

func TestClosest(t *testing.T) {
	h := searchHub(t)
	tests := []struct {
		name string
		want []string
	}{
		{"shop_example_view_carts", []string{"shop_example_view_cart"}},
		{"shop_example_add_to_cart", []string{"shop_example_addToCart"}},
		{"no_such_tool", nil},
	}
	for _, tt := range tests {
		got := h.Closest(tt.name, 1)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestUnknownToolTeaches: a call of a name the catalog lacks says what to
// do next, and names a refused tool's rule and the flag of its limit.
func TestUnknownToolTeaches(t *testing.T) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler), Limits: hub.Limits{DescriptionBytes: 100}})
	h.Update(mkDoc("a", "A", origin), []core.Tool{
		{Name: "view_cart", Description: "Show the cart."},
		{Name: "wordy", Description: strings.Repeat("x", 200)},
	}, nil)
	tests := []struct {
		call string
		want []string
	}{
		{site + "_view_carts", []string{"no open page has a tool named", "webmcp_list_tools", "closest names: " + site + "_view_cart"}},
		{site + "_wordy", []string{"was refused", "description is 200 bytes, over the limit of 100", "--max-description-bytes"}},
	}
	for _, tt := range tests {
		r := h.Call(t.Context(), tt.call, nil)
		got := text(t, r)
		for _, w := range tt.want {
			if !r.IsError || !strings.Contains(got, w) {
				t.Errorf("calling %s: %q, want an error with %q", tt.call, got, w)
			}
		}
	}
}

// BenchmarkSearch2000 measures one tool search (webmcp_list_tools with a
// query) over 2,000 tools on 100 sites; the index is built before the
// clock starts, as it is after the first search following a change.
//
//	go test ./hub -run '^$' -bench Search2000
func BenchmarkSearch2000(b *testing.B) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	bench.SyntheticCatalog(h, 100, 20)
	if n := len(h.Tools()); n != 2000 {
		b.Fatalf("the catalog has %d tools, want 2000", n)
	}
	queries := []string{"cart", "add item to cart", "book a flight", "cancel order", "site 42 photo", "pay"}
	h.Search("warm", 1)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if hits, _ := h.Search(queries[i%len(queries)], 20); len(hits) == 0 {
			b.Fatalf("no hit for %q", queries[i%len(queries)])
		}
		i++
	}
}

// BenchmarkSearchIndex2000 measures building the index of 2,000 tools,
// which the first search after a catalog change pays.
func BenchmarkSearchIndex2000(b *testing.B) {
	h := hub.New(&fakeBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	bench.SyntheticCatalog(h, 100, 20)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		h.Update(core.Source{Key: "x", Tab: "X", Frame: "X", Origin: "https://x.example", URL: "https://x.example/", Backend: "polyfill"},
			[]core.Tool{{Name: fmt.Sprintf("t%d", i%2), Description: "changes"}}, nil)
		h.Search("cart", 20)
	}
}
