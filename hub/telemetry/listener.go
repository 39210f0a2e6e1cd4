package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Listener serves the metrics on an address of their own (--metrics),
// without the MCP endpoint's guard: bind it where only the scraper reaches.
type Listener struct {
	srv *http.Server
	ln  net.Listener
}

// Serve listens on addr and serves h at GET /metrics until Close. An
// error of the listener after the start is logged: the metrics stop, MCP
// goes on.
func Serve(addr string, h http.Handler, logger *slog.Logger) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("the --metrics listener stopped; MCP goes on without it", "err", err)
		}
	}()
	logger.Info("serving Prometheus metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return &Listener{srv: srv, ln: ln}, nil
}

// Addr returns the address the listener listens on.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Close stops the listener, letting a scrape in flight finish for up to 2 s.
func (l *Listener) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return l.srv.Shutdown(ctx)
}
