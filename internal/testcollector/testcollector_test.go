package testcollector

import (
	"testing"
	"time"
)

// The ready line split across two writes is still seen, and the wait lasts signalGrace from it.
func TestWaitUntilSignalsAreHandledWaitsForTheReadyLine(t *testing.T) {
	var o Output
	o.Write([]byte("info\tservice.go:256\tEvery"))
	if !o.readyAt.IsZero() {
		t.Fatal("ready before the line is complete")
	}
	o.Write([]byte("thing is ready. Begin running and processing data.\n"))
	if o.readyAt.IsZero() {
		t.Fatal("the line split across two writes was not seen")
	}
	start := time.Now()
	o.WaitUntilSignalsAreHandled(t)
	if waited := time.Since(start); waited < signalGrace-20*time.Millisecond {
		t.Fatalf("waited %s, want about %s after the ready line", waited, signalGrace)
	}
}
