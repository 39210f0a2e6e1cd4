package record

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// secretWords are parts of argument names that mark a secret, compared
// with the name in lower case without _, - and spaces.
var secretWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
	"privatekey", "authorization", "credential", "cookie", "sessionid", "cvv", "cvc",
}

// secretNames are whole argument names that mark a secret.
var secretNames = map[string]bool{"pass": true, "pwd": true, "pin": true, "otp": true, "auth": true, "ssn": true}

// SecretName says whether an argument's name looks like a secret's.
func SecretName(name string) bool {
	n := strings.ToLower(name)
	n = strings.NewReplacer("_", "", "-", "", " ", "").Replace(n)
	if secretNames[n] {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// minScrub is the shortest secret value taken out of results: a shorter
// one would replace ordinary text.
const minScrub = 4

// secrets are the secret values seen in a session, by the name of the
// environment variable that stands for each. They stay in memory only.
type secrets struct {
	names  []string          // in order of first use
	values map[string]string // name -> value
}

// placeholder returns the ${NAME} that stands for value, an argument
// named arg, making a new name when value is new.
func (s *secrets) placeholder(arg, value string) string {
	base := envName(arg)
	name := base
	for i := 2; ; i++ {
		v, ok := s.values[name]
		if !ok {
			if s.values == nil {
				s.values = make(map[string]string)
			}
			s.values[name] = value
			s.names = append(s.names, name)
			break
		}
		if v == value {
			break
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
	return "${" + name + "}"
}

// envName makes an environment variable's name of an argument's name:
// upper case letters, digits and underscores, not starting with a digit.
func envName(arg string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(arg) {
		switch {
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	n := strings.Trim(b.String(), "_")
	if n == "" {
		n = "SECRET"
	}
	if n[0] >= '0' && n[0] <= '9' {
		n = "_" + n
	}
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// scrub replaces every secret value in text by its placeholder, the
// longest values first (so that one that holds another is still found).
func (s *secrets) scrub(text string) string {
	names := slices.Clone(s.names)
	slices.SortStableFunc(names, func(a, b string) int { return len(s.values[b]) - len(s.values[a]) })
	for _, name := range names {
		if v := s.values[name]; len(v) >= minScrub {
			text = strings.ReplaceAll(text, v, "${"+name+"}")
		}
	}
	return text
}

// redact returns v (decoded JSON arguments) with every secret replaced by
// its placeholder: a value whose schema property has format password, or
// whose name looks like a secret's (SecretName), and the secrets of URLs
// in strings (redactURL). It walks objects and arrays along the schema's
// properties and items.
func (s *secrets) redact(v any, schema map[string]any) any {
	switch x := v.(type) {
	case string:
		if urlShaped(x) {
			out, _ := s.redactURL(x, false)
			return out
		}
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		out := make(map[string]any, len(x))
		// In key order: the names of new secrets do not depend on the
		// order a map is walked in.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			val := x[k]
			ps, _ := props[k].(map[string]any)
			if secretProp(k, ps) {
				if lit, ok := literal(val); ok && lit != "" {
					out[k] = s.placeholder(k, lit)
					continue
				}
			}
			out[k] = s.redact(val, ps)
		}
		return out
	case []any:
		items, _ := schema["items"].(map[string]any)
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.redact(e, items)
		}
		return out
	}
	return v
}

// secretProp says whether an argument is a secret by its name or schema.
func secretProp(name string, schema map[string]any) bool {
	if f, _ := schema["format"].(string); f == "password" {
		return true
	}
	return SecretName(name)
}

// literal is a scalar's text: a string's value, a number's digits.
func literal(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64, float64, bool:
		return fmt.Sprint(x), true
	}
	return "", false
}
