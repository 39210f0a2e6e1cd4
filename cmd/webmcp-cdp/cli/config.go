package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// This file gives every flag of every command two more sources, generically:
// the environment (WEBMCP_CDP_<FLAG>) and a config file (--config FILE, YAML
// or JSON, keys named as the flags). A flag on the command line wins over
// the environment, which wins over the file. Flags added later by any
// command work the same without more code.

const (
	// envPrefix starts the environment name of each flag.
	envPrefix = "WEBMCP_CDP_"
	// ConfigFlag names the config file.
	ConfigFlag = "config"
	// maxConfigBytes bounds the config file.
	maxConfigBytes = 1 << 20
)

// ConfigHelp is appended to every command's help.
const ConfigHelp = `
Every flag can also be set in the environment as WEBMCP_CDP_<FLAG>: upper case, dashes as
underscores (--call-timeout 5s is WEBMCP_CDP_CALL_TIMEOUT=5s); a repeatable flag takes several
values separated by spaces (--header: one per line). Or in a YAML or JSON file given with --config FILE (or
WEBMCP_CDP_CONFIG), keyed by flag name (call-timeout: 5s); a repeatable flag takes a list.
The command line wins over the environment, which wins over the file.
`

// EnvName is the environment variable of a flag.
func EnvName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// ownEnv are the flags whose WEBMCP_CDP_ variable their command reads
// itself, only where it applies: a relay token in the environment must not
// make every launch without --relay fail with "--relay-token needs --relay".
func ownEnv(name string) bool { return name == "token" || name == "relay-token" }

// skipFlag tells the flags that have no environment or file form.
func skipFlag(name string) bool {
	return name == "help" || name == "version" || name == ConfigFlag
}

// ApplyConfig sets every flag of cmd not given on the command line from the
// environment, then from the config file. getenv is os.Getenv in the
// program, a map in tests.
func ApplyConfig(cmd *cobra.Command, getenv func(string) string) error {
	fs := cmd.Flags()
	set := map[string]bool{} // given on the command line, or by the environment
	fs.Visit(func(f *pflag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
		if set[f.Name] || skipFlag(f.Name) || ownEnv(f.Name) {
			return
		}
		name := EnvName(f.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		vals := []string{v}
		if _, ok := f.Value.(pflag.SliceValue); ok {
			vals = envList(v, f)
		}
		if err := setFlag(f, vals); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			return
		}
		set[f.Name] = true
	})
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	path := ""
	if f := fs.Lookup(ConfigFlag); f != nil {
		path = f.Value.String()
	}
	if path == "" {
		path = getenv(EnvName(ConfigFlag))
	}
	if path == "" {
		return nil
	}
	values, err := readConfig(path)
	if err != nil {
		return err
	}
	known := allFlags(cmd.Root())
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f := fs.Lookup(k)
		if f == nil || skipFlag(k) {
			if !known[k] || k == ConfigFlag {
				errs = append(errs, fmt.Errorf("%s: unknown key %q: keys are flag names without dashes, such as call-timeout (see --help)", path, k))
			}
			// A flag of another command: one file serves them all.
			continue
		}
		if set[k] {
			continue
		}
		vals, err := configStrings(values[k], f)
		if err == nil {
			err = setFlag(f, vals)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", path, k, err))
		}
	}
	return errors.Join(errs...)
}

// lineFlags are the repeatable flags whose values hold spaces (a header
// such as "Authorization: Bearer T"): their environment value has one per
// line.
func lineFlags(name string) bool { return name == "header" || name == "browser-header" }

// envList splits the environment value of a repeatable flag: on spaces
// (a browser flag may hold commas: --enable-features=A,B), and on commas too
// for the flags that take comma lists on the command line; on line breaks
// only for lineFlags.
func envList(v string, flag *pflag.Flag) []string {
	var out []string
	if lineFlags(flag.Name) {
		for _, line := range strings.Split(v, "\n") {
			if strings.TrimSpace(line) != "" {
				out = append(out, line)
			}
		}
		return out
	}
	for _, f := range strings.Fields(v) {
		if strings.HasSuffix(flag.Value.Type(), "Slice") {
			out = append(out, strings.Split(f, ",")...)
		} else {
			out = append(out, f)
		}
	}
	return out
}

// readConfig reads a YAML or JSON config file into a map of flag names.
func readConfig(path string) (map[string]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("--config %s: larger than %d bytes", path, maxConfigBytes)
	}
	// JSON is YAML: one parser reads both, and YAMLToJSON gives positions
	// in its errors.
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("--config %s: not valid YAML or JSON: %w", path, err)
	}
	values := map[string]json.RawMessage{}
	if string(bytes.TrimSpace(j)) == "null" { // an empty file
		return values, nil
	}
	if err := json.Unmarshal(j, &values); err != nil {
		return nil, fmt.Errorf("--config %s: must be a mapping of flag names to values, such as \"call-timeout: 5s\"", path)
	}
	return values, nil
}

// configStrings turns a config value into the strings to set the flag with:
// a scalar is one string, a list (for a repeatable flag) one per element.
func configStrings(raw json.RawMessage, f *pflag.Flag) ([]string, error) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		if _, ok := f.Value.(pflag.SliceValue); !ok {
			return nil, fmt.Errorf("takes one value, not a list")
		}
		out := make([]string, 0, len(list))
		for _, e := range list {
			s, err := scalarString(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalarString(raw)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

// scalarString renders a JSON string, number or boolean as the text a flag
// takes.
func scalarString(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	switch v := v.(type) {
	case json.Number:
		return v.String(), nil
	case bool:
		return fmt.Sprint(v), nil
	case nil:
		return "", fmt.Errorf("has no value (null)")
	}
	return "", fmt.Errorf("must be a string, number or boolean, not %s", raw)
}

// setFlag sets f from vals (several only for a repeatable flag, which they
// replace), and words a bad value for the reader.
func setFlag(f *pflag.Flag, vals []string) error {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		for i := range vals {
			vals[i] = strings.TrimSpace(vals[i])
		}
		if err := sv.Replace(vals); err != nil {
			return valueError(f, strings.Join(vals, ","), err)
		}
		f.Changed = true
		return nil
	}
	if err := f.Value.Set(vals[0]); err != nil {
		return valueError(f, vals[0], err)
	}
	f.Changed = true
	return nil
}

// valueError says what is wrong with v for flag f, and what would do.
func valueError(f *pflag.Flag, v string, err error) error {
	try := ""
	if d := f.DefValue; d != "" && d != "[]" && d != "0s" {
		try = " (try " + d + ")"
	}
	switch f.Value.Type() {
	case "duration":
		if try == "" {
			try = " (try 30s)"
		}
		return fmt.Errorf("invalid duration %q%s", v, try)
	case "int", "int64", "uint", "uint64", "intSlice":
		return fmt.Errorf("invalid number %q%s", v, try)
	case "bool":
		return fmt.Errorf("invalid boolean %q (use true or false)", v)
	}
	// Custom values say what they take.
	return err
}

// allFlags lists the flag names of every command under root.
func allFlags(root *cobra.Command) map[string]bool {
	names := map[string]bool{}
	EachCommand(root, func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
		}
	})
	return names
}
