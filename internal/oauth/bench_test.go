package oauth

import (
	"context"
	"testing"
	"time"
)

// BenchmarkVerify is Verify of a JWT access token: "cached" is a client's
// next request with the same token (a hash and a lookup), "first" its
// first (the signature check), per algorithm.
//
//	go test ./internal/oauth -run '^$' -bench Verify
func BenchmarkVerify(b *testing.B) {
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		s := newSigner(b, "k", alg)
		iss := newFakeIssuer(b, s)
		v, err := NewVerifier(context.Background(), Config{Issuers: []string{iss.srv.URL}})
		if err != nil {
			b.Fatal(err)
		}
		token := sign(b, s, goodClaims(iss.srv.URL, testResource, time.Now()), "at+jwt")
		for _, mode := range []string{"first", "cached"} {
			b.Run(alg+"/"+mode, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if mode == "first" {
						v.jwts = newTokenCache(1024)
					}
					if _, err := v.Verify(context.Background(), token); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
