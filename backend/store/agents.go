package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
	_, err = s.db.ExecContext(ctx, `INSERT INTO fleet_agents(pane_id, role, purpose, inbox, updated_at) VALUES(?, ?, ?, ?, ?)
		ON CONFLICT(pane_id) DO UPDATE SET role = excluded.role, purpose = excluded.purpose, inbox = excluded.inbox, updated_at = excluded.updated_at`,
		a.PaneID, a.Role, a.Purpose, string(inbox), ms(a.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save the agent of pane %s: %w", a.PaneID, err)
	}
	return nil
}

// AgentRecords returns every stored agent, by pane id.
func (s *Store) AgentRecords(ctx context.Context) ([]fleet.AgentRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT pane_id, role, purpose, inbox, updated_at FROM fleet_agents ORDER BY pane_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []fleet.AgentRecord
	for rows.Next() {
		var a fleet.AgentRecord
		var inbox string
		var updated int64
		if err := rows.Scan(&a.PaneID, &a.Role, &a.Purpose, &inbox, &updated); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(inbox), &a.Inbox); err != nil {
			return nil, fmt.Errorf("agent of pane %s: stored inbox unreadable: %w", a.PaneID, err)
		}
		a.UpdatedAt = time.UnixMilli(updated).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}
