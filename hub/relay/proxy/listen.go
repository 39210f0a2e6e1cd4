package proxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ListenOptions say where a relay server listens.
type ListenOptions struct {
	// Addr is host:port (port 0 picks a free one, which is logged).
	Addr string
	// CertFile and KeyFile serve wss:// (TLS 1.2 at least); both empty:
	// ws://. Whether plain ws:// may listen off loopback is the caller's
	// check.
	CertFile, KeyFile string
	// Logger logs the addresses (nil: slog.Default()).
	Logger *slog.Logger
}

// ListenAndServe serves s on opts.Addr until ctx ends (nil) or serving
// fails, then closes s and shuts the HTTP server down within 5 s.
func (s *Server) ListenAndServe(ctx context.Context, opts ListenOptions) error {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	defer s.Close()
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", opts.Addr, err)
	}
	useTLS := opts.CertFile != "" && opts.KeyFile != ""
	scheme := "ws"
	if useTLS {
		scheme = "wss"
	}
	addr := ln.Addr().String()
	logger.Info("relay listening", "addr", addr, "browsers", scheme+"://"+addr+"/extension", "clients", scheme+"://"+addr+"/mcp")
	httpSrv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}
	done := make(chan error, 1)
	go func() {
		if useTLS {
			httpSrv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
			done <- httpSrv.ServeTLS(ln, opts.CertFile, opts.KeyFile)
			return
		}
		done <- httpSrv.Serve(ln)
	}()
	select {
	case err := <-done:
		return fmt.Errorf("serving the relay: %w", err)
	case <-ctx.Done():
	}
	logger.Info("relay stopping")
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = httpSrv.Shutdown(sctx)
	return nil
}
