package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Identity is who a token speaks for.
type Identity struct {
	// User is the user id: the token's sub claim.
	User string
	// Expires is when the token stops being valid; the proxy closes the
	// connection then.
	Expires time.Time
}

// Authenticator checks an access token and says whose it is.
type Authenticator interface {
	Authenticate(token string) (Identity, error)
}

// MinSecretBytes is the shortest HS256 secret accepted: 256 bits, the size
// of the hash.
const MinSecretBytes = 32

// maxUserBytes bounds the sub claim.
const maxUserBytes = 256

// HS256 checks and issues JWTs signed with HMAC-SHA256 under one shared
// secret. A token must carry sub (the user id) and exp, and only HS256 is
// accepted (no "none", no algorithm confusion).
type HS256 struct {
	secret []byte
}

// NewHS256 returns an authenticator for the secret.
func NewHS256(secret []byte) (*HS256, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("the JWT secret is %d bytes; use at least %d (for example: head -c 48 /dev/urandom | base64 > secret)", len(secret), MinSecretBytes)
	}
	return &HS256{secret: bytes.Clone(secret)}, nil
}

// ReadSecretFile reads a JWT secret from a file; surrounding whitespace
// (a trailing newline) is not part of the secret.
func ReadSecretFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the JWT secret: %w", err)
	}
	return bytes.TrimSpace(b), nil
}

// Authenticate checks the token's signature, algorithm and expiry and
// returns its subject. The error says why a token was refused, without
// repeating the token.
func (h *HS256) Authenticate(token string) (Identity, error) {
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return h.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
	)
	if err != nil {
		return Identity{}, tokenError(err)
	}
	if claims.Subject == "" {
		return Identity{}, errors.New("the token has no sub claim (the user id)")
	}
	if len(claims.Subject) > maxUserBytes {
		return Identity{}, fmt.Errorf("the token's sub claim is longer than %d bytes", maxUserBytes)
	}
	return Identity{User: claims.Subject, Expires: claims.ExpiresAt.Time}, nil
}

// tokenError words a jwt error for the person holding the token.
func tokenError(err error) error {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return fmt.Errorf("the token has expired: %w", jwt.ErrTokenExpired)
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return fmt.Errorf("the token has no exp claim (an expiry is required): %w", jwt.ErrTokenRequiredClaimMissing)
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return fmt.Errorf("the token is not valid yet (nbf is in the future): %w", jwt.ErrTokenNotValidYet)
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return fmt.Errorf("the token's signature does not match this relay's secret, or it is not HS256: %w", err)
	case errors.Is(err, jwt.ErrTokenMalformed):
		return fmt.Errorf("the token is not a JWT: %w", jwt.ErrTokenMalformed)
	}
	return fmt.Errorf("the token is invalid: %w", err)
}

// Issue signs a token for user that expires after ttl.
func (h *HS256) Issue(user string, ttl time.Duration) (string, error) {
	if user == "" {
		return "", errors.New("issuing a token: the user id (sub) is empty")
	}
	if ttl <= 0 {
		return "", fmt.Errorf("issuing a token: the lifetime %s must be positive", ttl)
	}
	now := time.Now()
	claims := jwt.RegisteredClaims{
		Subject:   user,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(h.secret)
	if err != nil {
		return "", fmt.Errorf("signing the token: %w", err)
	}
	return s, nil
}
