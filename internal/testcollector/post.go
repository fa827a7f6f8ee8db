package testcollector

import (
	"bytes"
	"fmt"
	"net/http"
	"time"
)

// RetryBudget is how long PostUntilAccepted retries a request: the OTLP exporter's default
// retry_on_failure.max_elapsed_time. A collector answers 503 while its queue is full (e.g. while
// a kafka exporter backs off after a failed produce, 5 s and then longer); a test client that
// counted 1,000 attempts 20 ms apart gave up after 20 s where the exporter retries on.
const RetryBudget = 5 * time.Minute

// PostUntilAccepted posts body to url as an OTLP exporter with retries does: a 503 or 429, and
// with retryUnreachable a request that got no answer (the collector is restarting), is sent
// again every 20 ms within RetryBudget; retried is called before each retry, with whether the
// collector answered. Any other status is an error at once. It does not touch a testing.T, so
// it may run on a goroutine of its own; its error says what the collector last answered.
func PostUntilAccepted(url, contentType string, body []byte, retryUnreachable bool, retried func(answered bool)) error {
	last := "none"
	for deadline := time.Now().Add(RetryBudget); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Post(url, contentType, bytes.NewReader(body))
		if err != nil {
			if !retryUnreachable {
				return err
			}
			last = err.Error()
			retried(false)
			continue
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			last = resp.Status
			retried(true)
		default:
			return fmt.Errorf("%s: status %d", url, resp.StatusCode)
		}
	}
	return fmt.Errorf("%s: not accepted within %s; last answer: %s", url, RetryBudget, last)
}
