package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The real Prometheus server: Debian's prometheus package (installed by
// .ci/run), started once for the package by the first test that needs it
// and stopped by TestMain. It scrapes every second the targets the tests
// write into its file_sd files: one job without authorization (--metrics'
// own listener) and one with the bearer token promToken (/metrics of
// --http behind --token), so a test adds targets without a restart.

// promToken is the bearer token of the job that scrapes /metrics of --http.
const promToken = "prometheus-scrape-token"

// Prometheus's scrape jobs.
const (
	promJobMetrics = "webmcp-metrics" // --metrics ADDR
	promJobHTTP    = "webmcp-http"    // --http ADDR, /metrics with promToken
)

// testPrometheus is the running server.
type testPrometheus struct {
	url  string // http://127.0.0.1:PORT
	dir  string
	cmd  *exec.Cmd
	logs *syncBuffer
	err  error

	mu      sync.Mutex
	targets map[string][]string // by job
}

var (
	promOnce sync.Once
	theProm  *testPrometheus
)

// startPrometheus returns the package's Prometheus, starting it on first
// use. Without the prometheus binary the test fails in CI and is skipped
// elsewhere, saying how to install it.
func startPrometheus(t testing.TB) *testPrometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		gridUnavailable(t, "these tests run the real Prometheus server (Debian: apt-get install prometheus): %v", err)
	}
	promOnce.Do(func() { theProm = launchPrometheus(bin) })
	if theProm.err != nil {
		t.Fatalf("starting Prometheus: %v\n%s", theProm.err, theProm.logs.String())
	}
	return theProm
}

// stopPrometheus stops the package's Prometheus, when it was started.
func stopPrometheus() {
	if theProm != nil && theProm.cmd != nil {
		syscall.Kill(-theProm.cmd.Process.Pid, syscall.SIGKILL)
		theProm.cmd.Wait()
		os.RemoveAll(theProm.dir)
	}
}

// promConfig scrapes each job's targets from its file, every second.
const promConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: %[1]s
    file_sd_configs:
      - files: [%[3]q]
        refresh_interval: 1s
  - job_name: %[2]s
    authorization:
      credentials: %[5]q
    file_sd_configs:
      - files: [%[4]q]
        refresh_interval: 1s
`

func launchPrometheus(bin string) *testPrometheus {
	p := &testPrometheus{logs: &syncBuffer{}, targets: map[string][]string{}}
	if p.dir, p.err = os.MkdirTemp("", "webmcp-cdp-prometheus-"); p.err != nil {
		return p
	}
	for _, job := range []string{promJobMetrics, promJobHTTP} {
		if p.err = p.writeTargets(job); p.err != nil {
			return p
		}
	}
	conf := filepath.Join(p.dir, "prometheus.yml")
	body := fmt.Sprintf(promConfig, promJobMetrics, promJobHTTP, p.targetFile(promJobMetrics), p.targetFile(promJobHTTP), promToken)
	if p.err = os.WriteFile(conf, []byte(body), 0o644); p.err != nil {
		return p
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		p.err = err
		return p
	}
	addr := l.Addr().String()
	l.Close()
	p.url = "http://" + addr
	p.cmd = exec.Command(bin, "--config.file="+conf, "--web.listen-address="+addr,
		"--storage.tsdb.path="+filepath.Join(p.dir, "data"), "--log.level=warn")
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if p.err = p.cmd.Start(); p.err != nil {
		return p
	}
	exited := make(chan struct{})
	go func() {
		p.cmd.Process.Wait()
		close(exited)
	}()
	// Ready when /-/ready answers 200 (its TSDB is open): asked every
	// 100 ms for at most 30 s, or until the process exits.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(p.url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-exited:
			p.err = fmt.Errorf("prometheus exited before it was ready")
			return p
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.err = fmt.Errorf("prometheus was not ready within 30 s")
			return p
		}
	}
}

func (p *testPrometheus) targetFile(job string) string {
	return filepath.Join(p.dir, job+".json")
}

// writeTargets writes job's targets for file_sd (a temporary file renamed
// into place, so Prometheus never reads half of it).
func (p *testPrometheus) writeTargets(job string) error {
	b, err := json.Marshal([]map[string]any{{"targets": append([]string{}, p.targets[job]...)}})
	if err != nil {
		return err
	}
	tmp := p.targetFile(job) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p.targetFile(job))
}

// scrape adds a target (host:port) to job, for the rest of the package.
func (p *testPrometheus) scrape(t testing.TB, job, target string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.targets[job] = append(p.targets[job], target)
	if err := p.writeTargets(job); err != nil {
		t.Fatal(err)
	}
}

// promSample is one sample of an instant query's vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // [unix time, "value"]
}

// query runs an instant PromQL query through the HTTP API.
func (p *testPrometheus) query(q string) ([]promSample, error) {
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSample `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("decoding the answer to %s: %w", q, err)
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, out.Error)
	}
	return out.Data.Result, nil
}

// waitQuery asks q every 250 ms until ok accepts its samples, for at most
// d; it returns the last samples and whether ok accepted them. Prometheus
// has no push for a new sample, so this is the event's only signal.
func (p *testPrometheus) waitQuery(q string, d time.Duration, ok func([]promSample) bool) ([]promSample, error) {
	deadline := time.Now().Add(d)
	for {
		got, err := p.query(q)
		if err == nil && ok(got) {
			return got, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("no sample of %s as expected within %s", q, d)
			}
			return got, err
		}
		time.Sleep(250 * time.Millisecond) // poll interval: Prometheus has no push for a new sample
	}
}

// sampleValue is a sample's value as a number.
func sampleValue(s promSample) float64 {
	v, _ := s.Value[1].(string)
	f, _ := strconv.ParseFloat(v, 64)
	return f
}
