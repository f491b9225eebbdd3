package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRunServesTheScript(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--script", "../../testdata/example.json", "--addr", "127.0.0.1:0"}, w)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "scripted-model listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("printed %q", line)
	}
	if code, body := get(t, url+"/v1/models", "sk-scripted-example-key-0000"); code != 200 || !strings.Contains(body, "scripted-vision") {
		t.Fatalf("%d %s", code, body)
	}
	if _, body := get(t, url+"/_scripted/requests", ""); !strings.Contains(body, `"answer":"models"`) || strings.Contains(body, "sk-scripted-example-key-0000") || !strings.Contains(body, "sk-…0000") {
		t.Fatalf("requests %s", body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop when its context ended")
	}
}

// get asks url, with key as the bearer token if it is set, and returns the status and body.
func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(body)
}

func TestRunNeedsAScript(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--script FILE is required") {
		t.Fatalf("err %v", err)
	}
	if err := run(context.Background(), []string{"--script", "no-such-file.json"}, io.Discard); err == nil {
		t.Fatal("a missing script file was accepted")
	}
}
