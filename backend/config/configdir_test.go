package config

import (
	"path/filepath"
	"testing"
)

func TestResolveConfigDirOrder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(ConfigDirEnv, "")
	t.Setenv("XDG_CONFIG_HOME", "")
	cases := []struct {
		name, flag, env, xdg, want string
	}{
		{"home default", "", "", "", filepath.Join(home, ".config", "clusterspace")},
		{"xdg", "", "", "/x/cfg", "/x/cfg/clusterspace"},
		{"env over xdg", "", "/e/cs", "/x/cfg", "/e/cs"},
		{"flag over all", "/f/cs", "/e/cs", "/x/cfg", "/f/cs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(ConfigDirEnv, c.env)
			t.Setenv("XDG_CONFIG_HOME", c.xdg)
			got, err := ResolveConfigDir(c.flag)
			if err != nil || got != c.want {
				t.Fatalf("ResolveConfigDir(%q) = %q, %v; want %q", c.flag, got, err, c.want)
			}
		})
	}
	rel, err := ResolveConfigDir("rel/dir")
	if err != nil || !filepath.IsAbs(rel) {
		t.Fatalf("a relative flag should come back absolute, got %q, %v", rel, err)
	}
}
