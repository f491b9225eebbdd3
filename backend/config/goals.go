package config

import (
	"context"
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

// LoadGoalDefaults reads the goal settings, with the defaults for anything unset.
func LoadGoalDefaults(ctx context.Context, repo SettingsRepo) (GoalDefaults, error) {
	d := GoalDefaults{MaxConcurrent: defaultMaxConcurrentGoals}
	if _, err := loadSetting(ctx, repo, goalDefaultsKey, &d, "goal settings", "set them again"); err != nil {
		return GoalDefaults{MaxConcurrent: defaultMaxConcurrentGoals}, err
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
	return saveSetting(ctx, repo, goalDefaultsKey, d)
}
