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
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer sk-scripted-example-key-0000")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "scripted-vision") {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	res, err = http.Get(url + "/_scripted/requests")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"answer":"models"`) || strings.Contains(string(body), "sk-scripted-example-key-0000") || !strings.Contains(string(body), "sk-…0000") {
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
