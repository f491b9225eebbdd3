package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/clusterspace/clusterspace/backend/fleet"
)

// SaveAgent writes a pane's agent: its role, purpose and inbox.
func (s *Store) SaveAgent(ctx context.Context, a fleet.AgentRecord) error {
	inbox, err := json.Marshal(a.Inbox)
	if err != nil {
		return err
	}
	if a.Inbox == nil {
		inbox = []byte("[]")
	}
	return s.save(ctx, "save the agent of pane "+a.PaneID, `INSERT INTO fleet_agents(pane_id, role, purpose, inbox, updated_at) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(pane_id) DO UPDATE SET role = excluded.role, purpose = excluded.purpose, inbox = excluded.inbox, updated_at = excluded.updated_at`,
		a.PaneID, a.Role, a.Purpose, string(inbox), ms(a.UpdatedAt))
}

// AgentRecords returns every stored agent, by pane id.
func (s *Store) AgentRecords(ctx context.Context) ([]fleet.AgentRecord, error) {
	return queryAll(ctx, s.db, scanAgent, `SELECT pane_id, role, purpose, inbox, updated_at FROM fleet_agents ORDER BY pane_id`)
}

func scanAgent(r scanner) (fleet.AgentRecord, error) {
	var a fleet.AgentRecord
	var inbox string
	var updated int64
	if err := r.Scan(&a.PaneID, &a.Role, &a.Purpose, &inbox, &updated); err != nil {
		return a, err
	}
	if err := json.Unmarshal([]byte(inbox), &a.Inbox); err != nil {
		return a, fmt.Errorf("agent of pane %s: stored inbox unreadable: %w", a.PaneID, err)
	}
	a.UpdatedAt = at(updated)
	return a, nil
}
