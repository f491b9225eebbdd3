package config

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LocalPort is a port local model servers listen on by default, and who usually listens there.
type LocalPort struct {
	Port int
	Name string
}

// LocalPorts are the defaults of the common local servers; all of them speak the OpenAI
// protocol under /v1.
var LocalPorts = []LocalPort{
	{11434, "Ollama"}, {1234, "LM Studio"}, {8000, "vLLM"}, {8080, "local"}, {5000, "local"},
}

// discoverTimeout bounds each probe: a local server answers in milliseconds; a closed port
// refuses at once; a filtered one must not hold up the answer.
const discoverTimeout = 1500 * time.Millisecond

// Discovered is a model server found on a host.
type Discovered struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	BaseURL string   `json:"baseUrl"`
	Models  []string `json:"models"`
}

// Discover probes host on the given ports (LocalPorts when nil) for OpenAI-compatible servers
// and lists the models each offers.
func Discover(ctx context.Context, host string, ports []LocalPort) ([]Discovered, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		host = "127.0.0.1"
	}
	if strings.ContainsAny(host, "/:@?#") && net.ParseIP(strings.Trim(host, "[]")) == nil {
		return nil, &FieldError{"host", fmt.Sprintf("%q is not a host name or IP address (leave out the scheme and port)", host)}
	}
	if ports == nil {
		ports = LocalPorts
	}
	client := &http.Client{Timeout: discoverTimeout}
	var mu sync.Mutex
	var found []Discovered
	var wg sync.WaitGroup
	for _, lp := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := "http://" + net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(lp.Port)) + "/v1"
			models, ok := listOpenAIModels(ctx, client, base)
			if !ok {
				return
			}
			mu.Lock()
			found = append(found, Discovered{Name: lp.Name, Kind: KindOpenAI, BaseURL: base, Models: models})
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(found, func(i, j int) bool { return found[i].BaseURL < found[j].BaseURL })
	return found, nil
}

// listOpenAIModels asks GET {base}/models and reads the ids, as every compatible server lists them.
func listOpenAIModels(ctx context.Context, client *http.Client, base string) ([]string, bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return nil, false
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, false
	}
	var body struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, false
	}
	models := make([]string, 0, len(body.Data))
	for _, m := range body.Data {
		models = append(models, m.ID)
	}
	return models, true
}
