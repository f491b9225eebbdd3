package config

import (
	"context"
	"encoding/json"
	"fmt"
)

// goalDefaultsKey holds the goal runner's install-wide settings.
const goalDefaultsKey = "goals.defaults"

// Bounds that keep a 2-core machine usable and catch typos.
const (
	defaultMaxConcurrentGoals = 3
	maxConcurrentGoalsLimit   = 20
)

// GoalDefaults are the goal runner's settings: how many goals run at once, and the budget a
// goal gets when it does not name one (0 = no cap).
type GoalDefaults struct {
	MaxConcurrent int     `json:"maxConcurrent"`
	BudgetUSD     float64 `json:"budgetUsd"`
	BudgetTokens  int     `json:"budgetTokens"`
}

// SettingsRepo is a key-value settings store; the store implements it.
type SettingsRepo interface {
	Setting(ctx context.Context, key string) (string, bool, error)
	SetSetting(ctx context.Context, key, value string) error
}

// LoadGoalDefaults reads the goal settings, with the defaults for anything unset.
func LoadGoalDefaults(ctx context.Context, repo SettingsRepo) (GoalDefaults, error) {
	d := GoalDefaults{MaxConcurrent: defaultMaxConcurrentGoals}
	v, ok, err := repo.Setting(ctx, goalDefaultsKey)
	if err != nil || !ok {
		return d, err
	}
	if err := json.Unmarshal([]byte(v), &d); err != nil {
		return GoalDefaults{MaxConcurrent: defaultMaxConcurrentGoals}, fmt.Errorf("the stored goal settings are damaged (%v): set them again", err)
	}
	if d.MaxConcurrent <= 0 {
		d.MaxConcurrent = defaultMaxConcurrentGoals
	}
	return d, nil
}

// SaveGoalDefaults validates and stores the goal settings.
func SaveGoalDefaults(ctx context.Context, repo SettingsRepo, d GoalDefaults) error {
	switch {
	case d.MaxConcurrent < 1 || d.MaxConcurrent > maxConcurrentGoalsLimit:
		return &FieldError{"maxConcurrent", fmt.Sprintf("must be between 1 and %d", maxConcurrentGoalsLimit)}
	case d.BudgetUSD < 0:
		return &FieldError{"budgetUsd", "must be 0 (no cap) or more"}
	case d.BudgetTokens < 0:
		return &FieldError{"budgetTokens", "must be 0 (no cap) or more"}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return repo.SetSetting(ctx, goalDefaultsKey, string(b))
}
