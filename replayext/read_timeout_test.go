package replayext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// The server bounds reading a request, its body included, by default: confighttp's defaults
// bound only the headers and idle connections.
func TestTheServerBoundsReadingARequestByDefault(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	assert.Equal(t, time.Minute, cfg.ReadTimeout, "read_timeout")
	assert.Equal(t, 10*time.Second, cfg.ReadHeaderTimeout, "read_header_timeout")
	require.True(t, cfg.Keepalive.HasValue())
	assert.Equal(t, time.Minute, cfg.Keepalive.Get().IdleTimeout, "keepalive.idle_timeout")

	// A user can still set them, and 0 turns one off.
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"read_timeout": "5m", "read_header_timeout": "0s", "keepalive": map[string]any{"idle_timeout": "2m"},
	}).Unmarshal(cfg))
	assert.Equal(t, 5*time.Minute, cfg.ReadTimeout)
	assert.Equal(t, time.Duration(0), cfg.ReadHeaderTimeout)
	assert.Equal(t, 2*time.Minute, cfg.Keepalive.Get().IdleTimeout)
}

// A client that sends its headers and part of its body, then stalls, is cut off once
// read_timeout has passed: it does not hold a connection and a goroutine for ever. The
// timeout is set through the config, as a user would.
func TestAStalledRequestBodyIsCutOff(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	cases := writeDataset(t, root, testfixtures.OTelEvents)
	const timeout = 500 * time.Millisecond
	s := startReplay(t, root, func(c *Config) {
		require.NoError(t, confmap.NewFromStringMap(map[string]any{"read_timeout": timeout.String()}).Unmarshal(c))
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	_, err = fmt.Fprintf(conn, "POST /v1/cases/%s/openai/v1/chat/completions HTTP/1.1\r\nHost: replay\r\n"+
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":\"gpt-4o-mi", cases[0].CaseID)
	require.NoError(t, err)

	// The test's own bound: well past the server's, so that a server without one fails here.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(timeout+5*time.Second)))
	rd := bufio.NewReader(conn)
	resp, err := http.ReadResponse(rd, nil)
	if err == nil { // the server may answer the broken request before it closes
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		_, _ = io.Copy(io.Discard, resp.Body)
		_, err = rd.ReadByte()
	}
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server still holds the stalled connection after %s", time.Since(start))
	assert.ErrorIs(t, err, io.EOF, "the server closed the connection")
	assert.GreaterOrEqual(t, time.Since(start), timeout-50*time.Millisecond, "it waited for read_timeout")
	assert.Less(t, time.Since(start), timeout+2*time.Second)
}

// read_timeout bounds reading the request, not the answer: a live answer (hybrid mode) that
// streams for longer than it is served whole.
func TestALiveAnswerOutlastsTheReadTimeout(t *testing.T) {
	slowLiveStreamIsServedWhole(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
}
