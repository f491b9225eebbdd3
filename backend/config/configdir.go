package config

import (
	"os"
	"path/filepath"
)

// ConfigDirEnv names the environment variable that sets the config dir when no flag does.
const ConfigDirEnv = "CLUSTERSPACE_CONFIG_DIR"

// ResolveConfigDir picks the config dir, where people keep the files that shape the agent
// (personas/, skills/, tasks/, templates/, tools/, mcp.json), usually under git: the flag,
// else $CLUSTERSPACE_CONFIG_DIR, else $XDG_CONFIG_HOME/clusterspace, else
// ~/.config/clusterspace. The result is absolute. It need not exist: the built-in defaults
// stand alone.
func ResolveConfigDir(flagValue string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = os.Getenv(ConfigDirEnv)
	}
	if dir == "" {
		if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
			dir = filepath.Join(xdg, "clusterspace")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", dataDirErr("cannot find a home directory for the config dir (%v): pass --config-dir or set %s", err, ConfigDirEnv)
			}
			dir = filepath.Join(home, ".config", "clusterspace")
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", dataDirErr("config dir %q: %v", dir, err)
	}
	return abs, nil
}
