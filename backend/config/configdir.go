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
	return resolveDir("config", flagValue, ConfigDirEnv, "XDG_CONFIG_HOME", ".config")
}

// resolveDir picks the dir called what (data, config): the flag, else $env, else
// $xdgEnv/clusterspace, else ~/homeDefault/clusterspace, made absolute.
func resolveDir(what, flagValue, env, xdgEnv, homeDefault string) (string, error) {
	dir := flagValue
	if dir == "" {
		dir = os.Getenv(env)
	}
	if dir == "" {
		if xdg := os.Getenv(xdgEnv); xdg != "" {
			dir = filepath.Join(xdg, "clusterspace")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", dataDirErr("cannot find a home directory for the %s dir (%v): pass --%s-dir or set %s", what, err, what, env)
			}
			dir = filepath.Join(home, homeDefault, "clusterspace")
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", dataDirErr("%s dir %q: %v", what, dir, err)
	}
	return abs, nil
}
