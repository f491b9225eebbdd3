package config

import (
	"context"
	"encoding/json"
	"fmt"
)

// SettingsRepo is a key-value settings store; the store implements it.
type SettingsRepo interface {
	Setting(ctx context.Context, key string) (string, bool, error)
	SetSetting(ctx context.Context, key, value string) error
}

// The install-wide settings kept as one JSON value a key (the goal defaults, the agent
// templates' providers, the price table) are read and written the same way.

// loadSetting reads the JSON setting key over v, which holds what an unset setting leaves;
// set is false when the key has no value. A value that does not parse is damaged: the error
// names the setting (what) and the way out (fix), and v is then the caller's to reset.
func loadSetting[T any](ctx context.Context, repo SettingsRepo, key string, v *T, what, fix string) (set bool, err error) {
	s, ok, err := repo.Setting(ctx, key)
	if err != nil || !ok {
		return false, err
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return true, fmt.Errorf("the stored %s cannot be read, it is damaged (%v): %s", what, err, fix)
	}
	return true, nil
}

// saveSetting stores v as the JSON setting key.
func saveSetting(ctx context.Context, repo SettingsRepo, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return repo.SetSetting(ctx, key, string(b))
}
