package testenv

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// DevServer is a Temporal dev server of a test's own: for tests that read
// its raw SQLite store or need its Web UI configured differently from the
// shared test stack's.
type DevServer struct {
	// Address is the gRPC frontend (127.0.0.1:port).
	Address string
	// UIPort is the Web UI's port (on 127.0.0.1; 0 when headless).
	UIPort int
	// DBFile is the SQLite store.
	DBFile string
}

// DevServerOptions tune StartDevServer.
type DevServerOptions struct {
	// UI serves the Web UI (else --headless).
	UI bool
	// CodecEndpoint is the UI's --ui-codec-endpoint.
	CodecEndpoint string
}

// StartDevServer starts `temporal server start-dev` (CARTWRIGHT_TEMPORAL_BIN)
// on free ports with a SQLite file in the test's temp dir, the dynamic
// config and search attributes of the dev stack, and stops it at cleanup.
// The test is skipped without the binary.
func StartDevServer(t testing.TB, o DevServerOptions) *DevServer {
	t.Helper()
	Integration(t)
	bin := os.Getenv("CARTWRIGHT_TEMPORAL_BIN")
	if bin == "" {
		t.Skip("CARTWRIGHT_TEMPORAL_BIN is not set: no Temporal CLI to start a private dev server")
	}
	dir := t.TempDir()
	d := &DevServer{DBFile: filepath.Join(dir, "temporal.db")}
	port := FreePort(t)
	d.Address = "127.0.0.1:" + strconv.Itoa(port)
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--db-filename", d.DBFile, "--log-level", "warn",
		"--search-attribute", "CartwrightFlow=Keyword", "--search-attribute", "CartwrightState=Keyword",
		"--search-attribute", "AwaitingApproval=Bool",
		"--dynamic-config-value", "history.transferProcessorMaxPollRPS=1000",
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1"}
	if o.UI {
		d.UIPort = FreePort(t)
		args = append(args, "--ui-ip", "127.0.0.1", "--ui-port", strconv.Itoa(d.UIPort))
		if o.CodecEndpoint != "" {
			args = append(args, "--ui-codec-endpoint", o.CodecEndpoint)
		}
	} else {
		args = append(args, "--headless")
	}
	logf, err := os.Create(filepath.Join(dir, "temporal.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	deadline := time.Now().Add(Deadline(60 * time.Second))
	for {
		c, err := net.DialTimeout("tcp", d.Address, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("temporal dev server exited: %s", b)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("temporal dev server on %s did not come up", d.Address)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return d
}
