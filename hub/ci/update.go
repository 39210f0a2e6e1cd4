package ci

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/webmcp-cdp/webmcp-cdp/hub/record"
)

// SnapshotUpdate is a call whose result differed from its snapshot in a run
// with Runner.Update: the new snapshot, and the diff from the old one.
type SnapshotUpdate struct {
	// Page and Call are the call's place: pages[Page].calls[Call].
	Page, Call int
	// Name is the call's name in the report.
	Name string
	// New is the new snapshot, secrets as placeholders again.
	New any
	// Diff is what changed ("- old", "+ new" lines).
	Diff []string

	scrub func(string) string
}

// take sets the new snapshot from a result's text.
func (u *SnapshotUpdate) take(text string, diff []string) {
	if u.scrub != nil {
		text = u.scrub(text)
	}
	u.New, u.Diff = record.Snapshot(text), diff
}

// UpdateSnapshots writes the new snapshots into the spec file at path, in
// place: the snapshot: of each call is replaced, and everything else (its
// ignore and matches marks, the other calls, the comments) is kept. The
// file is replaced atomically.
func UpdateSnapshots(path string, ups []SnapshotUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the spec: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) == 0 {
		return fmt.Errorf("%s: not valid YAML any more: %v", path, err)
	}
	for _, u := range ups {
		n := mapValue(doc.Content[0], "pages")
		n = seqItem(n, u.Page)
		n = mapValue(n, "calls")
		n = seqItem(n, u.Call)
		n = mapValue(n, "expect")
		n = mapValue(n, "snapshot")
		if n == nil {
			return fmt.Errorf("%s: pages[%d].calls[%d].expect.snapshot is not in the file any more (was it edited during the run?)", path, u.Page, u.Call)
		}
		var nn yaml.Node
		if err := nn.Encode(u.New); err != nil {
			return fmt.Errorf("writing the snapshot of %s: %w", u.Name, err)
		}
		// A comment above the snapshot stays; one beside it (on its last
		// line) would land elsewhere once the value spans other lines.
		nn.HeadComment = n.HeadComment
		*n = nn
	}
	out, err := encodeLike(data, &doc)
	if err != nil {
		return fmt.Errorf("updating the spec: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("updating the spec: %w", err)
	}
	_, err = tmp.Write(out)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("updating the spec: %w", err)
	}
	return nil
}

// mapValue is the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// seqItem is element i of sequence n, or nil.
func seqItem(n *yaml.Node, i int) *yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
		return nil
	}
	return n.Content[i]
}

// encodeLike writes doc as the spec was written: JSON for a JSON spec (its
// keys then in sorted order), else YAML.
func encodeLike(orig []byte, doc *yaml.Node) ([]byte, error) {
	if t := bytes.TrimSpace(orig); len(t) > 0 && t[0] == '{' {
		var v any
		if err := doc.Decode(&v); err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(v, "", "  ")
		return append(b, '\n'), err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	err := enc.Close()
	return b.Bytes(), err
}
