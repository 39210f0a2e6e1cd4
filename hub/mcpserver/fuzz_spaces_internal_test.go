package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
)

// TestPersonOf: the person of each kind of principal; what a token
// carries besides its issuer, subject and client changes nothing.
func TestPersonOf(t *testing.T) {
	tests := []struct {
		name string
		p    *oauth.Principal
		want Person
		err  string
	}{
		{"a user", &oauth.Principal{Issuer: "https://i", Subject: "alice", ClientID: "agent"}, Person{"https://i", "alice"}, ""},
		{"the same user through another client, another token",
			&oauth.Principal{Issuer: "https://i", Subject: "alice", ClientID: "other", Scopes: []string{"x"}, Expiry: time.Unix(1, 0), TokenID: "j"},
			Person{"https://i", "alice"}, ""},
		{"a client's own token", &oauth.Principal{Issuer: "https://i", ClientID: "agent"}, Person{"https://i", "client:agent"}, ""},
		{"a user whose sub looks like a client", &oauth.Principal{Issuer: "https://i", Subject: "client:agent"}, Person{"https://i", "sub:client:agent"}, ""},
		{"a user whose sub looks escaped", &oauth.Principal{Issuer: "https://i", Subject: "sub:x"}, Person{"https://i", "sub:sub:x"}, ""},
		{"no one", &oauth.Principal{Issuer: "https://i"}, Person{}, "neither a subject"},
		{"no principal", nil, Person{}, "without an OAuth token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := personOf(tt.p)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one that says %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("%+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// FuzzPersonOf: the per-request identity path never panics, and never
// gives two principals that are not the same person (issuer and subject,
// or issuer and client for a token without a subject) the same Person.
func FuzzPersonOf(f *testing.F) {
	long := strings.Repeat("a", 1<<16)
	seeds := [][6]string{
		{"https://i", "alice", "agent", "https://i", "bob", "agent"},
		{"https://i", "client:agent", "", "https://i", "", "agent"},
		{"https://i", "sub:client:agent", "", "https://i", "client:agent", ""},
		{"https://i", "", "", "https://i", "", ""},
		{"https://i", "", "agent", "https://j", "", "agent"},
		{"https://i", "alice", "", "https://i ", "alice", ""},
		{"", "\x00", "\n", "", "\x00", "\r"},
		{"https://i", long, "", "https://i", long + "a", ""},
		{"https://i", "\xff\xfe", "\u202e", "https://i", "sub:\xff\xfe", "x"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5])
	}
	f.Fuzz(func(t *testing.T, iss1, sub1, client1, iss2, sub2, client2 string) {
		a := &oauth.Principal{Issuer: iss1, Subject: sub1, ClientID: client1}
		b := &oauth.Principal{Issuer: iss2, Subject: sub2, ClientID: client2}
		pa, errA := personOf(a)
		pb, errB := personOf(b)
		if (errA != nil) != (sub1 == "" && client1 == "") {
			t.Fatalf("%+v: person %+v, error %v", a, pa, errA)
		}
		if errA != nil || errB != nil {
			return
		}
		if pa.Subject == "" || pa.Issuer != iss1 {
			t.Fatalf("%+v is %+v", a, pa)
		}
		if (pa == pb) != (identity(a) == identity(b)) {
			t.Fatalf("%+v is %+v and %+v is %+v", a, pa, b, pb)
		}
	})
}

// identity is who a principal is, as the Person should tell: the issuer
// and the subject, or the issuer and the client without a subject.
func identity(p *oauth.Principal) [3]string {
	if p.Subject != "" {
		return [3]string{p.Issuer, "sub", p.Subject}
	}
	return [3]string{p.Issuer, "client", p.ClientID}
}
