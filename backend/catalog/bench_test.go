package catalog_test

import (
	"fmt"
	"testing"

	"github.com/clusterspace/clusterspace/backend/catalog"
)

// BenchmarkReload is one full read of a config dir with 100 personas and 100 skills over the
// defaults: what every change on disk costs.
func BenchmarkReload(b *testing.B) {
	dir := b.TempDir()
	for i := range 100 {
		write(b, dir, fmt.Sprintf("personas/p%d.md", i), fmt.Sprintf("---\nname: P%d\ntemperature: 0.3\ntools: [read_terminal_output]\nskills: [s%d]\n---\nPrompt %d.\n", i, i, i))
		write(b, dir, fmt.Sprintf("skills/s%d.md", i), fmt.Sprintf("---\nname: S%d\ndomain: d\n---\nHow to %d.\n", i, i))
	}
	c, err := catalog.Open(b.Context(), dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if len(c.Problems()) != 0 || len(c.Personas()) != 106 {
		b.Fatalf("%d problems, %d personas", len(c.Problems()), len(c.Personas()))
	}
	b.ResetTimer()
	for b.Loop() {
		c.Reload()
	}
}
